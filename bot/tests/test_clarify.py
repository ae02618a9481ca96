"""Clarifying questions: when to ask, what to offer, how a reply picks an option. Pure: no database."""

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


INVOICES = [{"period": "2026-10", "status": "open"}, {"period": "2026-09", "status": "paid"}]


@pytest.mark.parametrize(
    ("query", "invoices", "expected"),
    [
        ("¿por qué subió mi factura?", INVOICES,
         Decision(options=(Option("octubre", period="2026-10"), Option("septiembre", period="2026-09")))),
        ("¿por qué subió mi factura de septiembre?", INVOICES, Decision(chosen=Option("septiembre", period="2026-09"))),
        ("why is my 2026-10 bill higher", INVOICES, Decision(chosen=Option("octubre", period="2026-10"))),
        ("¿por qué subió mi factura?", [{"period": "2026-10", "status": "overdue"}, INVOICES[1]], Decision()),
        ("¿por qué subió mi factura?", INVOICES[:1], Decision()),
        ("octubre o septiembre?", INVOICES, Decision()),
    ],
)
def test_period_decision(query, invoices, expected):
    assert period_decision(query, invoices, language="es") == expected


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
