"""Celery tasks of the bot: thin — take ids, load, call one service.

The desk queues `bot.handle_inbound` by name (it does not import the bot); `bot.apps` imports this module
so the name is registered in every process, web and worker alike.
"""

import datetime as dt

from celery import shared_task
from django.conf import settings

from bot.requeue import unanswered_requeue
from bot.turn import run_turn
from core.tasks import DATABASE_RETRIES, queue_backlog, retrying_while_the_database_is_away


@shared_task(name="bot.handle_inbound", bind=True, acks_late=True, ignore_result=True,
             max_retries=DATABASE_RETRIES)
def handle_inbound(self, message_id: int) -> None:
    """Run the bot turn for one inbound message (idempotent: a second run for the same message does nothing).

    While the database is away (a restart, a lost connection) the turn is tried again after 1, 2, 4, 8, 15 and
    15 s instead of waiting for the sweep; a turn cut after it claimed its message is the lease's to recover.
    """
    retrying_while_the_database_is_away(self, lambda: run_turn(message_id=message_id))


@shared_task(name="bot.requeue_unanswered", ignore_result=True)
def requeue_unanswered() -> int:
    """Queue the turns of inbound messages that no turn answered (run every minute by Celery beat)."""
    return len(unanswered_requeue(queue=handle_inbound.delay, backlog=queue_backlog(),
                                  min_age=dt.timedelta(seconds=settings.BOT_REQUEUE_AFTER_S),
                                  max_age=dt.timedelta(hours=settings.BOT_REQUEUE_MAX_AGE_H)))
