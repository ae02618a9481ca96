"""Which of a day's answered turns the judge reads: a share chosen by a hash of the trace id. Pure: no Django.

The hash decides, not a random draw, so a rerun of the day (the beat task runs every hour, and again the next
day) picks the same turns and judges none twice; a cap keeps a busy day's cost bounded, taking the turns in hash
order, which is as uniform as the draw itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

SALT = "live-judge"  # another use of the same ids (the label split) must not pick the same turns


def sample_key(trace_id: int) -> float:
    """Return the trace's place in [0, 1) for sampling, the same in every process and on every run."""
    digest = hashlib.sha256(f"{SALT}:{trace_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def in_sample(trace_id: int, rate: float) -> bool:
    """Return whether the trace is in a sample of this rate (a trace in the 10 % sample is in the 20 % one)."""
    return sample_key(trace_id) < rate


def choose(trace_ids: Iterable[int], *, rate: float, cap: int, already: int = 0) -> list[int]:
    """Return the ids to judge, in hash order: those in the sample, at most `cap` minus the `already` judged."""
    chosen = sorted((tid for tid in trace_ids if in_sample(tid, rate)), key=sample_key)
    return chosen[:max(0, cap - already)]
