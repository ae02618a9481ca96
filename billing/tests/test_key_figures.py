"""Key figures: what an answer to each capability's question must state, with exact Decimal values.

Through the real client against the simulator (in-process). The literal figures of each scenario's
first VES and first USD customer are the ones test_billing_scenarios.py works by hand from the
published rules; payment dates are the seeded data's. The invariants run every customer, in both
languages, through every capability.
"""

from datetime import date
from decimal import Decimal as D

import pytest

from billing.answers.evidence import PRIMARY, SECONDARY
from billing.answers.findings.account import Charge
from billing.answers.findings.invoice_checks import OutageCredit
from billing.answers.findings.payments import DueStatus, PaymentAttempt, PaymentsVsTotal
from billing.answers.findings.totals import InvoiceDelta, TypeChange
from billing.answers.key_figures import change_roles, payment_roles
from billing.answers.money import amount_text
from tests.support import billing_sim
from tests.support.billing_sim import capability_results

P, S = PRIMARY, SECONDARY


sim, client, customer = billing_sim.sim, billing_sim.client, billing_sim.customer


def figures(result):
    """Return [(name, value, role, kind of the stating fact)] in the result's order."""
    assert result.ok, result.error
    return [(k.name, k.value, k.role, result.fact(k).kind) for k in result.key_figures]


# --- "why is my bill different" --------------------------------------------------------

CHANGES = [
    # the promotion that ended explains the whole change (discount 20 % × Bs. 1.400; + IVA 44.80)
    ("promotion_ended", 0, [("delta", D("324.80"), P, "invoice_delta"),
                            ("discount_ended", D("280.00"), P, "promotion_value")]),
    ("promotion_ended", 1, [("delta", D("4.64"), P, "invoice_delta"),
                            ("discount_ended", D("4.00"), P, "promotion_value")]),
    # Fibra 100→300 on 09-20: 400 × 11 ÷ 30 = 146.67 over 11 days
    ("plan_upgrade_proration", 0, [("delta", D("634.14"), P, "invoice_delta"),
                                   ("prorated_amount", D("146.67"), P, "proration"),
                                   ("prorated_days", 11, P, "proration_days")]),
    ("plan_upgrade_proration", 1, [("delta", D("17.40"), P, "invoice_delta"),
                                   ("prorated_amount", D("5.00"), P, "proration"),
                                   ("prorated_days", 15, P, "proration_days")]),
    # (16 % − 8 %) × base
    ("tax_rate_change", 0, [("delta", D("112.00"), P, "invoice_delta"),
                            ("tax_change_effect", D("112.00"), P, "tax_rate_effect")]),
    ("tax_rate_change", 1, [("delta", D("1.60"), P, "invoice_delta"),
                            ("tax_change_effect", D("1.60"), P, "tax_rate_effect")]),
    # 5 % × the Bs. 1.624,00 left unpaid when the grace period ended
    ("late_fee", 0, [("delta", D("81.20"), P, "invoice_delta"), ("late_fee", D("81.20"), P, "late_fee"),
                     ("late_fee_basis", D("1624.00"), P, "late_fee_basis")]),
    ("late_fee", 1, [("delta", D("1.16"), P, "invoice_delta"), ("late_fee", D("1.16"), P, "late_fee"),
                     ("late_fee_basis", D("23.20"), P, "late_fee_basis")]),
    # business: flat USD 3.00 = Bs. 150,00, whatever the basis
    ("late_fee", 4, [("delta", D("150.00"), P, "invoice_delta"), ("late_fee", D("150.00"), P, "late_fee"),
                     ("late_fee_basis", D("4930.00"), P, "late_fee_basis")]),
    # two causes: the Bs. 350 reconnection moves the bill more than the Bs. 81,20 late fee
    ("reconnection_fee", 0, [("delta", D("487.20"), P, "invoice_delta"),
                             ("charge", D("350.00"), P, "reconnection"),
                             ("late_fee", D("81.20"), S, "late_fee"),
                             ("late_fee_basis", D("1624.00"), S, "late_fee_basis")]),
    ("reconnection_fee", 1, [("delta", D("9.28"), P, "invoice_delta"),
                             ("charge", D("7.00"), P, "reconnection"),
                             ("late_fee", D("1.16"), S, "late_fee"),
                             ("late_fee_basis", D("23.20"), S, "late_fee_basis")]),
    ("technical_visit", 0, [("delta", D("870.00"), P, "invoice_delta"),
                            ("charge", D("750.00"), P, "technical_visit")]),
    ("technical_visit", 1, [("delta", D("17.40"), P, "invoice_delta"),
                            ("charge", D("15.00"), P, "technical_visit")]),
    # the duplicated monthly fee and the IVA charged on it: Bs. 1.400 + 224
    ("duplicate_charge", 0, [("delta", D("1624.00"), P, "invoice_delta"),
                             ("overcharge", D("1624.00"), P, "duplicate_charge")]),
    ("duplicate_charge", 1, [("delta", D("23.20"), P, "invoice_delta"),
                             ("overcharge", D("23.20"), P, "duplicate_charge")]),
    ("duplicate_charge", 5, [("delta", D("162.40"), P, "invoice_delta"),
                             ("overcharge", D("162.40"), P, "duplicate_charge")]),
    # the outage credit, not its credit line as well: Bs. 1.400 × 3 ÷ 30
    ("outage_credit", 0, [("delta", D("-162.40"), P, "invoice_delta"),
                          ("outage_credit", D("140.00"), P, "outage_credit")]),
    ("outage_credit", 1, [("delta", D("-1.54"), P, "invoice_delta"),
                          ("outage_credit", D("1.33"), P, "outage_credit")]),
    # nothing changed: the answer states the total both bills share
    ("unchanged", 0, [("total", D("1624.00"), P, "invoice_delta")]),
    ("unchanged", 1, [("total", D("22.04"), P, "invoice_delta")]),  # (20 − 1 domiciliación) × 1.16
    ("payment_failed_then_succeeded", 0, [("total", D("1624.00"), P, "invoice_delta")]),
]


