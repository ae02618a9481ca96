"""Billing computations on hand-built records: exact Decimal values, derivation texts, notation, currencies.

Pure: no database, no simulator. Expected numbers come from the published rules (kb/sample)
worked by hand, not from running the code.
"""

from datetime import date
from decimal import Decimal

import pytest

from billing.answers import computations as calc
from billing.records import (
    CurrencyMismatch,
    Invoice,
    LineItem,
    Money,
    Payment,
    Plan,
    PlanPrice,
    Promotion,
    money_sum,
)


def usd(amount):
    return Money.of(amount, "USD")


def ves(amount):
    return Money.of(amount, "VES")


def line(n, line_type, amount, **extra):
    return LineItem(
        id=f"L{n}", type=line_type, description=extra.pop("description", line_type), amount=amount, **extra
    )


def invoice(period, lines, *, currency="USD", issue=None, due=None, start=None, end=None, number="1"):
    issue = issue or date.fromisoformat(f"{period}-01")
    return Invoice(
        id=f"F-000{number}-{period.replace('-', '')}",
        customer_id="C-0001",
        period=period,
        issue_date=issue,
        due_date=due or issue.replace(day=10),
        service_start=start or issue,
        service_end=end or issue.replace(day=28),
        status="open",
        currency=currency,
        lines=tuple(lines),
        total=money_sum((li.amount for li in lines), currency),
    )


def by_kind(facts, kind):
    return [fact for fact in facts if fact.kind == kind]


# --- notation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("money", "language", "text"),
    [
        (usd("14.00"), "es", "14,00 USD"),
        (usd("1234.56"), "es", "1.234,56 USD"),
        (ves("1234.56"), "es", "Bs. 1.234,56"),
        (ves("1234567.8"), "es", "Bs. 1.234.567,80"),
        (usd("-5.6"), "es", "-5,60 USD"),
        (ves("-280"), "es", "-Bs. 280,00"),
        (usd("14"), "en", "USD 14.00"),
        (usd("1234.56"), "en", "USD 1,234.56"),
        (ves("1234.56"), "en", "VES 1,234.56"),
        (usd("-7.74"), "en", "-USD 7.74"),
    ],
)
def test_money_notation_per_language(money, language, text):
    assert calc.format_money(money, language) == text


@pytest.mark.parametrize(
    ("rate", "language", "text"),
    [
        (Decimal("16.00"), "es", "16 %"),
        (Decimal("2.50"), "es", "2,5 %"),
        (Decimal("16.00"), "en", "16%"),
        (Decimal("5.00"), "en", "5%"),
    ],
)
def test_rate_notation(rate, language, text):
    assert calc.format_rate(rate, language) == text


# --- currencies ---------------------------------------------------------------------------


def test_usd_and_ves_are_never_mixed():
    with pytest.raises(CurrencyMismatch):
        usd("1.00") + ves("1.00")
    with pytest.raises(CurrencyMismatch):
        calc.invoice_delta_facts(
            invoice("2026-10", [line(1, "recurring", usd("28"))]),
            invoice("2026-09", [line(1, "recurring", ves("1400"))], currency="VES"),
            "es",
        )
    current = invoice("2026-10", [line(1, "recurring", usd("28"))])
    stray = Payment(
        id="P1",
        invoice_id=current.id,
        date=date(2026, 10, 5),
        amount=ves("1400"),
        method="pago_movil",
        status="succeeded",
    )
    with pytest.raises(CurrencyMismatch):
        calc.payment_facts(current, [stray], "es")


def test_money_is_always_two_places_and_rounds_half_up():
    assert Money.of("2.845", "USD").amount == Decimal("2.85")
    assert usd("32.48").times(Decimal("0.05")).amount == Decimal("1.62")  # 1.624
    assert usd("0.10").times(Decimal("0.05")).amount == Decimal("0.01")  # 0.005 → 0.01, half up


# --- month-over-month delta -------------------------------------------------------------


