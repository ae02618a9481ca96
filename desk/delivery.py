"""Send again the replies whose delivery was never queued or never ran, once each.

A reply is recorded with its trace and its delivery is queued after commit. If the broker is unreachable at
that moment, restarts and loses its queue, or the worker dies before the send, the reply stays `queued` in
the database and nothing else would send it: the customer never hears back. Every BOT_REQUEUE_EVERY_S the beat
sweep queues the delivery of each outbound message still `queued` DESK_REDELIVER_AFTER_S after it was
written (for WhatsApp's 24-hour window). A delivery claims its message under a row lock and commits it as
`sending` before the send (desk.services.outbound_deliver), so a message queued twice is sent once. One still
`sending` DESK_SENDING_STUCK_AFTER_S after its claim belongs to a process that stopped between the claim and the
result: it may or may not have reached the customer, so it is marked failed, with an event the conversation shows,
for an agent to check — never sent again blindly.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from kombu.exceptions import OperationalError as BrokerError

from core import clock
from core.tasks import sweep_may_queue
from desk.models import Event, Message

logger = logging.getLogger(__name__)

REPLY_WINDOW = dt.timedelta(hours=24)


def undelivered_messages(*, now: dt.datetime, min_age: dt.timedelta, limit: int = 500) -> list[int]:
    """Return the outbound messages still waiting to be sent min_age after they were written, oldest first."""
    return list(
        Message.objects.filter(direction=Message.Direction.OUTBOUND, status=Message.Status.QUEUED,
                               created_at__lt=now - min_age, created_at__gte=now - REPLY_WINDOW)
        .order_by("created_at", "pk").values_list("pk", flat=True)[:limit]
    )


def undelivered_requeue(*, queue: Callable[[int], object], min_age: dt.timedelta,
                        now: dt.datetime | None = None, limit: int = 500, backlog: int | None = None) -> list[int]:
    """Queue (through `queue`, the delivery task's delay) every reply still waiting; return the ids queued.

    With `backlog` (the tasks waiting in the broker) over core.tasks.SWEEP_BACKLOG_MAX, nothing: the replies'
    deliveries are most likely waiting in that queue.
    """
    if not sweep_may_queue(backlog):
        return []
    queued = []
    for message_id in undelivered_messages(now=now or clock.now(), min_age=min_age, limit=limit):
        try:
            queue(message_id)
        except BrokerError:
            logger.exception("The broker is still unreachable; some replies wait for the next sweep")
            break
        queued.append(message_id)
    if queued:
        logger.warning("Queued again the delivery of %d replies never sent: %s", len(queued), queued[:20])
    return queued


STUCK_SEND_ERROR = ("the delivery stopped between claiming this reply and recording the send: it may or may not "
                    "have reached the customer")


def stuck_sends_fail(*, now: dt.datetime, after: dt.timedelta) -> list[int]:
    """Mark failed (with a send_failed event) every outbound message still `sending` `after` its claim; return their
    ids."""
    marked = []
    for message_id, conversation_id in Message.objects.filter(
            direction=Message.Direction.OUTBOUND, status=Message.Status.SENDING,
            status_at__lt=now - after).values_list("pk", "conversation_id"):
        # Conditional: a delivery that recorded its result meanwhile keeps it.
        if Message.objects.filter(pk=message_id, status=Message.Status.SENDING).update(
                status=Message.Status.FAILED, error=STUCK_SEND_ERROR, status_at=now):
            Event.objects.create(conversation_id=conversation_id, kind="send_failed",
                                 detail={"message_id": message_id, "error": STUCK_SEND_ERROR})
            marked.append(message_id)
    if marked:
        logger.warning("Marked failed %d replies whose delivery stopped mid-send: %s", len(marked), marked[:20])
    return marked
