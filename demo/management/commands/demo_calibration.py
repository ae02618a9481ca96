"""Give the judge-calibration page something to show on first open: labelled answers the judge passes and fails.

`make demo` runs this after demo_conversations. It imports golden set "demo-calibration" (a few cases of
evals/fixtures/golden.jsonl: document questions, one answered with a courtesy line, and an account question
whose answer states figures the billing code derived — the offline judge's blind spot: it fails those two
although they are right),
runs it through the whole answer path (the template writer and the offline judge unless a model is
configured), and copies the run's answers into a calibration sample: each answer as it was, and beside it
the same answer with one figure changed (or, when it states none, with an invented amount added), which no
evidence supports. The demo analyst labels them as a careful person would: the answer as it was passes when
the verifier grounded it, the changed copy fails. Labels go to train / dev / test by the hash of the item,
so copies are added until dev and test each hold passes and fails. The judge then judges the labelled items,
and a second run of the set gets a corrected pass rate with its interval from the test split's TPR/TNR, and a
gate decision.

Idempotent: a second run finds the sample and changes nothing.
"""

import re

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from core import clock
from core.text import number_key
from demo.management.commands.demo_conversations import GOLDEN_FILE, demo_analyst
from evals.gates_for_set import run_gate
from evals.golden import read_golden_rows
from evals.human_labels import human_label_save, judge_labelled, split_for
from evals.judge import get_judge
from evals.models import EvalRun, EvalRunItem, GoldenSet
from evals.runner import eval_run
from evals.services import golden_import_rows

CALIBRATION_SET = "demo-calibration"
# Four document questions, the Sunday-hours question (answered with a courtesy line) and a bill that went up when
# a promotion ended — the billing code derives the difference, which no passage states: the offline judge fails
# those two although a person passes them.
CALIBRATION_CASES = ["g001", "g026", "g027", "g029", "g043", "g060"]

SAMPLE_NOTE = "Demo calibration sample: a run's answers and copies with one figure changed, labelled"
PER_CELL = 20  # labels wanted in each of dev/test × pass/fail (below 20 the page warns of a rough estimate)
MAX_ITEMS = 400
NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
INVENTED = "Además, el cargo por este trámite es de Bs. {amount}."


class Command(BaseCommand):
    help = ("Seed judge calibration for the demo: a calibration sample of the demo set's answers with human "
            "labels across train/dev/test, judged, and a run with a corrected pass rate (idempotent).")

    def handle(self, *args, **options):
        outcome = demo_calibration_seed()
        if outcome is None:
            self.stdout.write("The demo calibration sample is already there; nothing to do.")
            return
        sample, run, labelled = outcome
        corrected = (run.metrics or {}).get("corrected_pass_rate") or {}
        shown = (f"corrected pass rate {corrected['value']:.3f} [{corrected['lower']:.3f}, {corrected['upper']:.3f}]"
                 if corrected.get("value") is not None and corrected.get("lower") is not None
                 else f"corrected pass rate undefined: {corrected.get('error', 'not judged')}")
        self.stdout.write(f"Calibration sample run {sample.pk}: {labelled} labelled answers; run {run.pk} of "
                          f"{run.golden_set.name}: {shown} (see /traces/calibration/).")


def calibration_set() -> GoldenSet:
    """Return golden set "demo-calibration", imported from the sample golden file's CALIBRATION_CASES if new."""
    golden_set = GoldenSet.objects.filter(name=CALIBRATION_SET).first()
    if golden_set is not None:
        return golden_set
    rows = {row["id"]: row for row in read_golden_rows(GOLDEN_FILE)}
    golden_import_rows(name=CALIBRATION_SET, rows=[rows[case_id] for case_id in CALIBRATION_CASES],
                       note=f"import {CALIBRATION_SET}.jsonl")
    return GoldenSet.objects.get(name=CALIBRATION_SET)


