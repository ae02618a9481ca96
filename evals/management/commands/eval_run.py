"""Run a golden set through retrieval and (unless --retrieval-only) the real answer path; record the run."""

import json

from django.core.management.base import BaseCommand, CommandError

from evals.models import GoldenSet
from evals.runner import EvalRunError, eval_run, run_cases_json, run_json, run_summary
from evals.services import GoldenSetError


class Command(BaseCommand):
    help = ("Run every counted case of golden set NAME (its current version) and record an eval run: "
            "per-case failures, recall@k, MRR, must-pass failures and, when judged, the judge's labels.")

    def add_arguments(self, parser):
        parser.add_argument("--golden", required=True, metavar="NAME", help="the golden set's name")
        parser.add_argument("--retrieval-only", action="store_true", help="score retrieval only; no writer")
        parser.add_argument("--k", type=int, default=5)
        parser.add_argument("--no-judge", action="store_true", help="do not judge the answers")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, golden, retrieval_only=False, k=5, no_judge=False, json=False, **options):
        if k < 1:
            raise CommandError("--k must be a positive integer")
        golden_set = golden_set_for_run(golden)
        try:
            run = eval_run(golden_set=golden_set, retrieval_only=retrieval_only, k=k, use_judge=not no_judge)
        except (EvalRunError, GoldenSetError) as exc:
            raise CommandError(str(exc)) from exc
        if json:
            self.stdout.write(_dumps(run_json(run)))
            return
        cases = run_cases_json(run)
        for case in cases:
            if case["failures"]:
                flag = "MUST-PASS FAIL" if case["must_pass"] else "fail"
                self.stdout.write(f"{case['id']}: {flag}: {'; '.join(case['failures'])}")
        self.stdout.write(run_summary(run))


def golden_set_for_run(name: str) -> GoldenSet:
    """Return the named set when it has cases; a CommandError that lists the known names otherwise."""
    golden_set = GoldenSet.objects.filter(name=name).first()
    if golden_set is None:
        known = ", ".join(GoldenSet.objects.order_by("name").values_list("name", flat=True)) or "none yet"
        raise CommandError(f"no golden set named {name!r}; known sets: {known} "
                           f"(import one with `manage.py golden_import NAME FILE`)")
    if not golden_set.cases.exists() or not golden_set.current_version:
        raise CommandError(f"golden set {name!r} has no cases; add some before running it")
    if not golden_set.cases.exclude(synthetic=True, reviewed=False).exists():
        raise CommandError(f"golden set {name!r} has only unreviewed synthetic cases; review some first")
    return golden_set


def _dumps(payload) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2)
