"""The template writer's account answers: every simulator customer, every account capability, both languages.

Facts and key figures come from the real billing client against the simulator (pinned to AS_OF), numbered
the way the turn numbers them (`fact_evidence`, `turn_key_figures`). Each answer must pass the same
verifier a model's draft passes — customer view, each figure against the citation after it, the primary
key figures stated — and so must its internal note (every figure cited, formulas checked).
"""

import re

import pytest

from bot import grounding
from bot.compose import day_text, month_name, plan_answer
from bot.writer import TemplateWriter, WriterRequest, fact_evidence, turn_key_figures
from tests.support import billing_sim
from tests.support.billing_sim import capability_results

ACCOUNT_CAPABILITIES = ("account_summary", "invoices", "invoice_change", "payments")
# The billing tests' simulator and client, pinned to their date: the figures they worked by hand.
sim, client, customer = billing_sim.sim, billing_sim.client, billing_sim.customer
CUSTOMER_JARGON = re.compile(r"\[E\d|\bE\d+\b|_|[=×÷]|\bformula\b|\bderivation\b")


def request_for(result, language, query=""):
    evidence, sources = fact_evidence(result.evidence, first=1)
    return WriterRequest(query=query, language=language, evidence=evidence, sources=sources,
                         capability=result.capability, key_figures=turn_key_figures(result.key_figures, first=1))


def checked(result, language, query=""):
    """Return the template draft for a result and the verdicts on its message and note."""
    request = request_for(result, language, query)
    draft = TemplateWriter().write(request)
    reply = grounding.verify(draft.reply, request.evidence, customer_view=True, key_figures=request.required)
    note = grounding.verify(draft.note, request.note_evidence(), customer_view=False, require_citations=True)
    return draft, reply, note


@pytest.fixture(scope="module")
def every_result():
    results = []
    for flipped in (False, True):
        for key, result in capability_results(flipped):
            if result.capability in ACCOUNT_CAPABILITIES and result.ok and result.evidence:
                results.append((key, result))
    return results


def test_every_customer_and_account_capability_gets_a_verified_answer_that_states_its_key_figures(every_result):
    checked_count = 0
    for key, result in every_result:
        for language in ("es", "en"):
            draft, reply, note = checked(result, language)
            assert reply.grounded, (key, language, draft.reply, reply.problems)
            assert note.grounded, (key, language, draft.note, note.problems)
            customer_text = grounding.strip_citations(draft.reply)
            assert not CUSTOMER_JARGON.search(customer_text), (key, language, customer_text)
            assert len(re.findall(r"(?<!Bs)[.!?](?:\s|$)", customer_text)) <= 3, (key, customer_text)  # lead + one more
            assert draft.note.startswith("Root cause: ") and "\nUnsure: " in draft.note
            checked_count += 1
    capabilities = {result.capability for _key, result in every_result}
    assert capabilities == set(ACCOUNT_CAPABILITIES) and checked_count > 1500


