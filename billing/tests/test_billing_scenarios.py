"""Each bill-change scenario of the simulator, explained by `invoice_change` with exact Decimal facts.

Through the real HTTP client against the simulator served on a local port. The literal numbers
for the first VES and the first USD customer of each scenario were worked by hand from the
published rules (IVA 16 %, Bs. 50,00 per USD, late fee 5 %, proration by cycle days…); the
invariants check every customer of the scenario.
"""

from datetime import date
from decimal import Decimal

import pytest

from billing.api.client import BillingClient, memory_breaker
from billing.simulator import BillingSimulator, serve_in_thread

AS_OF = date(2026, 10, 20)


@pytest.fixture(scope="module")
def sim():
    with serve_in_thread(BillingSimulator(as_of=AS_OF)) as running:
        yield running


@pytest.fixture(scope="module")
def client(sim):
    with BillingClient(
        base_url=sim.base_url, token="sim-token", timeout_s=5.0, breaker=memory_breaker(), today=lambda: AS_OF
    ) as billing:
        yield billing


def customers(sim, scenario):
    return sim.app.data.scenarios[scenario]


def explain(client, customer_id):
    result = client.invoice_change(customer_id)
    assert result.ok, result.error
    assert not result.should_escalate
    values: dict[str, list] = {}
    for fact in result.evidence:
        values.setdefault(fact.kind, []).append(Decimal(fact.value) if fact.currency else fact.value)
    return result, values


def by_type(result):
    """Return {line type: delta} from the per-type facts' derivations."""
    deltas = {}
    for fact in result.evidence:
        if fact.kind == "delta_by_type":
            line_type = fact.derivation.split("(")[1].split(" lines")[0]
            deltas[line_type] = Decimal(fact.value)
    return deltas


def assert_breakdown_adds_up(result, values):
    assert sum(by_type(result).values(), Decimal("0.00")) == values["invoice_delta"][0]


@pytest.mark.parametrize(
    ("variant", "delta", "discount", "tax", "worth"),
    [
        (
            0,
            "324.80",
            "280.00",
            "44.80",
            "280.00",
        ),  # Fibra 300 in VES: 20 % × Bs. 1.400 = 280; IVA 16 % × 280 = 44.80
        (1, "4.64", "4.00", "0.64", "4.00"),  # Fibra 100 in USD: 20 % × 20.00 = 4.00; IVA 0.64
    ],
)
def test_promotion_ended(sim, client, variant, delta, discount, tax, worth):
    result, values = explain(client, customers(sim, "promotion_ended")[variant])
    assert values["invoice_delta"] == [Decimal(delta)]
    assert by_type(result) == {"discount": Decimal(discount), "tax": Decimal(tax)}
    assert values["promotion_value"] == [Decimal(worth)]
    assert values["promotion_ended"] == ["2026-09-30"]
    assert "descuento promocional terminó" in result.evidence[2].text


def test_promotion_ended_for_every_customer(sim, client):
    for customer_id in customers(sim, "promotion_ended"):
        result, values = explain(client, customer_id)
        assert by_type(result)["discount"] == values["promotion_value"][0], customer_id
        assert_breakdown_adds_up(result, values)
        previous = result.data["previous_invoice"]
        assert values["promotion_ended"] == [previous["service_end"]]


@pytest.mark.parametrize(
    ("variant", "proration", "days", "recurring", "delta"),
    [
        (0, "146.67", "11", "400.00", "634.14"),  # Fibra 100→300 on 09-20 in VES: 400 × 11 ÷ 30 = 146.666…
        (1, "5.00", "15", "10.00", "17.40"),  # Fibra 300→600 on 09-16 in USD: 10 × 15 ÷ 30 = 5.00
    ],
)
def test_plan_upgrade_with_proration(sim, client, variant, proration, days, recurring, delta):
    result, values = explain(client, customers(sim, "plan_upgrade_proration")[variant])
    assert values["proration"] == [Decimal(proration)]
    assert values["proration_days"] == [days]
    assert by_type(result)["recurring"] == Decimal(recurring)
    assert by_type(result)["proration"] == Decimal(proration)
    assert values["invoice_delta"] == [Decimal(delta)]


def test_plan_upgrade_for_every_customer(sim, client):
    for customer_id in customers(sim, "plan_upgrade_proration"):
        result, values = explain(client, customer_id)
        billed = [line for line in result.data["current_invoice"]["lines"] if line["type"] == "proration"]
        assert values["proration"] == [Decimal(billed[0]["amount"]["amount"])], customer_id
        assert "la factura cobra" not in result.evidence[0].text and "charges" not in result.evidence[0].text
        assert_breakdown_adds_up(result, values)


@pytest.mark.parametrize(("variant", "effect"), [(0, "112.00"), (1, "1.60")])
def test_tax_rate_change(sim, client, variant, effect):
    result, values = explain(client, customers(sim, "tax_rate_change")[variant])
    assert values["tax_rate_change"] == ["16.00"]
    assert values["tax_rate_effect"] == [Decimal(effect)]  # (16 % − 8 %) × base
    assert values["invoice_delta"] == [Decimal(effect)]
    assert by_type(result) == {"tax": Decimal(effect)}


