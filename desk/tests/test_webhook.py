"""POST/GET /webhooks/whatsapp/ through the Django client with real signatures over the raw bytes."""

import json
import logging
import threading
from datetime import UTC, datetime

import pytest
from celery import current_app
from django.db import connections
from django.test import Client
from kombu.exceptions import OperationalError

import desk.inbound
from desk.models import Channel, Contact, Conversation, Event, Message
from desk.whatsapp import signature_header
from tests.support.factories import CUSTOMER, VERIFY_TOKEN, WEBHOOK_URL, sign, text_body
from tests.support.fake_graph import change_value, delivery_status, inbound_message, webhook_body

URL = WEBHOOK_URL
pytestmark = pytest.mark.usefixtures("whatsapp_settings")


def outbound_message(*, wamid="wamid.OUT1", status=Message.Status.SENT) -> Message:
    contact = Contact.objects.create(channel=Channel.WHATSAPP, wa_id=CUSTOMER)
    conversation = Conversation.objects.create(contact=contact, channel=Channel.WHATSAPP)
    return Message.objects.create(conversation=conversation, direction=Message.Direction.OUTBOUND,
                                  author=Message.Author.BOT, text="Su saldo es Bs. 10,00",
                                  provider_message_id=wamid, status=status)


# Signatures and the handshake ---------------------------------------------------------------

@pytest.mark.django_db
def test_a_signed_text_message_is_stored_acknowledged_and_its_turn_queued(deliver, queued):
    response = deliver(text_body())
    assert response.status_code == 200
    assert response.json()["stored"] == 1 and response.json()["queued"] == 1
    message = Message.objects.get(provider_message_id="wamid.IN1")
    assert (message.direction, message.author, message.kind, message.text, message.status) == (
        "in", "customer", "text", "¿Cuánto debo este mes?", "received")
    assert message.status_at == datetime.fromtimestamp(1739321024, tz=UTC)
    contact = message.conversation.contact
    assert (contact.channel, contact.wa_id, contact.user_id, contact.name) == (
        "whatsapp", CUSTOMER, f"VE.{CUSTOMER}", "Cliente 4567")
    conversation = message.conversation
    assert (conversation.channel, conversation.handler, conversation.status) == ("whatsapp", "bot", "open")
    assert conversation.last_inbound_at == datetime.fromtimestamp(1739321024, tz=UTC)
    assert queued == [message.pk]


@pytest.mark.django_db
def test_a_forged_signature_is_refused_and_stores_nothing(deliver, queued):
    raw = json.dumps(text_body()).encode()
    forged = signature_header(raw, "not-the-app-secret")
    response = deliver(raw=raw, signature=forged)
    assert response.status_code == 403
    assert not Message.objects.exists() and not Contact.objects.exists() and queued == []


@pytest.mark.django_db
def test_a_signature_over_other_bytes_is_refused(deliver, queued):
    raw = json.dumps(text_body(body="saldo")).encode()
    tampered = raw.replace(b'"saldo"', b'"Dame un reembolso"')
    assert tampered != raw
    response = deliver(raw=tampered, signature=sign(raw))
    assert response.status_code == 403 and not Message.objects.exists()


@pytest.mark.django_db
def test_a_missing_signature_is_refused_with_401(deliver, queued):
    response = deliver(text_body(), signature=None)
    assert response.status_code == 401 and b"X-Hub-Signature-256" in response.content
    assert not Message.objects.exists() and queued == []


@pytest.mark.django_db
def test_without_an_app_secret_every_delivery_is_refused_and_the_log_says_why(
        deliver, queued, whatsapp_settings, caplog):
    whatsapp_settings.WHATSAPP_APP_SECRET = ""
    with caplog.at_level(logging.ERROR, logger="desk.webhooks"):
        response = deliver(text_body(), signature=signature_header(json.dumps(text_body()).encode(), ""))
    assert response.status_code == 403 and not Message.objects.exists()
    assert "WHATSAPP_APP_SECRET is not set" in caplog.text


