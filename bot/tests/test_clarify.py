"""Clarifying questions: when to ask, what to offer, how a reply picks an option. Pure: no database."""

from datetime import date

import pytest

from bot.clarify import (
    Decision,
    Option,
    Sibling,
    choose,
    document_decision,
    named,
    pending,
    pending_options,
    period_decision,
    question,
)
from bot.compose import month_name

SIBLINGS = {
    "mensual": Sibling("mensual", "plan mensual", "es", ("anual", "prueba")),
    "anual": Sibling("anual", "plan anual", "es", ("mensual", "prueba")),
    "prueba": Sibling("prueba", "plan de prueba", "es", ("mensual", "anual")),
    "annual": Sibling("annual", "annual plan", "en", ("trial",)),
    "trial": Sibling("trial", "trial plan", "en", ("annual",)),
}
PLANS = (Option("plan anual", doc="anual"), Option("plan mensual", doc="mensual"), Option("plan de prueba", doc="prueba"))


@pytest.mark.parametrize(
    ("query", "docs", "language", "expected"),
    [
        # most kept chunks come from two siblings, none named: ask, offering every sibling of the first, by label
        ("si cancelo me devuelven el dinero?", ["deposito", "anual", "prueba", "anual", "anual"], "es",
         Decision(options=(Option("plan anual", doc="anual"), Option("plan de prueba", doc="prueba"),
                           Option("plan mensual", doc="mensual")))),
        # the question names one: answer with it
        ("si cancelo el plan anual me devuelven todo?", ["anual", "prueba"], "es",
         Decision(chosen=Option("plan anual", doc="anual"))),
        ("reembolzo plan de prueba al 3er dia", ["prueba", "anual"], "es",
         Decision(chosen=Option("plan de prueba", doc="prueba"))),
        # it names two: a comparison, not an ambiguity
        ("diferencia entre el plan anual y el mensual", ["anual", "mensual"], "es", Decision()),
        # one sibling alone is no ambiguity
        ("si cancelo me devuelven el dinero?", ["anual", "anual", "anual"], "es", Decision()),
        # siblings hold less than two thirds of the kept chunks: the question is about something else
        ("quiero bajar de plan", ["prorrateo", "mensual", "anual", "plan", "cambio"], "es", Decision()),
        ("if I downgrade do I get money back", ["reversal", "annual", "annual", "trial", "fees"], "en", Decision()),
        # nothing labelled
        ("cuanto cuesta la reconexion", ["reconexion", "tarifas"], "es", Decision()),
        # the customer's language leads; the English pair is offered in English
        ("can I get a refund if I cancel?", ["annual", "trial", "equipment", "trial", "trial"], "en",
         Decision(options=(Option("annual plan", doc="annual"), Option("trial plan", doc="trial")))),
        # no sibling in the customer's language: the first labelled one leads
        ("refund?", ["anual", "prueba"], "en",
         Decision(options=(Option("plan anual", doc="anual"), Option("plan de prueba", doc="prueba"),
                           Option("plan mensual", doc="mensual")))),
    ],
)
def test_document_decision(query, docs, language, expected):
    assert document_decision(query, docs, SIBLINGS, language=language) == expected


@pytest.mark.parametrize("ranked", [["anual", "prueba", "anual"], ["prueba", "anual", "prueba"],
                                    ["mensual", "anual", "mensual"]])
def test_the_options_read_the_same_whichever_sibling_ranked_first(ranked):
    decision = document_decision("me devuelven el dinero?", ranked, SIBLINGS, language="es")
    assert [option.label for option in decision.options] == ["plan anual", "plan de prueba", "plan mensual"]


def test_a_lone_labelled_document_with_no_sibling_loaded_offers_nothing():
    lonely = {"anual": Sibling("anual", "plan anual", "es", ("mensual",)), "mensual": SIBLINGS["mensual"]}
    assert document_decision("me devuelven?", ["anual", "mensual"], {"anual": lonely["anual"]},
                             language="es") == Decision()


def invoices(*periods: str) -> list[dict]:
    return [{"period": period, "status": "open" if number == 0 else "paid"} for number, period in enumerate(periods)]


def chosen(period: str) -> Decision:
    return Decision(chosen=Option(month_name(period, "es"), period=period))


def asked(*periods: str) -> Decision:
    return Decision(options=tuple(Option(month_name(period, "es"), period=period) for period in periods))


