"""Write past rows in bulk, each stamped with the moment it happened (for a room's own backfill services)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db import connection, models


def rows_backfill(*, model: type[models.Model], rows: Sequence[models.Model],
                  created_at: Sequence[dt.datetime]) -> list[models.Model]:
    """Write unsaved rows of `model` in one statement, then set each one's `created_at` (auto_now_add ignores
    the value bulk_create is given). Call it from the room that owns `model`, inside its transaction."""
    saved = model.objects.bulk_create(rows)
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {model._meta.db_table} t SET created_at = v.at "  # noqa: S608 - a model's table
                       "FROM unnest(%s::bigint[], %s::timestamptz[]) AS v(id, at) WHERE t.id = v.id",
                       [[row.pk for row in saved], list(created_at)])
    return saved