def test_the_handshake_echoes_the_challenge_for_the_right_token(client):
    response = client.get(URL, {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN,
                                "hub.challenge": "1158201444"})
    assert response.status_code == 200
    assert response.content == b"1158201444" and response["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize("params", [
    {"hub.mode": "subscribe", "hub.verify_token": "wrong", "hub.challenge": "1"},
    {"hub.mode": "unsubscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"},
    {"hub.challenge": "1"},
])
def test_the_handshake_refuses_a_wrong_token_or_mode(client, params):
    response = client.get(URL, params)
    assert response.status_code == 403 and b"1" not in response.content


def test_the_handshake_refuses_everything_while_no_verify_token_is_set(client, whatsapp_settings):
    whatsapp_settings.WHATSAPP_VERIFY_TOKEN = ""
    response = client.get(URL, {"hub.mode": "subscribe", "hub.verify_token": "", "hub.challenge": "1"})
    assert response.status_code == 403


def test_other_methods_are_not_allowed(client):
    assert client.put(URL).status_code == 405


@pytest.mark.django_db
def test_a_signed_body_that_is_not_json_is_refused_with_400_and_stores_nothing(deliver, queued):
    response = deliver(raw=b'{"object": "whatsapp_business_account", "entry": [')
    assert response.status_code == 400 and b"invalid JSON body" in response.content
    assert not Message.objects.exists() and queued == []


@pytest.mark.django_db
def test_a_signed_json_body_that_is_not_a_whatsapp_webhook_is_refused_with_400(deliver, queued):
    response = deliver({"object": "page", "entry": []})
    assert response.status_code == 400 and b"not a WhatsApp webhook" in response.content


# Bodies with many parts ------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_multi_entry_body_stores_every_message_under_its_sender(deliver, queued):
    other = "584149876543"
    body = webhook_body(
        change_value(messages=[inbound_message(wamid="wamid.A1", text={"body": "uno"}),
                               inbound_message(wamid="wamid.B1", wa_id=other, text={"body": "otro"})]),
        change_value(messages=[inbound_message(wamid="wamid.A2", timestamp=1739321090,
                                               text={"body": "dos"})]),
    )
    response = deliver(body)
    assert response.status_code == 200 and response.json()["stored"] == 3
    first = Contact.objects.get(wa_id=CUSTOMER)
    texts = list(Message.objects.filter(conversation__contact=first).values_list("text", flat=True))
    assert texts == ["uno", "dos"]
    assert Message.objects.get(provider_message_id="wamid.B1").conversation.contact.wa_id == other
    assert Conversation.objects.count() == 2
    assert sorted(queued) == sorted(Message.objects.values_list("pk", flat=True))
    assert first.conversations.get().last_inbound_at == datetime.fromtimestamp(1739321090, tz=UTC)


@pytest.mark.django_db
def test_malformed_pieces_are_skipped_and_the_good_message_is_stored(deliver, queued):
    broken = inbound_message(wamid="wamid.BROKEN")
    del broken["timestamp"]
    response = deliver(webhook_body(change_value(messages=[broken, inbound_message(wamid="wamid.GOOD")])))
    assert response.status_code == 200 and response.json()["rejected"] == 1
    assert list(Message.objects.values_list("provider_message_id", flat=True)) == ["wamid.GOOD"]


@pytest.mark.django_db
def test_a_conversation_held_by_a_human_still_stores_and_queues_so_the_turn_can_trace_its_silence(
        deliver, queued):
    deliver(text_body(wamid="wamid.FIRST"))
    Conversation.objects.update(handler=Conversation.Handler.HUMAN)
    deliver(text_body(wamid="wamid.SECOND"))
    assert Conversation.objects.count() == 1 and len(queued) == 2


@pytest.mark.django_db
def test_a_new_profile_name_updates_the_contact(deliver, queued):
    deliver(text_body(wamid="wamid.1"))
    body = text_body(wamid="wamid.2")
    body["entry"][0]["changes"][0]["value"]["contacts"][0]["profile"]["name"] = "María Pérez"
    deliver(body)
    assert Contact.objects.get().name == "María Pérez"


