"""Judge calibration: TPR/TNR against human labels, the corrected pass rate and its bootstrap interval.

Pure: no Django. A judge is a measuring instrument with error rates. Measured against human labels
on the same items, its true-positive rate (it passes what a human passes) and true-negative rate
(it fails what a human fails) turn its observed pass rate p_obs on unlabeled items into an estimate
of the rate a human would give (Rogan–Gladen):

    θ̂ = (p_obs + TNR − 1) / (TPR + TNR − 1), clipped to [0, 1].

The denominator is Youden's J. When J ≤ MIN_YOUDEN the judge is no better than chance (or inverted)
and the correction would divide by almost nothing: refused with `JudgeNoBetterThanChance`.

The interval is a percentile bootstrap that resamples BOTH sources of error: the calibration pairs
(within each human class, so TPR and TNR stay defined in every resample) and the judged verdicts.
The seed is explicit (`random.Random(seed)`), so the same inputs and seed give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

MIN_YOUDEN = 0.05  # TPR + TNR − 1 at or below this: the judge tells pass from fail no better than chance
# J is a sum of two count ratios, so a J that is exactly 0.05 on paper can come out as 0.050000000000000044
# (TPR 12/20, TNR 9/20). Ratios of label counts in the thousands differ by at least 1e-8, so this margin only
# absorbs rounding and never refuses a judge that is really above the line.
YOUDEN_TOLERANCE = 1e-9
SMALL_CLASS = 20  # fewer human-labelled items than this in a class: TPR or TNR is a rough guess
MAX_DEGENERATE_SHARE = 0.05  # more resamples than this below MIN_YOUDEN: the interval cannot be trusted


class CalibrationError(ValueError):
    """The labels cannot support a corrected pass rate; the message says why."""


class JudgeNoBetterThanChance(CalibrationError):
    """TPR + TNR − 1 ≤ MIN_YOUDEN: the judge does not separate pass from fail."""


@dataclass(frozen=True)
class LabelPair:
    """One calibration item: the judge's verdict and a human's on the same answer (True = pass)."""

    judge_pass: bool
    human_pass: bool

    @classmethod
    def from_verdicts(cls, judge: str, human: str) -> LabelPair:
        """Build a pair from "pass"/"fail" verdict strings."""
        return cls(judge_pass=_verdict(judge), human_pass=_verdict(human))


@dataclass(frozen=True)
class JudgeAccuracy:
    tpr: float
    tnr: float
    true_passes: int  # judge pass where the human passed
    human_passes: int
    true_fails: int  # judge fail where the human failed
    human_fails: int
    warnings: list[str] = field(default_factory=list)

    @property
    def youden(self) -> float:
        return self.tpr + self.tnr - 1


@dataclass(frozen=True)
class Interval:
    lower: float
    upper: float
    confidence: float
    resamples: int
    seed: int
    degenerate_resamples: int  # resamples where the judge looked no better than chance (left out)


@dataclass(frozen=True)
class CorrectedPassRate:
    observed: float  # p_obs: the judge's pass rate on the judged items
    corrected: float  # θ̂, clipped to [0, 1]
    judged: int  # number of judged (unlabeled) verdicts behind p_obs
    accuracy: JudgeAccuracy
    interval: Interval | None = None
    clipped: bool = False

    def as_report(self) -> dict:
        """Return the JSON object the gate reads under the key `corrected_pass_rate`."""
        report = {
            "value": round(self.corrected, 4),
            "observed_pass_rate": round(self.observed, 4),
            "judged": self.judged,
            "clipped": self.clipped,
            "tpr": round(self.accuracy.tpr, 4),
            "tnr": round(self.accuracy.tnr, 4),
            "true_passes": self.accuracy.true_passes,
            "human_passes": self.accuracy.human_passes,
            "true_fails": self.accuracy.true_fails,
            "human_fails": self.accuracy.human_fails,
            "warnings": list(self.accuracy.warnings),
        }
        if self.interval:
            report.update(lower=round(self.interval.lower, 4), upper=round(self.interval.upper, 4),
                          confidence=self.interval.confidence, resamples=self.interval.resamples,
                          seed=self.interval.seed, degenerate_resamples=self.interval.degenerate_resamples)
        return report


def judge_accuracy(pairs: Sequence[LabelPair]) -> JudgeAccuracy:
    """Return the judge's TPR and TNR against the human labels, with counts and small-class warnings."""
    human_passes = [p for p in pairs if p.human_pass]
    human_fails = [p for p in pairs if not p.human_pass]
    if not human_passes or not human_fails:
        missing = "pass" if not human_passes else "fail"
        raise CalibrationError(
            f"no human-labelled {missing} among {len(pairs)} calibration items: "
            f"{'TPR' if missing == 'pass' else 'TNR'} is undefined; label some {missing}ing answers"
        )
    true_passes = sum(1 for p in human_passes if p.judge_pass)
    true_fails = sum(1 for p in human_fails if not p.judge_pass)
    warnings = [
        f"only {count} human-labelled {name} items (< {SMALL_CLASS}): {rate} is a rough estimate"
        for name, count, rate in (("pass", len(human_passes), "TPR"), ("fail", len(human_fails), "TNR"))
        if count < SMALL_CLASS
    ]
    return JudgeAccuracy(
        tpr=true_passes / len(human_passes), tnr=true_fails / len(human_fails),
        true_passes=true_passes, human_passes=len(human_passes),
        true_fails=true_fails, human_fails=len(human_fails), warnings=warnings,
    )