def test_delta_reproduces_the_issue_example_in_spanish():
    previous = invoice("2026-09", [line(1, "recurring", usd("28.00")), line(2, "discount", usd("-14.00"))])
    current = invoice("2026-10", [line(1, "recurring", usd("28.00"))])
    facts = calc.invoice_delta_facts(current, previous, "es")
    assert (
        facts[0].text
        == "Diferencia factura 2026-10 vs 2026-09 = 14,00 USD (descuento promocional terminó: 14,00)"
    )
    assert (facts[0].value, facts[0].currency, facts[0].kind) == ("14.00", "USD", "invoice_delta")
    assert facts[0].derivation.startswith(
        "total(F-0001-202610) - total(F-0001-202609) = 28.00 - 14.00 = 14.00"
    )
    assert [(f.kind, f.value) for f in facts[1:]] == [("delta_by_type", "14.00")]


def test_delta_breaks_down_by_line_type_in_english():
    previous = invoice("2026-09", [line(1, "recurring", usd("20.00")), line(2, "tax", usd("3.20"))])
    current = invoice(
        "2026-10",
        [line(1, "recurring", usd("28.00")), line(2, "proration", usd("2.84")), line(3, "tax", usd("4.93"))],
    )
    facts = calc.invoice_delta_facts(current, previous, "en")
    assert facts[0].text == (
        "Difference invoice 2026-10 vs 2026-09 = USD 12.57 (monthly fee: 8.00; proration: 2.84; taxes: 1.73)"
    )
    assert {f.value for f in facts[1:]} == {"8.00", "2.84", "1.73"}
    assert sum(Decimal(f.value) for f in facts[1:]) == Decimal(facts[0].value)


def test_an_unchanged_bill_says_so():
    lines = [line(1, "recurring", ves("1400.00")), line(2, "tax", ves("224.00"))]
    facts = calc.invoice_delta_facts(
        invoice("2026-10", lines, currency="VES"), invoice("2026-09", lines, currency="VES"), "es"
    )
    assert len(facts) == 1
    assert facts[0].value == "0.00"
    assert facts[0].text == (
        "Factura 2026-10 igual a 2026-09: total Bs. 1.624,00 en ambas (ningún tipo de cargo cambió)"
    )


# --- proration (the knowledge base's worked examples) -----------------------------------


def plan_with_change(old, new, change_day, currency="USD"):
    return Plan(
        code="NEW",
        name="new",
        download_mbps=300,
        upload_mbps=150,
        price=Money.of(new, currency),
        since=change_day,
        price_history=(
            PlanPrice(
                "OLD",
                "Fibra 100",
                Money.of(old, currency),
                date(2025, 1, 1),
                date.fromordinal(change_day.toordinal() - 1),
            ),
            PlanPrice("NEW", "Fibra 300", Money.of(new, currency), change_day, None),
        ),
    )


@pytest.mark.parametrize(
    ("old", "new", "cycle", "change_day", "days", "cycle_days", "amount"),
    [
        # KB example 1: cycle A, March 2026 (31 days), Fiber 100 → 300 on March 21: 8 × 11 ÷ 31 = 2.84
        ("20.00", "28.00", (date(2026, 3, 1), date(2026, 3, 31)), date(2026, 3, 21), 11, 31, "2.84"),
        # KB example 2: cycle B, April 16 – May 15 (30 days), Fiber 300 → 600 on May 6: 10 × 10 ÷ 30 = 3.33
        ("28.00", "38.00", (date(2026, 4, 16), date(2026, 5, 15)), date(2026, 5, 6), 10, 30, "3.33"),
        # KB example 5: 30-day cycle, Fiber 100 → 1000 on day 11: 30 × 20 ÷ 30 = 20.00
        ("20.00", "50.00", (date(2026, 9, 1), date(2026, 9, 30)), date(2026, 9, 11), 20, 30, "20.00"),
    ],
)
def test_proration_matches_the_published_examples(old, new, cycle, change_day, days, cycle_days, amount):
    start, end = cycle
    covering = invoice(
        "2026-03", [line(1, "recurring", usd(old))], issue=start, start=start, end=end, number="2"
    )
    billed = invoice(
        "2026-04",
        [
            line(1, "recurring", usd(new)),
            line(2, "proration", usd(amount), service_start=change_day, service_end=end),
        ],
        issue=date.fromordinal(end.toordinal() + 1),
        number="2",
    )
    facts = calc.proration_facts(billed, covering, plan_with_change(old, new, change_day), "es")
    proration, days_fact = by_kind(facts, "proration")[0], by_kind(facts, "proration_days")[0]
    assert Decimal(proration.value) == Decimal(amount)
    assert days_fact.value == str(days)
    assert f"× {days} días ÷ {cycle_days} días = {amount.replace('.', ',')} USD" in proration.text
    assert "la factura cobra" not in proration.text