# Five answers a subscriber reads (docs/bot.md shows them next to what the template wrote before).
EXAMPLES = [
    ("invoice_change", "promotion_ended", 0, "es",
     "Tu factura de octubre subió Bs. 324,80 respecto a la de septiembre por el fin de la promoción «Descuento de "
     "bienvenida», que te descontaba Bs. 280,00 al mes. El resto, Bs. 44,80, corresponde al IVA."),
    ("invoice_change", "promotion_ended", 0, "en",
     "Your October bill went up by Bs. 324.80 compared with September because of the end of the “Descuento de "
     "bienvenida” promotion, which took Bs. 280.00 off each month. The rest, Bs. 44.80, is VAT."),
    ("invoice_change", "duplicate_charge", 0, "es",
     "Tu factura de octubre subió Bs. 1.624,00 respecto a la de septiembre: es un cargo que aparece dos veces; "
     "esa diferencia, con IVA, es lo cobrado de más."),
    ("invoice_change", "duplicate_charge", 0, "en",
     "Your October bill went up by Bs. 1,624.00 compared with September: that is a charge that appears twice; "
     "that difference, VAT included, is the overcharge."),
    ("invoice_change", "late_fee", 0, "es",
     "Tu factura de octubre subió Bs. 81,20 respecto a la de septiembre: es un recargo por mora del 5 % sobre "
     "Bs. 1.624,00 que seguían sin pagar de una factura anterior al terminar el plazo de gracia. Esta factura "
     "tiene un saldo pendiente de Bs. 1.705,20 y lleva 10 días vencida."),
    ("invoice_change", "late_fee", 0, "en",
     "Your October bill went up by Bs. 81.20 compared with September: that is a late fee of 5% on the "
     "Bs. 1,624.00 of an earlier bill still unpaid when the grace period ended. This bill has Bs. 1,705.20 "
     "outstanding and is 10 days overdue."),
    ("payments", "payment_failed_then_succeeded", 0, "es",
     "Sí, tu pago de Bs. 1.624,00 (pago móvil) del 04/10/2026 se aplicó a tu factura de octubre, que quedó "
     "pagada. Antes hubo un intento de pago de Bs. 1.624,00 del 04/09/2026 que no se completó (fondos insuficientes)."),
    ("payments", "payment_failed_then_succeeded", 0, "en",
     "Yes, your payment of Bs. 1,624.00 (pago móvil) on 2026-10-04 was applied to your October bill, which is now "
     "paid. An earlier attempt of Bs. 1,624.00 on 2026-09-04 did not go through."),
    ("account_summary", "late_fee", 0, "es",
     "Tu factura de octubre tiene un saldo pendiente de Bs. 1.705,20 y venció el 10/10/2026. Tu plan actual "
     "es Fibra 300: cuesta Bs. 1.400,00 al mes antes de IVA."),
    ("invoice_change", "plan_upgrade_proration", 1, "en",
     "Your October bill went up by USD 17.40 compared with September because of the proration of your plan "
     "change: USD 5.00 for 15 days on the new plan. Your new plan's monthly fee is also USD 10.00 higher."),
    ("invoice_change", "tax_rate_change", 0, "es",
     "Tu factura de octubre subió Bs. 112,00 respecto a la de septiembre: es un cambio en la tasa de un impuesto, "
     "de 8 % a 16 %."),
    ("invoice_change", "outage_credit", 1, "en",
     "Your October bill went down by USD 1.54 compared with September because of an outage credit of USD 1.33 for "
     "the days without service. The rest, USD 0.21, is VAT."),
    ("invoice_change", "reconnection_fee", 0, "es",
     "Tu factura de octubre subió Bs. 487,20 respecto a la de septiembre por la reconexión del servicio, de "
     "Bs. 350,00. También incluye un recargo por mora de Bs. 81,20."),
    ("invoice_change", "unchanged", 0, "es",
     "Tu factura de octubre es igual a la de septiembre: Bs. 1.624,00 en ambas."),
]


@pytest.mark.parametrize(("capability", "scenario", "variant", "language", "expected"), EXAMPLES,
                         ids=[f"{c}-{s}-{v}-{lang}" for c, s, v, lang, _ in EXAMPLES])
def test_the_answer_leads_with_the_key_figure_and_its_cause(sim, client, capability, scenario, variant, language,
                                                           expected):
    result = getattr(client, capability)(customer(sim, scenario, variant))
    draft, reply, _note = checked(result, language)
    assert grounding.strip_citations(draft.reply) == expected
    assert reply.grounded


@pytest.mark.parametrize(("language", "query", "earlier"), [
    ("es", "y antes cuánto pagaba?", "La de septiembre fue de Bs. 1.299,20."),
    ("en", "and before that, how much was I paying?", "The September bill was Bs. 1,299.20."),
    ("en", "how much was i paying w the discount again", "The September bill was Bs. 1,299.20.")])
