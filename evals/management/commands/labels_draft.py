"""Write a labelling sheet: a golden set's answers through the real answer path, for a person to label."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evals.human_labels import verified_figures
from evals.label_variants import variants_of
from evals.management.commands.eval_run import golden_set_for_run
from evals.models import EvalRun
from evals.runner import EvalRunError, eval_run
from evals.services import GoldenSetError

EVIDENCE_KEYS = ("id", "kind", "doc", "text", "value", "fact_kind", "derivation")


class Command(BaseCommand):
    help = ("Run golden set NAME through the whole answer path (no judge) and write its answered cases as an "
            "unlabelled labels file (JSONL, the format of evals/fixtures/judge_labels.jsonl): the answer as the "
            "judge reads it, with its evidence and the figures the verifier derived. With --variants, each answer "
            "is followed by one deliberately wrong copy (marked origin \"variant\", with what was changed). Every "
            "line has \"label\": null: a person reads each answer against its evidence and writes pass or fail.")

    def add_arguments(self, parser):
        parser.add_argument("--golden", required=True, metavar="NAME", help="the golden set's name")
        parser.add_argument("--out", required=True, type=Path, help="the JSONL file to write")
        parser.add_argument("--variants", action="store_true",
                            help="add wrong copies: three of each bill explanation, one of each other answer")
        parser.add_argument("--run", type=int, metavar="RUN_ID",
                            help="write the answers of this finished full run of the set instead of running it")

    def handle(self, *args, golden, out, variants=False, run=None, **options):
        golden_set = golden_set_for_run(golden)
        if run is not None:
            run = EvalRun.objects.filter(pk=run, golden_set=golden_set, status=EvalRun.Status.DONE,
                                         retrieval_only=False).first()
            if run is None:
                raise CommandError(f"--run: no finished full run of {golden} with that id")
        else:
            try:
                run = eval_run(golden_set=golden_set, use_judge=False)
            except (EvalRunError, GoldenSetError) as exc:
                raise CommandError(str(exc)) from exc
        items = [item for item in run.items.order_by("case_id") if item.outcome == "answered" and item.cited_answer]
        elsewhere = _chunk_sentences(items)
        lines = []
        for turn, item in enumerate(items):
            evidence = [{key: row[key] for key in EVIDENCE_KEYS if row.get(key) not in (None, "")}
                        for row in item.evidence or [] if isinstance(row, dict)]
            lines.append({"id": item.case_id, "case": item.case_id, "question": item.query,
                          "answer": item.cited_answer, "evidence": evidence,
                          "verified": verified_figures(item.verdicts), "label": None, "note": "", "origin": "answer"})
            if not variants:
                continue
            count = 3 if any(row.get("fact_kind") for row in evidence) else 1
            for made in variants_of(item.cited_answer, evidence, turn=turn, count=count,
                                    elsewhere=[s for case, s in elsewhere if case != item.case_id]):
                lines.append({"id": f"{item.case_id}~{made.kind}", "case": item.case_id, "evidence_of": item.case_id,
                              "answer": made.text, "label": None, "note": "", "origin": "variant",
                              "variant": made.change})
        out.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
        self.stdout.write(f"wrote {len(lines)} unlabelled answers of run {run.pk} ({len(items)} answered cases) "
                          f"to {out}")


def _chunk_sentences(items) -> list[tuple[str, str]]:
    """Return (case id, a sentence of a chunk it retrieved): sentences a wrong answer may borrow elsewhere."""
    found = []
    for item in items:
        for row in item.evidence or []:
            if isinstance(row, dict) and row.get("kind") == "chunk":
                body = str(row.get("text", "")).split("\n")[-1]
                sentence = body.split(". ")[0].strip()
                if sentence:
                    found.append((item.case_id, sentence.rstrip(".") + "."))
    return found
