"""The product's one clock: what time it is and what day it is, for every room.

Billing's current invoice, the bot's month words, the desk's 24-hour window, leases, the dashboard's days,
the rollups and the demo all ask `now()` or `today()`; nothing else reads the wall clock to decide
something (timestamps stored on rows come from here too, through `core.fields.ClockDateTimeField`).

`CLOCK_TODAY` (a setting, `YYYY-MM-DD`, empty by default) runs the whole product on another date: the
date is that one, the time of day is the wall clock's, so seconds still pass (leases expire, the last hour
of the dashboard moves) and every process given the same setting reads the same instant. It is meant for
demos, tests and the release gate, not production: at the wall clock's midnight the time of day starts
again on the same date.

`CLOCK_TIME_OF_DAY` (`HH:MM@<Unix time>`, empty by default, only with `CLOCK_TODAY`) also fixes the time of
day: the clock read `CLOCK_TODAY` at HH:MM (in TIME_ZONE) at that Unix time and ticks from there, so a run does
not depend on the hour it happens to start (a window of "today" checked at 00:10 would hold yesterday's turns).

Tests pin the clock for the whole run (`CLOCK_TODAY` and `CLOCK_TIME_OF_DAY`, noon at the run's start, are set by
`tests/dev_env_plugin.py`; a subprocess inherits them), and move it for one block with `pinned()`: to a date
(read the same way) or to an exact instant that ticks or stands still.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

_pins: list[Callable[[], dt.datetime]] = []


def _wall() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _local_date(moment: dt.datetime) -> dt.date:
    return timezone.localtime(moment).date()


@lru_cache(maxsize=8)
def parse_today(value: str) -> dt.date | None:
    """Return the date a `CLOCK_TODAY` value names, None when it is empty; raise on anything else."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ImproperlyConfigured(
            f"CLOCK_TODAY must be a date written YYYY-MM-DD (or empty for the wall clock), not {value!r}."
        ) from None


@lru_cache(maxsize=8)
def parse_time_of_day(value: str) -> tuple[dt.time, float] | None:
    """Return the (time of day, Unix time) a `CLOCK_TIME_OF_DAY` value names, None when it is empty; raise on
    anything else."""
    value = (value or "").strip()
    if not value:
        return None
    clock_time, _, unix = value.partition("@")
    try:
        return dt.time.fromisoformat(clock_time), float(unix)
    except ValueError:
        raise ImproperlyConfigured(
            "CLOCK_TIME_OF_DAY must be written HH:MM@<Unix time> (the time of day the clock read at that moment), "
            f"or empty for the wall clock's time of day, not {value!r}."
        ) from None


def _reference(day: dt.date) -> dt.datetime:
    """The instant whose time of day the clock shows: the wall clock's, or the one CLOCK_TIME_OF_DAY started on `day`."""
    started = parse_time_of_day(getattr(settings, "CLOCK_TIME_OF_DAY", ""))
    if started is None:
        return _wall()
    clock_time, unix = started
    start = timezone.make_aware(dt.datetime.combine(day, clock_time)).astimezone(dt.UTC)
    return start + dt.timedelta(seconds=time.time() - unix)


def _on(target: dt.date) -> dt.datetime:
    """Return the reference instant moved to `target` (same time of day in TIME_ZONE)."""
    reference = _reference(parse_today(getattr(settings, "CLOCK_TODAY", "")) or target)
    return reference + dt.timedelta(days=(target - _local_date(reference)).days)


def now() -> dt.datetime:
    """Return the product's current instant (aware, UTC)."""
    if _pins:
        return _pins[-1]()
    target = parse_today(getattr(settings, "CLOCK_TODAY", ""))
    return _wall() if target is None else _on(target)


def today() -> dt.date:
    """Return the product's current date in the configured time zone (TIME_ZONE)."""
    return _local_date(now())


@contextmanager
def pinned(when: dt.date | dt.datetime, *, frozen: bool = False) -> Iterator[None]:
    """Move the clock for the block: to a date (the wall clock's time of day), or to an instant.

    An instant ticks from there unless `frozen`; a naive instant is read in TIME_ZONE.
    """
    if isinstance(when, dt.datetime):
        start = when if timezone.is_aware(when) else timezone.make_aware(when)
        began = time.monotonic()

        def read() -> dt.datetime:
            return start if frozen else start + dt.timedelta(seconds=time.monotonic() - began)
    else:

        def read() -> dt.datetime:
            return _on(when)

    _pins.append(read)
    try:
        yield
    finally:
        _pins.remove(read)
