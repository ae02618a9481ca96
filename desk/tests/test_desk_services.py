"""Desk actions as services: each changes state under a row lock and writes an audit event; the bot stays
quiet while a person holds the conversation, also against bot turns running concurrently on the database."""

import json
import threading
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.db.models import Max

import bot.turn
from bot.turn import run_turn
from bot.writer import TemplateWriter
from core import clock
from desk import services
from desk.chat import chat_message_receive
from desk.models import CannedReply, Channel, Conversation, Escalation, Event, Message
from tests.support.factories import conversation_start, customer_says, escalated, events_of, in_thread
from traces.models import Trace

ACCOUNT_QUESTION = "¿Cuánto debo este mes?"  # answered from billing facts, no knowledge base needed
KB_QUESTION = "cuanto cobran por reconexion de fibra"


def bot_messages(conversation):
    return Message.objects.filter(conversation=conversation, author=Message.Author.BOT)


# Take over -------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_take_over_assigns_the_agent_silences_the_bot_and_is_audited(make_staff):
    ana = make_staff("ana", "agent")
    escalation = escalated()
    conversation = services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    conversation.refresh_from_db()
    escalation.refresh_from_db()
    assert (conversation.handler, conversation.assignee, escalation.status) == ("human", ana, "taken")
    event = Event.objects.get(conversation=conversation, kind="taken_over")
    assert event.actor == ana and event.detail == {"agent": "ana"}


@pytest.mark.django_db
def test_a_double_click_takes_over_once(make_staff):
    ana = make_staff("ana", "agent")
    escalation = escalated()
    services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    with pytest.raises(services.Unchanged, match="You already have this conversation"):
        services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    assert events_of(escalation.conversation).count("taken_over") == 1


@pytest.mark.django_db
def test_the_second_agent_is_told_who_has_the_conversation(make_staff):
    ana, bob = make_staff("ana", "agent"), make_staff("bob", "supervisor")
    escalation = escalated()
    services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    with pytest.raises(services.AlreadyTaken) as refused:
        services.conversation_take_over(conversation_id=escalation.conversation_id, agent=bob)
    assert refused.value.holder == ana and "ana" in str(refused.value)
    assert Conversation.objects.get(pk=escalation.conversation_id).assignee == ana


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["analyst", "kb_editor"])
def test_only_agents_and_supervisors_take_over(make_staff, role):
    user = make_staff("someone", role)
    escalation = escalated()
    with pytest.raises(PermissionDenied):
        services.conversation_take_over(conversation_id=escalation.conversation_id, agent=user)
    assert events_of(escalation.conversation) == ["escalated"]


@pytest.mark.django_db
def test_after_a_take_over_the_bot_writes_nothing(make_staff, healthy_billing):
    ana = make_staff("ana", "agent")
    conversation = conversation_start()
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    trace = run_turn(message_id=customer_says(conversation, ACCOUNT_QUESTION).pk, writer=TemplateWriter())
    assert (trace.outcome, trace.silenced_at) == ("silenced", "gate")
    assert not bot_messages(conversation).exists()


# Reply -----------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_agent_reply_goes_out_through_the_channel(make_staff, django_capture_on_commit_callbacks):
    ana = make_staff("ana", "agent")
    conversation = conversation_start()
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    with django_capture_on_commit_callbacks(execute=True):
        message = services.agent_reply_send(conversation_id=conversation.pk, agent=ana,
                                            text="  Hola, soy Ana.  ")
    message.refresh_from_db()
    assert (message.author, message.agent, message.text) == ("agent", ana, "Hola, soy Ana.")
    assert message.status == "sent"
    assert message.provider_message_id


@pytest.mark.django_db
def test_a_reply_needs_the_conversation_in_hand(make_staff):
    ana, bob = make_staff("ana", "agent"), make_staff("bob", "agent")
    conversation = conversation_start()
    with pytest.raises(services.DeskActionError, match="Take over"):
        services.agent_reply_send(conversation_id=conversation.pk, agent=ana, text="hola")
    services.conversation_take_over(conversation_id=conversation.pk, agent=bob)
    with pytest.raises(services.DeskActionError, match="only bob or a supervisor may reply"):
        services.agent_reply_send(conversation_id=conversation.pk, agent=ana, text="hola")
    with pytest.raises(services.DeskActionError, match="Write something to send"):
        services.agent_reply_send(conversation_id=conversation.pk, agent=bob, text="   ")
    assert not Message.objects.filter(author="agent").exists()


