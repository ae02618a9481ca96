"""Identify the customer from the conversation page: search billing, link the match, unlink a wrong one.

Given a contact nobody has identified, when an agent searches billing by account number, cédula/RIF or phone
and links the match, then the thread says who linked whom and when, the account panel and the credit-note
form show that customer at once, and the bot's next turn answers for them.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from bot.turn import run_turn
from bot.writer import TemplateWriter
from desk import services
from desk.identify import customer_lookups, customer_search
from desk.models import Contact, Event
from tests.support.factories import conversation_start, customer_says, escalated, events_of

# C-1001 in the billing simulator: Marisol Rojas Rojas, account 69578956, V-26042465, +584264468662.
MARISOL = "C-1001"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.parametrize(("typed", "lookups"), [
    ("69578956", [("account_number", "69578956"), ("national_id", "V-69578956")]),
    ("v-26.042.465", [("national_id", "V-26042465")]),
    ("J-12345678-9", [("national_id", "J-12345678-9")]),
    ("26042465 ", [("account_number", "26042465"), ("national_id", "V-26042465")]),
    ("+58 426-446 8662", [("phone", "+584264468662")]),
    ("0426-4468662", [("phone", "+584264468662")]),
    ("Marisol", []), ("", []), ("12", []), ("V-1", []),
])
def test_what_a_typed_query_is_looked_up_as(typed, lookups):
    assert customer_lookups(typed) == lookups


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["69578956", "V-26042465", "v26042465", "26042465", "0426-446.86.62",
                                   "+58 426 4468662"])
def test_each_kind_of_identifier_finds_the_customer(healthy_billing, typed):
    found = customer_search(typed)
    assert found.state == "ok" and [m.id for m in found.matches] == [MARISOL]
    assert found.matches[0].name == "Marisol Rojas Rojas"


@pytest.mark.django_db
def test_no_match_and_nothing_to_look_up_are_said_differently(healthy_billing):
    assert customer_search("99999999").message == "No billing customer matches “99999999”."
    invalid = customer_search("Marisol")
    assert invalid.state == "invalid" and "account number (8 digits)" in invalid.message


def staff_browser(make_staff, name, *roles):
    user = make_staff(name, *roles)
    browser = Client()
    browser.force_login(user)
    return browser, user


def identify_panel(html: str) -> str:
    return html.split('id="identify"')[1].split("</section>")[0]


@pytest.mark.django_db
def test_search_link_and_everything_uses_the_customer_right_after(make_staff, healthy_billing):
    browser, ana = staff_browser(make_staff, "ana", "agent")
    conversation = escalated(customer_id="").conversation
    page = browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert "not identified yet" in page and "Identify the customer" in identify_panel(page)

    results = browser.get(reverse("desk:identify", args=[conversation.pk]), {"q": "V-26.042.465"}, **HTMX)
    panel = results.content.decode()
    assert results.status_code == 200 and "Marisol Rojas Rojas" in panel and "found by cédula/RIF" in panel
    assert "<html" not in panel  # the partial
    linked = browser.post(reverse("desk:customer_link", args=[conversation.pk]),
                          {"customer_id": MARISOL, "q": "V-26.042.465"}, follow=True)
    page = linked.content.decode()
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == MARISOL
    event = Event.objects.get(conversation=conversation, kind="customer_linked")
    assert (event.actor, event.detail["customer_id"]) == (ana, MARISOL)
    assert f"linked to billing customer {MARISOL} (Marisol Rojas Rojas) by ana" in page
    when = timezone.localtime(event.created_at).strftime("%H:%M")
    assert (f'id="event-{event.pk}">linked to billing customer {MARISOL} (Marisol Rojas Rojas) by ana '
            f'<span class="small">{when}</span>') in page  # who and when, in the thread
    assert "Linked to billing customer" in page  # the confirmation
    account = page.split('id="account"')[1].split("</section>")[0]
    assert "Marisol Rojas Rojas" in account and "Invoice" in account
    credit = page.split('id="credit-notes"')[1].split("</section>")[0]
    assert 'id="cn-invoice"' in credit and "<option" in credit  # the credit-note form lists her invoices


@pytest.mark.django_db
def test_the_bots_next_turn_answers_for_the_linked_customer(make_staff, healthy_billing):
    ana = make_staff("ana", "agent")
    conversation = conversation_start(customer_id="")  # web chat: no number the bot could look up
    before = run_turn(message_id=customer_says(conversation, "¿Cuánto debo este mes?").pk, writer=TemplateWriter())
    assert "necesito identificarte" in before.reply.text and before.tool_calls == []  # unknown: it asks who
    services.contact_customer_link(conversation_id=conversation.pk, agent=ana, customer_id=MARISOL,
                                   query="69578956")
    conversation.refresh_from_db()
    assert conversation.pending_query == ""  # the bot's "who are you?" was answered by a person
    after = run_turn(message_id=customer_says(conversation, "¿Cuánto debo este mes?").pk, writer=TemplateWriter())
    assert after.outcome == "answered" and "necesito identificarte" not in after.reply.text
    assert f'"id": "{MARISOL}"' in json.dumps(after.tool_calls, ensure_ascii=False)  # billing asked about her


@pytest.mark.django_db
def test_unlink_a_wrong_customer(make_staff, healthy_billing):
    browser, ana = staff_browser(make_staff, "ana", "agent")
    conversation = escalated(customer_id="").conversation
    services.contact_customer_link(conversation_id=conversation.pk, agent=ana, customer_id="C-1002",
                                   query="12183629")
    page = browser.post(reverse("desk:customer_unlink", args=[conversation.pk]), follow=True).content.decode()
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == ""
    assert "unlinked from billing customer C-1002 by ana" in page and "not identified yet" in page
    again = browser.post(reverse("desk:customer_unlink", args=[conversation.pk]), follow=True).content.decode()
    assert "No billing customer is linked to this contact." in again
    assert events_of(conversation).count("customer_unlinked") == 1


@pytest.mark.django_db
@pytest.mark.parametrize("fault", ["503", "timeout"])
def test_billing_down_says_so_and_links_nothing(make_staff, healthy_billing, fault):
    browser, ana = staff_browser(make_staff, "ana", "agent")
    conversation = escalated(customer_id="").conversation
    healthy_billing.set_fault(fault)
    panel = browser.get(reverse("desk:identify", args=[conversation.pk]), {"q": "69578956"}, **HTMX)
    assert panel.status_code == 200 and "Billing system unavailable" in panel.content.decode()
    refused = browser.post(reverse("desk:customer_link", args=[conversation.pk]),
                           {"customer_id": MARISOL, "q": "69578956"})
    assert refused.status_code == 409 and "Billing system unavailable" in refused.content.decode()
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == ""
    assert "customer_linked" not in events_of(conversation)


@pytest.mark.django_db
def test_only_a_customer_billing_matches_can_be_linked(make_staff, healthy_billing):
    browser, _ = staff_browser(make_staff, "ana", "agent")
    conversation = escalated(customer_id="").conversation
    forged = browser.post(reverse("desk:customer_link", args=[conversation.pk]),
                          {"customer_id": "C-1049", "q": "69578956"})
    assert forged.status_code == 409 and "no longer matches customer C-1049" in forged.content.decode()
    empty = browser.post(reverse("desk:customer_link", args=[conversation.pk]), {"q": "69578956"})
    assert empty.status_code == 400 and "Pick a customer to link." in empty.content.decode()
    nul = browser.get(reverse("desk:identify", args=[conversation.pk]), {"q": "6957\x008956"})
    assert nul.status_code == 400 and "The search contains a NUL character" in nul.content.decode()
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == ""


@pytest.mark.django_db
def test_while_ana_holds_it_bob_cannot_link_but_a_supervisor_can(make_staff, healthy_billing):
    ana = make_staff("ana", "agent")
    bob_browser, _ = staff_browser(make_staff, "bob", "agent")
    sue_browser, sue = staff_browser(make_staff, "sue", "supervisor")
    conversation = escalated(customer_id="").conversation
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    page = bob_browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert "Search billing" not in identify_panel(page) and "only ana or a supervisor" in identify_panel(page)
    refused = bob_browser.post(reverse("desk:customer_link", args=[conversation.pk]),
                               {"customer_id": MARISOL, "q": "69578956"})
    assert refused.status_code == 409 and "ana has this conversation" in refused.content.decode()
    sue_browser.post(reverse("desk:customer_link", args=[conversation.pk]), {"customer_id": MARISOL, "q": "69578956"})
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == MARISOL


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["analyst", "kb_editor"])
def test_roles_that_do_not_work_the_desk_cannot_search_or_link(make_staff, healthy_billing, role):
    browser, _ = staff_browser(make_staff, "someone", role)
    conversation = escalated(customer_id="").conversation
    assert browser.get(reverse("desk:identify", args=[conversation.pk]), {"q": "69578956"}).status_code == 403
    assert browser.post(reverse("desk:customer_link", args=[conversation.pk]),
                        {"customer_id": MARISOL, "q": "69578956"}).status_code == 403
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == ""


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["69578956", "V-26.042.465", "v26042465", "0426-4468662", "04264468662",
                                   "+58 426 446 8662", "584264468662", "Marisol"])
def test_customer_search_finds_the_contact_by_any_identifier(make_staff, healthy_billing, typed):
    browser, _ = staff_browser(make_staff, "ana", "agent")
    conversation = conversation_start(name="Marisol", channel="whatsapp", wa_id="584264468662",
                                      customer_id=MARISOL)
    conversation_start(name="Someone else", channel="whatsapp", wa_id="584121112233", customer_id="C-1002")
    page = browser.get(reverse("desk:search"), {"q": typed}).content.decode()
    found = page.split('id="contact-results"')[1].split("</section>")[0]
    assert reverse("desk:contact", args=[conversation.contact_id]) in found and "Someone else" not in found


@pytest.mark.django_db
def test_customer_search_with_billing_down_says_so_and_still_finds_by_phone(make_staff, healthy_billing):
    browser, _ = staff_browser(make_staff, "ana", "agent")
    conversation_start(name="Marisol", channel="whatsapp", wa_id="584264468662", customer_id=MARISOL)
    healthy_billing.set_fault("503")
    page = browser.get(reverse("desk:search"), {"q": "69578956"}).content.decode()
    assert "Billing system unavailable: account numbers and cédulas cannot be looked up now." in page
    assert "Marisol" in browser.get(reverse("desk:search"), {"q": "0426-446 8662"}).content.decode()
