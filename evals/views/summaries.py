"""What the run pages show of a run: its numbers, and its corrected pass rate with the interval or why none."""

from __future__ import annotations

from dataclasses import dataclass

from evals.models import EvalRun


def as_number(value) -> float | None:
    """Return a reported number as a float, None for anything else (a bool is not a number)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def as_count(value) -> int | None:
    """Return a reported count: the length of a list of ids, or the number itself."""
    if isinstance(value, (list, tuple)):
        return len(value)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass
class CorrectedRate:
    """A run's corrected pass rate as the pages show it: a value with its interval, or why it is undefined."""

    value: float | None = None
    lower: float | None = None
    upper: float | None = None
    observed: float | None = None
    seed: int | None = None
    judge_version: str = ""
    clipped: bool = False
    undefined: str = ""  # the reason when there is no number
    raw: dict | None = None

    @classmethod
    def from_metrics(cls, metrics: dict) -> CorrectedRate | None:
        corrected = metrics.get("corrected_pass_rate")
        if not isinstance(corrected, dict):
            return None
        observed = as_number(corrected.get("observed"))
        if corrected.get("error") or as_number(corrected.get("value")) is None:
            return cls(undefined=str(corrected.get("error") or "no value"), observed=observed, raw=corrected,
                       judge_version=str(corrected.get("judge_version") or ""))
        return cls(value=as_number(corrected.get("value")), lower=as_number(corrected.get("lower")),
                   upper=as_number(corrected.get("upper")), observed=observed, seed=corrected.get("seed"),
                   judge_version=str(corrected.get("judge_version") or ""), clipped=bool(corrected.get("clipped")),
                   raw=corrected)


@dataclass
class RunSummary:
    """The numbers of one run that the tables and plots show (metrics may be missing on running/failed runs)."""

    run: EvalRun
    recall: float | None
    mrr: float | None
    corrected: CorrectedRate | None
    must_pass_failures: int | None
    hard_negative_wins: int | None
    judge: dict

    @classmethod
    def of(cls, run: EvalRun) -> RunSummary:
        metrics = run.metrics or {}
        return cls(run=run, recall=as_number(metrics.get(f"recall@{run.k}")), mrr=as_number(metrics.get("mrr")),
                   corrected=CorrectedRate.from_metrics(metrics),
                   must_pass_failures=as_count(metrics.get("must_pass_failures")),
                   hard_negative_wins=as_count(metrics.get("hard_negative_wins")),
                   judge=metrics.get("judge") if isinstance(metrics.get("judge"), dict) else {})

    @property
    def recall_name(self) -> str:
        return f"recall@{self.run.k}"

