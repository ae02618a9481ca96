"""A task goes through a real Redis broker to a real Celery worker process and back."""

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection

REDIS = ("127.0.0.1", 6379)
ROOT = Path(__file__).resolve().parent.parent


def redis_reachable() -> bool:
    try:
        with socket.create_connection(REDIS, timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.broker
@pytest.mark.django_db
@pytest.mark.skipif(not redis_reachable(), reason="Redis is not reachable at 127.0.0.1:6379")
def test_a_task_runs_in_a_worker_process_through_redis():
    broker = "redis://127.0.0.1:6379/15"
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "CELERY_BROKER_URL": broker,
        "CELERY_RESULT_BACKEND": broker,
        "EMBEDDED_PG_DATABASE": connection.settings_dict["NAME"],
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "--concurrency=1",
         "-Q", queue, "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    # Not the current app: shared tasks of this process must stay on the eager config app.
    client = Celery(broker=broker, backend=broker, set_as_current=False)
    try:
        result = client.send_task("tracedesk.health_check", queue=queue)
        outcome = result.get(timeout=90)
    finally:
        worker.terminate()
        output, _ = worker.communicate(timeout=30)
    assert outcome == {"database": connection.settings_dict["NAME"], "pgvector": outcome["pgvector"]}, output
    assert tuple(int(p) for p in outcome["pgvector"].split(".")[:2]) >= (0, 8)
    assert worker.returncode is not None


@pytest.mark.broker
@pytest.mark.skipif(not redis_reachable(), reason="Redis is not reachable at 127.0.0.1:6379")
def test_the_backlog_a_sweep_reads_is_the_number_of_tasks_waiting_in_the_broker():
    import uuid

    from config.celery import app
    from core.tasks import queue_backlog

    from celery import Celery

    broker = "redis://127.0.0.1:6379/15"
    queue = f"backlog-{uuid.uuid4().hex[:8]}"
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url")}
    app.conf.update(task_always_eager=False, broker_url=broker)
    producer = Celery(broker=broker, set_as_current=False)
    try:
        assert queue_backlog(queue) == 0  # nothing ever queued there
        for _ in range(3):
            producer.send_task("tracedesk.health_check", queue=queue)
        assert queue_backlog(queue) == 3
    finally:
        with producer.connection_for_write() as connection:
            connection.default_channel.queue_delete(queue)
        app.conf.update(saved)
    assert queue_backlog(queue) is None  # eager again: there is no broker to ask
