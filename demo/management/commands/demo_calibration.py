"""Give the judge-calibration page real figures on first open: the committed human labels, judged, and a run
corrected with them.

`make demo` runs this after demo_conversations. It imports the human labels CI calibrates the judge with
(evals/fixtures/judge_labels.jsonl: answers of the sample golden set through the answer path, and deliberately
wrong variants of them, each labelled by hand) into golden set "sample" (imported from the sample file if new;
not run), has the judge in use judge them, then runs golden set "demo-calibration" (a few cases of the sample
file: document questions, a courtesy line and a bill that went up when a promotion ended) twice through the
whole answer path. Each run's pass rate is corrected with the judge's TPR/TNR on the labels' test split, and
the second run is gated against the first.

Idempotent: a second run finds the labels and the set's runs and changes nothing.
"""

from django.core.management.base import BaseCommand

from demo.management.commands.demo_conversations import GOLDEN_FILE
from evals.gates_for_set import run_gate
from evals.golden import read_golden_rows
from evals.human_labels import human_labels_import, judge_labelled
from evals.judge import LABELS_FILE, get_judge
from evals.models import EvalRun, GoldenSet
from evals.runner import eval_run
from evals.services import golden_import, golden_import_rows

CALIBRATION_SET = "demo-calibration"
LABELLED_SET = "sample"
LABELS_NAME = "evals/fixtures/judge_labels.jsonl"
# Four document questions, the Sunday-hours question (answered with a courtesy line) and a bill that went up when
# a promotion ended (answered on its as_of date from the billing findings).
CALIBRATION_CASES = ["g001", "g026", "g027", "g029", "g043", "g060"]
MAX_ITEMS = 1000


class Command(BaseCommand):
    help = ("Seed judge calibration for the demo: the committed human labels, judged by the judge in use, and two "
            "runs of a small set corrected with them, the second gated (idempotent).")

    def handle(self, *args, **options):
        outcome = demo_calibration_seed()
        if outcome is None:
            self.stdout.write("The demo calibration is already there; nothing to do.")
            return
        labels, run = outcome
        corrected = (run.metrics or {}).get("corrected_pass_rate") or {}
        shown = (f"corrected pass rate {corrected['value']:.3f} [{corrected['lower']:.3f}, {corrected['upper']:.3f}]"
                 if corrected.get("value") is not None and corrected.get("lower") is not None
                 else f"corrected pass rate undefined: {corrected.get('error', 'not judged')}")
        self.stdout.write(f"Human labels: {labels.summary}; run {run.pk} of {run.golden_set.name}: {shown} "
                          f"(see /traces/calibration/).")


def calibration_set() -> GoldenSet:
    """Return golden set "demo-calibration", imported from the sample golden file's CALIBRATION_CASES if new."""
    golden_set = GoldenSet.objects.filter(name=CALIBRATION_SET).first()
    if golden_set is not None:
        return golden_set
    rows = {row["id"]: row for row in read_golden_rows(GOLDEN_FILE)}
    golden_import_rows(name=CALIBRATION_SET, rows=[rows[case_id] for case_id in CALIBRATION_CASES],
                       note=f"import {CALIBRATION_SET}.jsonl")
    return GoldenSet.objects.get(name=CALIBRATION_SET)


def labelled_set() -> GoldenSet:
    """Return golden set "sample" (the labels' cases), imported from the sample golden file if new."""
    golden_set = GoldenSet.objects.filter(name=LABELLED_SET).first()
    if golden_set is None:
        golden_set = golden_import(name=LABELLED_SET, path=GOLDEN_FILE).golden_set
    return golden_set


def demo_calibration_seed(*, judge=None):
    """Import and judge the committed labels, run the calibration set twice (the second gated); return (the
    labels import, the last run), or None when the labels and the set's runs are already there."""
    golden_set = calibration_set()
    imported = EvalRun.objects.filter(labels_file=LABELS_NAME).exists()
    if imported and golden_set.runs.filter(status=EvalRun.Status.DONE).count() >= 2:
        return None
    judge = judge or get_judge()
    labels = human_labels_import(path=LABELS_FILE, golden_set=labelled_set(), shown=LABELS_NAME)
    judge_labelled(judge=judge, limit=MAX_ITEMS)
    eval_run(golden_set=golden_set, judge=judge)
    run = eval_run(golden_set=golden_set, judge=judge)
    run_gate(run=run)
    return labels, run