def test_proration_flags_a_billed_amount_that_differs_from_the_rule():
    start, end = date(2026, 3, 1), date(2026, 3, 31)
    covering = invoice("2026-03", [line(1, "recurring", usd("20"))], start=start, end=end, number="3")
    billed = invoice(
        "2026-04",
        [line(1, "proration", usd("3.00"), service_start=date(2026, 3, 21), service_end=end)],
        number="3",
    )
    (fact, _) = calc.proration_facts(
        billed, covering, plan_with_change("20.00", "28.00", date(2026, 3, 21)), "en"
    )
    assert fact.value == "2.84"
    assert fact.text.endswith("; the invoice charges USD 3.00")


# --- taxes, credits, duplicates ---------------------------------------------------------


def test_tax_rate_change_and_its_effect():
    base = ves("1400.00")
    previous = invoice(
        "2026-09",
        [
            line(1, "recurring", base),
            line(2, "tax", ves("112.00"), code="IVA", rate=Decimal("8.00"), base=base),
        ],
        currency="VES",
    )
    current = invoice(
        "2026-10",
        [
            line(1, "recurring", base),
            line(2, "tax", ves("224.00"), code="IVA", rate=Decimal("16.00"), base=base),
        ],
        currency="VES",
    )
    facts = calc.tax_facts(current, previous, "es")
    assert (
        by_kind(facts, "tax_computation")[0].text
        == "IVA 16 % × base gravable Bs. 1.400,00 = Bs. 224,00 (factura 2026-10)"
    )
    assert by_kind(facts, "tax_rate_change")[0].value == "16.00"
    effect = by_kind(facts, "tax_rate_effect")[0]
    assert effect.value == "112.00"
    assert (
        effect.text == "Efecto del cambio de IVA en 2026-10 = (16 % − 8 %) × base Bs. 1.400,00 = Bs. 112,00"
    )


def test_outage_credit_is_one_thirtieth_of_the_fee_per_day():
    current = invoice(
        "2026-10",
        [
            line(1, "recurring", usd("20.00")),
            line(
                2,
                "credit",
                usd("-3.33"),
                code="outage",
                service_start=date(2026, 9, 12),
                service_end=date(2026, 9, 16),
            ),
        ],
    )
    (fact,) = calc.outage_credit_facts(current, "es")
    assert fact.value == "3.33"  # 20.00 × 5 ÷ 30 = 3.333…
    assert "20,00 USD × 5 días ÷ 30 = 3,33 USD a favor" in fact.text


def test_a_repeated_charge_is_reported_with_its_vat():
    fee = line(1, "recurring", usd("140.00"), description="Mensualidad Empresarial 1000")
    twin = LineItem(
        id="L2", type="recurring", description="Mensualidad Empresarial 1000", amount=usd("140.00")
    )
    current = invoice(
        "2026-10",
        [fee, twin, line(3, "tax", usd("44.80"), code="IVA", rate=Decimal("16.00"), base=usd("280.00"))],
    )
    (fact,) = calc.duplicate_charge_facts(current, "en")
    assert fact.value == "162.40"
    assert fact.text == (
        "Repeated charge on invoice 2026-10: “Mensualidad Empresarial 1000” appears 2 times "
        "(USD 140.00 each); overcharged = USD 140.00 + VAT USD 22.40 = USD 162.40"
    )
    assert calc.duplicate_charge_facts(invoice("2026-10", [fee]), "en") == []


# --- promotions -------------------------------------------------------------------------