@pytest.mark.django_db
def test_whatsapp_free_text_only_within_24_hours_of_the_customers_last_message(make_staff):
    ana = make_staff("ana", "agent")
    now = clock.now()
    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id="584121112233",
                                      inbound_at=now - timedelta(hours=24, minutes=1))
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    assert not services.reply_window_open(conversation, now=now)
    with pytest.raises(services.DeskActionError, match="24 hours"):
        services.agent_reply_send(conversation_id=conversation.pk, agent=ana, text="hola", now=now)
    assert services.agent_reply_send(conversation_id=conversation.pk, agent=ana, text="hola",
                                     now=now - timedelta(minutes=2)).status == "queued"


# Note, assign ----------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_private_note_is_an_event_never_a_message(make_staff):
    ana = make_staff("ana", "agent")
    conversation = conversation_start()
    before = Message.objects.count()
    event = services.note_add(conversation_id=conversation.pk, agent=ana,
                              text="Cliente molesto por la visita")
    assert (event.kind, event.actor, event.detail) == ("note", ana, {"text": "Cliente molesto por la visita"})
    assert Message.objects.count() == before
    with pytest.raises(services.DeskActionError):
        services.note_add(conversation_id=conversation.pk, agent=ana, text=" ")


@pytest.mark.django_db
def test_assign_and_reassign_hand_the_conversation_to_another_agent(make_staff):
    ana, bob, luis = make_staff("ana", "agent"), make_staff("bob", "agent"), make_staff("luis", "analyst")
    escalation = escalated()
    conversation_id = escalation.conversation_id
    services.conversation_assign(conversation_id=conversation_id, actor=ana, assignee=bob)
    services.conversation_assign(conversation_id=conversation_id, actor=bob, assignee=ana)
    conversation = Conversation.objects.get(pk=conversation_id)
    assert (conversation.assignee, conversation.handler) == (ana, "human")
    assert Escalation.objects.get(pk=escalation.pk).status == "taken"
    assigned = Event.objects.filter(kind="assigned").order_by("pk")
    assert [e.detail["assignee"] for e in assigned] == ["bob", "ana"]
    with pytest.raises(PermissionDenied):
        services.conversation_assign(conversation_id=conversation_id, actor=ana, assignee=luis)


# Hand back, resolve, reopen --------------------------------------------------------------------

@pytest.mark.django_db
def test_after_hand_back_the_bot_answers_the_next_message(make_staff, healthy_billing, sample_kb):
    ana = make_staff("ana", "agent")
    escalation = escalated()
    conversation_id = escalation.conversation_id
    services.conversation_take_over(conversation_id=conversation_id, agent=ana)
    services.conversation_hand_back(conversation_id=conversation_id, agent=ana)
    conversation = Conversation.objects.get(pk=conversation_id)
    assert (conversation.handler, conversation.assignee) == ("bot", None)
    assert Escalation.objects.get(pk=escalation.pk).status == "resolved"
    trace = run_turn(message_id=customer_says(conversation, KB_QUESTION).pk, writer=TemplateWriter())
    assert trace.outcome == "answered" and trace.reply.author == "bot"
    assert events_of(conversation)[-1] == "handed_back"


@pytest.mark.django_db
def test_resolve_closes_the_conversation_and_a_new_inbound_reopens_it_to_the_bot(make_staff, healthy_billing):
    ana = make_staff("ana", "agent")
    escalation = escalated()
    conversation_id = escalation.conversation_id
    services.conversation_take_over(conversation_id=conversation_id, agent=ana)
    services.conversation_resolve(conversation_id=conversation_id, agent=ana)
    conversation = Conversation.objects.get(pk=conversation_id)
    assert conversation.status == "resolved"
    assert Escalation.objects.get(pk=escalation.pk).status == "resolved"

    message = chat_message_receive(conversation=conversation, text=ACCOUNT_QUESTION)
    conversation.refresh_from_db()
    assert (conversation.status, conversation.handler, conversation.assignee) == ("open", "bot", None)
    trace = run_turn(message_id=message.pk, writer=TemplateWriter())
    assert trace.outcome == "answered"
    assert events_of(conversation)[-2:] == ["resolved", "reopened"]


