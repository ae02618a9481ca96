"""Reads of the test split, recorded per judge version (seed 004's hygiene: the test split is read once per version).

A judge is tuned against the dev split; its test-split TPR/TNR is the figure to report, and it is only honest
when nobody looked at it while tuning. Every computation of a judge version's accuracy on the test split — the
calibration page showing it, a run correcting its pass rate — is recorded here with what it found. The first
read of a version is its final figure; every later read says so (`SplitRead.final` is False), and the page marks
it "not final" beside the first read's figures.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from evals.models import EvalRun, JudgeTestRead


@dataclass(frozen=True)
class SplitRead:
    """One recorded read of the test split, and the version's first read (itself when this is the first)."""


    row: JudgeTestRead
    first: JudgeTestRead
    reads: int  # reads of this version so far, this one included

    @property
    def final(self) -> bool:
        return self.row.pk == self.first.pk


def judge_test_read_record(*, judge_version: str, triples: list[tuple[str, str, str]], purpose: str,
                           run: EvalRun | None = None, reader=None) -> SplitRead:
    """Record one read of the test split for `judge_version`: `triples` are (item key, human label, judge
    verdict) for every labelled test item the version judged pass or fail."""
    ordered = sorted(triples)
    digest = hashlib.sha256(json.dumps(ordered).encode("utf-8")).hexdigest()
    humans_pass = [judge for _, human, judge in ordered if human == "pass"]
    humans_fail = [judge for _, human, judge in ordered if human == "fail"]
    row = JudgeTestRead.objects.create(
        judge_version=judge_version, purpose=purpose[:200], run=run,
        reader=reader if getattr(reader, "pk", None) else None, pairs=len(ordered),
        human_passes=len(humans_pass), human_fails=len(humans_fail),
        true_passes=humans_pass.count("pass"), true_fails=humans_fail.count("fail"), digest=digest)
    reads = JudgeTestRead.objects.filter(judge_version=judge_version)
    return SplitRead(row=row, first=reads.order_by("created_at", "pk").first(), reads=reads.count())


def judge_test_reads(judge_version: str) -> list[JudgeTestRead]:
    """Return every recorded read of the test split for a judge version, first first."""
    return list(JudgeTestRead.objects.filter(judge_version=judge_version).select_related("run", "reader"))
