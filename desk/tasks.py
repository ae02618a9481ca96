"""Celery tasks of the desk: thin — take ids, call one service."""

import datetime as dt

from celery import shared_task
from django.conf import settings

from core import clock
from core.tasks import DATABASE_RETRIES, queue_backlog, retrying_while_the_database_is_away
from desk.capacity import escalations_assign_waiting
from desk.delivery import stuck_sends_fail, undelivered_requeue
from desk.media import media_fetch
from desk.services import outbound_deliver


@shared_task(name="desk.deliver_outbound", bind=True, acks_late=True, ignore_result=True,
             max_retries=DATABASE_RETRIES)
def deliver_outbound(self, message_id: int) -> None:
    """Send one queued outbound message through its channel.

    While the database is away the delivery is tried again after 1, 2, 4, 8, 15 and 15 s instead of waiting for
    the sweep; a message it had already claimed is not sent again (desk.services.outbound_deliver).
    """
    retrying_while_the_database_is_away(self, lambda: outbound_deliver(message_id=message_id))


@shared_task(name="desk.requeue_undelivered", ignore_result=True)
def requeue_undelivered() -> int:
    """Queue again the delivery of replies still waiting to be sent, and mark failed the ones a stopped delivery left
    mid-send (run by Celery beat)."""
    stuck_sends_fail(now=clock.now(), after=dt.timedelta(seconds=settings.DESK_SENDING_STUCK_AFTER_S))
    return len(undelivered_requeue(queue=deliver_outbound.delay, backlog=queue_backlog(),
                                   min_age=dt.timedelta(seconds=settings.DESK_REDELIVER_AFTER_S)))


@shared_task(name="desk.assign_waiting", ignore_result=True)
def assign_waiting() -> int:
    """Hand waiting escalations to available agents with room (queued after every change that frees room)."""
    return len(escalations_assign_waiting())


@shared_task(name="desk.fetch_media", acks_late=True, ignore_result=True)
def fetch_media(attachment_id: int) -> None:
    """Download, check and store one file a customer sent on WhatsApp."""
    media_fetch(attachment_id=attachment_id)