@pytest.mark.parametrize(
    ("today", "query", "held", "expected"),
    [
        # No period words: the newest invoice, whatever its status; no question.
        (date(2026, 10, 20), "¿por qué subió mi factura?", invoices("2026-10", "2026-09"), chosen("2026-10")),
        # The words name one invoice.
        (date(2026, 10, 20), "¿por qué subió mi factura de septiembre?", invoices("2026-10", "2026-09"),
         chosen("2026-09")),
        (date(2026, 10, 20), "why is my 2026-10 bill higher", invoices("2026-10", "2026-09"), chosen("2026-10")),
        # Two months named: the later one, explained against the one before it.
        (date(2026, 10, 20), "octubre o septiembre?", invoices("2026-10", "2026-09"), chosen("2026-10")),
        # A month end: December's bill is out, "este mes" is December, "el mes pasado" November.
        (date(2026, 12, 31), "¿por qué mi factura de este mes llegó más alta que la anterior?",
         invoices("2026-12", "2026-11"), chosen("2026-12")),
        (date(2026, 12, 31), "¿cuánto pagué el mes pasado?", invoices("2026-12", "2026-11"), chosen("2026-11")),
        (date(2026, 12, 31), "why is my bill higher than last month?", invoices("2026-12", "2026-11"),
         chosen("2026-12")),
        # The one before measured against the newest: the newest bill's change is asked about …
        (date(2026, 12, 31), "the one before was lower, why?", invoices("2026-12", "2026-11"), chosen("2026-12")),
        (date(2026, 12, 31), "¿por qué la anterior fue más baja?", invoices("2026-12", "2026-11"), chosen("2026-12")),
        # … but last month's bill being higher may be about its own change.
        (date(2026, 12, 31), "why was last month's bill higher?", invoices("2026-12", "2026-11"), chosen("2026-11")),
        # A year end: on 1 January a cycle issued on the 1st already has January's bill; "diciembre" is last year's.
        (date(2027, 1, 1), "¿y la de diciembre?", invoices("2027-01", "2026-12"), chosen("2026-12")),
        (date(2027, 1, 1), "this month's bill is higher, why?", invoices("2027-01", "2026-12"), chosen("2027-01")),
        (date(2027, 1, 1), "la factura del mes pasado", invoices("2027-01", "2026-12"), chosen("2026-12")),
        # A cycle issued on the 16th: on 5 January the newest bill is December's, so "este mes" is December's …
        (date(2027, 1, 5), "¿por qué subió la factura de este mes?", invoices("2026-12", "2026-11"),
         chosen("2026-12")),
        # … and "enero", not issued yet, leaves two candidates: ask.
        (date(2027, 1, 5), "¿por qué subió la de enero?", invoices("2026-12", "2026-11"),
         asked("2026-12", "2026-11")),
        (date(2027, 1, 31), "la de enero llegó más alta", invoices("2027-01", "2026-12"), chosen("2027-01")),
        (date(2027, 3, 1), "por qué subió febrero", invoices("2027-03", "2027-02"), chosen("2027-02")),
        # A year written out wins over "the most recent such month".
        (date(2027, 3, 1), "la de diciembre de 2025", invoices("2027-03", "2027-02"), chosen("2025-12")),
        # English "may" is the month only beside a bill word or a preposition.
        (date(2026, 10, 20), "may I know why my bill went up?", invoices("2026-10", "2026-09"), chosen("2026-10")),
        (date(2026, 10, 20), "why was my May bill so high?", invoices("2026-10", "2026-09"), chosen("2026-05")),
        # A month not issued yet and one invoice only: nothing to choose between.
        (date(2026, 10, 20), "¿por qué subió la de octubre?", invoices("2026-09"), Decision()),
        (date(2026, 10, 20), "¿por qué subió mi factura?", [], Decision()),
    ],
)
def test_period_decision(today, query, held, expected):
    assert period_decision(query, held, today=today, language="es") == expected


@pytest.mark.parametrize("query", ["recargo?? pero si yo pagué la del mes pasado, xq me ponen eso",
                                   "why the late fee if i paid last month's bill?"])
def test_the_bill_they_say_they_paid_is_not_the_change_asked_about(query):
    held = invoices("2026-12", "2026-11")
    assert period_decision(query, held, today=date(2026, 12, 31), language="es", about="change") == chosen("2026-12")
    # Asked what they paid, the bill before is the one asked about.
    assert period_decision(query, held, today=date(2026, 12, 31), language="es") == chosen("2026-11")


@pytest.mark.parametrize(
    ("reply", "picked"),
    [
        ("el anual", "anual"), ("Plan Anual, por favor", "anual"), ("de prueba", "prueba"),
        ("el mensual", "mensual"), ("el segundo", "mensual"), ("2", "mensual"), ("la primera", "anual"),
        ("anual o mensual, no sé", None), ("no entiendo", None), ("el cuarto", None), ("3 o 1", None),
    ],
)
def test_a_reply_picks_an_option_by_label_or_position(reply, picked):
    option = choose(reply, PLANS)
    assert (option.doc if option else None) == picked