@pytest.mark.parametrize(("scenario", "variant", "expected"), CHANGES, ids=lambda v: str(v)[:24])
def test_a_bill_change_declares_the_delta_and_its_largest_cause(sim, client, scenario, variant, expected):
    assert figures(client.invoice_change(customer(sim, scenario, variant))) == expected


def test_the_first_bill_has_no_delta_so_its_cause_alone_is_primary(sim, client):
    customer_id = customer(sim, "promotion_ended", 0)
    oldest = sim.data.accounts[customer_id].invoices[-1]  # installation month: prorated days + install
    result = client.invoice_change(customer_id, period=oldest.period)
    assert figures(result) == [("charge", D("1500.00"), P, "installation")]  # USD 30,00 at Bs. 50,00


def test_a_customer_not_billed_yet_has_no_key_figures(sim, client):
    customer_id = customer(sim, "new_customer", 0)
    result = client.invoice_change(customer_id)
    assert (result.ok, result.key_figures) == (False, [])
    assert client.account_summary(customer_id).key_figures == []
    assert client.payments(customer_id).key_figures == []


# --- payment status ---------------------------------------------------------------------


PAYMENT_STATUSES = [
    # the latest payment, then September's card attempt that failed before its retry
    ("payments", "payment_failed_then_succeeded", 0, [
        ("payment_amount", D("1624.00"), P, "payment"), ("payment_date", date(2026, 10, 4), P, "payment"),
        ("payment_amount", D("1624.00"), S, "payment_failed"),
        ("payment_date", date(2026, 9, 4), S, "payment_failed"),
    ]),
    # a settled history: the latest payment only
    ("payments", "unchanged", 0, [
        ("payment_amount", D("1624.00"), P, "payment"), ("payment_date", date(2026, 10, 3), P, "payment"),
    ]),
    # unpaid: 1.624,00 + the 81,20 late fee, due 2026-10-10 and overdue on 2026-10-20
    ("account_summary", "late_fee", 0, [
        ("balance", D("1705.20"), P, "payments_vs_total"),
        ("due_date", date(2026, 10, 10), P, "days_overdue"),
    ]),
    # paid by direct debit on the due date
    ("account_summary", "unchanged", 1, [
        ("payment_amount", D("22.04"), P, "payment"), ("payment_date", date(2026, 10, 10), P, "payment"),
    ]),
]


@pytest.mark.parametrize(("capability", "scenario", "variant", "expected"), PAYMENT_STATUSES,
                         ids=lambda v: str(v)[:24])
def test_payment_status_states_the_latest_payment_or_what_is_owed(sim, client, capability, scenario, variant,
                                                                  expected):
    result = getattr(client, capability)(customer(sim, scenario, variant))
    assert figures(result) == expected
    # both figures of a payment point at the same fact
    ids = [k.evidence_id for k in result.key_figures]
    assert all(ids[i] == ids[i + 1] for i in range(0, len(ids), 2) if expected[i][0] == "payment_amount")


def test_lookups_lists_and_credit_notes_declare_no_key_figures(sim, client):
    account = sim.data.accounts[customer(sim, "late_fee", 0)]
    assert client.find_customer(account_number=account.customer.account_number).key_figures == []
    assert client.invoices(account.customer.id).key_figures == []
    note = client.request_credit_note(
        account.customer.id,
        invoice_id=account.invoices[0].id,
        amount="1.00",
        currency=account.customer.currency,
        reason="test",
        idempotency_key="key-figures-test",
    )
    assert note.ok and note.key_figures == []


