"""What the dashboard shows of review: turns answered by the verified-only fallback per day, and the team's scores
per day and per configuration. Read from the traces themselves: fallbacks are a few turns in a hundred (a partial
index holds only them) and scores exist only on reviewed traces, so neither needs a rollup."""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from traces.dashboard import DashboardQuery
from traces.models import ScoreDefinition, Trace, TraceScore
from traces.scoring import bucket_of


def _in_range(query: DashboardQuery, prefix: str = ""):
    """Return filter kwargs for the query's range and slice on a trace (or through `prefix`)."""
    kwargs = {f"{prefix}created_at__gte": query.start(), f"{prefix}created_at__lt": query.end()}
    kwargs.update({f"{prefix}{name}": value for name, value in query.slice.items()})
    return kwargs


def fallbacks_per_day(query: DashboardQuery) -> dict[tuple[dt.date, str], int]:
    """Return {(local day, fallback kind): turns} for the range's turns that ended in a fallback."""
    rows = (Trace.objects.filter(**_in_range(query)).exclude(fallback="")
            .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
            .values_list("day", "fallback").annotate(n=Count("pk")).order_by())
    return {(day, kind): n for day, kind, n in rows}


@dataclass
class ScoreStats:
    """One score over the range: values per day (grouped into the definition's buckets) and per configuration."""

    definition: ScoreDefinition
    per_day: dict[tuple[dt.date, str], int] = field(default_factory=dict)
    per_configuration: dict[str, Counter] = field(default_factory=dict)  # fingerprint ("" none) → bucket counts
    means: dict[str, tuple[float, int]] = field(default_factory=dict)  # fingerprint → (mean, n) for yes/no, numbers

    @property
    def total(self) -> int:
        return sum(self.per_day.values())


def scores_stats(query: DashboardQuery) -> list[ScoreStats]:
    """Return each score's values on the range's traces, per trace day and per configuration (every reviewer's)."""
    definitions = list(ScoreDefinition.objects.all())
    stats = {d.pk: ScoreStats(definition=d) for d in definitions}
    rows = (TraceScore.objects.filter(**_in_range(query, "trace__"))
            .annotate(day=TruncDate("trace__created_at", tzinfo=timezone.get_current_timezone()))
            .values_list("definition_id", "day", "trace__configuration_id", "value", "number"))
    sums: dict[tuple[int, str], list[float]] = defaultdict(list)
    for definition_id, day, fingerprint, value, number in rows:
        item = stats[definition_id]
        bucket = bucket_of(item.definition.spec(), value)
        item.per_day[(day, bucket)] = item.per_day.get((day, bucket), 0) + 1
        item.per_configuration.setdefault(fingerprint or "", Counter())[bucket] += 1
        if number is not None:
            sums[(definition_id, fingerprint or "")].append(number)
    for (definition_id, fingerprint), numbers in sums.items():
        stats[definition_id].means[fingerprint] = (sum(numbers) / len(numbers), len(numbers))
    return [stats[d.pk] for d in definitions]