def test_only_words_that_tell_options_apart_count():
    assert named("quiero saber del plan", PLANS) == []


@pytest.mark.parametrize(
    ("kind", "options", "language", "text"),
    [
        ("document", PLANS, "es", "Para responderte bien, ¿cuál es tu caso: plan anual, plan mensual o plan de prueba?"),
        ("document", PLANS[:2], "en", "To answer you properly, which one is yours: plan anual or plan mensual?"),
        ("period", (Option("octubre", period="2026-10"), Option("septiembre", period="2026-09")), "es",
         "¿Te refieres a tu factura de octubre o a la de septiembre?"),
        ("period", (Option("October", period="2026-10"), Option("September", period="2026-09")), "en",
         "Do you mean your October bill or the September one?"),
        ("period", (Option("octubre", period="2026-10"), Option("septiembre", period="2026-09")), "pt",
         "¿Te refieres a tu factura de octubre o a la de septiembre?"),
    ],
)
def test_one_short_question_offers_the_options(kind, options, language, text):
    assert question(kind, options, language) == text


def test_the_pending_question_round_trips():
    stored = pending("document", "¿me devuelven?", PLANS, "es")
    assert stored["query"] == "¿me devuelven?" and pending_options(stored) == PLANS


def test_segment_decision_names_the_kind_of_customer_the_question_names():
    from bot.clarify import segment_decision

    assert segment_decision("recargo para mi empresa", ["business", "home"], language="es").chosen.segment == "business"
    assert segment_decision("late fee on my home plan", [], language="en").chosen.segment == "home"
    assert segment_decision("el plan de 300 megas tiene recargo?", ["home"], language="es").chosen.segment == "home"
    # Working time is not a kind of customer: asking about "business days" still asks whose rule applies.
    asked = segment_decision("how many business days until my service is back?", ["home", "business"], language="en")
    assert asked.chosen is None and [option.segment for option in asked.options] == ["home", "business"]
    assert segment_decision("we are a residential customer", [], language="en").chosen.segment == "home"


def test_segment_decision_asks_only_when_both_kinds_have_a_passage_in_the_first_three():
    from bot.clarify import segment_decision

    asked = segment_decision("cuanto es el recargo", ["home", "", "business"], language="es")
    assert [option.segment for option in asked.options] == ["home", "business"] and asked.chosen is None
    assert segment_decision("cuanto es el recargo", ["", "business", "home"], language="es").options
    assert not segment_decision("cuanto es el recargo", ["", "home", "home"], language="es").options
    assert not segment_decision("cuanto es el recargo", ["home", "", "", "business"], language="es").options
    assert not segment_decision("cuanto es el recargo", [], language="es").options
    # Naming both kinds is not a choice, and is not asked either: the answer covers both.
    both = segment_decision("recargo de hogar y de empresa", ["home", "business"], language="es")
    assert both.chosen is None and not both.options


def test_a_documents_second_passage_for_the_same_kind_does_not_push_the_other_kind_out_of_the_first_three():
    from bot.clarify import segment_decision

    # "¿cuánto es el recargo si pago tarde?" asked by nobody: the invoice-lines page, then two sections of the
    # business late-fee page, then the home one. Two sections of one page are one rule: ask, do not quote it alone.
    segments = ["", "business", "business", "home", "home"]
    docs = ["factura-conceptos-es", "recargo-mora-empresarial-es", "recargo-mora-empresarial-es",
            "recargo-mora-hogar-es", "recargo-mora-hogar-es"]
    assert not segment_decision("cuanto es el recargo", segments, language="es").options
    asked = segment_decision("cuanto es el recargo", segments, language="es", docs=docs)
    assert [option.segment for option in asked.options] == ["home", "business"]
    # Passages of different documents still count one each: a third kind-free page keeps the home rule out.
    spread = segment_decision("cuanto es el recargo", ["", "business", "", "home"], language="es",
                              docs=["factura-conceptos-es", "recargo-mora-empresarial-es", "ciclo-facturacion-es",
                                    "recargo-mora-hogar-es"])
    assert not spread.options


def test_the_bill_before_measured_against_the_newest_is_the_one_a_payment_question_asks_about():
    held = invoices("2026-12", "2026-11")
    query = "the one before was less right? how much was that bill and the igtf"
    assert period_decision(query, held, today=date(2026, 12, 31), language="es", about="payment") == chosen("2026-11")
    # Asked why the bill changed, the newest is the one compared with it.
    assert period_decision(query, held, today=date(2026, 12, 31), language="es", about="change") == chosen("2026-12")
