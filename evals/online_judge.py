"""The judge on live traffic: a sample of each day's answered turns, judged once per judge version.

The beat task `evals.judge_live` calls `judge_live_day` every hour for yesterday and today (the clock's days,
core/clock.py): the turns in the day's sample (evals/live_sample.py, JUDGE_LIVE_RATE) that this judge version
has not judged are judged, up to JUDGE_LIVE_DAILY_CAP a day. A rerun judges nothing twice. The dashboard shows
the days' judged count, the share the judge flagged and, when the judge version is calibrated on the human
labels' test split, the judge-corrected rate with its interval (evals/human_labels.labels_corrected_rate).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.utils import timezone

from evals import live_sample
from evals.human_labels import (
    evidence_items,
    judge_verdict_record,
    labels_corrected_rate,
    verified_figures,
)
from evals.judgement import JudgeError
from evals.models import JudgeVerdict
from traces.models import Trace

CORRECTION_SEED = 2026
FLAGGED_LISTED = 30


def day_bounds(day: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """Return the local midnight that starts `day` and the one that ends it (TIME_ZONE)."""
    start = timezone.make_aware(dt.datetime.combine(day, dt.time.min))
    return start, timezone.make_aware(dt.datetime.combine(day + dt.timedelta(days=1), dt.time.min))


@dataclass
class LiveJudgeReport:
    day: dt.date
    judge_version: str
    answered: int = 0  # answered turns of the day
    in_sample: int = 0
    judged_now: int = 0
    already: int = 0  # sampled turns this version had judged before
    errors: int = 0
    capped: bool = False
    judged_ids: list[int] = field(default_factory=list)


def judge_live_day(*, day: dt.date, judge, rate: float | None = None, cap: int | None = None) -> LiveJudgeReport:
    """Judge the day's sample of answered turns that `judge`'s version has not judged yet; return what it did.

    A turn in the sample that this version judged already (a human-labelled trace judged for calibration) joins
    the day's sample without a second call. Each verdict is stored as soon as it is known, so an interrupted
    run keeps what it judged and the next run goes on from there.
    """
    rate = settings.JUDGE_LIVE_RATE if rate is None else rate
    cap = settings.JUDGE_LIVE_DAILY_CAP if cap is None else cap
    start, end = day_bounds(day)
    answered = (Trace.objects.filter(created_at__gte=start, created_at__lt=end, outcome=Trace.Outcome.ANSWERED)
                .exclude(final_text=""))
    ids = list(answered.values_list("pk", flat=True))
    report = LiveJudgeReport(day=day, judge_version=judge.version, answered=len(ids))
    sampled = [tid for tid in ids if live_sample.in_sample(tid, rate)]
    report.in_sample = len(sampled)
    verdicts = JudgeVerdict.objects.filter(judge_version=judge.version, trace_id__in=sampled)
    # Judged before, not as part of a day's sample: count it in this day's sample now (no second call).
    verdicts.filter(sampled_on__isnull=True).update(sampled_on=day)
    judged = set(verdicts.values_list("trace_id", flat=True))
    report.already = len(judged)
    todo = live_sample.choose([tid for tid in sampled if tid not in judged], rate=rate, cap=cap,
                              already=len(judged))
    report.capped = len(todo) < len(sampled) - len(judged)
    for trace in Trace.objects.filter(pk__in=todo).only("pk", "query", "final_text", "evidence", "attempts"):
        try:
            judgement = judge.judge(question=trace.query, answer=trace.final_text,
                                    evidence=evidence_items(trace.evidence), verified=verified_figures(trace.attempts))
        except JudgeError as exc:
            judge_verdict_record(trace=trace, error=exc, judge=judge, sampled_on=day)
            report.errors += 1
        else:
            judge_verdict_record(trace=trace, judgement=judgement, judge=judge, sampled_on=day)
        report.judged_now += 1
        report.judged_ids.append(trace.pk)
    return report


@dataclass(frozen=True)
class LiveDay:
    day: dt.date
    judged: int
    flagged: int
    errors: int

    @property
    def flagged_rate(self) -> float | None:
        return self.flagged / self.judged if self.judged else None


@dataclass(frozen=True)
class LiveJudgeSummary:
    judge_version: str
    days: list[LiveDay]
    judged: int
    flagged: int
    errors: int
    cost: float
    corrected: dict  # labels_corrected_rate's report on the range's verdicts (pass rate); "error" when not calibrated
    flagged_traces: list[int]  # the ids of the turns the judge failed, newest first (at most FLAGGED_LISTED)

    @property
    def flagged_rate(self) -> float | None:
        return self.flagged / self.judged if self.judged else None

    @property
    def corrected_flagged(self) -> dict | None:
        """Return the judge-corrected flagged rate (1 − the corrected pass rate) with its interval, or None."""
        if self.corrected.get("error") or self.corrected.get("value") is None:
            return None
        lower, upper = self.corrected.get("lower"), self.corrected.get("upper")
        return {"value": round(1 - self.corrected["value"], 4),
                "lower": round(1 - upper, 4) if upper is not None else None,
                "upper": round(1 - lower, 4) if lower is not None else None,
                "tpr": self.corrected.get("tpr"), "tnr": self.corrected.get("tnr")}


def live_judge_summary(*, first_day: dt.date, last_day: dt.date, judge_version: str,
                       resamples: int = 2000) -> LiveJudgeSummary:
    """Return the live sample's verdicts of one judge version from `first_day` to `last_day` (both included)."""
    rows = list(JudgeVerdict.objects.filter(judge_version=judge_version, sampled_on__gte=first_day,
                                            sampled_on__lte=last_day, trace__isnull=False)
                .values_list("sampled_on", "label", "cost", "trace_id"))
    per_day: dict[dt.date, list[str]] = {}
    for day, label, _cost, _trace in rows:
        per_day.setdefault(day, []).append(label)
    days = [LiveDay(day=day, judged=sum(1 for lb in labels if lb in ("pass", "fail")),
                    flagged=labels.count("fail"), errors=labels.count("error"))
            for day, labels in sorted(per_day.items())]
    labels = [label for _, label, _, _ in rows]
    flagged_traces = sorted((trace for _, label, _, trace in rows if label == "fail"), reverse=True)
    corrected = (labels_corrected_rate(labels=labels, judge_version=judge_version, seed=CORRECTION_SEED,
                                       resamples=resamples, where="in the live sample")
                 if labels else {"error": "nothing judged in this range"})
    return LiveJudgeSummary(judge_version=judge_version, days=days, judged=sum(d.judged for d in days),
                            flagged=sum(d.flagged for d in days), errors=sum(d.errors for d in days),
                            cost=round(sum(cost or 0 for _, _, cost, _ in rows), 6), corrected=corrected,
                            flagged_traces=flagged_traces[:FLAGGED_LISTED])


def trace_verdicts(trace: Trace) -> list[JudgeVerdict]:
    """Return the judge's verdicts on one trace, newest first (one per judge version)."""
    return list(JudgeVerdict.objects.filter(trace=trace).order_by("-created_at", "-pk"))
