"""A real Celery worker process on the Redis broker, for tests that need the broker's delivery guarantees."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from celery import Celery
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
BROKER = "redis://127.0.0.1:6379/13"


@contextmanager
def celery_worker(*, pool: str = "solo", env: dict | None = None):
    """Point this process's Celery app at Redis (not eager) and start one worker process on a fresh queue.

    Yields (client, queue, worker): `client.send_task(name, args=…, queue=queue)` reaches the worker, and
    tasks this process queues through the app go there too. `pool="prefork"` runs the task in a child
    process (concurrency 1) that a test may kill.
    """
    from config.celery import app

    queue = f"turns-{uuid.uuid4().hex[:8]}"
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "task_default_queue",
                                            "result_backend")}
    app.conf.update(task_always_eager=False, broker_url=BROKER, task_default_queue=queue, result_backend=BROKER)
    worker_env = {**os.environ, "CELERY_BROKER_URL": BROKER, "CELERY_RESULT_BACKEND": BROKER,
                  "DJANGO_DEBUG": "1",
                  "EMBEDDED_PG_DATABASE": connection.settings_dict["NAME"],
                  "DJANGO_SETTINGS_MODULE": "config.settings", **(env or {})}
    worker_env.pop("WHATSAPP_ACCESS_TOKEN", None)
    options = ["--pool=solo"] if pool == "solo" else ["--pool=prefork", "--concurrency=1"]
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", *options, "-Q", queue,
         "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=WARNING"],
        cwd=ROOT, env=worker_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    client = Celery(broker=BROKER, backend=BROKER, set_as_current=False)
    try:
        yield client, queue, worker
    finally:
        worker.terminate()
        try:
            output, _ = worker.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            output, _ = worker.communicate()
        print(output)  # shown by pytest when the test fails
        app.conf.update(saved)


def poll(check, *, deadline_s: float, every_s: float = 0.2, between=None):
    """Return check()'s first truthy value, calling between() after each miss; fail after deadline_s.

    A deadline poll, not a wait for time: it returns as soon as the outcome is there.
    """
    deadline = time.monotonic() + deadline_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {deadline_s} s: {check.__doc__ or check}")
        if between is not None:
            between()
        time.sleep(every_s)