def no_better_than_chance(youden: float) -> bool:
    """Return whether Youden's J is at or below MIN_YOUDEN, floating-point rounding included."""
    return youden <= MIN_YOUDEN + YOUDEN_TOLERANCE


def corrected_rate(observed: float, tpr: float, tnr: float) -> tuple[float, bool]:
    """Return θ̂ clipped to [0, 1] and whether it was clipped; refuse a judge no better than chance."""
    youden = tpr + tnr - 1
    if no_better_than_chance(youden):
        raise JudgeNoBetterThanChance(
            f"TPR {tpr:.3f} + TNR {tnr:.3f} − 1 = {youden:.3f} ≤ {MIN_YOUDEN}: the judge is no better than "
            f"chance at telling pass from fail, so its pass rate cannot be corrected"
        )
    raw = (observed + tnr - 1) / youden
    clipped = min(1.0, max(0.0, raw))
    return clipped, not math.isclose(clipped, raw)


def corrected_pass_rate(
    pairs: Sequence[LabelPair],
    verdicts: Sequence[bool],
    *,
    seed: int,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> CorrectedPassRate:
    """Return the judge's observed and corrected pass rate on `verdicts` with a bootstrap interval.

    `pairs` are the calibration items (judge and human verdict on the same answer); `verdicts` are
    the judge's verdicts (True = pass) on the items being measured. `resamples=0` skips the interval.
    """
    if not verdicts:
        raise CalibrationError("no judged verdicts: the observed pass rate is undefined")
    if not 0 < confidence < 1:
        raise CalibrationError(f"confidence must be between 0 and 1, got {confidence}")
    if resamples < 0:
        raise CalibrationError(f"resamples must be ≥ 0, got {resamples}")
    accuracy = judge_accuracy(pairs)
    observed = sum(1 for v in verdicts if v) / len(verdicts)
    corrected, clipped = corrected_rate(observed, accuracy.tpr, accuracy.tnr)
    interval = _bootstrap(pairs, verdicts, seed=seed, resamples=resamples, confidence=confidence) \
        if resamples else None
    return CorrectedPassRate(observed=observed, corrected=corrected, judged=len(verdicts), accuracy=accuracy,
                             interval=interval, clipped=clipped)


def _bootstrap(pairs, verdicts, *, seed: int, resamples: int, confidence: float) -> Interval:
    rng = random.Random(seed)
    # Judge verdicts within each human class: resampling by class keeps TPR and TNR defined.
    on_human_pass = [p.judge_pass for p in pairs if p.human_pass]
    on_human_fail = [p.judge_pass for p in pairs if not p.human_pass]
    judged = [bool(v) for v in verdicts]
    estimates, degenerate = [], 0
    for _ in range(resamples):
        tpr = sum(rng.choices(on_human_pass, k=len(on_human_pass))) / len(on_human_pass)
        tnr = 1 - sum(rng.choices(on_human_fail, k=len(on_human_fail))) / len(on_human_fail)
        observed = sum(rng.choices(judged, k=len(judged))) / len(judged)
        try:
            estimates.append(corrected_rate(observed, tpr, tnr)[0])
        except JudgeNoBetterThanChance:
            degenerate += 1
    if degenerate > MAX_DEGENERATE_SHARE * resamples:
        raise CalibrationError(
            f"{degenerate} of {resamples} bootstrap resamples show a judge no better than chance: "
            f"its accuracy is too uncertain for an interval; label more items"
        )
    estimates.sort()
    alpha = 1 - confidence
    return Interval(lower=_percentile(estimates, alpha / 2), upper=_percentile(estimates, 1 - alpha / 2),
                    confidence=confidence, resamples=resamples, seed=seed, degenerate_resamples=degenerate)


def _percentile(ordered: list[float], q: float) -> float:
    """Return the q-quantile of sorted values, interpolating linearly (numpy's default method)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _verdict(label: str) -> bool:
    normalized = str(label).strip().lower()
    if normalized not in ("pass", "fail"):
        raise CalibrationError(f"a verdict is 'pass' or 'fail', got {label!r}")
    return normalized == "pass"
