"""A signed WhatsApp delivery, redelivered, goes through Redis to a real Celery worker: one turn, one reply."""

import json

import pytest

from desk.models import Escalation, Message
from desk.whatsapp import signature_header
from tests.support.fake_graph import change_value, inbound_message, webhook_body
from tests.support.worker import celery_worker
from tests.test_celery_broker import redis_reachable
from traces.models import Trace

SECRET = "worker-test-secret"


@pytest.fixture
def redis_celery():
    """One worker process on Redis, with this process's Celery app pointed at it."""
    with celery_worker() as (client, queue, _worker):
        yield client, queue


@pytest.mark.broker
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not redis_reachable(), reason="Redis is not reachable at 127.0.0.1:6379")
def test_a_redelivered_webhook_message_gets_one_turn_in_the_worker(client, settings, redis_celery):
    celery_client, queue = redis_celery
    settings.WHATSAPP_APP_SECRET = SECRET
    body = webhook_body(change_value(messages=[inbound_message(
        wa_id="584129990000", wamid="wamid.worker-1", text={"body": "quiero hablar con una persona"})]))
    raw = json.dumps(body).encode()
    for _ in range(2):  # Meta redelivers
        response = client.post("/webhooks/whatsapp/", data=raw, content_type="application/json",
                               HTTP_X_HUB_SIGNATURE_256=signature_header(raw, SECRET))
        assert response.status_code == 200
    [message] = Message.objects.filter(provider_message_id="wamid.worker-1")
    # One more, explicit delivery of the same turn: the worker runs tasks one at a time, so when this
    # result is back the webhook's own task has run too — and the claim let only one of them act.
    celery_client.send_task("bot.handle_inbound", args=[message.pk], queue=queue,
                            ignore_result=False).get(timeout=60)
    assert Trace.objects.filter(message=message).count() == 1
    trace = Trace.objects.get(message=message)
    assert (trace.outcome, trace.escalation_reason, trace.channel) == ("escalated", "USER_REQUEST", "whatsapp")
    assert Escalation.objects.filter(conversation=message.conversation).count() == 1
    assert message.conversation.messages.filter(direction="out").count() == 1
