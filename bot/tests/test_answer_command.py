"""`python manage.py answer`: the bot's decision for one message as stable JSON, writing nothing."""

import json
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from desk.models import Escalation, Message
from traces.models import Trace

pytestmark = pytest.mark.django_db

KEYS = {"outcome", "route", "reason", "reply", "options", "asks_identity", "internal_note", "retrieved", "evidence",
        "citations"}


@pytest.fixture(autouse=True)
def _kb(sample_kb):
    return sample_kb


def answer(*args):
    out = StringIO()
    call_command("answer", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_an_answered_policy_question_with_what_was_retrieved_and_cited():
    decision = answer("cuanto cobran por reconexion de fibra")
    assert set(decision) == KEYS
    assert (decision["outcome"], decision["route"], decision["reason"]) == ("answered", "document", "")
    assert "350,00" in decision["reply"] and "[E" not in decision["reply"]
    assert decision["retrieved"] and set(decision["retrieved"][0]) == {"doc", "section", "vector_score",
                                                                       "matched_by_text", "kept"}
    assert decision["retrieved"][0]["doc"] == "reconexion-fibra-es"
    assert [set(e) for e in decision["evidence"]] == [{"id", "text", "value"}] * len(decision["evidence"])
    assert decision["citations"] == ["E1"] and decision["internal_note"] == ""
    assert not Trace.objects.exists() and not Message.objects.exists()  # nothing written


def test_an_escalation_names_its_reason_and_the_notice_the_customer_would_get():
    decision = answer("quiero hablar con una persona")
    assert (decision["outcome"], decision["route"], decision["reason"]) == ("escalated", "human", "USER_REQUEST")
    assert "persona de nuestro equipo" in decision["reply"]
    assert decision["retrieved"] == [] and decision["citations"] == []
    assert not Escalation.objects.exists()


def test_an_account_question_without_a_customer_asks_for_the_account_number():
    decision = answer("¿cuánto debo?")
    assert (decision["outcome"], decision["route"], decision["asks_identity"]) == ("answered", "account", True)
    assert "cédula" in decision["reply"] and decision["options"] == []


def test_a_clarifying_question_is_clarify_with_its_question_and_options():
    decision = answer("¿me devuelven el dinero si cancelo?")
    assert (decision["outcome"], decision["route"], decision["asks_identity"]) == ("clarify", "document", False)
    assert decision["options"] == ["plan anual", "plan de prueba", "plan mensual"]
    assert decision["reply"].startswith("Para responderte bien, ¿cuál es tu caso: plan anual")


def test_a_bare_acknowledgement_of_an_answer_is_silenced_with_no_reply():
    decision = answer("ok", "--history", "user: ¿cuánto cuesta la reconexión?",
                      "--history", "assistant: La reconexión cuesta Bs. 350,00.")
    assert (decision["outcome"], decision["reply"], decision["reason"]) == ("silenced", "", "")
    assert answer("ok")["outcome"] == "answered"  # without an answer before it, the bot offers help


def test_a_malformed_history_item_is_refused_with_its_form():
    with pytest.raises(CommandError, match="'user: TEXT'"):
        call_command("answer", "ok", "--history", "bot said hi", stdout=StringIO())


def test_a_known_customer_gets_their_billing_facts_as_evidence(healthy_billing):
    decision = answer("¿cuánto debo?", "--customer", "C-1001")
    assert decision["outcome"] == "answered" and decision["route"] == "account"
    assert any(e["value"] is not None for e in decision["evidence"])


def test_small_talk_in_english():
    decision = answer("hello", "--language", "en")
    assert (decision["outcome"], decision["route"]) == ("answered", "smalltalk")
    assert "plans, invoices and payments" in decision["reply"]


def test_an_empty_query_is_refused():
    with pytest.raises(CommandError):
        call_command("answer", "  ", "--json", stdout=StringIO())


def test_without_json_it_prints_a_readable_summary():
    out = StringIO()
    call_command("answer", "quiero hablar con una persona", stdout=out)
    assert out.getvalue().startswith("escalated · route human · USER_REQUEST")


@pytest.mark.parametrize(
    ("query", "document"),
    [
        # Routed to "a person" or "cannot do that" by the classifier alone; the number is the provider's own.
        ("transferí a la cuenta 01020456780001234567 desde mercantil ayer y todavía no me sale reflejado",
         "pago-transferencia-es"),
        ("I sent a zelle to 3055550147 on saturday, when will it show as paid?", "zelle-payments-en"),
    ],
)
def test_a_number_the_provider_publishes_is_answered_from_its_document(query, document):
    decision = answer(query)
    assert (decision["outcome"], decision["route"]) == ("answered", "document"), decision
    cited = {e["id"] for e in decision["evidence"]} & set(decision["citations"])
    assert cited and decision["retrieved"][0]["doc"] == document


def test_a_follow_up_is_answered_with_the_question_it_follows():
    decision = answer("¿y para empresas?", "--history", "user: ¿cuánto es el recargo por mora?",
                      "--history", "assistant: En los planes residenciales es 5 % de lo que quede sin pagar.")
    assert decision["outcome"] == "answered" and decision["route"] == "document"
    assert "3,00" in decision["reply"]  # the business late fee, not the home one again


def test_the_same_reply_is_never_sent_twice_in_a_row_to_two_different_questions():
    first = answer("cuanto cobran por reconexion de fibra")
    again = answer("¿y en cuánto tiempo me reconectan?", "--history", "user: cuanto cobran por reconexion de fibra",
                   "--history", f"assistant: {first['reply']}")
    assert again["reply"] != first["reply"]


def test_a_follow_up_gets_what_its_previous_reply_did_not_say():
    formula = "Prorated charge = (new plan price − current plan price) × remaining days ÷ days in the cycle."
    then = answer("n if i go down a plan?", "--language", "en", "--history",
                  "user: How is proration calculated when I upgrade?", "--history", f"assistant: {formula}")
    assert then["outcome"] == "answered" and "Downgrades never produce proration" in then["reply"], then
    assert "Prorated charge" not in then["reply"]


def test_a_question_about_a_limit_is_answered_with_the_bound_the_help_center_states():
    # "maximum" and "limit" are read as one word: the referral page's bound, not its conditions.
    then = answer("is there a limit?", "--language", "en", "--history", "user: what do I get for referring someone?",
                  "--history", "assistant: A USD 5.00 credit when the person you referred pays their first monthly "
                               "invoice.")
    assert then["outcome"] == "answered" and "USD 30.00" in then["reply"], then


def test_a_payment_asked_for_last_month_is_that_invoices(healthy_billing):
    customer_id, account = next((c, a) for c, a in sorted(healthy_billing.data.accounts.items())
                                if a.customer.language == "es" and len(a.invoices) > 1
                                and len({p.invoice_id for p in a.payments if p.status == "succeeded"}) > 1
                                and not any(p.status != "succeeded" for p in a.payments))
    earlier = account.invoices[1]
    paid = next(p for p in account.payments if p.invoice_id == earlier.id)
    decision = answer("y el mes pasado cuánto pagué?", "--customer", customer_id)
    assert decision["outcome"] == "answered" and decision["route"] == "account", decision
    amount = f"{paid.amount.amount:,.2f}".replace(",", "_").replace(".", ",").replace("_", ".")
    assert amount in decision["reply"] and paid.date.strftime("%d/%m/%Y") in decision["reply"], decision["reply"]


def _customer(simulator, *, segment: str, language: str = "es") -> str:
    """Return the id of one of the simulated customers of this kind (the dataset is built for the clock's date)."""
    return next(cid for cid, account in sorted(simulator.data.accounts.items())
                if account.customer.segment == segment and account.customer.language == language)


@pytest.mark.parametrize(("query", "language", "methods"), [
    ("qué formas de pago tienen?", "es", ["Pago móvil", "Transferencia", "Domiciliación", "Tarjeta", "Efectivo", "Zelle"]),
    ("how can I pay my bill?", "en", ["Pago móvil", "Bank transfer", "Direct debit", "card", "Cash", "Zelle"]),
])
def test_a_question_about_the_ways_to_pay_gets_every_one_the_help_center_names(query, language, methods):
    decision = answer(query, "--language", language)
    assert decision["outcome"] == "answered", decision
    for method in methods:
        assert method in decision["reply"], (method, decision["reply"])


def test_someone_billing_does_not_know_is_asked_whether_home_or_business_when_the_rule_differs():
    decision = answer("¿cuánto es el recargo por pagar tarde?")
    assert decision["outcome"] == "clarify", decision
    assert decision["options"] == ["hogar", "empresa"] and "hogar" in decision["reply"]


def test_nobody_is_told_one_kind_of_customers_rule_when_its_page_ranks_twice_above_the_other():
    # Two sections of the business late-fee page rank above the home one: they are one rule, not two votes, and the
    # business fee alone is not an answer for someone who may be a home customer: each kind's rule, labelled, then
    # the question which kind theirs is.
    decision = answer("¿cuánto es el recargo si pago tarde?")
    assert decision["outcome"] == "clarify", decision
    assert decision["options"] == ["hogar", "empresa"]
    home = decision["reply"].index("Cuentas residenciales:")
    business = decision["reply"].index("Cuentas empresariales:")
    home_rule = decision["reply"][home:business] if home < business else decision["reply"][home:]
    business_rule = decision["reply"][business:home] if business < home else decision["reply"][business:]
    assert "5 %" in home_rule and "3,00" not in home_rule
    assert "USD 3,00" in business_rule and "5 %" not in business_rule
    assert decision["reply"].endswith("¿Tu servicio es de hogar o de empresa? Así te confirmo el que te aplica.")
    assert decision["citations"] and set(decision["citations"]) <= {e["id"] for e in decision["evidence"]}


def test_a_rule_written_for_everyone_is_answered_without_asking_which_kind_of_customer():
    # The home and business late-fee pages rank beside it, but the disputes page says it for everyone.
    decision = answer("tengo un reclamo abierto, igual me van a cobrar mora por ese monto?")
    assert decision["outcome"] == "answered", decision
    cited = {e["id"]: e["text"] for e in decision["evidence"]}
    assert [cited[c].split("\n")[0] for c in decision["citations"]] == ["Reclamos sobre la factura"], decision
    assert "reclamo" in decision["reply"] and "residencial" not in decision["reply"]


def test_a_question_that_names_the_business_gets_the_business_rule_without_a_question():
    decision = answer("¿cuánto es el recargo por mora para empresas?")
    assert decision["outcome"] == "answered", decision
    assert decision["retrieved"][0]["doc"] == "recargo-mora-empresarial-es"


@pytest.mark.parametrize(("segment", "document"), [("home", "recargo-mora-hogar-es"),
                                                   ("business", "recargo-mora-empresarial-es")])
def test_an_identified_customer_gets_the_late_fee_rule_for_their_kind_of_account(healthy_billing, segment, document):
    decision = answer("¿cuánto es el recargo por pagar tarde?", "--customer", _customer(healthy_billing, segment=segment))
    assert decision["outcome"] == "answered", decision
    kept = [row["doc"] for row in decision["retrieved"] if row["kept"]]
    other = {"home": "recargo-mora-empresarial-es", "business": "recargo-mora-hogar-es"}[segment]
    assert document in kept and other not in kept
    # Home: a share of what is left unpaid; business: a fixed amount per overdue invoice.
    assert ("5 %" in decision["reply"] or "5%" in decision["reply"]) == (segment == "home"), decision["reply"]
    assert ("3,00" in decision["reply"]) == (segment == "business"), decision["reply"]


def test_a_follow_up_asking_what_would_follow_gets_the_rule_not_the_bill_again(healthy_billing):
    # The previous question asked for the customer's records; the follow-up asks what would happen if they paid late:
    # the business late fee, not the bill again.
    customer = _customer(healthy_billing, segment="business")
    decision = answer("y si la pagamos tarde cuánto es el recargo?", "--customer", customer,
                      "--history", "user: ¿de cuánto es la factura de este mes?",
                      "--history", "assistant: Tu factura actual está en el portal.")
    assert (decision["outcome"], decision["route"]) == ("answered", "document"), decision
    assert "USD 3,00" in decision["reply"], decision["reply"]


def test_an_english_follow_up_asking_what_would_follow_goes_to_the_rules(healthy_billing):
    # "and if i pay it late…" after a question about what they owe is read on its own words: the help center's rule,
    # not their balance again.
    customer = _customer(healthy_billing, segment="home", language="en")
    decision = answer("and if i pay it late what do you charge?", "--language", "en", "--customer", customer,
                      "--history", "user: how much do i owe?",
                      "--history", "assistant: Your current invoice is in the portal.")
    assert decision["route"] == "document", decision


def test_the_bill_a_follow_up_names_is_read_in_its_own_words(healthy_billing):
    # "this month" in the question it follows does not make "and the month before?" about this month's bill.
    customer_id, account = next((c, a) for c, a in sorted(healthy_billing.data.accounts.items())
                                if a.customer.language == "en" and len(a.invoices) > 1
                                and a.invoices[0].total.amount != a.invoices[1].total.amount)
    newest, before = account.invoices[0], account.invoices[1]
    decision = answer("and the month before?", "--customer", customer_id, "--language", "en",
                      "--history", f"user: why is my bill {newest.total.amount} this month?",
                      "--history", "assistant: It has a credit for the days without service.")
    assert decision["outcome"] == "answered" and decision["route"] == "account", decision
    assert f"{before.total.amount:,.2f}" in decision["reply"], decision["reply"]


def test_a_follow_up_asks_for_the_capability_its_own_words_name(healthy_billing):
    # Joined with a question about a charge billed twice, "y con q la pagué?" still asks how the bill was paid.
    customer_id, account = next((c, a) for c, a in sorted(healthy_billing.data.accounts.items())
                                if a.customer.language == "es" and any(p.status == "succeeded" for p in a.payments))
    decision = answer("y con q la pagué?", "--customer", customer_id,
                      "--history", "user: me cobraron la mensualidad doble, q es esto",
                      "--history", "assistant: La línea de la mensualidad aparece dos veces.")
    assert decision["outcome"] == "answered" and decision["route"] == "account", decision
    assert "tu pago de " in decision["reply"], decision["reply"]


# The annual plan's and the trial's refund rules are written for those terms only (their front matter says so).
TERM_ONLY = {"reembolso-plan-anual-es", "reembolso-plan-prueba-es"}


def test_a_monthly_customer_asking_for_their_money_back_is_not_asked_which_term_they_are_on(healthy_billing):
    # Billing reports the contract term: a customer billed month to month is not asked "annual, trial or monthly?",
    # and the annual plan's and the trial's refund rules are not theirs.
    customer = _customer(healthy_billing, segment="home")
    assert healthy_billing.data.accounts[customer].plan.term == "monthly"
    decision = answer("¿me devuelven la plata si cancelo?", "--customer", customer)
    assert decision["outcome"] == "answered", decision
    kept = {row["doc"] for row in decision["retrieved"] if row["kept"]}
    assert not kept & TERM_ONLY, decision["retrieved"]
    assert "14 días" not in decision["reply"] and "anual" not in decision["reply"], decision["reply"]


def test_an_annual_customer_asking_for_their_money_back_gets_the_annual_plans_rule(healthy_billing, monkeypatch):
    customer = _customer(healthy_billing, segment="home")
    account = healthy_billing.data.accounts[customer]
    monkeypatch.setattr(account, "plan", replace(account.plan, term="annual"))
    decision = answer("¿me devuelven la plata si cancelo?", "--customer", customer)
    assert decision["outcome"] == "answered", decision
    assert "reembolso-plan-prueba-es" not in {row["doc"] for row in decision["retrieved"] if row["kept"]}
    # Not asked which term is theirs: answered from the annual plan's refund rule, as if they had picked it.
    cited = {e["id"]: e["text"] for e in decision["evidence"]}
    assert {cited[c].split("\n")[0] for c in decision["citations"]} == {"Reembolso del plan anual"}, decision
    assert "100 %" in decision["reply"], decision["reply"]


def test_a_monthly_customer_asking_about_the_annual_plan_is_answered_about_it(healthy_billing):
    # Their own term does not hide the plan they ask about.
    decision = answer("¿cuánto me ahorro con el plan anual?", "--customer", _customer(healthy_billing, segment="home"))
    assert decision["outcome"] == "answered", decision
    assert "plan-anual-es" in {row["doc"] for row in decision["retrieved"] if row["kept"]}, decision["retrieved"]
    assert "15 %" in decision["reply"], decision["reply"]


def test_a_customer_asking_about_another_contract_gets_its_rules_whatever_their_own_plan(healthy_billing):
    # The trial's refund page is written for the trial's plan (Fibra 100); a Fibra 300 customer asking what the trial
    # refunds asks about that contract, and gets its rule.
    customer = next(cid for cid, account in sorted(healthy_billing.data.accounts.items())
                    if account.plan.code == "F300" and account.customer.language == "es")
    decision = answer("si cancelo el plan de prueba me devuelven la plata?", "--customer", customer)
    assert decision["outcome"] == "answered", decision
    assert "reembolso-plan-prueba-es" in {row["doc"] for row in decision["retrieved"] if row["kept"]}
    assert "7 días" in decision["reply"], decision["reply"]


def test_the_service_cut_off_is_read_as_its_suspension_and_putting_it_back_as_reconnection(healthy_billing):
    # Read literally, nothing in the help center says "cortar" or "volver a poner": the reconnection page answers.
    decision = answer("si me cortan el servicio cuánto pago para que me lo vuelvan a poner?",
                      "--customer", _customer(healthy_billing, segment="home"))
    assert decision["outcome"] == "answered", decision
    assert "Bs. 350,00" in decision["reply"], decision["reply"]