@pytest.mark.parametrize(
    ("variant", "fee", "basis", "days_late", "overdue"),
    [
        (0, "81.20", "1624.00", "10", "10"),  # 5 % × Bs. 1.624,00 unpaid when the grace ended on 09-15
        (1, "1.16", "23.20", "9", "10"),  # 5 % × USD 23.20
        (3, "1.45", "29.00", "7", None),  # half paid on time: 5 % × the other half of 58.00
        (4, "150.00", "4930.00", "6", "10"),  # business account: flat USD 3.00 = Bs. 150,00
    ],
)
def test_late_fee_after_a_missed_due_date(sim, client, variant, fee, basis, days_late, overdue):
    result, values = explain(client, customers(sim, "late_fee")[variant])
    assert values["late_fee"] == [Decimal(fee)]
    assert values["late_fee_basis"] == [Decimal(basis)]
    assert values["days_late"] == [days_late]
    assert by_type(result) == {"late_fee": Decimal(fee)}  # late fees carry no VAT
    if overdue:
        assert values["days_overdue"] == [overdue]


@pytest.mark.parametrize(
    ("variant", "reconnection", "fee", "delta"),
    [
        (0, "350.00", "81.20", "487.20"),  # Bs. 350 + 16 % IVA (56.00) + 5 % × 1.624,00
        (1, "7.00", "1.16", "9.28"),  # USD account: Bs. 350 at Bs. 50,00 = USD 7.00
    ],
)
def test_reconnection_fee(sim, client, variant, reconnection, fee, delta):
    _result, values = explain(client, customers(sim, "reconnection_fee")[variant])
    assert values["reconnection"] == [Decimal(reconnection)]
    assert values["late_fee"] == [Decimal(fee)]
    assert values["invoice_delta"] == [Decimal(delta)]
    assert int(values["days_late"][0]) > 15  # paid after the suspension (15 days past due)


@pytest.mark.parametrize(
    ("variant", "visit", "delta"),
    [
        (0, "750.00", "870.00"),  # USD 15.00 = Bs. 750,00, + IVA 120.00
        (1, "15.00", "17.40"),  # the published "USD 17.40 in total"
        (4, "250.00", "290.00"),  # failed visit: USD 5.00 = Bs. 250,00, + IVA 40.00
    ],
)
def test_technical_visit(sim, client, variant, visit, delta):
    _result, values = explain(client, customers(sim, "technical_visit")[variant])
    assert values["technical_visit"] == [Decimal(visit)]
    assert values["invoice_delta"] == [Decimal(delta)]


@pytest.mark.parametrize(("variant", "overcharge"), [(0, "1624.00"), (1, "23.20"), (5, "162.40")])
def test_duplicate_charge(sim, client, variant, overcharge):
    _result, values = explain(client, customers(sim, "duplicate_charge")[variant])
    assert values["duplicate_charge"] == [Decimal(overcharge)]
    assert values["invoice_delta"] == [Decimal(overcharge)]


def test_payment_failed_then_succeeded(sim, client):
    for customer_id in customers(sim, "payment_failed_then_succeeded"):
        result, values = explain(client, customer_id)
        assert values["invoice_delta"] == [Decimal("0.00")]
        assert len(values["payment_failed"]) == 1
        previous_total = Decimal(result.data["previous_invoice"]["total"]["amount"])
        assert values["payment_failed"] == [previous_total]
        assert values["payments_vs_total"][0] == Decimal(
            "0.00"
        )  # the failed attempt does not count, the retry does
        assert any(
            "intento fallido no cuenta" in f.text or "failed attempt not counted" in f.text
            for f in result.evidence
        )


def test_correct_and_unchanged_bill(sim, client):
    for customer_id in customers(sim, "unchanged"):
        _result, values = explain(client, customer_id)
        assert values["invoice_delta"] == [Decimal("0.00")]
        assert "delta_by_type" not in values
        assert "promotion_ended" not in values  # an anniversary promotion that ended long ago is not news


@pytest.mark.parametrize(
    ("variant", "credit", "delta"),
    [
        (0, "140.00", "-162.40"),  # Bs. 1.400 × 3 days ÷ 30 = 140.00; IVA falls by 16 % × 140 = 22.40
        (1, "1.33", "-1.54"),  # USD 20 × 2 ÷ 30 = 1.333…; IVA 16 % × 18.67 = 2.99 vs 3.20
    ],
)
def test_outage_credit_lowers_the_bill(sim, client, variant, credit, delta):
    result, values = explain(client, customers(sim, "outage_credit")[variant])
    assert values["outage_credit"] == [Decimal(credit)]
    assert values["credit"] == [-Decimal(credit)]
    assert values["invoice_delta"] == [Decimal(delta)]
    assert_breakdown_adds_up(result, values)


def test_a_customer_not_billed_yet_is_a_business_answer(sim, client):
    customer_id = customers(sim, "new_customer")[0]
    result = client.invoice_change(customer_id)
    assert (result.ok, result.should_escalate, result.error.code) == (False, False, "invoice_not_found")
    summary = client.account_summary(customer_id)
    assert summary.ok and summary.data["current_invoice"] is None
    assert [f.kind for f in summary.evidence] == ["plan", "plan_price"]


def test_days_until_due_moves_with_the_injected_today(sim):
    customer_id = customers(sim, "late_fee")[1]  # invoice 2026-10 due 2026-10-10, unpaid
    with BillingClient(
        base_url=sim.base_url,
        token="sim-token",
        timeout_s=5.0,
        breaker=memory_breaker(),
        today=lambda: date(2026, 10, 7),
    ) as early:
        facts = {f.kind: f.value for f in early.account_summary(customer_id).evidence}
    assert facts["days_until_due"] == "3"
    assert "days_overdue" not in facts