@pytest.mark.django_db
def test_a_late_redelivered_older_message_does_not_move_last_inbound_back(deliver, queued):
    deliver(text_body(wamid="wamid.NEW", timestamp=1739329999))
    deliver(text_body(wamid="wamid.OLDER", timestamp=1739320000))
    assert Conversation.objects.get().last_inbound_at == datetime.fromtimestamp(1739329999, tz=UTC)


# Deduplication ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_redelivery_creates_no_second_row_and_queues_no_second_turn(deliver, queued):
    body = text_body()
    first, second = deliver(body), deliver(body)
    assert first.status_code == second.status_code == 200
    assert second.json()["stored"] == 0 and second.json()["duplicates"] == 1
    assert Message.objects.count() == 1 and Conversation.objects.count() == 1
    assert queued == [Message.objects.get().pk]


@pytest.mark.django_db
def test_the_same_wamid_twice_in_one_body_is_stored_once(deliver, queued):
    message = inbound_message(wamid="wamid.TWICE")
    response = deliver(webhook_body(change_value(messages=[message, dict(message)])))
    assert response.json()["stored"] == 1 and Message.objects.count() == 1 and len(queued) == 1


def _deliver_from_threads(raw: bytes, threads: int) -> list:
    """POST the same signed bytes from `threads` threads released together; return the responses."""
    start = threading.Barrier(threads)
    responses: list = []

    def post():
        try:
            client = Client()
            start.wait(timeout=30)
            responses.append(client.post(URL, data=raw, content_type="application/json",
                                         HTTP_X_HUB_SIGNATURE_256=sign(raw)))
        finally:
            connections.close_all()

    workers = [threading.Thread(target=post) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    return responses


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_deliveries_of_a_new_senders_message_store_one_row_and_queue_one_turn(queued):
    for round_ in range(5):
        wa_id = f"58412000000{round_}"  # a new sender each round: the contact is created concurrently too
        raw = json.dumps(text_body(wamid=f"wamid.RACE{round_}", wa_id=wa_id)).encode()
        responses = _deliver_from_threads(raw, threads=2)
        assert [r.status_code for r in responses] == [200, 200]
        assert Message.objects.filter(provider_message_id=f"wamid.RACE{round_}").count() == 1
        assert Contact.objects.filter(wa_id=wa_id).count() == 1
        assert Conversation.objects.filter(contact__wa_id=wa_id).count() == 1
    assert sorted(queued) == sorted(Message.objects.values_list("pk", flat=True))


@pytest.mark.django_db(transaction=True)
def test_when_both_deliveries_pass_the_duplicate_check_the_database_still_keeps_one(queued, monkeypatch):
    # Hold each delivery right after its read-only duplicate check (the same wamid twice in one body)
    # until the other has made it too: both then believe the message is new, and only the contact
    # lock and the insert's ON CONFLICT can keep one row.
    both_checked = threading.Barrier(2)
    original = desk.inbound._sender_messages_store

    def after_duplicate_check(**kwargs):
        both_checked.wait(timeout=30)
        return original(**kwargs)

    monkeypatch.setattr(desk.inbound, "_sender_messages_store", after_duplicate_check)
    raw = json.dumps(text_body(wamid="wamid.SAME-INSTANT")).encode()
    responses = _deliver_from_threads(raw, threads=2)
    assert sorted((r.status_code, r.json()["stored"], r.json()["duplicates"]) for r in responses) == [
        (200, 0, 1), (200, 1, 0)]
    assert Message.objects.count() == 1 and Contact.objects.count() == 1 and Conversation.objects.count() == 1
    assert queued == [Message.objects.get().pk]


# Statuses --------------------------------------------------------------------------------------

def status_body(*updates):
    return webhook_body(change_value(statuses=list(updates)))


@pytest.mark.django_db
def test_statuses_in_order_move_the_outbound_message_to_read(deliver, queued):
    message = outbound_message()
    for n, status in enumerate(["sent", "delivered", "read"]):
        update = delivery_status("wamid.OUT1", status, timestamp=1739321100 + n)
        assert deliver(status_body(update)).status_code == 200
    message.refresh_from_db()
    assert message.status == "read" and message.status_at == datetime.fromtimestamp(1739321102, tz=UTC)
    assert queued == []


@pytest.mark.django_db
def test_statuses_out_of_order_never_move_a_message_backwards(deliver, queued):
    message = outbound_message(status=Message.Status.QUEUED)
    deliver(status_body(delivery_status("wamid.OUT1", "read", timestamp=1739321300)))
    late = deliver(status_body(delivery_status("wamid.OUT1", "delivered", timestamp=1739321200),
                               delivery_status("wamid.OUT1", "sent", timestamp=1739321100)))
    assert late.json()["statuses"] == {"applied": 0, "stale": 2, "unknown": 0}
    message.refresh_from_db()
    assert message.status == "read" and message.status_at == datetime.fromtimestamp(1739321300, tz=UTC)


@pytest.mark.django_db
def test_statuses_of_one_body_apply_in_their_natural_order_whatever_order_meta_lists_them(deliver, queued):
    message = outbound_message(status=Message.Status.QUEUED)
    deliver(status_body(delivery_status("wamid.OUT1", "read", timestamp=1739321300),
                        delivery_status("wamid.OUT1", "sent", timestamp=1739321100)))
    message.refresh_from_db()
    assert message.status == "read"


@pytest.mark.django_db
def test_a_failed_send_is_recorded_on_the_message_and_shown_as_an_event(deliver, queued):
    message = outbound_message()
    failed = delivery_status("wamid.OUT1", "failed", errors=[
        {"code": 131047, "title": "Re-engagement message",
         "error_data": {"details": "Message failed to send because more than 24 hours have passed"}}])
    assert deliver(status_body(failed)).json()["statuses"]["applied"] == 1
    message.refresh_from_db()
    assert message.status == "failed"
    assert message.error.startswith("Re-engagement message (code 131047)")
    event = Event.objects.get(kind="send_failed")
    assert event.conversation_id == message.conversation_id
    assert event.detail["message_id"] == message.pk and event.detail["code"] == 131047
    assert "24 hours" in event.detail["detail"]
    deliver(status_body(failed))  # Meta redelivers it
    assert Event.objects.filter(kind="send_failed").count() == 1


@pytest.mark.django_db
def test_a_failure_reported_after_the_message_was_read_is_ignored(deliver, queued):
    message = outbound_message(status=Message.Status.READ)
    deliver(status_body(delivery_status("wamid.OUT1", "failed", errors=[{"code": 131000, "title": "x"}])))
    message.refresh_from_db()
    assert message.status == "read" and not Event.objects.exists()


@pytest.mark.django_db
def test_a_status_for_an_unknown_or_inbound_wamid_is_ignored_and_counted(deliver, queued):
    deliver(text_body(wamid="wamid.INBOUND"))
    response = deliver(status_body(delivery_status("wamid.NOBODY", "delivered"),
                                   delivery_status("wamid.INBOUND", "read")))
    assert response.status_code == 200
    assert response.json()["statuses"] == {"applied": 0, "stale": 0, "unknown": 2}
    assert Message.objects.get().status == "received"


# Media, reactions, number changes --------------------------------------------------------------

@pytest.mark.django_db
def test_a_media_message_is_stored_with_its_media_id_and_its_turn_queued(deliver, queued):
    image = inbound_message("image", wamid="wamid.IMG", image={
        "id": "1479537139650973", "mime_type": "image/jpeg", "sha256": "abc=", "caption": "mi comprobante"})
    voice = inbound_message("audio", wamid="wamid.VOICE", audio={
        "id": "1003383421387256", "mime_type": "audio/ogg; codecs=opus", "voice": True})
    deliver(webhook_body(change_value(messages=[image, voice])))
    stored = Message.objects.get(provider_message_id="wamid.IMG")
    assert (stored.kind, stored.text) == ("image", "mi comprobante")
    assert stored.payload["media_id"] == "1479537139650973" and stored.payload["mime_type"] == "image/jpeg"
    assert stored.payload["raw"]["image"]["sha256"] == "abc="
    audio = Message.objects.get(provider_message_id="wamid.VOICE")
    assert audio.kind == "audio" and audio.payload["voice"] is True
    assert queued == [stored.pk, audio.pk]


@pytest.mark.django_db
def test_a_reaction_is_stored_and_queues_no_turn(deliver, queued):
    reaction = inbound_message("reaction", wamid="wamid.REACT",
                               reaction={"message_id": "wamid.OUT1", "emoji": "\U0001F44D"})
    response = deliver(webhook_body(change_value(messages=[reaction])))
    assert response.status_code == 200 and response.json()["queued"] == 0
    stored = Message.objects.get(provider_message_id="wamid.REACT")
    assert (stored.kind, stored.author, stored.text) == ("reaction", "customer", "\U0001F44D")
    assert stored.payload["emoji"] == "\U0001F44D" and stored.payload["reacted_message_id"] == "wamid.OUT1"
    assert queued == []


@pytest.mark.django_db
def test_a_number_change_moves_the_contact_to_the_new_number(deliver, queued):
    deliver(text_body(wamid="wamid.BEFORE"))
    new_number = "584249876543"
    change = inbound_message("system", wamid="wamid.SYS", system={
        "body": f"User Cliente changed from {CUSTOMER} to {new_number}", "wa_id": new_number,
        "type": "user_changed_number"})
    response = deliver(webhook_body(change_value(messages=[change], contacts=[])))
    assert response.status_code == 200 and response.json()["queued"] == 0
    contact = Contact.objects.get()
    assert contact.wa_id == new_number
    event = Event.objects.get(kind="number_changed")
    assert event.detail["from"] == CUSTOMER and event.detail["to"] == new_number and event.detail["applied"]
    system = Message.objects.get(provider_message_id="wamid.SYS")
    assert (system.kind, system.author) == ("system", "system")
    deliver(text_body(wamid="wamid.AFTER", wa_id=new_number))  # the customer writes from the new number
    assert Contact.objects.count() == 1 and Conversation.objects.count() == 1
    deliver(webhook_body(change_value(messages=[change], contacts=[])))  # redelivered: applied once
    assert Event.objects.filter(kind="number_changed").count() == 1


@pytest.mark.django_db
def test_a_number_change_to_a_number_that_already_has_a_contact_is_shown_not_merged(deliver, queued):
    new_number = "584249876543"
    deliver(text_body(wamid="wamid.OLDNUM"))
    deliver(text_body(wamid="wamid.NEWNUM", wa_id=new_number))
    change = inbound_message("system", wamid="wamid.SYS", system={"body": "changed", "wa_id": new_number,
                                                                   "type": "user_changed_number"})
    assert deliver(webhook_body(change_value(messages=[change], contacts=[]))).status_code == 200
    assert set(Contact.objects.values_list("wa_id", flat=True)) == {CUSTOMER, new_number}
    event = Event.objects.get(kind="number_changed")
    assert event.detail["applied"] is False
    assert event.detail["other_contact_id"] == Contact.objects.get(wa_id=new_number).pk


@pytest.mark.django_db
def test_a_known_business_scoped_id_writing_from_a_new_number_moves_the_contact(deliver, queued):
    deliver(text_body(wamid="wamid.1"))  # contact VE.584121234567 with the old number
    body = text_body(wamid="wamid.2", wa_id="584161112222")
    body["entry"][0]["changes"][0]["value"]["contacts"][0]["user_id"] = f"VE.{CUSTOMER}"
    deliver(body)
    contact = Contact.objects.get()
    assert contact.wa_id == "584161112222"
    assert Event.objects.get(kind="number_changed").detail == {"from": CUSTOMER, "to": "584161112222",
                                                               "source": "user_id"}


# When the broker is down ---------------------------------------------------------------------

@pytest.mark.django_db
def test_an_unreachable_broker_still_acknowledges_and_logs_the_waiting_message(
        deliver, monkeypatch, caplog):
    def broker_down(message_id):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(current_app.tasks["bot.handle_inbound"], "delay", broker_down)
    with caplog.at_level(logging.ERROR, logger="desk.inbound"):
        response = deliver(text_body())
    assert response.status_code == 200 and Message.objects.count() == 1
    assert f"Could not queue the bot turn for message {Message.objects.get().pk}" in caplog.text
