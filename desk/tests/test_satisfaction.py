"""The satisfaction question: asked once after a person resolved a WhatsApp conversation the customer spoke in, sent
as reply buttons through the Graph API, and answered by a button tap the desk stores (never a bot turn)."""

import pytest

from core import clock
from desk import services
from desk.models import Conversation, Event, Message, Satisfaction
from desk.satisfaction import satisfaction_summary
from desk.satisfaction_rules import Facts, decide, read_button
from tests.support.factories import CUSTOMER, text_body
from tests.support.fake_graph import FakeGraph, button_reply, change_value, webhook_body

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("whatsapp_settings")]


@pytest.fixture
def graph(settings):
    with FakeGraph() as fake:
        settings.WHATSAPP_API_BASE_URL = fake.base_url
        settings.WHATSAPP_ACCESS_TOKEN = fake.access_token
        settings.WHATSAPP_PHONE_NUMBER_ID = fake.phone_number_id
        yield fake


def customer_writes(deliver, text, wamid):
    """The customer writes on WhatsApp now (Meta's timestamp inside the 24-hour window)."""
    body = text_body(wamid=wamid, body=text, timestamp=int(clock.now().timestamp()))
    assert deliver(body).status_code == 200


def taps(deliver, reply_id, title="Bien", wamid="wamid.TAP1"):
    message = button_reply(reply_id, title, wa_id=CUSTOMER, wamid=wamid, timestamp=int(clock.now().timestamp()))
    return deliver(webhook_body(change_value(messages=[message])))


def human_handled(deliver, queued, make_staff, *, customer_speaks_after=True):
    """A WhatsApp conversation an agent took over, replied in, and (unless silent) the customer answered."""
    customer_writes(deliver, "quiero hablar con una persona", "wamid.IN1")
    conversation = Conversation.objects.get()
    agent = make_staff("ana", "agent")
    services.conversation_take_over(conversation_id=conversation.pk, agent=agent)
    services.agent_reply_send(conversation_id=conversation.pk, agent=agent, text="Hola, soy Ana. ¿En qué te ayudo?")
    if customer_speaks_after:
        customer_writes(deliver, "ya quedó, gracias", "wamid.IN2")
    return conversation, agent


