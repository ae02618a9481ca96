"""Follow-ups read with the question they follow. Pure: no database."""

import pytest

from bot.followups import follows_up, leaves_referent_open, previous_question, with_previous
from bot.joined import own_words


@pytest.mark.parametrize("text", ["¿y el mes pasado?", "why is it lower?", "and for a business?",
                                  "y eso cuánto es en bolívares?", "¿y la otra?", "es que somos una empresa",
                                  "sorry, I meant the installation", "what about the annual plan?"])
def test_a_message_that_leans_on_the_turn_before_is_a_follow_up(text):
    assert follows_up(text)


@pytest.mark.parametrize("text", ["¿cuánto cuesta la reconexión?", "quiero hablar con una persona",
                                  "my bill is higher this month, why did it go up so much compared to before",
                                  "", "hola"])
def test_a_message_with_its_own_topic_is_not(text):
    assert not follows_up(text)


def test_a_follow_up_is_joined_with_the_customers_previous_question_only():
    history = [("user", "¿cuánto es el recargo por mora?"), ("assistant", "Es 5 % de lo que quede sin pagar.")]
    assert with_previous("¿y para empresas?", history) == "¿y para empresas? (¿cuánto es el recargo por mora?)"
    assert with_previous("¿cuánto cuesta la reconexión?", history) == "¿cuánto cuesta la reconexión?"
    assert with_previous("¿y para empresas?", []) == "¿y para empresas?"


def test_a_joined_follow_up_gives_back_its_own_words():
    history = [("user", "why is my bill 1,910 this month?"), ("assistant", "An outage credit…")]
    read = with_previous("and the month before?", history)
    assert read == "and the month before? (why is my bill 1,910 this month?)"
    assert own_words(read) == "and the month before?"
    assert own_words("what plan (the annual one) do you sell?") == "what plan (the annual one) do you sell?"


@pytest.mark.parametrize(("text", "previous", "read"), [
    ("sorry, I meant the installation", "how much is the deposit?", "how much is the the installation"),
    ("no, quise decir la instalación", "¿cuánto cuesta el depósito?", "cuanto cuesta el la instalación"),
])
def test_a_correction_keeps_how_the_previous_question_asked_and_drops_what_about(text, previous, read):
    assert with_previous(text, [("user", previous), ("assistant", "…")]) == read


def test_a_segment_said_after_the_question_keeps_the_question_s_topic():
    joined = with_previous("es que somos una empresa", [("user", "¿Cuánto es el recargo por mora?")])
    assert joined == "es que somos una empresa (¿Cuánto es el recargo por mora?)"


def test_the_same_reply_twice_in_a_row_to_a_different_question_goes_to_a_person():
    from bot.context import TurnContext
    from bot.outcomes import Answered, Escalated
    from bot.turn import _not_a_repeat

    history = [("user", "¿cuánto es mi factura?"), ("assistant", "Tu factura es de Bs. 1.461,60.")]
    repeated = _not_a_repeat(Answered("Tu factura es de Bs. 1.461,60."), TurnContext(history=history),
                             "¿por qué salió más baja?")
    assert isinstance(repeated, Escalated) and repeated.reason.value == "NO_CONTEXT"
    fresh = Answered("Bajó por un crédito de Bs. 140,00.")
    assert _not_a_repeat(fresh, TurnContext(history=history), "¿por qué salió más baja?") is fresh
    # The same question asked again may get the same answer.
    same = Answered("Tu factura es de Bs. 1.461,60.")
    assert _not_a_repeat(same, TurnContext(history=history), "¿cuánto es mi factura?") is same


@pytest.mark.parametrize("text", ["¿y el otro?", "¿y la otra?", "ok so how long for mine?", "what about the other one?",
                                  "y los otros cuánto cuestan?", "¿y el mío?"])
def test_the_other_one_or_mine_with_nothing_named_leaves_the_referent_open(text):
    assert leaves_referent_open(text)


@pytest.mark.parametrize("text", ["¿y la otra factura de octubre?", "what about the other plan, Fiber 600?",
                                  "¿y el de 600?", "¿y eso?", "es que somos una empresa", "mine is a business account"])
def test_a_follow_up_that_names_its_thing_does_not(text):
    assert not leaves_referent_open(text)


def test_the_question_a_reply_is_read_with_skips_a_bare_the_other_one():
    history = [("user", "¿Cuánto cuesta el plan Fibra 300?"), ("assistant", "Fibra 300 cuesta USD 28,00 al mes."),
               ("user", "¿y el otro?"), ("assistant", "¿A cuál te refieres?")]
    assert previous_question(history) == "¿Cuánto cuesta el plan Fibra 300?"
    assert with_previous("¿y el de 600?", history) == "¿Cuánto cuesta el plan Fibra 600?"
    assert previous_question([("user", "¿y el otro?")]) == ""


@pytest.mark.parametrize(("text", "previous", "read"), [
    ("¿y el de 600?", "¿Cuánto cuesta el plan Fibra 300?", "¿Cuánto cuesta el plan Fibra 600?"),
    ("n the 1000 one?", "How much is the annual plan for Fiber 300?", "How much is the annual plan for Fiber 1000?"),
    ("and for the trial?", "If I cancel my annual plan do I get my money back?",
     "If I cancel my trial plan do I get my money back?"),
    ("¿y el de prueba?", "¿me devuelven la plata si cancelo el plan anual?",
     "¿me devuelven la plata si cancelo el plan de prueba?"),
])
def test_a_follow_up_that_swaps_the_thing_asked_about_is_the_previous_question_about_the_new_thing(text, previous,
                                                                                                   read):
    assert with_previous(text, [("user", previous), ("assistant", "…")]) == read


def test_a_follow_up_that_names_the_same_thing_or_none_is_joined_as_before():
    history = [("user", "¿Cuánto cuesta el Fibra 300?"), ("assistant", "USD 28,00 al mes.")]
    assert with_previous("¿y con IVA?", history) == "¿y con IVA? (¿Cuánto cuesta el Fibra 300?)"
    assert with_previous("y el de 300 con IVA?", history) == "y el de 300 con IVA? (¿Cuánto cuesta el Fibra 300?)"
