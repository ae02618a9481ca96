"""Human labels and judge verdicts on answers, and the judge's calibration against those labels.

A labelled item (a trace or an eval run item) goes to train / dev / test by a hash of its key, 20/40/40,
stable forever: iterate on a judge against dev, measure it once per version on test, and correct a run's
pass rate with the test split's TPR/TNR (`evals/calibration.py` does the math).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from core import clock
from evals.calibration import CalibrationError, LabelPair, corrected_pass_rate, judge_accuracy
from evals.judgement import JudgeError, JudgeEvidence, Judgement
from evals.judge_test_reads import SplitRead, judge_test_read_record
from evals.label_file import LabelFileError, LabelRow, label_key, read_label_file, split_for
from evals.models import EvalRun, EvalRunItem, GoldenSet, HumanLabel, JudgeVerdict
from traces.models import Trace
from traces.review_queues import settled_faithfulness
from traces.scores import FAITHFUL

SPLITS = ("train", "dev", "test")


class LabelError(ValueError):
    """A label or verdict write that the rules refuse (shown to the analyst as is)."""


def item_key_for(*, trace: Trace | None = None, run_item: EvalRunItem | None = None) -> str:
    """Return 'trace:<id>' or 'item:<id>' for exactly one target ('label:<id>' for an answer of a labels file,
    whose split must not depend on the database it was imported into)."""
    if (trace is None) == (run_item is None):
        raise LabelError("Label exactly one thing: a trace or a run item.")
    if trace is not None:
        return f"trace:{trace.pk}"
    return label_key(run_item.case_id) if run_item.run.labels_file else f"item:{run_item.pk}"


@transaction.atomic
def human_label_save(*, trace: Trace | None = None, run_item: EvalRunItem | None = None, label: str,
                     note: str = "", author) -> HumanLabel:
    """Record a person's pass/fail on one answer, replacing that item's earlier label."""
    item_key = item_key_for(trace=trace, run_item=run_item)
    if label not in HumanLabel.Label.values:
        raise LabelError("Choose pass or fail.")
    human_label, _ = HumanLabel.objects.update_or_create(
        item_key=item_key,
        defaults={"trace": trace, "run_item": run_item, "label": label, "note": note.strip(),
                  "split": split_for(item_key), "author": author if getattr(author, "pk", None) else None})
    return human_label


@transaction.atomic
def judge_verdict_record(*, trace: Trace | None = None, run_item: EvalRunItem | None = None,
                         judgement: Judgement | None = None, error: Exception | str | None = None,
                         judge) -> JudgeVerdict:
    """Store the judge's verdict (or its error, never a pass) on one answer under the judge's version."""
    item_key = item_key_for(trace=trace, run_item=run_item)
    if (judgement is None) == (error is None):
        raise LabelError("Record a judgement or an error, not both or neither.")
    if judgement is not None:
        version, model, label, reason = judgement.judge_version, judgement.model, judgement.verdict, judgement.reason
    else:
        version, model, label, reason = judge.version, judge.model, EvalRunItem.JudgeLabel.ERROR, str(error)
    verdict, _ = JudgeVerdict.objects.update_or_create(
        item_key=item_key, judge_version=version,
        defaults={"trace": trace, "run_item": run_item, "model": model[:100], "label": label, "reason": reason})
    return verdict


def judge_labelled(*, judge, limit: int = 200) -> int:
    """Judge up to `limit` human-labelled items that have no verdict under this judge's version; return how many.

    Not atomic as a whole: each verdict is stored as soon as it is known, so a model call never holds a
    transaction open and an interrupted batch keeps what it judged. A judge error is recorded as "error".
    """
    judged = JudgeVerdict.objects.filter(judge_version=judge.version).values("item_key")
    pending = (HumanLabel.objects.exclude(item_key__in=judged).select_related("trace", "run_item")
               .order_by("pk")[:limit])
    count = 0
    for human_label in pending:
        target = {"trace": human_label.trace} if human_label.trace_id else {"run_item": human_label.run_item}
        source = human_label.trace or human_label.run_item
        answer = source.final_text if human_label.trace_id else (source.cited_answer or source.answer)
        verified = verified_figures(source.verdicts if human_label.run_item_id else source.attempts)
        try:
            judgement = judge.judge(question=source.query, answer=answer, evidence=evidence_items(source.evidence),
                                    verified=verified)
        except JudgeError as exc:
            judge_verdict_record(**target, error=exc, judge=judge)
        else:
            judge_verdict_record(**target, judgement=judgement, judge=judge)
        count += 1
    return count


def calibration_pairs(*, judge_version: str, split: str) -> tuple[list[LabelPair], dict]:
    """Return the (judge, human) pairs on a split for a judge version, with counts of what was left out."""
    triples, counts = _judged_labels(judge_version=judge_version, split=split)
    return [LabelPair.from_verdicts(judge, human) for _, human, judge in triples], counts


def _judged_labels(*, judge_version: str, split: str) -> tuple[list[tuple[str, str, str]], dict]:
    """Return (item key, human label, judge verdict) for the labelled items of a split the version judged pass
    or fail, in key order, with counts of what was left out."""
    if split not in (*SPLITS, "all"):
        raise LabelError(f"split is one of {', '.join(SPLITS)} or all, not {split!r}")
    labels = HumanLabel.objects.all() if split == "all" else HumanLabel.objects.filter(split=split)
    human = dict(labels.values_list("item_key", "label"))
    judge = dict(JudgeVerdict.objects.filter(judge_version=judge_version, item_key__in=list(human))
                 .values_list("item_key", "label"))
    triples = [(key, label, judge[key]) for key, label in sorted(human.items()) if judge.get(key) in ("pass", "fail")]
    errors = sum(1 for label in judge.values() if label == EvalRunItem.JudgeLabel.ERROR)
    return triples, {"labelled": len(human), "errors": errors, "unjudged": len(human) - len(judge)}


def calibration_report(*, judge_version: str, split: str = "dev", purpose: str = "calibration report",
                       reader=None) -> dict:
    """Return TPR/TNR of a judge version against human labels on a split, or an "error" saying why not.

    Keys: judge_version, split, labelled, pairs, errors (judge errors, left out), unjudged, tpr, tnr,
    true_passes, human_passes, true_fails, human_fails, warnings (a class under 20 items), and "error"
    when there are not enough labels (tpr/tnr are then None). A report on the test split is a read of it,
    recorded for the version (`purpose` and `reader` say why and who); "test_read" then says whether it is
    the version's first (final) read or a later one, with the first read's figures.
    """
    triples, counts = _judged_labels(judge_version=judge_version, split=split)
    pairs = [LabelPair.from_verdicts(judge, human) for _, human, judge in triples]
    report = {"judge_version": judge_version, "split": split, **counts, "pairs": len(pairs),
              "human_passes": sum(1 for p in pairs if p.human_pass),
              "human_fails": sum(1 for p in pairs if not p.human_pass),
              "true_passes": sum(1 for p in pairs if p.human_pass and p.judge_pass),
              "true_fails": sum(1 for p in pairs if not p.human_pass and not p.judge_pass),
              "tpr": None, "tnr": None, "warnings": []}
    if split == "test" and triples:
        read = judge_test_read_record(judge_version=judge_version, triples=triples, purpose=purpose, reader=reader)
        report["test_read"] = split_read_summary(read)
    try:
        accuracy = judge_accuracy(pairs)
    except CalibrationError as exc:
        report["error"] = f"not enough labels on {split} judged by {judge_version}: {exc}"
        return report
    report.update(tpr=round(accuracy.tpr, 4), tnr=round(accuracy.tnr, 4), warnings=list(accuracy.warnings))
    return report


def split_read_summary(read: SplitRead) -> dict:
    """Return a read of the test split as the pages and the gate show it: final or not, and the first read."""
    first = read.first
    return {"final": read.final, "reads": read.reads, "first_at": first.created_at.isoformat(timespec="seconds"),
            "first_purpose": first.purpose, "first_pairs": first.pairs,
            "first_tpr": round(first.tpr, 4) if first.tpr is not None else None,
            "first_tnr": round(first.tnr, 4) if first.tnr is not None else None,
            "same_as_first": read.row.digest == first.digest}


def run_corrected_rate(*, run: EvalRun, seed: int = 2026, resamples: int = 2000) -> dict:
    """Return the run's observed and corrected pass rate with its bootstrap interval, or {"error": why}.

    p_obs comes from the run's judge verdicts under run.judge_version (errors left out and counted); TPR/TNR
    from the test split's labels judged by that version. Same rows and seed → same interval.
    """
    judge_version = run.judge_version
    if not judge_version:
        return {"error": "the run was not judged", "observed": None, "judge_version": ""}
    labels = list(JudgeVerdict.objects.filter(run_item__run=run, judge_version=judge_version)
                  .values_list("label", flat=True))
    verdicts = [label == "pass" for label in labels if label in ("pass", "fail")]
    errors = len(labels) - len(verdicts)
    observed = round(sum(verdicts) / len(verdicts), 4) if verdicts else None
    pairs, _ = calibration_pairs(judge_version=judge_version, split="test")
    counts = {"judged": len(verdicts), "errors": errors, "judge_version": judge_version,
              "human_passes": sum(1 for p in pairs if p.human_pass),
              "human_fails": sum(1 for p in pairs if not p.human_pass)}
    if not verdicts:
        return {"error": f"no verdicts of {judge_version} in this run ({errors} judge errors)",
                "observed": None, **counts}
    try:
        result = corrected_pass_rate(pairs, verdicts, seed=seed, resamples=resamples)
    except CalibrationError as exc:
        return {"error": f"{judge_version} on the test split: {exc}", "observed": observed, **counts}
    interval = result.interval
    return {"value": round(result.corrected, 4),
            "lower": round(interval.lower, 4) if interval else None,
            "upper": round(interval.upper, 4) if interval else None,
            "observed": round(result.observed, 4),
            "tpr": round(result.accuracy.tpr, 4), "tnr": round(result.accuracy.tnr, 4),
            **counts, "seed": seed, "clipped": result.clipped,
            "resamples": resamples, "confidence": interval.confidence if interval else None,
            "warnings": list(result.accuracy.warnings)}


def evidence_items(rows) -> list[JudgeEvidence]:
    """Return stored evidence rows ({id, text, value, kind, fact_kind}) as the judge's evidence items."""
    items = []
    for row in rows or []:
        if isinstance(row, dict):
            value = row.get("value")
            items.append(JudgeEvidence(id=str(row.get("id", "")), text=str(row.get("text", "")),
                                       value=None if value in (None, "") else str(value),
                                       fact_kind=str(row.get("fact_kind") or "")))
    return items