def resolve(conversation, agent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.conversation_resolve(conversation_id=conversation.pk, agent=agent)


def interactive_requests(graph):
    return [r["body"] for r in graph.requests if r["body"].get("type") == "interactive"]


def test_a_human_handled_resolve_sends_one_button_question_in_the_customer_language(
        deliver, queued, make_staff, graph, django_capture_on_commit_callbacks):
    conversation, agent = human_handled(deliver, queued, make_staff)
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    [sent] = interactive_requests(graph)  # the fake Graph checked its shape (≤ 3 buttons, titles ≤ 20)
    assert sent["to"] == CUSTOMER and sent["interactive"]["type"] == "button"
    assert sent["interactive"]["body"]["text"].startswith("¿Cómo te atendimos")
    assert [b["reply"]["title"] for b in sent["interactive"]["action"]["buttons"]] == ["Bien", "Regular", "Mal"]
    satisfaction = Satisfaction.objects.get(conversation=conversation)
    assert (satisfaction.agent, satisfaction.answer, satisfaction.question.status) == (agent, "", "sent")
    # reopened and resolved again (or a double click): never asked twice
    services.conversation_reopen(conversation_id=conversation.pk, agent=agent)
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    assert len(interactive_requests(graph)) == 1 and Satisfaction.objects.count() == 1


def test_a_silent_customer_is_not_asked(deliver, queued, make_staff, graph, django_capture_on_commit_callbacks):
    conversation, agent = human_handled(deliver, queued, make_staff, customer_speaks_after=False)
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    assert interactive_requests(graph) == [] and not Satisfaction.objects.exists()


def test_a_bot_only_conversation_is_asked_only_when_the_setting_says(
        deliver, queued, make_staff, graph, settings, django_capture_on_commit_callbacks):
    customer_writes(deliver, "¿cuánto debo?", "wamid.IN1")
    conversation, agent = Conversation.objects.get(), make_staff("ana", "agent")
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    assert not Satisfaction.objects.exists()
    services.conversation_reopen(conversation_id=conversation.pk, agent=agent)
    settings.DESK_CSAT_AFTER_BOT = True
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    assert Satisfaction.objects.get(conversation=conversation).agent is None
    assert len(interactive_requests(graph)) == 1


def test_turned_off_nothing_is_asked(deliver, queued, make_staff, graph, settings, django_capture_on_commit_callbacks):
    settings.DESK_CSAT_ENABLED = False
    conversation, agent = human_handled(deliver, queued, make_staff)
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    assert not Satisfaction.objects.exists()


def test_the_button_reply_is_stored_shown_in_the_thread_and_not_answered_by_the_bot(
        deliver, queued, make_staff, graph, django_capture_on_commit_callbacks, client):
    conversation, agent = human_handled(deliver, queued, make_staff)
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    satisfaction = Satisfaction.objects.get()
    turns_before = list(queued)
    response = taps(deliver, f"csat:{satisfaction.pk}:good")
    assert response.status_code == 200
    assert queued == turns_before  # no bot turn
    satisfaction.refresh_from_db()
    assert satisfaction.answer == "good" and satisfaction.answer_message.kind == "satisfaction"
    conversation.refresh_from_db()
    assert conversation.status == "resolved"  # the tap does not reopen it
    # a second tap (or Meta's redelivery of another) changes nothing
    taps(deliver, f"csat:{satisfaction.pk}:bad", title="Mal", wamid="wamid.TAP2")
    satisfaction.refresh_from_db()
    assert satisfaction.answer == "good"
    client.force_login(agent)
    page = client.get(f"/desk/conversations/{conversation.pk}/").content.decode()
    assert "Customer rated the help: Good" in page


@pytest.mark.parametrize("reply_id", ["csat:", "csat:999999:good", "csat:1:great", "csat:x:good", "csat:1:good:x",
                                      "csat:" + "9" * 40 + ":good"])
def test_a_malformed_satisfaction_reply_is_kept_and_changes_nothing(deliver, queued, reply_id):
    response = taps(deliver, reply_id, title="¿?")
    assert response.status_code == 200 and queued == []
    message = Message.objects.get(provider_message_id="wamid.TAP1")
    assert message.kind == "satisfaction"
    assert not Satisfaction.objects.exclude(answer="").exists()
    assert not Event.objects.filter(kind="satisfaction_answered").exists()


def test_a_button_reply_without_an_id_is_stored_without_a_500(deliver, queued):
    message = button_reply("", "Bien", wa_id=CUSTOMER, wamid="wamid.TAP1")
    del message["interactive"]["button_reply"]["id"]
    assert deliver(webhook_body(change_value(messages=[message]))).status_code == 200
    assert Message.objects.filter(provider_message_id="wamid.TAP1").exists()


def test_another_customers_question_is_not_answered_by_a_forged_tap(
        deliver, queued, make_staff, graph, django_capture_on_commit_callbacks):
    conversation, agent = human_handled(deliver, queued, make_staff)
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    satisfaction = Satisfaction.objects.get()
    other = button_reply(f"csat:{satisfaction.pk}:bad", "Mal", wa_id="584149999999", wamid="wamid.OTHER")
    assert deliver(webhook_body(change_value(messages=[other]))).status_code == 200
    satisfaction.refresh_from_db()
    assert satisfaction.answer == ""


def test_the_summary_counts_per_agent_reason_and_day(deliver, queued, make_staff, graph,
                                                      django_capture_on_commit_callbacks):
    conversation, agent = human_handled(deliver, queued, make_staff)
    resolve(conversation, agent, django_capture_on_commit_callbacks)
    taps(deliver, f"csat:{Satisfaction.objects.get().pk}:okay", title="Regular")
    today = clock.today()
    from datetime import datetime, time, timedelta
    from django.utils import timezone
    start = timezone.make_aware(datetime.combine(today, time.min))
    summary = satisfaction_summary(start=start, end=start + timedelta(days=1))
    assert (summary.total.asked, summary.total.answered, summary.total.rate("okay")) == (1, 1, "100% (1 of 1)")
    assert [(t.label, t.asked) for t in summary.per_agent] == [("ana", 1)]
    assert [t.label for t in summary.per_reason] == ["Not escalated"]
    assert [t.key for t in summary.per_day] == [today.isoformat()]


@pytest.mark.parametrize("facts, ask", [
    (dict(), True),
    (dict(enabled=False), False),
    (dict(already_asked=True), False),
    (dict(channel="webchat"), False),
    (dict(customer_wrote_after_person=False), False),
    (dict(handled_by_person=False, customer_wrote_after_person=False), False),
    (dict(handled_by_person=False, after_bot=True, customer_wrote_after_person=False), True),
    (dict(handled_by_person=False, after_bot=True, customer_wrote=False, customer_wrote_after_person=False), False),
])
def test_the_rules(facts, ask):
    base = dict(enabled=True, after_bot=False, channel="whatsapp", already_asked=False, handled_by_person=True,
                customer_wrote=True, customer_wrote_after_person=True)
    assert decide(Facts(**(base | facts))).ask is ask


def test_button_ids_read():
    assert read_button("csat:12:bad").answer == "bad" and read_button("csat:12:meh") is None


def test_handed_back_to_the_bot_the_last_person_who_replied_is_rated(
        deliver, queued, make_staff, graph, django_capture_on_commit_callbacks):
    conversation, agent = human_handled(deliver, queued, make_staff)
    services.conversation_hand_back(conversation_id=conversation.pk, agent=agent)
    resolve(conversation, make_staff("sol", "supervisor"), django_capture_on_commit_callbacks)
    assert Satisfaction.objects.get(conversation=conversation).agent == agent
