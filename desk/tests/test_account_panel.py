"""The conversation page's account panel and Identify panel as an agent reads them.

Given a customer whose current invoice carries a charge twice, the panel lists every line with its amount,
the payments on it and the open balance, all in the contact's notation, the duplicate marked; billing's
codes read as words. Given a WhatsApp contact billing knows by its number, the Identify panel offers that
customer first, and linking it twice links once. Closing markers never show as what the customer wrote,
and the bot's internal note shows once.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from billing.answers.findings.invoice_checks import find_duplicate_charges
from billing.answers.findings.payments import find_payments
from billing.answers.money import money_text
from billing.api.client import billing_client
from billing.records import parse_invoice, parse_payment
from desk import services
from desk.models import Channel, Contact, CreditNoteRequest, Escalation, Event
from tests.support.factories import escalated

DOUBLE_CHARGED = "C-1059"  # the simulator's duplicate-charge customer
MARISOL = "C-1001"  # WhatsApp 584264468662
# "324.80 USD": an amount after its currency code, or with a machine decimal point in Spanish.
WRONG_NOTATION = re.compile(r"\d[\d.,]*\s(?:USD|VES)\b")


def agent_page(make_staff, conversation, name="ana", *roles):
    user = make_staff(name, *(roles or ("agent",)))
    browser = Client()
    browser.force_login(user)
    return browser, browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()


def account_panel(html: str) -> str:
    return html.split('id="account"')[1].split("</section>")[0]


def billing_bill(customer_id: str):
    data = billing_client().account_summary(customer_id).data
    invoice = parse_invoice(data["current_invoice"])
    payments = [parse_payment(p) for p in data["payments"]]
    return invoice, payments


@pytest.mark.django_db
@pytest.mark.parametrize("language", ["es", "en"])
def test_the_panel_lists_the_whole_bill_in_the_contacts_notation(make_staff, healthy_billing, language):
    conversation = escalated(customer_id=DOUBLE_CHARGED, language=language).conversation
    _, page = agent_page(make_staff, conversation)
    panel = account_panel(page)
    invoice, payments = billing_bill(DOUBLE_CHARGED)

    for line in invoice.lines:
        assert line.description in panel
        assert money_text(line.amount.amount, invoice.currency,
                          language) in panel
    assert money_text(invoice.total.amount, invoice.currency, language) in panel
    balance = find_payments(invoice, payments)[0].balance
    assert ("Paid in excess" if balance < 0 else "Open balance") in panel
    assert money_text(abs(balance), invoice.currency, language) in panel
    duplicated = sum(len(found.line_ids) for found in find_duplicate_charges(invoice))
    assert duplicated >= 2 and panel.count("charged twice") == duplicated
    for payment in (p for p in payments if p.invoice_id == invoice.id):
        assert money_text(payment.amount.amount, invoice.currency, language) in panel
    assert not WRONG_NOTATION.search(page), WRONG_NOTATION.search(page).group(0)
    # How the plan is billed, in words: the term decides which refund rules are the customer's.
    assert "billed monthly" in panel


@pytest.mark.django_db
def test_spanish_and_english_write_the_same_amount_each_their_way(make_staff, healthy_billing):
    invoice, _ = billing_bill(DOUBLE_CHARGED)
    spanish = account_panel(agent_page(make_staff, escalated(customer_id=DOUBLE_CHARGED).conversation)[1])
    english = account_panel(agent_page(make_staff, escalated(customer_id=DOUBLE_CHARGED, language="en")
                                       .conversation, "bob")[1])
    whole = f"{invoice.total.amount:.2f}"
    assert f"USD {whole.replace('.', ',')}" in spanish and f"USD {whole}" in english


@pytest.mark.django_db
def test_codes_read_as_words_and_credit_notes_in_the_same_notation(make_staff, healthy_billing):
    conversation = escalated(customer_id=DOUBLE_CHARGED).conversation
    invoice, payments = billing_bill(DOUBLE_CHARGED)
    CreditNoteRequest.objects.create(conversation=conversation, customer_id=DOUBLE_CHARGED, invoice_id=invoice.id,
                                     amount=Decimal("1624.00"), currency="USD", reason="cobro doble",
                                     status=CreditNoteRequest.Status.SENT, billing_credit_note_id="NC-000001",
                                     billing_status="pending_review")
    Event.objects.create(conversation=conversation, kind="credit_note_approved",
                         detail={"amount": "1624.00", "currency": "USD", "invoice_id": invoice.id})
    _, page = agent_page(make_staff, conversation)
    assert "Pending review" in page and "pending_review" not in page
    assert "USD 1.624,00" in page.split('id="credit-notes"')[1]  # the panel
    assert "the credit note for USD 1.624,00 on invoice" in page.split('id="thread"')[1]  # the thread
    methods = {p.method for p in payments if p.invoice_id == invoice.id}
    for method in methods:
        assert f"· {method} ·" not in account_panel(page)
    assert not WRONG_NOTATION.search(page)


@pytest.mark.django_db
def test_billing_down_keeps_the_page_and_says_so(make_staff, healthy_billing):
    healthy_billing.set_fault("503")
    conversation = escalated(customer_id=DOUBLE_CHARGED).conversation
    _, page = agent_page(make_staff, conversation)
    assert "Billing system unavailable" in account_panel(page)


# Identify from what billing knows -----------------------------------------------------------------

def whatsapp_contact(wa_id="584264468662", customer_id=""):
    return escalated(channel=Channel.WHATSAPP, wa_id=wa_id, customer_id=customer_id).conversation


@pytest.mark.django_db
def test_billing_knows_the_number_one_click_links_and_a_double_click_links_once(make_staff, healthy_billing):
    conversation = whatsapp_contact()
    browser, page = agent_page(make_staff, conversation)
    offer = page.split('id="identify"')[1].split("</section>")[0]
    assert "Billing has <strong>C-1001</strong> (Marisol Rojas Rojas) for this number" in offer
    assert offer.index("whatsapp-offer") < offer.index("identify-q")  # offered first, before the search
    link = reverse("desk:customer_link", args=[conversation.pk])
    for _ in range(2):
        answer = browser.post(link, {"customer_id": MARISOL, "via": "whatsapp"})
        assert answer.status_code == 302
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == MARISOL
    linked = Event.objects.filter(conversation=conversation, kind="customer_linked")
    assert linked.count() == 1 and linked.get().detail["matched_by"] == "whatsapp"
    page = browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert "whatsapp-offer" not in page and "Marisol Rojas Rojas" in account_panel(page)


@pytest.mark.django_db
def test_no_offer_for_a_number_billing_does_not_know_and_a_forged_offer_links_nothing(make_staff,
                                                                                      healthy_billing):
    conversation = whatsapp_contact(wa_id="584169999999")
    browser, page = agent_page(make_staff, conversation)
    assert "whatsapp-offer" not in page
    answer = browser.post(reverse("desk:customer_link", args=[conversation.pk]),
                          {"customer_id": MARISOL, "via": "whatsapp"})
    assert answer.status_code == 409 and "no longer has customer C-1001 for this WhatsApp number" in \
        answer.content.decode()
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == ""


@pytest.mark.django_db
def test_billing_down_offers_nothing_and_the_page_stays(make_staff, healthy_billing):
    healthy_billing.set_fault("503")
    _, page = agent_page(make_staff, whatsapp_contact())
    assert "whatsapp-offer" not in page and 'id="identify-q"' in page


# What the customer wrote, and the bot's note --------------------------------------------------------

@pytest.mark.django_db
def test_closing_an_escalation_leaves_what_the_customer_wrote_as_they_wrote_it(make_staff, healthy_billing):
    escalation = escalated(text="me cobraron doble")
    ana = make_staff("ana", "agent")
    services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    services.conversation_resolve(conversation_id=escalation.conversation_id, agent=ana)
    escalation.refresh_from_db()
    assert escalation.detail == "Customer wrote: “me cobraron doble”"
    older = escalated(text="hola")  # a row closed by an older version, markers appended
    Escalation.objects.filter(pk=older.pk).update(detail="Customer wrote: “hola”\n[handed back]\n[resolved]")
    _, page = agent_page(make_staff, older.conversation, "bob")
    card = page.split('id="escalation"')[1].split("</section>")[0]
    assert "Customer wrote: “hola”" in card and "[resolved]" not in card and "[handed back]" not in card


@pytest.mark.django_db
def test_the_bots_internal_note_shows_once_on_the_conversation_page(make_staff, healthy_billing):
    from traces.models import Trace

    note = "Billing: invoice_change failed — http_503."
    escalation = escalated(internal_note=note)
    Trace.objects.create(conversation=escalation.conversation, channel="webchat", outcome="escalated",
                         query="¿por qué subió?", escalation=escalation, internal_note=note)
    browser, page = agent_page(make_staff, escalation.conversation)
    panel = browser.get(reverse("traces:last_turn", args=[escalation.conversation_id])).content.decode()
    assert (page + panel).count(note) == 1
    assert "on the escalation card above" in panel
    other = escalated(internal_note="")  # a turn whose note is not on the card shows it in the panel
    Trace.objects.create(conversation=other.conversation, channel="webchat", outcome="escalated", internal_note=note)
    assert note in browser.get(reverse("traces:last_turn", args=[other.conversation_id])).content.decode()


@pytest.mark.django_db
def test_the_inbox_shows_what_the_customer_wrote_not_a_system_notice(make_staff):
    from desk.models import Message

    escalation = escalated(name="Marisol", text="me cobraron doble")
    Message.objects.create(conversation=escalation.conversation, direction="in", author="system", kind="system",
                           text="The customer changed their number", provider_message_id="wamid.system-1")
    browser = Client()
    browser.force_login(make_staff("ana", "agent"))
    row = browser.get(reverse("desk:queue")).content.decode().split(f'id="escalation-{escalation.pk}"')[1]
    last = row.split('class="last-message"')[1].split("</td>")[0]
    assert "me cobraron doble" in last and "changed their number" not in last
