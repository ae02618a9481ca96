"""Run a golden set through the hybrid search and report recall@k, MRR and must-pass failures."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evals import services
from evals.golden import GoldenFileError, metrics_case, read_golden
from evals.metrics import case_outcome, retrieval_report
from evals.models import GoldenSet
from kb.search import search


class Command(BaseCommand):
    help = "Evaluate retrieval on a golden JSONL file: recall@k, MRR (documents counted once), must-pass."

    def add_arguments(self, parser):
        parser.add_argument("--golden", type=Path, default=Path("evals/fixtures/golden.jsonl"),
                            help="A JSONL file, or the name of a golden set when no such file exists.")
        parser.add_argument("--k", type=int, default=5)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, golden, k, json=False, **options):
        golden_version = None
        if not golden.exists() and GoldenSet.objects.filter(name=str(golden)).exists():
            version = services.golden_version(name=str(golden))
            golden_version = version.number
            cases = [metrics_case(row) for row in version.snapshot]
        else:
            try:
                cases = read_golden(golden)
            except GoldenFileError as exc:
                raise CommandError(str(exc)) from exc
        outcomes = []
        # Account cases with no hit documents are answered from billing: retrieval has nothing to score there.
        cases = [case for case in cases if case.hits]
        for case in cases:
            result = search(case.query, k=k)
            outcomes.append(case_outcome(case, [hit.doc for hit in result.results]))
        report = retrieval_report(outcomes, k=k)
        payload = {
            "golden": str(golden),
            "golden_version": golden_version,
            "cases": report.cases,
            "k": k,
            f"recall@{k}": round(report.recall_at_k, 4),
            "mrr": round(report.mrr, 4),
            "must_pass_failures": report.must_pass_failures,
            "hard_negative_wins": report.hard_negative_wins,
            "per_case": [
                {
                    "id": o.case_id,
                    "first_hit_rank": o.first_hit_rank,
                    "hard_negative_above": o.hard_negative_above,
                    "must_pass": o.must_pass,
                    "docs": o.ranked_docs,
                }
                for o in outcomes
            ],
        }
        if json:
            self.stdout.write(_dumps(payload))
            return
        for o in outcomes:
            if o.first_hit_rank != 1:
                flag = "MUST-PASS FAIL" if o.must_pass_failed else "miss" if o.first_hit_rank is None else "late"
                self.stdout.write(f"{o.case_id}: {flag} (first hit rank {o.first_hit_rank}; got {o.ranked_docs})")
        if golden_version is not None:
            self.stdout.write(f"golden set {golden} v{golden_version}")
        self.stdout.write(
            f"{report.cases} cases · recall@{k} {report.recall_at_k:.3f} · MRR {report.mrr:.3f} · "
            f"must-pass failures {len(report.must_pass_failures)} · hard negatives above a hit "
            f"{len(report.hard_negative_wins)}"
        )


def _dumps(payload) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2)