def test_promotion_that_ended_last_period_is_reported_with_its_worth_and_old_ones_are_not():
    previous = invoice("2026-09", [line(1, "recurring", usd("28"))], end=date(2026, 9, 30))
    current = invoice("2026-10", [line(1, "recurring", usd("28"))], end=date(2026, 10, 31))
    welcome = Promotion(
        id="PR1",
        code="WELCOME",
        name="Descuento de bienvenida",
        start_date=date(2026, 7, 1),
        end_date=date(2026, 9, 30),
        monthly_discount=usd("5.60"),
        percent=Decimal("20.00"),
        invoices_total=3,
    )
    ancient = Promotion(
        id="PR2",
        code="ANNIV",
        name="Aniversario",
        start_date=date(2025, 1, 1),
        end_date=date(2025, 3, 31),
        monthly_discount=usd("2.00"),
    )
    debit = Promotion(
        id="PR3",
        code="DIRECT_DEBIT",
        name="Domiciliación",
        start_date=date(2025, 1, 1),
        end_date=None,
        monthly_discount=usd("1.00"),
    )
    facts = calc.promotion_facts([welcome, ancient, debit], current=current, previous=previous, language="es")
    assert [(f.kind, f.value) for f in facts] == [
        ("promotion_ended", "2026-09-30"),
        ("promotion_value", "5.60"),
        ("promotion_active", "1.00"),
    ]
    assert facts[1].text == (
        "Promoción «Descuento de bienvenida» valía 5,60 USD al mes = 20 % × mensualidad; "
        "3 facturas × 5,60 = 16,80 USD"
    )


# --- payments, due dates, late fees -----------------------------------------------------


def pay(invoice_, day, amount, status="succeeded", n=1, method="zelle"):
    return Payment(
        id=f"P{n}",
        invoice_id=invoice_.id,
        date=day,
        amount=amount,
        method=method,
        status=status,
        failure_reason=None if status == "succeeded" else "card_declined",
    )


def test_payments_against_total_count_only_succeeded_ones():
    current = invoice("2026-10", [line(1, "recurring", usd("28.00")), line(2, "tax", usd("4.48"))])
    attempts = [
        pay(current, date(2026, 10, 3), usd("32.48"), "failed", 1, "international_card"),
        pay(current, date(2026, 10, 4), usd("20.00"), n=2),
    ]
    facts = calc.payment_facts(current, attempts, "es")
    balance = by_kind(facts, "payments_vs_total")[0]
    assert balance.value == "12.48"
    assert balance.text == (
        "Pagos exitosos a la factura 2026-10 = 20,00 USD (1 pago; 1 intento fallido no cuenta) "
        "vs total 32,48 USD → saldo pendiente 12,48 USD"
    )
    assert [f.kind for f in facts[1:]] == ["payment_failed", "payment"]


@pytest.mark.parametrize(
    ("today", "kind", "value", "phrase"),
    [
        (date(2026, 10, 5), "days_until_due", "5", "faltan 5 días"),
        (date(2026, 10, 9), "days_until_due", "1", "falta 1 día"),  # the verb agrees with one day
        (date(2026, 10, 10), "days_until_due", "0", "vence hoy"),
        (date(2026, 10, 20), "days_overdue", "10", "10 días de atraso"),
    ],
)
def test_days_until_due_or_overdue_use_the_injected_today(today, kind, value, phrase):
    current = invoice("2026-10", [line(1, "recurring", usd("28.00"))], due=date(2026, 10, 10))
    (fact,) = calc.due_facts(current, [], today=today, language="es")
    assert (fact.kind, fact.value) == (kind, value)
    assert phrase in fact.text


def test_no_due_fact_for_a_settled_invoice():
    current = invoice("2026-10", [line(1, "recurring", usd("28.00"))])
    assert (
        calc.due_facts(
            current, [pay(current, date(2026, 10, 2), usd("28.00"))], today=date(2026, 10, 20), language="en"
        )
        == []
    )