def verified_figures(verdicts) -> list[str]:
    """Return the figures the grounding verifier accepted as derived from the evidence in the verdict that
    counted (the last one), from stored verdicts or a trace's attempts."""
    last = next((row.get("verdict", row) for row in reversed(verdicts or []) if isinstance(row, dict)
                 and isinstance(row.get("verdict", row), dict) and "derived" in row.get("verdict", row)), None)
    if not last or not last.get("grounded", True):
        return []
    return [str(derived["token"]) for derived in last.get("derived") or []
            if isinstance(derived, dict) and derived.get("token")]


def review_note_label(sender, *, note, **kwargs) -> None:
    """A review note's "was the model faithful to its context?" on an answer is the judge's question, so the
    review doubles as a calibration label (the latest person's answer wins, as on the trace page)."""
    trace = note.trace
    if note.model_faithful is None or not trace.final_text:
        return
    human_label_save(trace=trace, label="pass" if note.model_faithful else "fail",
                     note=note.first_failure or "from a review note", author=note.author)


@dataclass(frozen=True)
class SettledImport:
    """What importing the review queues' settled faithfulness labels did."""

    imported: int  # new or changed labels
    unchanged: int  # the same label was there already (a second import changes nothing)
    without_answer: int  # settled traces that sent no answer: nothing for the judge to read

    @property
    def summary(self) -> str:
        return (f"{self.imported} label{'s' if self.imported != 1 else ''} imported from settled review-queue items, "
                f"{self.unchanged} already there, {self.without_answer} without an answer to judge.")


