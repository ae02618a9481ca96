"""Templates as text, Graph error sentences: pure, no database."""

import pytest

from desk.graph_errors import error_sentence, failure_explained
from desk.template_text import (
    body_problem,
    buttons_problem,
    language_matches,
    parameter_problem,
    template_render,
    template_variables,
)


@pytest.mark.parametrize("body, numbers", [
    ("Hola {{1}}, su saldo es {{2}}.", [1, 2]),
    ("Hola {{ 1 }} y {{1}} otra vez.", [1]),
    ("Sin variables.", []),
    ("{{2}} antes que {{1}}", [1, 2]),
])
def test_variables_are_read_in_order_each_once(body, numbers):
    assert template_variables(body) == numbers


@pytest.mark.parametrize("body, problem", [
    ("Hola {{1}}, su saldo es {{2}}.", ""),
    ("", "Write the body"),
    ("Hola {{1}}, su nota {{3}}.", "no gap"),
    ("{{1}}, su saldo está listo.", "starts or ends"),
    ("Su saldo es {{1}}", "starts or ends"),
    ("x" * 1025, "at most 1,024"),
])
def test_a_body_meta_would_refuse_is_refused_with_the_reason(body, problem):
    found = body_problem(body)
    assert (problem in found) if problem else found == ""


@pytest.mark.parametrize("value, problem", [
    ("Marisol", ""),
    ("", "Fill in {{2}}"),
    ("   ", "Fill in {{2}}"),
    ("dos\nlíneas", "one line"),
    ("tab\there", "one line"),
    ("muchos     espacios", "four spaces"),
    ("x" * 1025, "at most"),
])
def test_a_value_meta_would_refuse_is_named(value, problem):
    found = parameter_problem(2, value)
    assert (problem in found) if problem else found == ""


def test_a_body_is_filled_in_and_a_missing_value_stays_visible():
    body = "Hola {{1}}, su factura de {{2}} está lista."
    assert template_render(body, {1: "Marisol", 2: "Bs. 406,00"}) == "Hola Marisol, su factura de Bs. 406,00 está lista."
    assert template_render(body, {1: "Marisol", 2: " "}) == "Hola Marisol, su factura de {{2}} está lista."


def test_buttons_follow_metas_limits():
    assert buttons_problem(["Sí", "No"]) == ""
    assert "25 characters" in buttons_problem(["x" * 26])
    assert "same text" in buttons_problem(["Sí", "Sí"])
    assert "at most 10" in buttons_problem([str(n) for n in range(11)])


@pytest.mark.parametrize("template, customer, matches", [
    ("es", "es", True), ("es_MX", "es", True), ("en_US", "en", True), ("en", "es", False), ("es", "en", False),
])
def test_a_template_speaks_the_customers_language_by_its_first_part(template, customer, matches):
    assert language_matches(template, customer) is matches


def test_a_failure_reads_its_code_and_says_what_to_do():
    re_engagement = failure_explained("Re-engagement message (code 131047): Message failed to send because more "
                                      "than 24 hours have passed")
    assert re_engagement.code == 131047
    assert re_engagement.sentence == "More than 24 hours since the customer last wrote — send a template."
    assert failure_explained("WhatsApp API 400: Template name does not exist (code 132001)").code == 132001
    assert failure_explained("(#131026) Message undeliverable").sentence.startswith("WhatsApp could not deliver")
    unknown = failure_explained("something odd (code 999999)")
    assert (unknown.code, unknown.sentence) == (999999, "")
    assert failure_explained("").code is None and error_sentence(None) == ""
