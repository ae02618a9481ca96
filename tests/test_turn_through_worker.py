"""A signed WhatsApp delivery, redelivered, goes through Redis to a real Celery worker: one turn, one reply."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection

from desk.models import Escalation, Message
from desk.whatsapp import signature_header
from tests.fake_graph import change_value, inbound_message, webhook_body
from tests.test_celery_broker import redis_reachable
from traces.models import Trace

ROOT = Path(__file__).resolve().parent.parent
SECRET = "worker-test-secret"


@pytest.fixture
def redis_celery():
    """Point this process's Celery app at Redis (not eager) for one test, and start one worker process."""
    from config.celery import app

    broker = "redis://127.0.0.1:6379/13"
    queue = f"turns-{uuid.uuid4().hex[:8]}"
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "task_default_queue",
                                            "result_backend")}
    app.conf.update(task_always_eager=False, broker_url=broker, task_default_queue=queue, result_backend=broker)
    env = {**os.environ, "CELERY_BROKER_URL": broker, "CELERY_RESULT_BACKEND": broker,
           "EMBEDDED_PG_DATABASE": connection.settings_dict["NAME"], "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("WHATSAPP_ACCESS_TOKEN", None)
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "-Q", queue,
         "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    client = Celery(broker=broker, backend=broker, set_as_current=False)
    try:
        yield client, queue
    finally:
        worker.terminate()
        output, _ = worker.communicate(timeout=30)
        print(output)  # shown by pytest when the test fails
        app.conf.update(saved)


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