# --- invariants over every customer, capability and language ------------------------------


@pytest.fixture(scope="module")
def every_result():
    return [result for flipped in (False, True) for _key, result in capability_results(flipped)]


def test_every_key_figure_is_stated_by_the_fact_it_points_at(every_result):
    checked = 0
    for result in every_result:
        for figure in result.key_figures:
            fact = result.fact(figure)
            language = result.data["customer"]["language"]
            if isinstance(figure.value, D):
                assert amount_text(abs(figure.value), language) in fact.text, (figure, fact)
            elif isinstance(figure.value, date):
                assert figure.value.isoformat() in fact.text, (figure, fact)
            else:
                assert str(figure.value) in fact.text and fact.value == str(figure.value), (figure, fact)
            checked += 1
    assert checked > 500


def test_primary_figures_come_first_and_every_compared_bill_has_one_delta(every_result):
    for result in every_result:
        roles = [figure.role for figure in result.key_figures]
        assert roles == sorted(roles, key=lambda role: role != PRIMARY)
        if result.capability == "invoice_change" and result.ok and result.data["previous_invoice"]:
            headline = [f.name for f in result.key_figures if f.name in ("delta", "total")]
            assert headline in (["delta"], ["total"])
            assert result.key_figures[0].name in ("delta", "total")


# --- the rules on hand-built findings ---------------------------------------------------------


def charge(line_id, amount, line_type="technical_visit"):
    return Charge(line_id=line_id, line_type=line_type, description=line_type, amount=D(amount),
                  currency="USD", when=None, period="2026-10")


DELTA = InvoiceDelta(current_id="F-2", previous_id="F-1", current_period="2026-10", previous_period="2026-09",
                     currency="USD", current_total=D("30.00"), previous_total=D("20.00"),
                     changes=(TypeChange("technical_visit", D("10.00"), D("0.00")),))


def outage(line_id, credit):
    return OutageCredit(period="2026-10", currency="USD", monthly_fee=D("20.00"), days=5, credit=D(credit),
                        billed=-D(credit), start=date(2026, 9, 3), end=date(2026, 9, 7), line_id=line_id)


@pytest.mark.parametrize(
    ("findings", "roles"),
    [
        # the larger effect wins whatever its sign: a USD 12 credit over a USD 10 visit
        ([DELTA, charge("L1", "10.00"), outage("L2", "12.00")], {0: P, 1: S, 2: P}),
        # a tie goes to the cause stated first
        ([DELTA, charge("L1", "10.00"), charge("L2", "10.00", "reconnection")], {0: P, 1: P, 2: S}),
        # the outage credit line is explained by its recomputation, not counted as a second cause
        ([DELTA, outage("L2", "3.33"), charge("L2", "-3.33", "credit")], {0: P, 1: P}),
        # no previous bill: the largest cause alone is primary
        ([charge("L1", "5.00"), charge("L2", "15.00")], {0: S, 1: P}),
        # nothing explains it: the delta alone
        ([DELTA], {0: P}),
    ],
)
def test_change_roles(findings, roles):
    assert change_roles(findings) == roles


def status(invoice_id, total, *paid):
    return PaymentsVsTotal(invoice_id=invoice_id, period="2026-10", currency="USD", total=D(total),
                           succeeded=tuple(D(p) for p in paid), failed_count=0)


def attempt(payment_id, succeeded=True):
    return PaymentAttempt(payment_id=payment_id, period="2026-10", currency="USD", date=date(2026, 10, 2),
                          amount=D("10.00"), method="zelle", succeeded=succeeded, failure_reason=None,
                          igtf=None)


@pytest.mark.parametrize(
    ("findings", "roles"),
    [
        # latest attempt of the most recent invoice; an older failure is a problem worth naming
        ([status("F-2", "10.00", "10.00"), attempt("P3"),
          status("F-1", "10.00", "10.00"), attempt("P1", False), attempt("P2")], {0: P, 1: P, 2: S, 3: S}),
        # the latest attempt failed: it is the news; the earlier success is history
        ([status("F-2", "10.00"), attempt("P1"), attempt("P2", False)], {0: P, 2: P}),
        # nothing paid yet: what is owed and when
        ([status("F-2", "10.00"), DueStatus(invoice_id="F-2", period="2026-10", currency="USD",
                                            due_date=date(2026, 10, 10), today=date(2026, 10, 5),
                                            balance=D("10.00"))], {0: P, 1: P}),
    ],
)
def test_payment_roles(findings, roles):
    assert payment_roles(findings) == roles


def test_a_settled_invoice_declares_no_balance_and_a_credit_balance_is_stated_positive():
    assert status("F-2", "10.00", "10.00").figures() == ()
    (balance,) = status("F-2", "10.00", "15.00").figures()
    assert (balance.name, balance.value) == ("balance", D("5.00"))
