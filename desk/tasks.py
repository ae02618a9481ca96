"""Celery tasks of the desk: thin — take ids, call one service."""

from celery import shared_task

from desk.services import outbound_deliver


@shared_task(name="desk.deliver_outbound", acks_late=True, ignore_result=True)
def deliver_outbound(message_id: int) -> None:
    """Send one queued outbound message through its channel."""
    outbound_deliver(message_id=message_id)