@pytest.mark.django_db
def test_after_resolve_the_customers_next_whatsapp_message_is_answered_by_the_bot(
        make_staff, healthy_billing, client, settings, django_capture_on_commit_callbacks):
    from desk.whatsapp import signature_header
    from tests.support.fake_graph import change_value, inbound_message, webhook_body

    settings.WHATSAPP_APP_SECRET = "secret-for-desk-tests"
    ana = make_staff("ana", "agent")
    escalation = escalated(channel=Channel.WHATSAPP, wa_id="584264468662")
    services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    services.conversation_resolve(conversation_id=escalation.conversation_id, agent=ana)

    message = inbound_message(wa_id="584264468662", timestamp=int(clock.now().timestamp()),
                              text={"body": ACCOUNT_QUESTION})
    raw = json.dumps(webhook_body(change_value(messages=[message]))).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/webhooks/whatsapp/", data=raw, content_type="application/json",
                               HTTP_X_HUB_SIGNATURE_256=signature_header(raw, settings.WHATSAPP_APP_SECRET))
    assert response.status_code == 200
    inbound = Message.objects.get(text=ACCOUNT_QUESTION, direction="in", conversation__channel="whatsapp")
    trace = Trace.objects.get(message=inbound)
    assert trace.outcome == "answered"
    assert inbound.conversation.handler == "bot" and inbound.conversation.status == "open"


# Verified wrong --------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_bot_answer_marked_wrong_keeps_the_reason_and_links_its_trace(make_staff, healthy_billing):
    ana = make_staff("ana", "agent")
    conversation = conversation_start()
    trace = run_turn(message_id=customer_says(conversation, ACCOUNT_QUESTION).pk, writer=TemplateWriter())
    message = services.message_mark_wrong(message_id=trace.reply_id, agent=ana, reason="El saldo no es ese")
    message.refresh_from_db()
    assert (message.verified_wrong_reason, message.verified_wrong_by) == ("El saldo no es ese", ana)
    assert message.verified_wrong_at is not None
    event = Event.objects.get(kind="verified_wrong")
    assert event.detail == {"message": message.pk, "reason": "El saldo no es ese"}
    assert message.reply_trace == trace  # the thread links the message to its trace (traces:reply)


@pytest.mark.django_db
def test_only_bot_answers_with_a_reason_can_be_marked_wrong(make_staff):
    ana = make_staff("ana", "agent")
    conversation = conversation_start()
    customer = customer_says(conversation, "hola")
    with pytest.raises(services.DeskActionError, match="Only bot answers"):
        services.message_mark_wrong(message_id=customer.pk, agent=ana, reason="no")
    bot = Message.objects.create(conversation=conversation, direction="out", author="bot", text="x")
    with pytest.raises(services.DeskActionError):
        services.message_mark_wrong(message_id=bot.pk, agent=ana, reason="  ")
    assert not Event.objects.filter(kind="verified_wrong").exists()


# The admin and the seed ------------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize("action, handler, status, event", [
    ("take_over", "human", "open", "taken_over"),
    ("hand_back", "bot", "open", "handed_back"),
    ("resolve", "human", "resolved", "resolved"),
])
def test_admin_actions_call_the_desk_services(admin_client, action, handler, status, event):
    escalation = escalated()
    response = admin_client.post("/admin/desk/conversation/", {
        "action": action, "_selected_action": [escalation.conversation_id]})
    assert response.status_code == 302
    conversation = Conversation.objects.get(pk=escalation.conversation_id)
    assert (conversation.handler, conversation.status) == (handler, status)
    assert Event.objects.get(conversation=conversation, kind=event).actor.username == "admin"


@pytest.mark.django_db
def test_admin_take_over_of_a_held_conversation_is_refused_with_the_holder(admin_client, make_staff):
    ana = make_staff("ana", "agent")
    escalation = escalated()
    services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    response = admin_client.post("/admin/desk/conversation/", {
        "action": "take_over", "_selected_action": [escalation.conversation_id]}, follow=True)
    # The admin has no field for the reason a supervisor must give to take over from the holder.
    assert "ana has this conversation. Say why you take it over from ana" in response.content.decode()
    assert Conversation.objects.get(pk=escalation.conversation_id).assignee == ana


@pytest.mark.django_db
@pytest.mark.parametrize("model", [
    "conversation", "message", "escalation", "event", "cannedreply", "contact"])
def test_the_admin_lists_every_desk_model(admin_client, model):
    escalated()
    assert admin_client.get(f"/admin/desk/{model}/").status_code == 200


@pytest.mark.django_db
def test_canned_replies_seed_creates_three_per_language_once():
    call_command("canned_replies_seed")
    call_command("canned_replies_seed")
    assert sorted(CannedReply.objects.values_list("language", flat=True)) == ["en"] * 3 + ["es"] * 3


