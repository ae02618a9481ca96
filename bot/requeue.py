"""Queue again the inbound messages no turn ever answered: queued while the broker was down, or whose turn crashed.

The webhook stores a message and queues its turn after commit. If the broker is unreachable at that
moment the row is committed but no task exists, and Meta's redelivery is dropped as a duplicate — so
without this sweep the subscriber would never hear back. A turn is idempotent (an atomic claim; a
stale claim without a trace may be taken over), so queueing a message twice is harmless.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from django.db.models import Exists, OuterRef, Q
from kombu.exceptions import OperationalError as BrokerError

from core import clock
from core.tasks import sweep_may_queue
from desk.channel import SILENT_KINDS, UNREADABLE_KINDS
from desk.models import Message
from traces.models import Trace

logger = logging.getLogger(__name__)


def unanswered_messages(*, now: dt.datetime, min_age: dt.timedelta, max_age: dt.timedelta,
                        limit: int = 500, unclaimed: bool = True) -> list[int]:
    """Return the inbound messages (younger than max_age) that no turn finished, oldest first: never claimed
    and older than min_age (queued while the broker was down; only with `unclaimed`), or claimed by a turn
    whose lease expired without a trace (the turn died, or gave up after an error)."""
    never_claimed = Q(turn_claimed_at__isnull=True, created_at__lt=now - min_age)
    lease_expired = Q(turn_lease_until__lt=now)
    return list(
        Message.objects.filter(direction=Message.Direction.INBOUND, created_at__gte=now - max_age)
        .filter((never_claimed | lease_expired) if unclaimed else lease_expired)
        .exclude(kind__in=SILENT_KINDS)
        # as at ingest (desk.channel.turn_wanted): a readable kind with no words has nothing to answer
        .exclude(Q(text="") & ~Q(kind__in=UNREADABLE_KINDS))
        .exclude(Exists(Trace.objects.filter(message=OuterRef("pk"))))
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )


def unanswered_requeue(*, queue: Callable[[int], object], now: dt.datetime | None = None,
                       min_age: dt.timedelta = dt.timedelta(minutes=1), max_age: dt.timedelta = dt.timedelta(hours=24),
                       limit: int = 500, backlog: int | None = None) -> list[int]:
    """Queue (through `queue`, the turn task's delay) the turn of every unanswered message; return the ids
    queued (stops at the first broker error). With `backlog` (the tasks waiting in the broker) over
    core.tasks.SWEEP_BACKLOG_MAX, messages never claimed are left alone: they are waiting in that queue."""
    queued = []
    for message_id in unanswered_messages(now=now or clock.now(), min_age=min_age, max_age=max_age,
                                          limit=limit, unclaimed=sweep_may_queue(backlog)):
        try:
            queue(message_id)
        except BrokerError:
            logger.exception("The broker is still unreachable; some unanswered messages wait for the next "
                             "sweep")
            break
        queued.append(message_id)
    if queued:
        logger.warning("Queued the turns of %d unanswered inbound messages: %s", len(queued), queued[:20])
    return queued