def test_a_change_asked_against_what_was_paid_before_also_states_the_earlier_total(sim, client, language, query,
                                                                                    earlier):
    result = client.invoice_change(customer(sim, "promotion_ended", 0))
    draft, reply, _note = checked(result, language, query)
    assert grounding.strip_citations(draft.reply).endswith(earlier) and reply.grounded
    plain, _reply, _note = checked(result, language)  # asked only why: the change and its cause, as before
    assert earlier not in grounding.strip_citations(plain.reply)


@pytest.mark.parametrize(("language", "query", "named"), [
    ("es", "250 de q?", "La línea de Bs. 250,00 de tu factura de octubre es «Visita fallida»."),
    ("en", "what's the 250 line?", "The Bs. 250.00 line on your October bill is “Visita fallida”.")])
def test_a_line_asked_by_its_amount_is_named_as_the_bill_names_it_then_the_change(sim, client, language, query,
                                                                                   named):
    result = next(r for r in map(client.invoice_change, sim.data.scenarios["technical_visit"])
                  if any(f.kind == "invoice_line" and "Visita fallida" in f.text and f.value == "250.00"
                         for f in r.evidence))
    draft, reply, note = checked(result, language, query)
    said = grounding.strip_citations(draft.reply)
    assert said.startswith(named) and reply.grounded and note.grounded
    plain, _reply, _note = checked(result, language)
    assert grounding.strip_citations(plain.reply).startswith(said[len(named) + 1:])  # then the bill's lead sentence
    # An amount the customer says they pay is not a line asked about: the change is told as before.
    paid, _reply, _note = checked(result, language, "si yo pago 250 todos los meses" if language == "es"
                                  else "i usually pay 250")
    assert paid.reply == plain.reply


def test_a_discount_line_asked_by_its_amount_is_said_as_taken_off(sim, client):
    result, line = next((r, f) for r in map(client.invoice_change, sim.data.scenarios["unchanged"])
                        for f in r.evidence if f.kind == "invoice_line" and f.value.startswith("-"))
    draft, reply, _note = checked(result, "en", f"what's the minus {int(-float(line.value))} line?")
    told = grounding.strip_citations(draft.reply)
    assert told.startswith("The ") and " taken off your " in told and "−" not in told
    assert line.text.split(": ", 1)[1].split(" = ")[0].strip("«»“”") in told and reply.grounded  # named as billed


@pytest.mark.parametrize(("language", "query"), [("es", "y ese descuento qué es?"),
                                                 ("en", "and what's that discount?")])
def test_a_line_asked_by_its_kind_is_named_when_the_change_does_not_explain_it(sim, client, language, query):
    result = next(r for r in map(client.invoice_change, sim.data.scenarios["unchanged"])
                  if any(f.kind == "invoice_line" and f.value.startswith("-") for f in r.evidence))
    draft, reply, _note = checked(result, language, query)
    told = grounding.strip_citations(draft.reply)
    assert ("que se restan en tu factura" if language == "es" else "taken off your") in told and reply.grounded


def test_a_line_of_the_kind_that_moved_the_bill_is_told_as_the_change_cause(sim, client):
    # "y ese recargo x q si yo pagué": the late fee is what moved the bill; its cause, with the rate, says it, once,
    # after when the bill they say they paid was paid.
    result = client.invoice_change(customer(sim, "late_fee", 0))
    asked, _reply, _note = checked(result, "es", "y ese recargo x q si yo pagué")
    plain, _reply, _note = checked(result, "es")
    told = grounding.strip_citations(asked.reply)
    assert told.startswith("Tu factura de septiembre quedó pagada el ") and told.count("recargo por mora del 5 %") == 1
    assert grounding.strip_citations(plain.reply).split(". ")[0] in told


@pytest.mark.parametrize(("language", "query", "said"), [
    ("es", "y de igtf cuánto se pagó", "El IGTF de ese pago fue de USD "),
    ("en", "how much igtf did i pay?", "The IGTF on that payment was USD ")])
