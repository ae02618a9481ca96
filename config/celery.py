"""Celery app: a real broker when CELERY_BROKER_URL is set, eager execution otherwise."""

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tracedesk")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="tracedesk.health_check")
def health_check() -> dict:
    """Report which database this worker reaches and its pgvector version (used by ops and tests)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database(), (SELECT extversion FROM pg_extension WHERE extname = 'vector')")
        database, pgvector = cursor.fetchone()
    return {"database": database, "pgvector": pgvector}


@worker_process_init.connect
def warm_worker_process(**kwargs) -> None:
    """Load the bot's models as each worker process starts, so its first turn is as fast as the rest."""
    from bot.warmup import warm  # after Django is set up: this module is imported while settings load

    warm()
