"""Complaint signals on bot answers: an agent's mark on the page, a WhatsApp reaction, a disagreeing follow-up.

Reactions and follow-ups go through the real webhook (signed bodies, the `deliver` fixture); the time
of a follow-up is Meta's timestamp of the message against the bot answer's own timestamp.
"""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.urls import reverse

from desk.models import Channel, ComplaintSignal, Contact, Conversation, Event, Message
from tests.support.factories import CUSTOMER, bot_says, customer_says, escalated
from tests.support.fake_graph import change_value, inbound_message, webhook_body

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("whatsapp_settings")]
HTMX = {"HTTP_HX_REQUEST": "true"}
ANSWERED_AT = datetime(2025, 2, 12, 0, 43, 44, tzinfo=UTC)
THUMBS_DOWN, ANGRY, POUTING, THUMBS_UP = "\U0001F44E", "\U0001F620", "\U0001F621", "\U0001F44D"


def whatsapp_answer(*, wamid="wamid.OUT1", text="Tu factura de noviembre es Bs. 1.624,00 y vence el 15.",
                    at=ANSWERED_AT, notice=False) -> Message:
    """A bot answer the customer received on WhatsApp, recorded at `at`."""
    contact, _ = Contact.objects.get_or_create(channel=Channel.WHATSAPP, wa_id=CUSTOMER)
    conversation = (Conversation.objects.filter(contact=contact).first()
                    or Conversation.objects.create(contact=contact, channel=Channel.WHATSAPP))
    answer = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                    author=Message.Author.BOT, text=text, provider_message_id=wamid,
                                    status=Message.Status.DELIVERED,
                                    payload={"escalation_notice": True} if notice else {})
    Message.objects.filter(pk=answer.pk).update(created_at=at)
    answer.refresh_from_db()
    return answer


def reaction(emoji: str, *, to="wamid.OUT1", wamid="wamid.REACT1", at=ANSWERED_AT + timedelta(minutes=1)):
    return webhook_body(change_value(messages=[inbound_message(
        "reaction", wamid=wamid, timestamp=int(at.timestamp()), reaction={"message_id": to, "emoji": emoji})]))


def followup(text: str, *, at: datetime, wamid="wamid.FOLLOW1"):
    return webhook_body(change_value(messages=[inbound_message(
        "text", wamid=wamid, timestamp=int(at.timestamp()), text={"body": text})]))


def signals(**filters) -> list[tuple]:
    return list(ComplaintSignal.objects.filter(**filters).order_by("pk")
                .values_list("message_id", "source", "certainty", "detail"))


# A negative reaction on WhatsApp ---------------------------------------------------------------

@pytest.mark.parametrize("emoji", [THUMBS_DOWN, ANGRY, POUTING, THUMBS_DOWN + "\U0001F3FE"])
def test_a_negative_reaction_on_a_bot_answer_is_a_confirmed_complaint(deliver, queued, emoji):
    answer = whatsapp_answer()
    response = deliver(reaction(emoji))
    assert response.status_code == 200 and response.json()["stored"] == 1
    stored = Message.objects.get(provider_message_id="wamid.REACT1")
    signal = ComplaintSignal.objects.get()
    assert (signal.message, signal.source, signal.certainty, signal.detail) == (
        answer, "reaction", "confirmed", emoji)
    assert signal.customer_message == stored
    assert signal.at == ANSWERED_AT + timedelta(minutes=1)  # when the customer reacted, per Meta
    assert queued == []  # a reaction still gets no bot turn


def test_a_redelivered_or_repeated_reaction_records_one_signal(deliver, queued):
    answer = whatsapp_answer()
    deliver(reaction(THUMBS_DOWN))
    deliver(reaction(THUMBS_DOWN))  # Meta's redelivery: a duplicate, nothing stored
    deliver(reaction(ANGRY, wamid="wamid.REACT2", at=ANSWERED_AT + timedelta(minutes=2)))  # changed emoji
    assert signals() == [(answer.pk, "reaction", "confirmed", THUMBS_DOWN)]


@pytest.mark.parametrize("emoji", [THUMBS_UP, ""], ids=["replaced by a thumbs up", "removed"])
def test_a_later_reaction_that_is_not_negative_takes_the_complaint_back(deliver, queued, emoji):
    whatsapp_answer()
    deliver(reaction(THUMBS_DOWN))
    deliver(reaction(emoji, wamid="wamid.REACT2", at=ANSWERED_AT + timedelta(minutes=5)))
    assert signals() == []


