from celery import shared_task


@shared_task(name="desk.deliver_outbound", acks_late=True, ignore_result=True)
def deliver_outbound(message_id: int) -> None:
    """Send one queued outbound message through its channel."""
    from desk.services import outbound_deliver

    outbound_deliver(message_id=message_id)
