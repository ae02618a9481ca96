"""Keyset pagination: a cursor names the last row of a page by (timestamp, id), newest first.

Every paged list shares it, so a bad cursor behaves the same everywhere: it is ignored (first page),
never an error.
"""

from __future__ import annotations

import datetime as dt

from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime


def cursor_encode(moment: dt.datetime, pk: int) -> str:
    return f"{moment.isoformat()}_{pk}"


def cursor_decode(raw: str) -> tuple[dt.datetime, int] | None:
    """Return (moment, id) from a cursor, or None when it is missing or malformed."""
    if not (raw or "").isprintable():
        return None
    moment, _, pk = raw.rpartition("_")
    if not (pk.isascii() and pk.isdigit()) or len(pk) > 18:  # "²".isdigit() is True, int("²") is not
        return None
    try:
        when = parse_datetime(moment) if moment else None
    except (ValueError, OverflowError):  # a well-formed but impossible date, e.g. month 13
        return None
    return (when, int(pk)) if when is not None else None


def keyset_after(rows: QuerySet, *, when: dt.datetime, pk: int, field: str = "created_at",
                 descending: bool = True) -> QuerySet:
    """Return the rows that come after (when, pk) in the order (field, id): older ones when descending."""
    op = "lt" if descending else "gt"
    return rows.filter(Q(**{f"{field}__{op}": when}) | Q(**{field: when, f"pk__{op}": pk}))


def keyset_page(rows: QuerySet, *, after: str, size: int, field: str = "created_at") -> tuple[list, str | None]:
    """Return one page of `rows` (ordered newest first by `field`, then id) older than the cursor, and the
    cursor of the next page (None on the last page)."""
    cursor = cursor_decode(after)
    if cursor:
        when, pk = cursor
        rows = keyset_after(rows, when=when, pk=pk, field=field)
    page = list(rows[:size + 1])
    more = len(page) > size
    page = page[:size]
    return page, cursor_encode(getattr(page[-1], field), page[-1].pk) if more else None