def demo_calibration_seed(*, judge=None, per_cell: int = PER_CELL):
    """Seed the sample, its labels and verdicts and a judged, gated run; return (sample, run, labelled count),
    or None when the sample is already there."""
    if EvalRun.objects.filter(note=SAMPLE_NOTE).exists():
        return None
    golden_set = calibration_set()
    judge = judge or get_judge()
    # The sample's row comes first, so the set's "previous run" for the last run's gate is a real run.
    sample = EvalRun.objects.create(golden_set=golden_set, golden_version=golden_set.current_version,
                                    status=EvalRun.Status.RUNNING, note=SAMPLE_NOTE)
    source = eval_run(golden_set=golden_set, judge=judge)
    answers = [item for item in source.items.order_by("case_id") if item.outcome == "answered" and item.answer]
    if not answers:
        sample.delete()
        raise CommandError(f"run {source.pk} of {golden_set.name} answered no case: nothing to label")
    labelled = _sample(sample, source, answers, per_cell=per_cell)
    judge_labelled(judge=judge, limit=MAX_ITEMS)
    run = eval_run(golden_set=golden_set, judge=judge)
    run_gate(run=run)
    return sample, run, labelled


@transaction.atomic
def _sample(sample, source, answers, *, per_cell) -> int:
    """Fill the sample run with labelled copies of the source run's answers; return how many."""
    analyst = demo_analyst()
    cells = {(split, label): 0 for split in ("dev", "test") for label in ("pass", "fail")}
    made = 0
    while made < MAX_ITEMS and min(cells.values()) < per_cell:
        item = answers[(made // 2) % len(answers)]
        copy_number = made // (2 * len(answers)) + 1
        if made % 2 == 0:
            answer, label = item.answer, "pass" if item.grounded is not False else "fail"
            note = "faithful: every figure is in the evidence" if label == "pass" else "the verifier refused it"
            case_id = f"{item.case_id}~{copy_number}"
        else:
            answer, changed = changed_figure(item.answer, item.evidence)
            label, note, case_id = "fail", f"unfaithful: {changed}", f"{item.case_id}~{copy_number}-changed"
        copy = EvalRunItem.objects.create(
            run=sample, case_id=case_id[:64], query=item.query, outcome="answered", answer=answer,
            evidence=item.evidence, grounded=item.grounded if label == "pass" else False,
            failures=[] if label == "pass" else ["a figure no evidence supports"])
        saved = human_label_save(run_item=copy, label=label, note=note, author=analyst)
        split = split_for(saved.item_key)
        if split in ("dev", "test"):
            cells[(split, label)] += 1
        made += 1
    sample.golden_version, sample.k, sample.status, sample.finished_at = (
        source.golden_version, source.k, EvalRun.Status.DONE, clock.now())
    sample.prompt_version, sample.model = source.prompt_version, source.model
    sample.index_version, sample.embedding_model = source.index_version, source.embedding_model
    sample.metrics = {"cases": made, "calibration_sample_of_run": source.pk}
    sample.save()
    return made


def changed_figure(answer: str, evidence) -> tuple[str, str]:
    """Return the answer with its first figure changed to one the evidence does not state (or, without a
    figure, with an invented amount added), and what was changed."""
    known = set()
    for row in evidence or []:
        if isinstance(row, dict):
            for token in NUMBER_RE.findall(f"{row.get('text', '')} {row.get('value') or ''}"):
                known.add(number_key(token))
    match = NUMBER_RE.search(answer)
    if match is None:
        amount = next(a for a in ("987,65", "1.234,56", "4.321,09") if number_key(a) not in known)
        return f"{answer.rstrip()} {INVENTED.format(amount=amount)}", f"invented amount Bs. {amount} added"
    token = match.group()
    digits = [i for i, ch in enumerate(token) if ch.isdigit()]
    for bump in range(1, 10):
        first = digits[0]
        candidate = token[:first] + str((int(token[first]) + bump) % 10 or 9) + token[first + 1:]
        if number_key(candidate) not in known and number_key(candidate) != number_key(token):
            return (answer[:match.start()] + candidate + answer[match.end():],
                    f"{token} changed to {candidate}")
    candidate = token + "7"
    return answer[:match.start()] + candidate + answer[match.end():], f"{token} changed to {candidate}"