SETTLED_NOTE = "settled in a review queue"


@transaction.atomic
def settled_labels_import() -> SettledImport:
    """Make every settled faithfulness score of a review queue a human label of its trace (pass = faithful).

    A settled label is two reviewers' disagreement decided by a third person, so it replaces a label from a
    single review of the same trace. Who settled it is the label's author.
    """
    imported = unchanged = without_answer = 0
    settled = settled_faithfulness(key=FAITHFUL)
    traces = Trace.objects.only("pk", "final_text").in_bulk([trace_id for trace_id, _, _ in settled])
    existing = {trace_id: (label, note) for trace_id, label, note in
                HumanLabel.objects.filter(trace_id__in=list(traces)).values_list("trace_id", "label", "note")}
    for trace_id, value, settled_by in settled:
        trace = traces.get(trace_id)
        if trace is None or not trace.final_text:
            without_answer += 1
            continue
        label = "pass" if value == "yes" else "fail"
        if existing.get(trace_id) == (label, SETTLED_NOTE):
            unchanged += 1
            continue
        human_label_save(trace=trace, label=label, note=SETTLED_NOTE, author=settled_by)
        imported += 1
    return SettledImport(imported=imported, unchanged=unchanged, without_answer=without_answer)


@dataclass(frozen=True)
class LabelsImport:
    """What importing a labels file did: the run that holds its answers, and how many labels per split."""

    run: EvalRun
    created: bool  # False: the same file was already imported; nothing changed
    per_split: dict[str, dict[str, int]]  # split → {"pass": n, "fail": n}

    @property
    def summary(self) -> str:
        counts = " · ".join(f"{split} {cells.get('pass', 0)} pass / {cells.get('fail', 0)} fail"
                            for split, cells in self.per_split.items())
        total = sum(sum(cells.values()) for cells in self.per_split.values())
        return f"{total} labels ({counts}){'' if self.created else ', already imported'}"


