"""Celery tasks of the bot: thin — take ids, load, call one service.

The desk queues `bot.handle_inbound` by name (it does not import the bot); `bot.apps` imports this module
so the name is registered in every process, web and worker alike.
"""

import datetime as dt

from celery import shared_task
from django.conf import settings

from bot.requeue import unanswered_requeue
from bot.turn import run_turn


@shared_task(name="bot.handle_inbound", acks_late=True, ignore_result=True)
def handle_inbound(message_id: int) -> None:
    """Run the bot turn for one inbound message (idempotent: a second run for the same message does nothing)."""
    run_turn(message_id=message_id)


@shared_task(name="bot.requeue_unanswered", ignore_result=True)
def requeue_unanswered() -> int:
    """Queue the turns of inbound messages that no turn answered (run every minute by Celery beat)."""
    return len(unanswered_requeue(queue=handle_inbound.delay,
                                  min_age=dt.timedelta(seconds=settings.BOT_REQUEUE_AFTER_S),
                                  max_age=dt.timedelta(hours=settings.BOT_REQUEUE_MAX_AGE_H)))