def test_the_igtf_asked_is_the_one_on_the_payments_receipt(sim, client, language, query, said):
    result = next(r for r in map(client.payments, sorted(sim.data.accounts))
                  if r.ok and any(f.kind == "payment" and "IGTF" in f.text for f in r.evidence[:2]))
    draft, reply, _note = checked(result, language, query)
    told = grounding.strip_citations(draft.reply)
    assert said in told and not told.startswith(("Sí", "Yes")) and reply.grounded
    bolivar = next(r for r in map(client.payments, sorted(sim.data.accounts))
                   if r.ok and r.evidence[1:2] and r.evidence[1].kind == "payment" and "IGTF" not in r.evidence[1].text)
    draft, reply, _note = checked(bolivar, language, query)
    assert ("no lleva IGTF" if language == "es" else "no IGTF") in draft.reply and reply.grounded


@pytest.mark.parametrize(("language", "query", "said"), [
    ("es", "y de iva cuanto me estan cobrando en total", "El IVA de tu factura de octubre es de "),
    ("en", "do u guys put vat on top of that fee too", "The VAT on your October bill is ")])
def test_the_vat_asked_is_told_with_its_rate_and_base_then_the_change(sim, client, language, query, said):
    result = client.invoice_change(customer(sim, "technical_visit", 0))
    draft, reply, note = checked(result, language, query)
    told = grounding.strip_citations(draft.reply)
    tax = next(f for f in result.evidence if f.kind == "tax_computation")
    assert told.startswith(said) and reply.grounded and note.grounded
    assert ("16 %" if language == "es" else "16%") in told and told.count(". ") >= 1  # then the bill's lead
    assert tax.value.replace(".", "," if language == "es" else ".") in told.replace(".", "," if language == "es"
                                                                                     else ".")


def test_a_lesser_cause_asked_by_its_kind_is_told_in_full_before_the_change(sim, client):
    # A reconnection moved the bill most; "and that late fee, how much is it?" gets the late fee with its rate.
    result = next(r for r in map(client.invoice_change, sim.data.scenarios["reconnection_fee"])
                  if any(f.name == "late_fee" and f.role != "primary" for f in r.key_figures))
    draft, reply, _note = checked(result, "es", "ah ok y el recargo ese q tmb me aparece d cuanto es")
    told = grounding.strip_citations(draft.reply)
    assert told.startswith("Tu factura de octubre incluye un recargo por mora de ") and " el 5 % de " in told
    assert "reconexión" in told and reply.grounded


def test_a_follow_up_asks_in_its_own_words_not_the_earlier_questions(sim, client):
    # Joined with the question it follows, the earlier question's amount is not the line asked about.
    result = client.invoice_change(customer(sim, "technical_visit", 0))
    visit = next(f for f in result.evidence if f.kind == "invoice_line" and "Visita" in f.text)
    amount = visit.value.split(".")[0]
    draft, _reply, _note = checked(result, "es", f"y de iva cuanto me cobran (qué es el cargo de {amount}?)")
    assert grounding.strip_citations(draft.reply).startswith("El IVA de tu factura")


@pytest.mark.parametrize(("language", "query", "said"), [
    ("es", "y yo q plan es q tengo? y cuanto cuesta normal", "Tu plan actual es Fibra 300: cuesta Bs. 1.400,00 al mes"),
    ("en", "what plan am i on?", "Your current plan is Fibra 300: it costs Bs. 1,400.00 a month")])
def test_the_plan_asked_is_named_first_with_its_price(sim, client, language, query, said):
    result = client.account_summary(customer(sim, "late_fee", 0))
    draft, reply, _note = checked(result, language, query)
    assert grounding.strip_citations(draft.reply).startswith(said) and reply.grounded
    plain, _reply, _note = checked(result, language)  # not asked: the bill first, the plan after it
    assert not grounding.strip_citations(plain.reply).startswith(said)