# Concurrency against the real database ---------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_two_agents_taking_over_at_once_one_wins_the_other_is_told_who(make_staff):
    ana, bob = make_staff("ana", "agent"), make_staff("bob", "agent")
    conversation_id = escalated().conversation_id
    together, outcomes, errors = threading.Barrier(2), {}, []

    def take(agent):
        together.wait(timeout=30)
        try:
            services.conversation_take_over(conversation_id=conversation_id, agent=agent)
            outcomes[agent.username] = "won"
        except services.AlreadyTaken as exc:
            outcomes[agent.username] = f"told {exc.holder.username}"

    threads = [in_thread(lambda a=a: take(a), errors) for a in (ana, bob)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    winner = Conversation.objects.get(pk=conversation_id).assignee.username
    loser = ({"ana", "bob"} - {winner}).pop()
    assert outcomes == {winner: "won", loser: f"told {winner}"}
    assert Event.objects.filter(kind="taken_over").count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_turn_in_flight_when_the_agent_takes_over_is_dropped_at_the_send_point(
        make_staff, healthy_billing, monkeypatch):
    ana = make_staff("ana", "agent")
    conversation = conversation_start()
    message = customer_says(conversation, ACCOUNT_QUESTION)
    decided, taken, traces, errors = threading.Event(), threading.Event(), [], []
    record = bot.turn.bot_reply_record

    def record_after_the_take_over(**kwargs):
        decided.set()  # the turn has its answer and is about to send it
        taken.wait(timeout=30)
        return record(**kwargs)

    monkeypatch.setattr(bot.turn, "bot_reply_record", record_after_the_take_over)
    turn = in_thread(lambda: traces.append(run_turn(message_id=message.pk, writer=TemplateWriter())), errors)
    turn.start()
    assert decided.wait(timeout=60)
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)  # committed (autocommit)
    taken.set()
    turn.join(timeout=60)
    assert errors == []
    [trace] = traces
    assert (trace.outcome, trace.silenced_at, trace.reply_id) == ("silenced", "send", None)
    assert not bot_messages(conversation).exists()


@pytest.mark.django_db(transaction=True)
def test_many_turns_and_take_overs_at_once_leave_no_bot_message_after_the_take_over(
        make_staff, healthy_billing, monkeypatch):
    agents = [make_staff("ana", "agent"), make_staff("bob", "supervisor")]
    conversation = conversation_start()
    batches = [[customer_says(conversation, ACCOUNT_QUESTION) for _ in range(3)] for _ in range(6)]
    start = threading.Barrier(len(batches) + len(agents))
    first_reply = threading.Event()
    last_message_at_take_over, refusals, errors = [], [], []
    record = bot.turn.bot_reply_record

    def record_and_signal(**kwargs):
        sent = record(**kwargs)
        if sent is not None:
            first_reply.set()
        return sent

    monkeypatch.setattr(bot.turn, "bot_reply_record", record_and_signal)

    def turns(messages):
        start.wait(timeout=30)
        for message in messages:
            run_turn(message_id=message.pk, writer=TemplateWriter())

    def take_over(agent):
        start.wait(timeout=30)
        first_reply.wait(timeout=60)  # the bot is demonstrably answering; most turns are still in flight
        try:
            services.conversation_take_over(conversation_id=conversation.pk, agent=agent)
            last_message_at_take_over.append(Message.objects.aggregate(last=Max("pk"))["last"])
        except services.AlreadyTaken as exc:
            refusals.append(exc.holder.username)

    threads = [in_thread(lambda b=b: turns(b), errors) for b in batches]
    threads += [in_thread(lambda a=a: take_over(a), errors) for a in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []

    taken = Event.objects.get(conversation=conversation, kind="taken_over")
    conversation.refresh_from_db()
    assert refusals == [conversation.assignee.username] and taken.actor == conversation.assignee
    replies = bot_messages(conversation)
    assert replies.exists()  # the bot was answering before
    assert not replies.filter(created_at__gte=taken.created_at).exists()
    assert not replies.filter(pk__gt=last_message_at_take_over[0]).exists()
    outcomes = list(Trace.objects.filter(conversation=conversation).values_list("outcome", flat=True))
    assert len(outcomes) == 18 and outcomes.count("answered") == replies.count()
    assert outcomes.count("silenced") >= 1
