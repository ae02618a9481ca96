"""The full-text branch's plan: which words a text hit must hold (AND), never any one of them (OR). No database."""

import pytest

from kb.textquery import (ConfigTotals, QueryTerm, bm25_idf, plan_text_query, query_language_configs,
                          shown_terms, strip_filler, tsquery_and)

TOTALS = {"spanish": ConfigTotals(100, 80.0), "english": ConfigTotals(60, 70.0), "simple": ConfigTotals(160, 75.0)}


def terms(config, *pairs):
    """(lexeme, ndoc) pairs in query order."""
    return [QueryTerm(config, lexeme, ndoc, position) for position, (lexeme, ndoc) in enumerate(pairs, start=1)]


def test_greetings_and_question_filler_are_dropped_and_the_content_kept():
    # "cuánto cuesta" says the question is about a price, not what it is the price of.
    assert strip_filler("hola, buenas, quería saber cuánto cuesta la reconexión").split() == \
        [",", ",", "la", "reconexión"]
    assert strip_filler("Hi! could you tell me the Zelle email?").split() == ["!", "you", "me", "the", "Zelle", "email?"]


def test_a_short_question_requires_every_content_word():
    plan = plan_text_query(terms("spanish", ("cuest", 9), ("reconexion", 5)), TOTALS, stop_words={"spanish": 1})
    assert plan.conjunctions == {"spanish": ["cuest", "reconexion"]}
    assert tsquery_and(plan.conjunctions["spanish"]) == "'cuest' & 'reconexion'"


@pytest.mark.parametrize("unknown, required", [
    (0, ["fibr", "precio", "plan"]),
    (1, ["fibr", "precio", "plan"]),  # one word the knowledge base never uses is tolerated…
    (2, None),  # …two mean the question is about something it does not speak of: no AND, no proof
])
def test_words_the_knowledge_base_never_uses(unknown, required):
    words = [("fibr", 30), ("precio", 12), ("plan", 50)] + [(f"nuevo{i}", 0) for i in range(unknown)]
    plan = plan_text_query(terms("spanish", *words), TOTALS, stop_words={"spanish": 2})
    assert plan.conjunctions.get("spanish") == required


def test_one_known_word_and_one_unknown_is_no_proof():
    plan = plan_text_query(terms("spanish", ("cuent", 30), ("instagram", 0)), TOTALS, stop_words={"spanish": 2})
    assert plan.conjunctions == {}


def test_a_long_message_requires_its_four_rarest_known_words():
    words = [("chamo", 0), ("dinero", 40), ("complet", 25), ("abon", 3), ("mit", 7), ("cort", 4), ("dia", 60),
             ("chanc", 0)]
    plan = plan_text_query(terms("spanish", *words), TOTALS, stop_words={"spanish": 3})
    assert plan.conjunctions == {"spanish": ["abon", "cort", "mit", "complet"]}


def test_the_query_language_picks_the_config_and_simple_always_joins():
    # A Spanish question's English-config lexemes ("de", "por") must not make an AND over English chunks.
    spanish = terms("spanish", ("recarg", 20), ("mor", 8))
    english = terms("english", ("recargo", 1), ("por", 3))
    simple = terms("simple", ("recargo", 18), ("mora", 8))
    plan = plan_text_query(spanish + english + simple, TOTALS, stop_words={"spanish": 2, "english": 0})
    assert set(plan.conjunctions) == {"spanish", "simple"}
    both = plan_text_query(spanish + english + simple, TOTALS, stop_words={"spanish": 0, "english": 0})
    assert set(both.conjunctions) == {"spanish", "english", "simple"}


@pytest.mark.parametrize("stop_words, configs", [
    ({"spanish": 3, "english": 1}, {"spanish"}),
    ({"spanish": 0, "english": 2}, {"english"}),
    ({"spanish": 1, "english": 1}, None),
    ({"spanish": 0, "english": 0}, None),
    ({}, None),
])
def test_query_language_from_stop_words(stop_words, configs):
    assert query_language_configs(stop_words) == configs


def test_bm25_weighs_rare_words_above_common_ones():
    plan = plan_text_query(terms("spanish", ("factur", 80), ("reconexion", 4)), TOTALS, stop_words={"spanish": 1})
    assert plan.scored["spanish"]["reconexion"] > plan.scored["spanish"]["factur"] > 0
    assert bm25_idf(100, 100) > 0  # a word every chunk holds still counts a little
    assert plan.avg_words["spanish"] == 80.0


def test_a_quote_in_a_lexeme_cannot_break_the_tsquery():
    assert tsquery_and(["o'neil", "a\\b"]) == "'o''neil' & 'a\\\\b'"


def test_an_irregular_form_takes_its_verb_as_another_form_of_the_same_word():
    # "paid" is held by 2 chunks, "pay"/"pays" by 30: the word is common, so a long message's rarest four skip it.
    words = [QueryTerm("english", "extra", 3, 1), QueryTerm("english", "late", 8, 2),
             QueryTerm("english", "home", 9, 3), QueryTerm("english", "bill", 12, 4),
             QueryTerm("english", "fiber", 14, 5), QueryTerm("english", "week", 0, 6),
             QueryTerm("english", "paid", 2, 7, forms=(("pay", 30),))]
    plan = plan_text_query(words, TOTALS, stop_words={"english": 3})
    assert plan.conjunctions == {"english": ["extra", "late", "home", "bill"]}
    assert set(plan.scored["english"]) == {"extra", "late", "home", "bill", "fiber", "paid", "pay"}

    short = plan_text_query([QueryTerm("english", "paid", 2, 1, forms=(("pay", 30),)),
                             QueryTerm("english", "late", 8, 2)], TOTALS, stop_words={"english": 1})
    assert short.conjunctions == {"english": ["paid", "late"]} and short.forms == {"english": {"paid": ["pay"]}}
    assert tsquery_and(short.conjunctions["english"], short.forms["english"]) == "('paid' | 'pay') & 'late'"
    assert shown_terms(short) == ["english:paid|pay", "english:late"]


def test_a_form_the_knowledge_base_knows_makes_the_word_known():
    plan = plan_text_query([QueryTerm("english", "sent", 0, 1, forms=(("send", 4),)),
                            QueryTerm("english", "receipt", 5, 2)], TOTALS, stop_words={"english": 1})
    assert plan.conjunctions == {"english": ["sent", "receipt"]}
    assert plan.forms == {"english": {"sent": ["send"]}} and "sent" not in plan.scored["english"]


def test_an_and_is_selective_when_its_rarest_word_is_held_by_few_chunks_in_any_form():
    plan = plan_text_query(terms("english", ("late", 300), ("fee", 12)) + terms("simple", ("late", 400), ("fee", 250)),
                           TOTALS, stop_words={"english": 1})
    assert plan.bounds == {"english": 12, "simple": 250}
    assert plan.selective(200) == ["english"]
    assert plan.selective(250) == ["english", "simple"]
    paid = [QueryTerm("english", "paid", 150, 1, (("pay", 90),)), QueryTerm("english", "bill", 500, 2)]
    assert plan_text_query(paid, TOTALS, stop_words={"english": 1}).bounds == {"english": 240}
