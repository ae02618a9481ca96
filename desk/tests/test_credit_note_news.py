"""After a supervisor decides an agent's credit note: the agent is notified, the thread says who decided, and the
conversation page offers the words for the customer — or says a template is needed outside the 24-hour window."""

import datetime as dt

import pytest

from core import clock
from desk import credit_notes as cn
from desk.models import Channel, Conversation, Notification
from desk.notifications import notification_dismiss, notifications_open
from desk.services import conversation_take_over
from tests.support.factories import conversation_start, customer_says

pytestmark = pytest.mark.django_db
INVOICE = "F-1001-202610"


@pytest.fixture
def people(make_staff):
    return {"ana": make_staff("ana", "agent"), "bob": make_staff("bob", "agent"),
            "sol": make_staff("sol", "supervisor")}


def held_by(agent, **start):
    conversation = conversation_start(**start)
    customer_says(conversation, "me cobraron de más")
    conversation_take_over(conversation_id=conversation.pk, agent=agent)
    return Conversation.objects.get(pk=conversation.pk)


def test_the_proposer_is_notified_and_offered_the_customers_words(people, healthy_billing, client):
    conversation = held_by(people["ana"], language="en")
    request = cn.credit_note_propose(conversation=conversation, agent=people["ana"], invoice_id=INVOICE,
                                     amount="5.00", currency="USD", reason="Storm outage")
    cn.credit_note_reject(request=request, supervisor=people["sol"], note="Outside the policy")
    [note] = notifications_open(user=people["ana"])
    assert note.recipient == people["ana"] and not list(notifications_open(user=people["bob"]))
    assert note.text.startswith("Supervisor sol rejected the credit note for USD 5.00 on invoice F-1001-202610")
    client.force_login(people["ana"])
    page = client.get(note.url).content.decode()
    assert "Notifications" in page and "Supervisor sol rejected the credit note for USD 5.00" in page
    words = (f"We reviewed the correction request of USD 5.00 on your invoice {INVOICE} and it was not approved. "
             "I can explain why if you like.")
    assert f">{words}</textarea>" in page  # the composer, prefilled
    notification_dismiss(user=people["ana"], notification_id=note.pk)
    notification_dismiss(user=people["ana"], notification_id=note.pk)  # a double click changes nothing
    assert not list(notifications_open(user=people["ana"]))


def test_outside_the_24_hour_window_the_panel_says_a_template_is_needed(people, healthy_billing, client):
    conversation = held_by(people["ana"], channel=Channel.WHATSAPP, wa_id="584121234567")
    request = cn.credit_note_propose(conversation=conversation, agent=people["ana"], invoice_id=INVOICE,
                                     amount="5.00", currency="USD", reason="Storm outage")
    cn.credit_note_approve(request=request, supervisor=people["sol"])
    Conversation.objects.filter(pk=conversation.pk).update(last_inbound_at=clock.now() - dt.timedelta(hours=30))
    client.force_login(people["ana"])
    page = client.get(f"/desk/conversations/{conversation.pk}/").content.decode()
    assert "Un supervisor aprobó la corrección de USD 5,00 en tu factura F-1001-202610" in page
    assert "telling them needs a template message" in page
    assert "Put it in the reply" not in page


def test_someone_elses_notification_cannot_be_dismissed(people):
    mine = Notification.objects.create(recipient=people["ana"], text="for ana")
    response_code = None
    from django.test import Client

    browser = Client()
    browser.force_login(people["bob"])
    response_code = browser.post(f"/desk/notifications/{mine.pk}/dismiss/").status_code
    assert response_code == 404
    mine.refresh_from_db()
    assert mine.dismissed_at is None
