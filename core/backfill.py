"""Stamp rows written in bulk with the times they happened (for a room's own backfill services)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db import connection, models


def created_at_stamp(*, model: type[models.Model], ids: Sequence[int], moments: Sequence[dt.datetime]) -> None:
    """Set `created_at` of many rows of `model` in one statement: auto_now_add ignores the value bulk_create is
    given. Call it from the room that owns `model`."""
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {model._meta.db_table} t SET created_at = v.at "  # noqa: S608 - a model's table
                       "FROM unnest(%s::bigint[], %s::timestamptz[]) AS v(id, at) WHERE t.id = v.id",
                       [list(ids), list(moments)])