def human_labels_import(*, path: Path, golden_set: GoldenSet, shown: str | None = None) -> LabelsImport:
    """Import a labels file's answers and their human labels, all or nothing (LabelFileError naming the line).

    The answers go to one run of the set marked as the file's (`EvalRun.labels_file`), one item per labelled
    answer, each labelled under the key "label:<id>" so its split is the same in every database. The same file
    imported again changes nothing; a changed file replaces the earlier import of that file.
    """
    shown = shown or str(path)
    case_ids = set(golden_set.cases.values_list("case_id", flat=True))
    rows = read_label_file(Path(path), case_ids=case_ids, shown=shown)  # raises before anything is written
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    earlier = EvalRun.objects.filter(golden_set=golden_set, labels_file=shown).order_by("-pk").first()
    if earlier is not None and earlier.labels_digest == digest:
        return LabelsImport(run=earlier, created=False, per_split=_per_split(earlier))
    taken = (HumanLabel.objects.filter(item_key__in=[row.item_key for row in rows])
             .exclude(run_item__run=earlier).select_related("run_item__run__golden_set").first())
    if taken is not None:
        owner = taken.run_item.run if taken.run_item_id else None
        where = f"golden set {owner.golden_set.name!r} ({owner.labels_file})" if owner else "a trace"
        raise LabelFileError(f"{shown}: label {taken.item_key.removeprefix('label:')!r} is already imported for "
                             f"{where}; a label id is labelled once")
    return _labels_write(rows, golden_set=golden_set, shown=shown, digest=digest, earlier=earlier)


@transaction.atomic
def _labels_write(rows: list[LabelRow], *, golden_set: GoldenSet, shown: str, digest: str,
                  earlier: EvalRun | None) -> LabelsImport:
    if earlier is not None:
        earlier.delete()  # its items, labels and verdicts go with it
    now = clock.now()
    run = EvalRun.objects.create(golden_set=golden_set, golden_version=golden_set.current_version,
                                 status=EvalRun.Status.DONE, finished_at=now, labels_file=shown[:300],
                                 labels_digest=digest, note=f"Human labels of {shown}"[:200],
                                 metrics={"cases": len(rows), "labels_file": shown})
    items = EvalRunItem.objects.bulk_create([
        EvalRunItem(run=run, case_id=row.id, query=row.question, outcome="answered", answer=row.answer,
                    cited_answer=row.answer,
                    evidence=row.evidence, verdicts=[{"grounded": True, "derived": [{"token": figure}
                                                                                   for figure in row.verified]}],
                    failures=[] if row.label == "pass" else [f"labelled fail: {row.note or row.variant}"[:200]])
        for row in rows])
    HumanLabel.objects.bulk_create([
        HumanLabel(run_item=item, item_key=row.item_key, label=row.label, split=split_for(row.item_key),
                   note=(f"{row.variant}: {row.note}" if row.variant else row.note)[:2000])
        for row, item in zip(rows, items)])
    return LabelsImport(run=run, created=True, per_split=_per_split(run))


def _per_split(run: EvalRun) -> dict[str, dict[str, int]]:
    per_split: dict[str, dict[str, int]] = {split: {} for split in SPLITS}
    for split, label in HumanLabel.objects.filter(run_item__run=run).values_list("split", "label"):
        per_split[split][label] = per_split[split].get(label, 0) + 1
    return per_split
