"""The numeric grounding verifier: every number of an answer is held by, or computed from, its evidence."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.grounding import (
    DEFAULT_BANNED_PHRASES,
    Evidence,
    KeyFigure,
    citation_ids,
    evidence_from_data,
    strip_citations,
    verify,
)

# Venezuelan billing turn: bolívares with dot thousands, dollars with comma decimals.
ES = [
    Evidence("E1", "Factura F-1001 de marzo: monto Bs. 1.234,56, vence el 2024-03-15.", "1234.56"),
    Evidence("E2", "Factura F-1002 de abril: monto USD 45,00, vence el 15/04/2024.", "45.00"),
    Evidence("E3", "Suscriptor: cuenta 0412-555-1234, cédula V-12.345.678."),
    Evidence("E4", "Cargo por reconexión: USD 31,00.", "31.00"),
    Evidence("E5", "El IVA aplicado es 16% sobre el monto base del plan."),
    Evidence("E6", "Recargo por mora mensual", "0.05"),
    Evidence("E7", "Porcentaje de descuento por pago anticipado", "3"),
    Evidence("E8", "Los pagos por transferencia se reflejan en 24 a 48 horas hábiles."),
]
EN = [
    Evidence("E1", "Invoice INV-2024-0311 for March: USD 1,234.56, due 2024-03-15.", "1234.56"),
    Evidence("E2", "Invoice INV-2024-0412 for April: USD 45.00, due 2024-04-15.", "45.00"),
    Evidence("E3", "Account 0412-555-1234 on plan Fiber 100."),
    Evidence("E4", "Sales tax rate", "0.16"),
]
ZH = [
    Evidence("E1", "三月账单金额 26.02 美元，到期日 2024-03-15。", "26.02"),
    Evidence("E2", "账号 0412-555-1234，增值税 16%。"),
]


def rules(answer, evidence, *, customer_view=False):
    """Return (grounded, [(token, rule or None)]) for an answer."""
    verdict = verify(answer, evidence, customer_view=customer_view)
    return verdict.grounded, [(check.token, check.rule) for check in verdict.tokens]


# ---------------------------------------------------------------- every rule, both ways, three languages

RULE_CASES = [
    # R1 literal whole token
    ("es-R1-invoice-number", "La factura F-1001 [E1] está pendiente.", ES, True, [("1001", "R1")]),
    ("es-R1-part-of-longer-number", "Su cédula es 12345678 [E9].", [Evidence("E9", "Cédula 123456789")],
     False, [("12345678", None)]),
    ("es-R1-prefix-of-amount", "Pagó 45 dólares [E9].", [Evidence("E9", "Pago de 45.37 USD")], False,
     [("45", None)]),
    ("es-R1-year-of-a-date", "Es la factura de 2024 [E9].", [Evidence("E9", "Emitida el 2024-03-01")], False,
     [("2024", None)]),
    ("en-R1-hours", "Transfers show up in 24 to 48 business hours [E8].", ES, True, [("24", "R1"), ("48", "R1")]),
    ("zh-R1-identifier-literal", "您的账号是 0412-555-1234 [E2]。", ZH, True, [("0412-555-1234", "R1")]),
    # R2 amount value
    ("es-R2-comma-decimal-vs-dot", "Su factura de abril es de USD 45,00 [E2].", ES, True, [("45,00", "R1")]),
    ("es-R2-us-notation-of-ve-amount", "El monto es Bs. 1,234.56 [E1].", ES, True, [("1,234.56", "R2")]),
    ("es-R2-space-thousands", "El monto es Bs. 1 234,56 [E1].", ES, True, [("1 234,56", "R2")]),
    ("es-R2-one-decimal", "La reconexión cuesta USD 31,0 [E4].", ES, True, [("31,0", "R2")]),
    ("en-R2-ve-notation-of-us-amount", "Your March bill is USD 1.234,56 [E1].", EN, True, [("1.234,56", "R2")]),
    ("zh-R2-dollars", "您三月的账单是 26,02 美元[E1]。", ZH, True, [("26,02", "R2")]),
    ("es-R2-shifted-decimal", "Su factura es de USD 4.500 [E2].", ES, False, [("4.500", None)]),
    ("es-R2-one-cent-off", "Su factura es de USD 45,01 [E2].", ES, False, [("45,01", None)]),
    ("es-R2-one-separator-for-thousands-and-decimals", "Monto Bs. 1,234,56 [E1].", ES, False,
     [("1,234,56", None)]),
    ("en-R2-digits-swapped", "Your bill is USD 1,234.65 [E1].", EN, False, [("1,234.65", None)]),
    ("zh-R2-wrong-amount", "您的账单是 26.20 美元[E1]。", ZH, False, [("26.20", None)]),
    # R3 identifiers by digits
    ("es-R3-phone-without-dashes", "Su número 04125551234 [E3] está registrado.", ES, True,
     [("04125551234", "R3")]),
    ("es-R3-cedula-without-dots", "Su cédula 12345678 [E3] está verificada.", ES, True, [("12345678", "R3")]),
    ("en-R3-phone-with-spaces", "Your account 0412 555 1234 [E3] is active.", EN, True, [("0412 555 1234", "R3")]),
    ("es-R3-extra-digit", "Su número 041255512345 [E3] está registrado.", ES, False, [("041255512345", None)]),
    ("es-R3-six-digits-never-by-digits", "Código 123-456 [E9].", [Evidence("E9", "Código 123456")], False,
     [("123-456", None)]),
    ("es-R3-amount-not-judged-by-digits", "Monto 1.234.567,00 [E9].", [Evidence("E9", "Cuenta 123456700")], False,
     [("1.234.567,00", None)]),
    # R4 derived: sum or difference of two evidence amounts
    ("es-R4-sum", "En total debe USD 76,00 [E2][E4].", ES, True, [("76,00", "R4")]),
    ("es-R4-difference", "La diferencia es USD 14,00 [E2, E4].", ES, True, [("14,00", "R4")]),
    ("en-R4-sum-of-three-is-not-derived", "Altogether USD 1,310.56 [E1][E2][E4].",
     [*EN, Evidence("E4", "Reconnection fee USD 31.00")], False, [("1,310.56", None)]),
    # R5 percentages
    ("es-R5-text", "El IVA es de 16% [E5].", ES, True, [("16%", "R5")]),
    ("es-R5-text-with-space", "El IVA es de 16 % [E5].", ES, True, [("16 %", "R5")]),
    ("es-R5-fraction-value", "El recargo por mora es de 5% [E6].", ES, True, [("5%", "R5")]),
    ("es-R5-number-value-named-percent", "El descuento es de 3% [E7].", ES, True, [("3%", "R5")]),
    ("en-R5-fraction-value", "The sales tax rate is 16% [E4].", EN, True, [("16%", "R5")]),
    ("zh-R5-text", "增值税为 16% [E2]。", ZH, True, [("16%", "R5")]),
    ("es-R5-part-of-longer-percent", "El IVA es de 6% [E5].", ES, False, [("6%", None)]),
    ("es-R5-number-value-not-named-percent", "El descuento es de 24% [E9].", [Evidence("E9", "Días", "24")],
     False, [("24%", None)]),
    ("es-R5-no-number-value", "El descuento es de 24% [E9].", [Evidence("E9", "Descuento", "alto")], False,
     [("24%", None)]),
    ("es-R5-percent-is-not-a-plain-number", "El IVA es 16 [E5].", ES, False, [("16", None)]),
    # R8 dates
    ("es-R8-dmy-for-iso", "Su factura vence el 15/03/2024 [E1].", ES, True, [("15/03/2024", "R8")]),
    ("es-R8-iso-for-dmy", "Su factura vence el 2024-04-15 [E2].", ES, True, [("2024-04-15", "R8")]),
    ("es-R8-short-day-month", "Su factura vence el 15/4/2024 [E2].", ES, True, [("15/4/2024", "R8")]),
    ("en-R8-literal", "Your bill is due 2024-03-15 [E1].", EN, True, [("2024-03-15", "R1")]),
    ("zh-R8-dmy", "到期日是 15/03/2024 [E1]。", ZH, True, [("15/03/2024", "R8")]),
    ("es-R8-reference-that-starts-like-a-date", "Referencia 2024-03-15-001 [E9].",
     [Evidence("E9", "Referencia 2024-03-15-001")], True, [("2024-03-15-001", "R1")]),
    ("es-R8-date-is-not-a-reference", "Referencia 2024-03-15-001 [E1].", ES, False, [("2024-03-15-001", None)]),
    ("es-R5-nbsp-before-percent", "El IVA es de 16\u00a0% [E5].", ES, True, [("16\u00a0%", "R5")]),
    ("es-R8-off-by-one-day", "Su factura vence el 16/03/2024 [E1].", ES, False, [("16/03/2024", None)]),
    ("es-R8-impossible-date", "Vence el 31/02/2024 [E9].", [Evidence("E9", "Vence el 2024-03-02")], False,
     [("31/02/2024", None)]),
    ("es-R8-two-impossible-dates-differ", "Vence el 31/02/2024 [E9].", [Evidence("E9", "Vence el 30/02/2024")],
     False, [("31/02/2024", None)]),
    ("es-R8-impossible-date-copied", "Vence el 31/02/2024 [E9].", [Evidence("E9", "Fecha 31/02/2024")], True,
     [("31/02/2024", "R1")]),
    # R9 everything else
    ("es-R9-unheld-count", "Le quedan 3 días para pagar [E1].", ES, False, [("3", None)]),
    ("en-R9-unheld-count", "You have 3 days left to pay [E1].", EN, False, [("3", None)]),
]


@pytest.mark.parametrize(
    ("answer", "evidence", "grounded", "expected"),
    [pytest.param(a, e, g, x, id=i) for i, a, e, g, x in RULE_CASES],
)
def test_each_number_is_judged_by_the_strictest_rule_that_holds(answer, evidence, grounded, expected):
    assert rules(answer, evidence) == (grounded, expected)


def test_a_derived_amount_is_reported_with_its_operands():
    verdict = verify("En total debe USD 76,00 [E2][E4].", ES, customer_view=False)
    assert [(d.token, d.value, d.expression, d.evidence) for d in verdict.derived] == [
        ("76,00", "76.00", "45,00 (E2) + 31,00 (E4)", ("E2", "E4")),
    ]


def test_a_difference_names_the_larger_amount_first_whatever_the_evidence_order():
    verdict = verify("Le falta USD 14,00 [E4][E2].", ES, customer_view=False)
    assert verdict.grounded
    assert verdict.derived[0].expression == "45,00 (E2) − 31,00 (E4)"
    verdict = verify("Le falta USD 14,00 [E2][E4].", ES, customer_view=False)
    assert verdict.derived[0].expression == "45,00 (E2) − 31,00 (E4)"


def test_the_same_amount_in_text_and_value_of_one_item_is_one_occurrence():
    evidence = [Evidence("E1", "Factura USD 45,00", "45.00")]
    assert not verify("Son USD 90,00 [E1].", evidence, customer_view=False).grounded
    twice = [Evidence("E1", "Factura USD 45,00"), Evidence("E2", "Factura USD 45,00")]
    assert verify("Son USD 90,00 [E1][E2].", twice, customer_view=False).derived[0].evidence == ("E1", "E2")


# ---------------------------------------------------------------- R6 citations

def test_an_unknown_citation_makes_the_answer_ungrounded():
    verdict = verify("Su factura F-1001 está pendiente [E1, E9].", ES, customer_view=False)
    assert not verdict.grounded
    assert [(p.token, p.sentence) for p in verdict.problems] == [
        ("[E1, E9]", "Su factura F-1001 está pendiente [E1, E9]."),
    ]
    assert verdict.problems[0].reason.startswith("E9 is not evidence of this turn (the evidence is E1, E2, E3")
    assert ("[E1, E9]", None) in [(c.token, c.rule) for c in verdict.tokens]


def test_token_checks_follow_the_order_of_the_answer():
    verdict = verify("Debe USD 99,99 [E9].", ES, customer_view=False)
    assert [(c.token, c.kind) for c in verdict.tokens] == [("99,99", "amount"), ("[E9]", "citation")]


def test_a_citation_without_evidence_says_the_evidence_is_empty():
    verdict = verify("Todo en orden [E1].", [], customer_view=False)
    assert verdict.problems[0].reason == (
        "E1 is not evidence of this turn (the evidence is empty); cite one of those ids or remove the claim."
    )


def test_the_digits_of_a_citation_are_not_numbers():
    evidence = [Evidence(f"E{n}", f"Dato {n}") for n in range(1, 13)]
    assert rules("Su plan está activo [E12].", evidence) == (True, [])


def test_a_real_amount_cited_to_the_wrong_invoice_is_a_problem_that_names_the_right_one():
    verdict = verify("Su factura de abril es de USD 31,00 [E2].", ES, customer_view=False)
    assert not verdict.grounded
    (problem,) = verdict.problems
    assert problem.token == "31,00"
    assert problem.sentence == "Su factura de abril es de USD 31,00 [E2]."
    assert problem.reason == (
        "31,00 is not in the evidence cited in this sentence ([E2]); it is in E4, which this sentence does not "
        "cite; the figures in the cited evidence: 1002 (E2), 45,00 (E2), 45.00 (E2) — copy the figure from the "
        "evidence that holds it and cite that item."
    )


def test_a_sum_of_uncited_evidence_is_named_in_the_reason():
    verdict = verify("En total debe USD 76,00 [E5].", ES, customer_view=False)
    assert "it is 45,00 (E2) + 31,00 (E4), which this sentence does not cite" in verdict.problems[0].reason
    assert "; the cited evidence holds no figure —" in verdict.problems[0].reason


def test_a_sentence_without_citations_is_checked_against_all_evidence_and_the_writer_is_told_to_cite():
    verdict = verify("Su cuenta 0412-555-1234 tiene una factura de USD 45,00.", ES, customer_view=False)
    assert verdict.grounded
    assert verdict.warnings == [
        '"Su cuenta 0412-555-1234 tiene una factura de USD 45,00." states figures without a citation; cite the '
        "evidence item that holds each figure (0412-555-1234 → [E3], 45,00 → [E2])."
    ]


def test_an_uncited_sum_suggests_citing_both_operands():
    verdict = verify("En total debe USD 76,00.", ES, customer_view=False)
    assert verdict.grounded
    assert "(76,00 → [E2][E4])" in verdict.warnings[0]


def test_an_uncited_sentence_whose_numbers_all_fail_still_gets_the_citation_warning():
    verdict = verify("Debe USD 99,99.", ES, customer_view=False)
    assert not verdict.grounded
    assert verdict.warnings[0].endswith("(none of them is in the evidence).")
    assert verdict.problems[0].reason.startswith(
        "99,99 is not in the evidence of this turn and is not the sum or difference of two evidence amounts"
    )


def test_an_uncited_number_that_is_not_an_amount_fails_without_talk_of_sums():
    verdict = verify("Le quedan 7 días.", ES, customer_view=False)
    assert verdict.problems[0].reason.startswith("7 is not in the evidence of this turn; the figures in the evidence:")


def test_a_sentence_without_numbers_needs_no_citation():
    assert verify("Gracias por escribirnos.", ES, customer_view=False).warnings == []


def test_a_citation_after_the_period_belongs_to_the_sentence_before_it():
    answer = "Su factura de abril es de USD 45,00. [E2] La reconexión cuesta USD 31,00.[E4] ¿Algo más?"
    verdict = verify(answer, ES, customer_view=False)
    assert verdict.grounded and verdict.warnings == []


def test_a_period_after_an_abbreviation_does_not_end_the_sentence():
    # "Bs." must not split the sentence: the citation at the end covers the amount.
    verdict = verify("Según la factura [E1], debe Bs. 1.234,56 desde marzo.", ES, customer_view=False)
    assert verdict.grounded and verdict.warnings == []


def test_a_period_after_an_ordinary_word_ends_the_sentence():
    verdict = verify("Según la factura [E1], debe esto. USD 31,00 es la reconexión.", ES, customer_view=False)
    assert verdict.grounded
    assert verdict.warnings == [
        '"USD 31,00 es la reconexión." states figures without a citation; cite the evidence item that holds '
        "each figure (31,00 → [E4])."
    ]


def test_chinese_sentences_end_at_the_full_stop_without_a_space():
    answer = "您的账单是 26.02 美元[E1]。账号是 0412-555-1234[E2]！"
    assert rules(answer, ZH) == (True, [("26.02", "R1"), ("0412-555-1234", "R1")])
    swapped = "您的账单是 26.02 美元[E2]。账号是 0412-555-1234[E1]！"
    assert rules(swapped, ZH) == (False, [("26.02", None), ("0412-555-1234", None)])


def test_each_line_is_a_sentence():
    answer = "Factura de abril: USD 45,00 [E2]\nReconexión: USD 31,00"
    verdict = verify(answer, ES, customer_view=False)
    assert verdict.grounded
    assert verdict.warnings[0].startswith('"Reconexión: USD 31,00" states figures without a citation')


# ---------------------------------------------------------------- R6 one citation group per figure

# Two months of one account: the figures are real, only the citations can be swapped.
MONTHS_ES = [
    Evidence("E1", "Factura de septiembre: USD 30,00, vence el 2024-09-10; IVA 16 %.", "30.00"),
    Evidence("E2", "Factura de octubre: USD 45,00, vence el 2024-10-10; IVA 8 %.", "45.00"),
]
MONTHS_EN = [
    Evidence("E1", "September invoice: USD 30.00, due 2024-09-10; VAT 16%.", "30.00"),
    Evidence("E2", "October invoice: USD 45.00, due 2024-10-10; VAT 8%.", "45.00"),
]

SWAPPED = [
    ("es-amounts", "Octubre 45,00 [E1] y septiembre 30,00 [E2].", MONTHS_ES, ["45,00", "30,00"]),
    ("en-amounts", "October was USD 45.00 [E1] and September USD 30.00 [E2].", MONTHS_EN, ["45.00", "30.00"]),
    ("es-dates", "La de octubre vence el 10/10/2024 [E1] y la de septiembre el 10/09/2024 [E2].", MONTHS_ES,
     ["10/10/2024", "10/09/2024"]),
    ("en-dates", "October is due 2024-10-10 [E1], September was due 2024-09-10 [E2].", MONTHS_EN,
     ["2024-10-10", "2024-09-10"]),
    ("es-percents", "En octubre el IVA fue 8 % [E1] y en septiembre 16 % [E2].", MONTHS_ES, ["8 %", "16 %"]),
    ("en-percents", "October VAT was 8% [E1], September VAT 16% [E2].", MONTHS_EN, ["8%", "16%"]),
]


@pytest.mark.parametrize(("answer", "evidence", "wrong"), [pytest.param(a, e, w, id=i) for i, a, e, w in SWAPPED])
def test_swapped_citations_are_the_wrong_item_even_though_the_sentence_cites_both(answer, evidence, wrong):
    verdict = verify(answer, evidence, customer_view=True)
    assert not verdict.grounded
    assert [p.token for p in verdict.problems] == wrong
    assert all("cited the wrong item" in p.reason for p in verdict.problems)
    fixed = answer.replace("[E1]", "[X]").replace("[E2]", "[E1]").replace("[X]", "[E2]")
    assert verify(fixed, evidence, customer_view=True).grounded


def test_the_wrong_item_reason_names_the_item_that_holds_the_figure():
    verdict = verify("Octubre 45,00 [E1] y septiembre 30,00 [E2].", MONTHS_ES, customer_view=False)
    first = verdict.problems[0]
    assert first.reason == (
        "45,00 cited the wrong item: the citation after it ([E1]) does not hold it; it is in E2, which this "
        "sentence cites for another figure; the figures in the evidence cited after it: 30,00 (E1), 30.00 (E1) — "
        "put [E2] right after 45,00 and each citation after the figure it holds."
    )
    assert [(c.token, c.cited) for c in verdict.tokens if c.kind == "amount"] == [("45,00", ("E1",)),
                                                                                  ("30,00", ("E2",))]


def test_a_single_citation_group_covers_every_figure_of_its_sentence_wherever_it_stands():
    assert verify("[E1][E2] Septiembre 30,00 y octubre 45,00.", MONTHS_ES, customer_view=True).grounded
    assert verify("Septiembre [E1, E2] 30,00 y octubre 45,00.", MONTHS_ES, customer_view=True).grounded
    verdict = verify("Septiembre 30,00 y octubre 45,00 [E1].", MONTHS_ES, customer_view=False)
    assert [p.token for p in verdict.problems] == ["45,00"]
    assert verdict.problems[0].reason.startswith("45,00 is not in the evidence cited in this sentence ([E1]); "
                                                 "it is in E2, which this sentence does not cite")


def test_adjacent_markers_are_one_group_even_with_a_space_between():
    verdict = verify("Septiembre 30,00 [E1] [E2] y octubre 45,00 [E2].", MONTHS_ES, customer_view=True)
    assert verdict.grounded
    assert [c.cited for c in verdict.tokens if c.kind == "amount"] == [("E1", "E2"), ("E2",)]


def test_a_figure_after_the_last_group_answers_to_the_last_group():
    assert verify("Septiembre [E1] y octubre [E2]: 45,00.", MONTHS_ES, customer_view=True).grounded
    verdict = verify("Octubre [E2] y septiembre [E1]: 45,00.", MONTHS_ES, customer_view=True)
    assert "cited the wrong item" in verdict.problems[0].reason


def test_a_sum_keeps_its_rule_when_its_operands_are_cited_in_separate_groups():
    verdict = verify("Septiembre 30,00 [E1], octubre 45,00 [E2]: en total 75,00.", MONTHS_ES, customer_view=True)
    assert verdict.grounded
    assert [(d.token, d.expression) for d in verdict.derived] == [("75,00", "30,00 (E1) + 45,00 (E2)")]


def test_a_figure_held_by_no_group_of_the_sentence_is_explained_against_its_own_group():
    verdict = verify("Septiembre 30,00 [E1], octubre 99,00 [E2].", MONTHS_ES, customer_view=False)
    assert verdict.problems[0].reason.startswith("99,00 is not in the evidence cited after it ([E2])")
    verdict = verify("Septiembre 30,00 [E1], octubre 31,00 [E2].", ES[3:4] + MONTHS_ES, customer_view=False)
    assert "it is in E4, which this sentence does not cite" in verdict.problems[0].reason


def test_two_groups_citing_the_same_item_leave_nothing_to_swap():
    verdict = verify("Vence el 10/09/2024 [E1] y cuesta 45,00 [E1].", MONTHS_ES, customer_view=False)
    assert [p.token for p in verdict.problems] == ["45,00"]
    assert "cited the wrong item" not in verdict.problems[0].reason


def test_a_sum_of_two_other_groups_is_not_a_wrong_item():
    evidence = [*MONTHS_ES, Evidence("E3", "Reconexión USD 5,00", "5.00")]
    verdict = verify("Reconexión 5,00 [E3], septiembre [E1] y octubre [E2] suman 75,00 [E3].", evidence,
                     customer_view=False)
    assert verdict.grounded and verdict.derived[0].expression == "30,00 (E1) + 45,00 (E2)"


def test_an_internal_note_must_cite_every_figure():
    verdict = verify("La diferencia es 45,00 - 30,00 = 15,00.", MONTHS_ES, customer_view=False,
                     require_citations=True)
    assert not verdict.grounded and verdict.warnings == []
    assert verdict.problems[0].reason.startswith("this sentence states figures without a citation; cite the "
                                                 "evidence item right after each figure (45,00 → [E2]")
    assert verify("La diferencia es 45,00 [E2] - 30,00 [E1] = 15,00 [E1][E2].", MONTHS_ES, customer_view=False,
                  require_citations=True).grounded


# ---------------------------------------------------------------- R7 customer view

@pytest.mark.parametrize("phrase", DEFAULT_BANNED_PHRASES)
def test_every_default_banned_promise_is_rejected_in_the_customer_view(phrase):
    answer = f"Su factura es de USD 45,00 [E2]. {phrase.upper()}."
    verdict = verify(answer, ES, customer_view=True)
    assert not verdict.grounded
    assert [p.token for p in verdict.problems] == [phrase]
    assert verdict.problems[0].sentence == f"{phrase.upper()}."


def test_banned_promises_are_found_without_accents_and_across_a_line_break():
    verdict = verify("Tranquilo, el dinero llegara\nhoy.", ES, customer_view=True)
    assert [(p.token, p.sentence) for p in verdict.problems] == [
        ("el dinero llegará hoy", "Tranquilo, el dinero llegara\nhoy."),
    ]


def test_the_banned_list_is_extendable():
    answer = "Su caso quedó resuelto para siempre."
    assert verify(answer, ES, customer_view=True).grounded
    verdict = verify(answer, ES, customer_view=True, banned_phrases=["resuelto para siempre", "  "])
    assert [p.token for p in verdict.problems] == ["resuelto para siempre"]


def test_banned_promises_are_allowed_outside_the_customer_view():
    assert verify("Le garantizamos el reembolso.", ES, customer_view=False).grounded


@pytest.mark.parametrize("answer", ["Revise timezone_change_date.", "Su plan_id es el que tiene."])
def test_snake_case_jargon_is_rejected_in_the_customer_view(answer):
    verdict = verify(answer, ES, customer_view=True)
    assert not verdict.grounded
    assert "is an internal field name" in verdict.problems[0].reason
    assert verify(answer, ES, customer_view=False).grounded


def test_underscores_that_are_not_jargon_pass():
    assert verify("Escriba _hola_ para empezar.", ES, customer_view=True).grounded


@pytest.mark.parametrize("answer", ["Según E2, su factura vence pronto.", "Su factura vence pronto (E2)."])
def test_a_bare_evidence_id_is_jargon_for_the_customer_and_a_warning_for_analysts(answer):
    verdict = verify(answer, ES, customer_view=True)
    assert [(p.token, "outside brackets" in p.reason) for p in verdict.problems] == [("E2", True)]
    assert [(c.token, c.rule) for c in verdict.tokens] == [("E2", None)]
    analyst = verify(answer, ES, customer_view=False)
    assert analyst.grounded
    assert analyst.warnings == ["E2 is written without brackets; cite it as [E2]."]


def test_an_e_number_that_names_no_evidence_is_checked_as_a_number():
    evidence = [Evidence("E1", "Comprobante E12345678 por USD 45,00")]
    assert rules("Su comprobante E12345678 [E1] está pagado.", evidence) == (True, [("12345678", "R1")])
    assert rules("Su comprobante E12345679 [E1] está pagado.", evidence) == (False, [("12345679", None)])


# ---------------------------------------------------------------- messages the writer can act on

def test_a_shifted_decimal_is_explained_as_a_moved_separator():
    verdict = verify("Su factura es de USD 4.500 [E2].", ES, customer_view=False)
    assert "; it has the digits of 45,00 (E2) with the separator moved, which changes the value;" in (
        verdict.problems[0].reason
    )


def test_a_rounded_amount_is_explained_as_rounded():
    verdict = verify("Debe Bs. 1.234 [E1].", ES, customer_view=False)
    assert "; it looks like 1.234,56 (E1) rounded — write the exact figure;" in verdict.problems[0].reason
    verdict = verify("Debe Bs. 1.234,00 [E1].", ES, customer_view=False)
    assert "; it looks like 1.234,56 (E1) rounded" in verdict.problems[0].reason
    verdict = verify("Debe Bs. 1.235 [E1].", ES, customer_view=False)
    assert "; it looks like 1.234,56 (E1) rounded" in verdict.problems[0].reason
    verdict = verify("Debe Bs. 1.236 [E1].", ES, customer_view=False)
    assert "rounded" not in verdict.problems[0].reason


@pytest.mark.parametrize("answer", ["El descuento es 45% [E2].", "Vence el 45/00/2024 [E2]."])
def test_a_percentage_or_a_date_is_never_explained_as_a_mangled_amount(answer):
    reason = verify(answer, ES, customer_view=False).problems[0].reason
    assert "rounded" not in reason and "separator moved" not in reason


def test_a_figure_written_twice_in_the_evidence_is_listed_once():
    evidence = [Evidence("E1", "Cargo USD 31,00; total USD 31,00", "31,00")]
    reason = verify("Debe USD 13,00 [E1].", evidence, customer_view=False).problems[0].reason
    assert "; the figure in the cited evidence: 31,00 (E1) —" in reason


def test_a_wrong_identifier_lists_the_identifiers_of_the_cited_evidence():
    verdict = verify("Su cuenta es 0412-555-1239 [E3].", ES, customer_view=False)
    assert verdict.problems[0].reason == (
        "0412-555-1239 is not in the evidence cited in this sentence ([E3]); the identifiers in the cited "
        "evidence: 0412-555-1234 (E3), 12.345.678 (E3) — copy the identifier from the evidence that holds it "
        "and cite that item."
    )


def test_a_wrong_date_lists_the_one_date_of_the_cited_evidence():
    verdict = verify("Vence el 2024-03-16 [E1].", ES, customer_view=False)
    assert verdict.problems[0].reason == (
        "2024-03-16 is not in the evidence cited in this sentence ([E1]); the date in the cited evidence: "
        "2024-03-15 (E1) — copy the date from the evidence that holds it and cite that item."
    )


def test_a_bare_year_points_at_the_dates_and_a_wrong_percent_at_the_percentages():
    verdict = verify("Es de 2024 [E2]. El IVA es 61% [E5].", ES, customer_view=False)
    year, percent = (p.reason for p in verdict.problems)
    assert "the figures in the cited evidence: 1002 (E2), 45,00 (E2), 15/04/2024 (E2), 45.00 (E2)" in year
    assert "the percentage in the cited evidence: 16% (E5) — copy the percentage" in percent


def test_a_long_listing_is_cut_short():
    evidence = [Evidence("E1", " ".join(f"{n},50" for n in range(10, 20)))]
    reason = verify("Debe 99,99 [E1].", evidence, customer_view=False).problems[0].reason
    assert "10,50 (E1), 11,50 (E1)" in reason and "17,50 (E1), …" in reason and "18,50" not in reason


def test_evidence_that_mentions_citations_is_still_indexed():
    evidence = [Evidence("E1", "Resumen [E2] con USD 45,00 según E2"), Evidence("E2", "Factura USD 45,00")]
    assert rules("Debe USD 45,00 [E1].", evidence) == (True, [("45,00", "R1")])


# ---------------------------------------------------------------- realistic narrations that get numbers wrong

NARRATIONS = [
    pytest.param(
        "Su factura F-1001 de marzo es de USD 45,00 [E1]. La F-1002 de abril es de Bs. 1.234,56 [E2]. "
        "Ambas siguen pendientes.",
        ["45,00", "1.234,56"], id="es-swapped-invoices"),
    pytest.param(
        "Su factura de marzo es de Bs. 1.235 [E1] y vence el 15/03/2024 [E1]. La de abril es de USD 45 [E2].",
        ["1.235", "45"], id="es-rounded-amounts"),
    pytest.param(
        "Su factura de abril es de USD 4.500 [E2]. La de marzo es de Bs. 123.456 [E1]. Puede pagarlas hoy.",
        ["4.500", "123.456"], id="es-shifted-decimals"),
    pytest.param(
        "Su factura de marzo es de Bs. 1.234,56 [E1]. Vence el 16/03/2024 [E1]. Después se cobra mora.",
        ["16/03/2024"], id="es-due-date-off-by-one"),
    pytest.param(
        "Entre las dos facturas y la reconexión debe USD 1.310,56 [E1][E2][E4]. Puede pagar por transferencia "
        "[E8]. Se refleja en 24 a 48 horas hábiles [E8].",
        ["1.310,56"], id="es-total-nobody-computed"),
    pytest.param(
        "Your March invoice is USD 45.00 [E1]. Your April invoice is USD 1,234.56 [E2]. Both are open.",
        ["45.00", "1,234.56"], id="en-swapped-invoices"),
    pytest.param(
        "Your April invoice INV-2024-0412 is USD 45.00 [E2]. It is due on 2024-04-16 [E2]. Pay before then.",
        ["2024-04-16"], id="en-due-date-off-by-one"),
    pytest.param(
        "您三月的账单是 260.2 美元[E1]。到期日是 2024-03-15[E1]。", ["260.2"], id="zh-shifted-decimal"),
]


@pytest.mark.parametrize(("answer", "wrong"), NARRATIONS)
def test_answers_that_narrate_correct_numbers_wrong_are_rejected(answer, wrong, request):
    evidence = {"es": ES, "en": EN, "zh": ZH}[request.node.callspec.id[:2]]
    verdict = verify(answer, evidence, customer_view=True)
    assert not verdict.grounded
    assert [p.token for p in verdict.problems] == wrong


def test_a_correct_multi_sentence_answer_is_grounded_and_fully_traced():
    answer = (
        "Su factura F-1001 de marzo es de Bs. 1.234,56 [E1] y vence el 15/03/2024 [E1]. "
        "La factura de abril es de USD 45,00 [E2]; con la reconexión de USD 31,00 [E4] suma USD 76,00 [E2][E4]. "
        "El IVA aplicado es 16% [E5]."
    )
    verdict = verify(answer, ES, customer_view=True)
    assert verdict.grounded and verdict.problems == [] and verdict.warnings == []
    assert [(c.token, c.rule, c.evidence) for c in verdict.tokens] == [
        ("1001", "R1", ("E1",)),
        ("1.234,56", "R1", ("E1",)),
        ("15/03/2024", "R8", ("E1",)),
        ("45,00", "R1", ("E2",)),
        ("31,00", "R1", ("E4",)),
        ("76,00", "R4", ("E2", "E4")),
        ("16%", "R5", ("E5",)),
    ]
    first = verdict.tokens[0]
    assert answer[first.start:first.end] == "1001" and first.ok


# ---------------------------------------------------------------- key figures

def test_a_key_figure_must_appear_in_the_answer_in_any_notation():
    answer = "Le cobramos USD 45,00 [E2] en abril."
    assert verify(answer, ES, customer_view=True, key_figures=["45.00"]).grounded
    verdict = verify(answer, ES, customer_view=True, key_figures=["31.00"])
    assert [(p.token, p.sentence) for p in verdict.problems] == [("31.00", "")]
    assert "must state 31.00" in verdict.problems[0].reason


def test_the_verdict_as_json_has_the_command_shape():
    verdict = verify("Debe USD 76,00 [E2][E4]. Y USD 1,00 [E2].", ES, customer_view=False)
    assert verdict.as_json() == {
        "grounded": False,
        "problems": [{"token": "1,00", "sentence": "Y USD 1,00 [E2].", "reason": verdict.problems[0].reason}],
        "warnings": [],
        "derived": [{"token": "76,00", "value": "76.00", "expression": "45,00 (E2) + 31,00 (E4)",
                     "evidence": ["E2", "E4"]}],
    }


def test_a_key_figure_may_name_the_item_that_holds_it():
    verdict = verify("Le cobramos USD 45,00 [E2].", ES, customer_view=True,
                     key_figures=[KeyFigure("31.00", "E4", "reconnection")])
    assert verdict.problems[0].reason.startswith(
        "The answer must state 31.00 (reconnection), the key figure of this finding (E4 holds it);")
    assert verify("Le cobramos USD 31,00 [E4].", ES, customer_view=True,
                  key_figures=[KeyFigure("31.00", "E4", "reconnection"), "2024-04-15"]).problems[0].token == "2024-04-15"


def test_a_key_figure_without_a_number_is_a_programming_error():
    with pytest.raises(ValueError, match="holds no number"):
        verify("Hola.", ES, customer_view=True, key_figures=["el sobrecargo"])


# ---------------------------------------------------------------- strip_citations

@pytest.mark.parametrize(
    ("answer", "customer_text"),
    [
        ("Su factura es de USD 45,00 [E2].", "Su factura es de USD 45,00."),
        ("[E1] Debe Bs. 1.234,56 [E1, E2] hoy.", "Debe Bs. 1.234,56 hoy."),
        ("您的账单是 26.02 美元[E1]。", "您的账单是 26.02 美元。"),
        ("Sin citas.", "Sin citas."),
    ],
)
def test_strip_citations_leaves_the_customer_text(answer, customer_text):
    assert strip_citations(answer) == customer_text


# ---------------------------------------------------------------- evidence from JSON

def test_evidence_from_data_keeps_values_as_written():
    data = [
        {"id": "E1", "text": "Factura", "value": Decimal("45.00")},
        {"id": "E2", "text": "Cuenta", "value": "0412-555-1234"},
        {"id": "E3", "text": "Días", "value": 3},
        {"id": "E4", "value": 0.16},
        {"id": "E5", "text": "Fragmento del artículo", "value": None},
    ]
    assert evidence_from_data(data) == [
        Evidence("E1", "Factura", "45.00"),
        Evidence("E2", "Cuenta", "0412-555-1234"),
        Evidence("E3", "Días", "3"),
        Evidence("E4", "", "0.16"),
        Evidence("E5", "Fragmento del artículo", None),
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"id": "E1"}, 'evidence must be a list of {"id", "text", "value"}'),
        (["E1"], 'evidence[0] must be an object with "id", "text" and "value"'),
        ([{"id": "E1", "text": "x"}, {"text": "y"}], 'evidence[1].id must be a string such as "E1"'),
        ([{"id": "chunk-3", "text": "x"}], "(E and a number), not 'chunk-3'"),
        ([{"id": "E1", "text": 5}], "evidence[0].text must be a string"),
        ([{"id": "E1", "text": "x", "value": True}], "evidence[0].value must be a string, a number or null"),
        ([{"id": "E1", "text": "x", "value": {"amount": 1}}], "evidence[0].value must be"),
    ],
)
def test_malformed_evidence_names_the_item_at_fault(data, message):
    with pytest.raises(ValueError) as raised:
        evidence_from_data(data)
    assert message in str(raised.value)


# ---------------------------------------------------------------- properties

def ve(cents):
    """1.234,56"""
    return f"{cents // 100:,}".replace(",", ".") + f",{cents % 100:02d}"


def us(cents):
    """1,234.56"""
    return f"{cents // 100:,}.{cents % 100:02d}"


def spaced(cents):
    """1 234,56"""
    return f"{cents // 100:,}".replace(",", " ") + f",{cents % 100:02d}"


def plain_comma(cents):
    """1234,56"""
    return f"{cents // 100},{cents % 100:02d}"


def plain_dot(cents):
    """1234.56"""
    return f"{cents // 100}.{cents % 100:02d}"


NOTATIONS = [ve, us, spaced, plain_comma, plain_dot]
amounts = st.integers(min_value=0, max_value=10**11)
notations = st.sampled_from(NOTATIONS)


@given(cents=amounts, written=notations, copied=notations)
def test_an_amount_copied_from_evidence_in_any_notation_passes(cents, written, copied):
    evidence = [Evidence("E1", f"Monto de la factura: {written(cents)} USD.")]
    grounded, checks = rules(f"Su factura es de {copied(cents)} USD [E1].", evidence)
    assert grounded
    assert checks[0][1] in {"R1", "R2"}


@given(cents=amounts, written=notations)
def test_an_amount_in_a_billing_value_supports_the_answer(cents, written):
    evidence = [Evidence("E1", "Monto de la factura", plain_dot(cents))]
    assert verify(f"Debe {written(cents)} [E1].", evidence, customer_view=True).grounded


@given(
    held=st.lists(st.integers(min_value=1, max_value=10**7), min_size=1, max_size=4),
    said=st.integers(min_value=0, max_value=2 * 10**7),
    notation=notations,
)
def test_an_amount_of_another_value_passes_only_as_a_sum_or_difference_of_two(held, said, notation):
    evidence = [Evidence(f"E{n}", f"Monto: {ve(cents)}") for n, cents in enumerate(held, start=1)]
    pairs = [(a, b) for i, a in enumerate(held) for b in held[i + 1:]]
    derivable = {a + b for a, b in pairs} | {abs(a - b) for a, b in pairs}
    verdict = verify(f"Debe {notation(said)}.", evidence, customer_view=False)
    if said in held:
        assert verdict.grounded and verdict.derived == []
    else:
        assert verdict.grounded == (said in derivable)
        assert [d.token for d in verdict.derived] == ([notation(said)] if said in derivable else [])


def identifier_formats():
    def dashed(digits):
        return f"{digits[:4]}-{digits[4:7]}-{digits[7:]}".rstrip("-")

    def dotted(digits):
        return f"{int(digits):,}".replace(",", ".") if digits[0] != "0" else digits

    def grouped(digits):
        head = len(digits) % 3 or 3
        return " ".join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])

    return st.sampled_from([str, dashed, dotted, grouped])


@given(
    digits=st.text(alphabet="0123456789", min_size=7, max_size=12),
    position=st.integers(min_value=0, max_value=12),
    extra=st.sampled_from("0123456789"),
    written=identifier_formats(),
    copied=identifier_formats(),
)
def test_an_identifier_passes_in_any_grouping_and_fails_with_a_digit_added(digits, position, extra, written,
                                                                           copied):
    evidence = [Evidence("E1", f"Cuenta del suscriptor: {written(digits)}.")]
    assert verify(f"Su cuenta es {copied(digits)} [E1].", evidence, customer_view=True).grounded
    longer = digits[:position] + extra + digits[position:]
    assert not verify(f"Su cuenta es {copied(longer)} [E1].", evidence, customer_view=True).grounded


@given(answer=st.text(alphabet="Su factura 0123456789.,[]E ", max_size=60))
def test_stripped_answers_carry_no_citation_and_verify_never_crashes(answer):
    assert "[E1]" not in strip_citations(answer + " [E1]")
    verify(answer, ES, customer_view=True)


@pytest.mark.parametrize("answer, ids", [
    ("Debes 45,00 [E2] y 10,00 [E1, E10]. Vence pronto [E2][E3].", ["E1", "E2", "E3", "E10"]),
    ("Sin citas.", []),
    ("Grupo con punto y coma [E4; E5].", ["E4", "E5"]),
])
def test_citation_ids_reads_grouped_markers(answer, ids):
    assert citation_ids(answer) == ids


# --- the policy that applies to this customer --------------------------------------------------------------------

HOME_FEE = Evidence("E1", "El recargo por mora es el 5 % de lo que quede sin pagar al terminar los cinco días de gracia.")
BUSINESS_FEE = Evidence("E2", "El recargo es un monto fijo de USD 3,00 por cada factura vencida.",
                        not_for="for business customers; this customer's account is home")


def test_a_business_figure_in_a_home_customers_answer_fails_with_a_reason_the_rewrite_can_use():
    verdict = verify("El recargo por mora es de USD 3,00 [E2].", [HOME_FEE, BUSINESS_FEE], customer_view=True)
    assert not verdict.grounded
    [problem] = verdict.problems
    assert problem.token == "3,00" and "for business customers" in problem.reason
    assert "policy that applies to this customer" in problem.reason


def test_the_home_customers_own_figure_passes():
    verdict = verify("El recargo es el 5 % [E1] de lo que quede sin pagar.", [HOME_FEE, BUSINESS_FEE],
                     customer_view=True)
    assert verdict.grounded, verdict.problems


def test_a_figure_also_held_by_evidence_for_this_customer_passes():
    shared = Evidence("E3", "Para todos los clientes el recargo nunca supera USD 3,00 por factura.")
    verdict = verify("El recargo no supera USD 3,00 [E2][E3].", [HOME_FEE, BUSINESS_FEE, shared], customer_view=True)
    assert verdict.grounded, verdict.problems


@pytest.mark.parametrize(("answer", "evidence", "said"), [
    # The number is in the evidence, its count of time is not: a weekend, or a unit, apart.
    ("Te lo devolvemos en un máximo de 3 días [E1].", "La devolución se hace en un máximo de 3 días hábiles.",
     "“3 días” changes what is counted: the evidence says “3 días hábiles” (E1), working days"),
    ("The refund takes 10 business days [E1].", "Tienes 10 días continuos para devolver los equipos.",
     "“10 business days” changes what is counted: the evidence says “10 días” (E1), calendar days"),
    ("Verificamos los pagos en un máximo de 48 días [E1].", "Verificamos los dos pagos en un máximo de 48 horas.",
     "“48 días” changes the unit: the evidence counts 48 as “48 horas” (E1)"),
])
def test_a_count_of_time_that_changes_its_unit_or_its_kind_of_day_fails(answer, evidence, said):
    verdict = verify(answer, [Evidence("E1", evidence)], customer_view=True)
    assert not verdict.grounded
    assert len(verdict.problems) == 1 and verdict.problems[0].reason.startswith(said)
    assert [check.rule for check in verdict.tokens] == [None]


@pytest.mark.parametrize(("answer", "evidence"), [
    ("Se hace en un máximo de 3 días hábiles [E1].", "Se hace en un máximo de 3 días hábiles."),
    ("Card holds are returned within 72 hours [E1].", "Las retenciones se devuelven en 72 horas."),
    ("It takes 3 working days [E1].", "A veces 3 días, a veces 3 días hábiles."),  # one of them is enough
    # The evidence gives the number no unit of time ("el día 15" names a day): the number rules alone decide.
    ("Se suspende a los 15 días del vencimiento [E1].", "Al día 15 después del vencimiento el servicio se suspende."),
    ("Tienes 3 facturas vencidas [E1].", "Hay 3 facturas vencidas en la cuenta."),
])
def test_a_count_of_time_as_the_evidence_states_it_passes(answer, evidence):
    verdict = verify(answer, [Evidence("E1", evidence)], customer_view=True)
    assert verdict.grounded, verdict.problems