def test_an_older_reaction_delivered_late_does_not_take_a_newer_complaint_back(deliver, queued):
    whatsapp_answer()
    deliver(reaction(THUMBS_DOWN, at=ANSWERED_AT + timedelta(minutes=5)))
    deliver(reaction(THUMBS_UP, wamid="wamid.REACT0", at=ANSWERED_AT + timedelta(minutes=1)))
    assert len(signals(source="reaction")) == 1


def test_positive_reactions_and_reactions_to_other_messages_are_no_complaint(deliver, queued):
    whatsapp_answer()
    whatsapp_answer(wamid="wamid.NOTICE", text="Una persona te responderá pronto.", notice=True)
    deliver(reaction(THUMBS_UP))
    deliver(reaction(THUMBS_DOWN, to="wamid.NOTICE", wamid="wamid.REACT2"))  # the fixed escalation notice
    deliver(reaction(THUMBS_DOWN, to="wamid.UNKNOWN", wamid="wamid.REACT3"))  # never sent by us
    assert signals() == []


def test_a_reaction_from_another_customer_on_our_answer_is_ignored(deliver, queued):
    whatsapp_answer()
    body = webhook_body(change_value(messages=[inbound_message(
        "reaction", wa_id="584149999999", wamid="wamid.REACTX", timestamp=int(ANSWERED_AT.timestamp()) + 60,
        reaction={"message_id": "wamid.OUT1", "emoji": THUMBS_DOWN})]))
    assert deliver(body).status_code == 200
    assert signals() == []


# A disagreeing follow-up -----------------------------------------------------------------------

def test_a_disagreeing_message_within_ten_minutes_is_a_suspected_complaint(deliver, queued):
    answer = whatsapp_answer()
    deliver(followup("eso no es cierto, la de noviembre ya la pagué", at=ANSWERED_AT + timedelta(minutes=3)))
    message = Message.objects.get(provider_message_id="wamid.FOLLOW1")
    signal = ComplaintSignal.objects.get()
    assert (signal.message, signal.source, signal.certainty, signal.detail) == (
        answer, "followup", "suspected", "contradicts")
    assert signal.customer_message == message and signal.at == ANSWERED_AT + timedelta(minutes=3)
    assert queued == [message.pk]  # the bot still answers it


@pytest.mark.parametrize("text, after", [
    ("eso no es cierto", timedelta(minutes=11)),  # too late to be about that answer
    ("ok, gracias", timedelta(minutes=1)),  # agrees
    ("no, gracias, eso era todo", timedelta(minutes=1)),  # a polite no
])
def test_no_suspected_complaint_for_a_late_or_agreeing_message(deliver, queued, text, after):
    whatsapp_answer()
    deliver(followup(text, at=ANSWERED_AT + after))
    assert signals() == []


def test_after_an_agent_wrote_a_disagreement_is_about_the_agent_not_the_bot(deliver, queued):
    answer = whatsapp_answer()
    agent_reply = Message.objects.create(conversation=answer.conversation, direction=Message.Direction.OUTBOUND,
                                         author=Message.Author.AGENT, text="Ya lo reviso.",
                                         status=Message.Status.SENT)
    Message.objects.filter(pk=agent_reply.pk).update(created_at=ANSWERED_AT + timedelta(minutes=1))
    deliver(followup("eso no es cierto", at=ANSWERED_AT + timedelta(minutes=2)))
    assert signals() == []


def test_only_the_first_disagreeing_follow_up_of_an_answer_is_kept(deliver, queued):
    whatsapp_answer()
    deliver(followup("no entendí nada", at=ANSWERED_AT + timedelta(minutes=1)))
    deliver(followup("that's wrong", at=ANSWERED_AT + timedelta(minutes=2), wamid="wamid.FOLLOW2"))
    assert [row[3] for row in signals()] == ["not_understood"]


# An agent's mark on the conversation page ------------------------------------------------------

@pytest.fixture
def agent(make_staff):
    user = make_staff("ana", "agent")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    browser.get(reverse("desk:chat"))  # sets the CSRF cookie
    browser.user = user
    return browser


def post(browser, name, conversation_id, message_id, **headers):
    return browser.post(reverse(f"desk:{name}", args=[conversation_id, message_id]),
                        HTTP_X_CSRFTOKEN=browser.cookies["csrftoken"].value, **headers)