@pytest.mark.parametrize(("language", "query", "said"), [
    ("es", "cuantos dias de atraso tuve?", " días después de su vencimiento."),
    ("en", "how many days late was i", " days after its due date."),
    # A late fee they say they paid for: when that bill was paid is the answer.
    ("es", "recargo?? pero si yo pagué, xq me ponen eso", " días después de su vencimiento."),
    ("en", "why a late fee? i paid it", " days after its due date.")])
def test_how_late_a_bill_was_paid_is_told_before_the_change(sim, client, language, query, said):
    result = client.invoice_change(customer(sim, "late_fee", 0))
    late = next(f for f in result.evidence if f.kind == "days_late")
    draft, reply, note = checked(result, language, query)
    told = grounding.strip_citations(draft.reply)
    assert f"{late.value}{said}" in told.split(". ")[0] + "." and reply.grounded and note.grounded


def test_the_note_gives_the_root_cause_the_evidence_and_each_formula(sim, client):
    result = client.invoice_change(customer(sim, "promotion_ended", 0))
    draft, _reply, note = checked(result, "es")
    assert note.grounded
    lines = draft.note.splitlines()
    assert lines[0] == ("Root cause: a promotion ended and its monthly discount stopped — discount_ended "
                        "Bs. 280.00 [E7].")
    assert lines[1] == "Rests on: [E3][E7][E5]."
    assert lines[2] == ("Formula (invoice_delta): total(F-1031-202610) - total(F-1031-202609) = 1624.00 - 1299.20 "
                        "= 324.80; by type: discount 280.00, tax 44.80 [E3].")
    assert lines[-1] == "Unsure: nothing; every figure is copied from the billing system's facts."


def test_what_the_customer_was_not_told_is_in_the_note(sim, client):
    result = client.invoice_change(customer(sim, "reconnection_fee", 0))
    draft, _reply, note = checked(result, "es")
    assert "Not told to the customer: late_fee_basis Bs. 1,624.00 [E9]." in draft.note and note.grounded


def test_a_first_bill_is_explained_by_its_largest_charge(sim, client):
    customer_id = customer(sim, "promotion_ended", 0)
    oldest = sim.data.accounts[customer_id].invoices[-1]
    draft, reply, _ = checked(client.invoice_change(customer_id, period=oldest.period), "es")
    assert grounding.strip_citations(draft.reply) == (
        "Tu factura de julio es de Bs. 3.634,66 e incluye la instalación del servicio, de Bs. 1.500,00.")
    assert reply.grounded


def test_an_unknown_capability_has_no_plan():
    assert plan_answer(capability="find_customer", facts=[], figures=[], language="es") is None


@pytest.mark.parametrize(("period", "language", "name"), [("2026-10", "es", "octubre"), ("2026-01", "en", "January"),
                                                          ("2026-13", "es", "2026-13"), ("", "en", "")])
def test_month_names(period, language, name):
    assert month_name(period, language) == name


def test_dates_are_written_so_the_verifier_can_match_them():
    from datetime import date

    assert (day_text(date(2026, 10, 4), "es"), day_text(date(2026, 10, 4), "en")) == ("04/10/2026", "2026-10-04")


@pytest.mark.parametrize(("scenario", "kind", "language", "asked", "said"), [
    ("outage_credit", "outage_credit", "es", "y como sacan esos {amount}?", "Se calcula así: "),
    ("plan_upgrade_proration", "proration", "en", "how did you get that {amount}?", "It is worked out as ")])
def test_a_line_asked_how_it_was_worked_out_gets_its_computation(sim, client, scenario, kind, language, asked, said):
    result = client.invoice_change(customer(sim, scenario, 0))
    worked = next(f for f in result.evidence if f.kind == kind)
    amount = worked.value.split(".")[0]
    draft, reply, _note = checked(result, language, asked.format(amount=amount))
    told = grounding.strip_citations(draft.reply)
    assert said in told and reply.grounded, told
    assert " × " in told.split(said)[1] and told.count(". ") >= 2  # the line, its working, the bill's lead
    plain, _reply, _note = checked(result, language, f"what is the {amount} line?")  # not asked how: no working
    assert said not in grounding.strip_citations(plain.reply)
