"""Celery tasks of the bot: thin — take ids, load, call one service."""

from celery import shared_task


@shared_task(name="bot.handle_inbound", acks_late=True, ignore_result=True)
def handle_inbound(message_id: int) -> None:
    """Run the bot turn for one inbound message (idempotent: a second run for the same message does nothing)."""
    from bot.turn import run_turn

    run_turn(message_id=message_id)


@shared_task(name="bot.requeue_unanswered", ignore_result=True)
def requeue_unanswered() -> int:
    """Queue the turns of inbound messages that no turn answered (run every minute by Celery beat)."""
    import datetime as dt

    from django.conf import settings

    from bot.requeue import unanswered_requeue

    return len(unanswered_requeue(min_age=dt.timedelta(seconds=settings.BOT_REQUEUE_AFTER_S),
                                  max_age=dt.timedelta(hours=settings.BOT_REQUEUE_MAX_AGE_H)))
