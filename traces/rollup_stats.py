"""Fixed-bucket histograms and the dashboard's statistics. Pure: no Django.

An hourly rollup keeps a latency (or a wait) as counts over FIXED bucket edges, not as a percentile: counts
add up across hours, channels and configurations, so the p95 of thirty days is read off the sum of thirty
days' histograms instead of the average of 720 hourly p95s (which is not a p95 of anything).

Bucket i of a histogram over `edges` counts the values v with edges[i-1] <= v < edges[i]; bucket 0 holds
v < edges[0] and the last bucket v >= edges[-1]. That is PostgreSQL's `width_bucket(v, edges)` and
`bisect_right(edges, v)`, so the database fills the rollup and this module reads it with the same rule.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from traces.display import TURN_STAGE_ORDER

# Milliseconds. Dense where turns usually land (0.1–5 s), then coarser up to a minute; a value above the
# last edge is reported as "over 60 s". Changing the edges makes old rollups unreadable: rebuild them.
LATENCY_EDGES_MS: tuple[float, ...] = (
    5, 10, 25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 4000, 5000, 7500, 10000,
    15000, 20000, 30000, 60000)
# Seconds from an escalation to the first reply a person wrote in its conversation: minutes to a day.
REPLY_EDGES_S: tuple[float, ...] = (
    30, 60, 120, 300, 600, 900, 1800, 2700, 3600, 5400, 7200, 10800, 14400, 21600, 28800, 43200, 86400)
# The stages of a turn the dashboard times (bot/turn.py's recorder names; write_2, verify_2… fold into one).
STAGES: tuple[str, ...] = tuple(TURN_STAGE_ORDER)  # the turn's timed stages, in the order it runs them


def stage_histograms(flat: Sequence[int], edges: Sequence[float] = LATENCY_EDGES_MS) -> dict[str, list[int]]:
    """Split a rollup's stage latencies — one array, STAGES one after another, each over `edges` — by stage."""
    width = len(edges) + 1
    if len(flat) != width * len(STAGES):
        raise ValueError(f"{len(flat)} counts are not {len(STAGES)} stages of {width} buckets")
    return {stage: list(flat[i * width:(i + 1) * width]) for i, stage in enumerate(STAGES)}


def bucket_of(value: float, edges: Sequence[float]) -> int:
    """Return the bucket index of one value (PostgreSQL's width_bucket over the same edges)."""
    return bisect_right(edges, value)


def histogram(values: Iterable[float], edges: Sequence[float]) -> list[int]:
    """Return the counts of `values` over the buckets of `edges` (len(edges) + 1 counts)."""
    counts = [0] * (len(edges) + 1)
    for value in values:
        counts[bucket_of(value, edges)] += 1
    return counts


def merge(histograms: Iterable[Sequence[int] | None], edges: Sequence[float]) -> list[int]:
    """Return the bucket-wise sum of histograms over the same edges (a missing one counts as empty)."""
    total = [0] * (len(edges) + 1)
    for counts in histograms:
        if not counts:
            continue
        if len(counts) != len(total):
            raise ValueError(f"a histogram of {len(counts)} buckets cannot merge into {len(total)}")
        for i, count in enumerate(counts):
            total[i] += count
    return total


@dataclass(frozen=True)
class Percentile:
    """A percentile read off a histogram: an estimate within one bucket, or 'above the last edge'."""

    value: float | None  # None: no values at all
    above_last_edge: bool = False

    def text(self, unit: str, *, scale: float = 1.0, places: int = 0) -> str:
        """Return the value for a page: '1,234 ms', 'over 60,000 ms' or '—'."""
        if self.value is None:
            return "—"
        number = f"{self.value / scale:,.{places}f}"
        return f"over {number} {unit}" if self.above_last_edge else f"{number} {unit}"


def percentile(counts: Sequence[int], edges: Sequence[float], q: float) -> Percentile:
    """Return the q-quantile (0 < q <= 1) of the values a histogram counts, interpolated inside its bucket.

    Within a bucket the values are taken as spread evenly between its edges (bucket 0 starts at 0), so the
    error is at most one bucket's width; in the last bucket only "above the last edge" is known.
    """
    if not 0 < q <= 1:
        raise ValueError("q must be in (0, 1]")
    total = sum(counts)
    if total == 0:
        return Percentile(None)
    rank = q * total
    seen = 0
    for i, count in enumerate(counts):
        if count and seen + count >= rank:
            if i == len(edges):
                return Percentile(float(edges[-1]), above_last_edge=True)
            low = 0.0 if i == 0 else float(edges[i - 1])
            high = float(edges[i])
            return Percentile(low + (high - low) * (rank - seen) / count)
        seen += count
    return Percentile(float(edges[-1]), above_last_edge=True)  # unreachable: rank <= total


@dataclass(frozen=True)
class Proportion:
    events: int
    trials: int

    @property
    def rate(self) -> float | None:
        return self.events / self.trials if self.trials else None


@dataclass(frozen=True)
class DifferenceInterval:
    """after − before of two rates, with its 95 % interval (Newcombe's hybrid score method)."""

    difference: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


Z95 = 1.959963984540054


def wilson(p: Proportion, z: float = Z95) -> tuple[float, float]:
    """Return the Wilson score interval of one proportion."""
    n, x = p.trials, p.events
    centre = (x + z * z / 2) / (n + z * z)
    half = z * math.sqrt(x * (n - x) / n + z * z / 4) / (n + z * z)
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(before: Proportion, after: Proportion, z: float = Z95) -> DifferenceInterval | None:
    """Return the 95 % interval of after.rate − before.rate; None when either has no trials.

    Newcombe (1998), method 10: the Wilson intervals of each rate combined. Unlike the Wald interval it stays
    inside [-1, 1] and keeps its coverage when a rate is near 0 or 1 — an escalation rate of 2 % over a few
    hundred turns is the usual case here.
    """
    if not before.trials or not after.trials:
        return None
    p1, p2 = after.events / after.trials, before.events / before.trials
    l1, u1 = wilson(after, z)
    l2, u2 = wilson(before, z)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return DifferenceInterval(difference=d, low=max(-1.0, low), high=min(1.0, high))