def test_an_agent_marks_a_bot_answer_once_whatever_the_clicks_and_can_undo_it(agent):
    conversation = escalated().conversation
    answer = bot_says(conversation, "Su saldo es 99,00 USD")
    page = agent.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert "Customer complained</button>" in page

    first = post(agent, "complaint_mark", conversation.pk, answer.pk, **HTMX)
    second = post(agent, "complaint_mark", conversation.pk, answer.pk, **HTMX)  # a double click
    assert first.status_code == second.status_code == 200
    assert signals() == [(answer.pk, "agent", "confirmed", "")]
    assert ComplaintSignal.objects.get().marked_by == agent.user
    assert Event.objects.filter(kind="complaint_marked").count() == 1
    html = second.content.decode()
    assert "Customer complained about this answer (marked by ana)" in html
    assert "Undo &quot;customer complained&quot;" in html or 'Undo "customer complained"' in html

    undone = post(agent, "complaint_unmark", conversation.pk, answer.pk)
    assert undone.status_code == 302 and signals() == []
    page = agent.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert "customer complaint mark taken back by ana" in page and "Customer complained</button>" in page
    assert post(agent, "complaint_unmark", conversation.pk, answer.pk).status_code == 302  # nothing left: no-op
    assert Event.objects.filter(kind="complaint_unmarked").count() == 1


def test_an_agents_undo_leaves_the_customers_own_signals(agent, deliver, queued):
    answer = whatsapp_answer()
    deliver(reaction(THUMBS_DOWN))
    post(agent, "complaint_mark", answer.conversation_id, answer.pk)
    post(agent, "complaint_unmark", answer.conversation_id, answer.pk)
    assert [row[1] for row in signals()] == ["reaction"]


def test_only_bot_answers_of_this_conversation_can_be_marked(agent):
    conversation = escalated().conversation
    customer = customer_says(conversation, "hola")
    elsewhere = bot_says(escalated().conversation, "x")
    notice = Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                    author=Message.Author.BOT, text="Una persona te responderá.",
                                    payload={"escalation_notice": True})
    assert post(agent, "complaint_mark", conversation.pk, elsewhere.pk).status_code == 404
    for message in (customer, notice):
        response = post(agent, "complaint_mark", conversation.pk, message.pk)
        assert response.status_code == 409 and "Only answers the bot wrote" in response.content.decode()
    assert signals() == []


@pytest.mark.parametrize("role, expected", [("analyst", 403), ("kb_editor", 403), (None, "login")])
def test_roles_that_do_not_work_the_desk_cannot_mark_or_undo(make_staff, role, expected):
    conversation = escalated().conversation
    answer = bot_says(conversation, "x")
    browser = Client(enforce_csrf_checks=True)
    if role:
        browser.force_login(make_staff("someone", role))
    browser.get(reverse("desk:chat"))
    for name in ("complaint_mark", "complaint_unmark"):
        response = post(browser, name, conversation.pk, answer.pk)
        if expected == "login":
            assert response.status_code == 302 and response.url.startswith(reverse("login"))
        else:
            assert response.status_code == expected
    assert signals() == []


def test_the_thread_shows_suspected_complaints_apart_from_confirmed_ones(agent, deliver, queued):
    answer = whatsapp_answer()
    deliver(reaction(THUMBS_DOWN))
    deliver(followup("no entendí nada", at=ANSWERED_AT + timedelta(minutes=2)))
    page = agent.get(reverse("desk:conversation", args=[answer.conversation_id])).content.decode()
    assert f'<div class="complaint-note" title="Negative reaction on WhatsApp · confirmed complaint · {THUMBS_DOWN}">' \
           f"Customer reacted {THUMBS_DOWN} to this answer" in page
    assert '<div class="complaint-note suspected"' in page
    assert "Suspected complaint: the customer&#x27;s next message says they did not understand it" in page


def test_the_polling_thread_changes_when_a_complaint_is_recorded(agent):
    conversation = escalated().conversation
    answer = bot_says(conversation, "x")
    thread = reverse("desk:conversation_thread", args=[conversation.pk])
    version = agent.get(thread).content.decode().split("?v=")[1].split('"')[0]
    assert agent.get(thread, {"v": version}).status_code == 204
    post(agent, "complaint_mark", conversation.pk, answer.pk)
    assert agent.get(thread, {"v": version}).status_code == 200
