"""Run a golden set through the hybrid search: recall@k, MRR and must-pass failures per split and per branch,
and the no-context decision's error rates on in-scope and out-of-scope questions."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evals import services
from evals.golden import GoldenFileError, metrics_case, read_golden, read_offtopic
from evals.metrics import BRANCHES, case_outcome, retrieval_report, split_reports
from evals.models import GoldenSet
from evals.retrieval import retrieve_cases


class Command(BaseCommand):
    help = ("Evaluate retrieval on a golden JSONL file: recall@k, MRR (documents counted once), must-pass — "
            "per split (dev/test) and per branch (vector, text, hybrid) — and the no-context error rates.")

    def add_arguments(self, parser):
        parser.add_argument("--golden", type=Path, default=Path("evals/fixtures/golden.jsonl"),
                            help="A JSONL file, or the name of a golden set when no such file exists.")
        parser.add_argument("--offtopic", type=Path, action="append", default=[],
                            help="A labelled off-topic JSONL file (id, text, language, split): more out-of-scope "
                                 "questions for the no-context rates. Repeatable.")
        parser.add_argument("--k", type=int, default=5)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, golden, offtopic, k, json=False, **options):
        golden_version = None
        try:
            if not golden.exists() and GoldenSet.objects.filter(name=str(golden)).exists():
                version = services.golden_version(name=str(golden))
                golden_version = version.number
                cases = [metrics_case(row) for row in version.snapshot]
            else:
                cases = read_golden(golden)
            for path in offtopic:
                cases += read_offtopic(path)
        except GoldenFileError as exc:
            raise CommandError(str(exc)) from exc
        # Account cases with no hit documents are answered from billing: retrieval has nothing to score there.
        cases = [case for case in cases if case.hits or case.out_of_scope]
        retrieved = retrieve_cases(cases, k=k)
        scored = [r for r in retrieved if not r.case.out_of_scope and r.case.hits]
        outcomes = [case_outcome(r.case, r.ranked["hybrid"]) for r in scored]
        report = retrieval_report(outcomes, k=k)
        splits = split_reports(cases, {r.case.id: r.ranked for r in retrieved},
                               {r.case.id: r.has_context for r in retrieved}, k=k)
        payload = {
            "golden": str(golden),
            "golden_version": golden_version,
            "cases": report.cases,
            "k": k,
            f"recall@{k}": round(report.recall_at_k, 4),
            "mrr": round(report.mrr, 4),
            "must_pass_failures": report.must_pass_failures,
            "hard_negative_wins": report.hard_negative_wins,
            "splits": {s.split: _split_json(s, k) for s in splits},
            "per_case": [
                {
                    "id": o.case_id,
                    "split": r.case.split,
                    "first_hit_rank": o.first_hit_rank,
                    "hard_negative_above": o.hard_negative_above,
                    "must_pass": o.must_pass,
                    "docs": o.ranked_docs,
                    "has_context": r.has_context,
                }
                for r, o in zip(scored, outcomes)
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
        self.stdout.write(_table(splits, k))


def _split_json(report, k: int) -> dict:
    nc = report.no_context
    return {
        "branches": {
            branch: {"cases": r.cases, f"recall@{k}": round(r.recall_at_k, 4), "mrr": round(r.mrr, 4),
                     "must_pass_failures": r.must_pass_failures}
            for branch, r in report.branches.items()
        },
        "no_context": {
            "in_scope": nc.in_scope, "false_no_context": nc.false_no_context,
            "false_no_context_rate": _rounded(nc.false_no_context_rate),
            "out_of_scope": nc.out_of_scope, "false_context": nc.false_context,
            "false_answer_rate": _rounded(nc.false_answer_rate),
        },
    }


def _table(splits, k: int) -> str:
    """Return the branches of each split side by side, then the no-context error rates per split."""
    head = f"{'branch':<8}" + "".join(f" │ {s.split + ' (' + str(s.branches['hybrid'].cases) + ')':<11}"
                                      f"{'recall@' + str(k):>9} {'MRR':>6} {'must-pass':>9}" for s in splits)
    lines = [head]
    for branch in BRANCHES:
        lines.append(f"{branch:<8}" + "".join(
            f" │ {'':<11}{s.branches[branch].recall_at_k:>9.3f} {s.branches[branch].mrr:>6.3f} "
            f"{len(s.branches[branch].must_pass_failures):>9}" for s in splits))
    for s in splits:
        nc = s.no_context
        lines.append(f"no context ({s.split}): false NO_CONTEXT on in-scope {len(nc.false_no_context)}/{nc.in_scope}"
                     f" ({_percent(nc.false_no_context_rate)}) · false answers on out-of-scope "
                     f"{len(nc.false_context)}/{nc.out_of_scope} ({_percent(nc.false_answer_rate)})")
    return "\n".join(lines)


def _rounded(value):
    return None if value is None else round(value, 4)


def _percent(value) -> str:
    return "—" if value is None else f"{value:.1%}"


def _dumps(payload) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2)