def test_late_fee_basis_is_what_remained_unpaid_when_the_grace_ended():
    late = invoice(
        "2026-09",
        [line(1, "recurring", usd("28.00")), line(2, "tax", usd("4.48"))],
        due=date(2026, 9, 10),
        number="4",
    )
    # half paid in time, the rest after the grace period: the 5 % applies to the unpaid half
    payments = [
        pay(late, date(2026, 9, 8), usd("16.24"), n=1),
        pay(late, date(2026, 9, 20), usd("16.24"), n=2),
    ]
    current = invoice(
        "2026-10",
        [
            line(1, "recurring", usd("28.00")),
            line(
                2,
                "late_fee",
                usd("0.81"),
                rate=Decimal("5.00"),
                date=date(2026, 9, 16),
                base=usd("16.24"),
                related_invoice_id=late.id,
            ),
        ],
        number="4",
    )
    facts = calc.late_fee_facts(current, [current, late], payments, "es")
    fee, basis, days_late = facts
    assert (fee.value, basis.value, days_late.value) == ("0.81", "16.24", "10")  # 16.24 × 5 % = 0.812
    assert fee.text.startswith(
        "Recargo por mora en factura 2026-10 = 5 % × 16,24 USD = 0,81 USD; 16,24 USD es el "
        "saldo de la factura 2026-09 (total 32,48 USD − pagos 16,24 USD)"
    )


def test_late_fee_of_the_published_example():
    late = invoice("2026-09", [line(1, "recurring", usd("28.00")), line(2, "tax", usd("4.48"))], number="5")
    current = invoice(
        "2026-10",
        [
            line(
                1,
                "late_fee",
                usd("1.62"),
                rate=Decimal("5.00"),
                date=date(2026, 9, 16),
                related_invoice_id=late.id,
            )
        ],
        number="5",
    )
    fee = calc.late_fee_facts(current, [late], [], "en")[0]
    assert fee.value == "1.62"  # KB: an unpaid Fiber 300 invoice of USD 32.48 produces a late fee of USD 1.62
    assert "; the invoice charges" not in fee.text


# --- one of a kind: counts read right at 1 -------------------------------------------------


def one_day_outage(language):
    current = invoice(
        "2026-10",
        [
            line(1, "recurring", usd("30.00")),
            line(2, "credit", usd("-1.00"), code="outage", service_start=date(2026, 9, 12),
                 service_end=date(2026, 9, 12)),
        ],
    )
    return calc.outage_credit_facts(current, language)


def settled_a_day_late(language):
    late = invoice("2026-09", [line(1, "recurring", usd("20.00"))], due=date(2026, 9, 10), number="6")
    fee = line(1, "late_fee", usd("1.00"), rate=Decimal("5.00"), date=date(2026, 9, 16),
               related_invoice_id=late.id)
    current = invoice("2026-10", [fee], number="6")
    return calc.late_fee_facts(current, [late], [pay(late, date(2026, 9, 11), usd("20.00"))], language)


def one_invoice_promotion(language):
    once = Promotion(id="PR1", code="ONCE", name="Una vez", start_date=date(2026, 9, 1),
                     end_date=date(2026, 9, 30), monthly_discount=usd("5.60"), invoices_total=1)
    previous = invoice("2026-09", [line(1, "recurring", usd("28"))], end=date(2026, 9, 30))
    current = invoice("2026-10", [line(1, "recurring", usd("28"))], end=date(2026, 10, 31))
    return calc.promotion_facts([once], current=current, previous=previous, language=language)


@pytest.mark.parametrize(
    ("facts", "language", "phrase"),
    [
        (one_day_outage, "es", "30,00 USD × 1 día ÷ 30 = 1,00 USD a favor"),
        (one_day_outage, "en", "USD 30.00 × 1 day ÷ 30 = USD 1.00 in your favour"),
        (settled_a_day_late, "es", "quedó pagada el 2026-09-11, 1 día después de su vencimiento"),
        (settled_a_day_late, "en", "was settled on 2026-09-11, 1 day after its due date"),
        (one_invoice_promotion, "es", "; 1 factura × 5,60 = 5,60 USD"),
        (one_invoice_promotion, "en", "; 1 invoice × 5.60 = USD 5.60"),
    ],
)
def test_a_count_of_one_is_singular(facts, language, phrase):
    texts = [fact.text for fact in facts(language)]
    assert any(phrase in text for text in texts), texts
