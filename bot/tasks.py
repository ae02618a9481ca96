"""Celery tasks of the bot: thin — take ids, load, call one service."""

from celery import shared_task


@shared_task(name="bot.handle_inbound", acks_late=True, ignore_result=True)
def handle_inbound(message_id: int) -> None:
    """Run the bot turn for one inbound message (idempotent: a second run for the same message does nothing)."""
    from bot.turn import run_turn

    run_turn(message_id=message_id)
