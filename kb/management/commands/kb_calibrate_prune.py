"""Measure the configured embedder's score scale on labelled questions and record the prune margin for it."""

import json
import statistics
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core import clock
from kb.embeddings import get_embedder, embedder_fingerprint
from kb.calibrations import calibrations
from kb.prune_calibration import LabelledSearch, calibrate, cut_figures, measure, write_calibration
from kb.pruning import DEFAULT_MIN_KEEP, Candidate
from kb.search import search

SPLITS = ("dev", "test")


class Command(BaseCommand):
    help = ("Measure the prune margin in this embedder's score scale on the dev split of labelled questions "
            "(JSONL: id, query, hits, split — the golden sets) searched against the imported knowledge base, and "
            "record it for the embedder's fingerprint in KB_PRUNE_CALIBRATIONS. Each file is one set; sets of other "
            "knowledge bases, measured in their own databases, stay recorded and are pooled.")

    def add_arguments(self, parser):
        parser.add_argument("--golden", type=Path, action="append", required=True,
                            help="A JSONL file of labelled questions; repeatable. Its stem names the set.")
        parser.add_argument("--k", type=int, default=5)
        parser.add_argument("--dry-run", action="store_true", help="Measure and print; record nothing.")

    def handle(self, *args, golden, k, dry_run=False, **options):
        if not settings.KB_PRUNE_CALIBRATIONS and not dry_run:
            raise CommandError("KB_PRUNE_CALIBRATIONS is empty: there is no file to record the calibration in")
        embedder = get_embedder()
        fingerprint = embedder_fingerprint(embedder)
        recorded = calibrations().get(fingerprint)
        sets = dict(recorded.sets) if recorded else {}
        searched = {}
        for path in golden:
            questions = _labelled_questions(path)
            if not any(q["split"] == "dev" for q in questions):
                raise CommandError(f"{path}: no labelled question of the dev split to measure on")
            searched[path.stem] = [_search(q, k=k, embedder=embedder) for q in questions]
            sets[path.stem] = measure(searched[path.stem], min_keep=DEFAULT_MIN_KEEP)
        try:
            calibration = calibrate(sets, fingerprint=fingerprint, embedder=embedder.name,
                                    measured_on=clock.today().isoformat())
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"embedder {embedder.name}, fingerprint {fingerprint}")
        for name, measured in sorted(sets.items()):
            largest = max(measured.required, default=0.0)
            self.stdout.write(f"  {name}: {measured.dev_queries} dev questions, spread (top-1 − top-10 cosine) median "
                              f"{statistics.median(measured.spreads or [0.0]):.4f}, the largest margin one needs {largest:.4f}"
                              + ("" if name in searched else " (recorded earlier)"))
        where = "not recorded (--dry-run)" if dry_run else f"recorded in {settings.KB_PRUNE_CALIBRATIONS}"
        self.stdout.write(f"margin {calibration.margin:.4f} = {calibration.multiplier:.2f} × spread {calibration.spread:.4f}"
                          f" (dev of {', '.join(sorted(sets))}); {where}")
        for name, searches in searched.items():
            self._figures(name, searches, margins=[("seed", settings.KB_PRUNE_MARGIN),
                                                    ("calibrated", calibration.margin)], k=k)
        if not dry_run:
            write_calibration(settings.KB_PRUNE_CALIBRATIONS, calibration)

    def _figures(self, name, searches, *, margins, k):
        """Print, per margin, what the prune keeps on the dev and test splits side by side."""
        self.stdout.write(f"{name:<22}│ {'dev':<36}│ test")
        for label, margin in margins:
            cells = []
            for split in SPLITS:
                cut = cut_figures([s for s in searches if s.split == split], margin=margin, min_keep=DEFAULT_MIN_KEEP)
                cells.append(f"dropped {cut.dropped:>3}/{cut.retrieved:<3} r@{k} {cut.recall:.3f} MRR {cut.mrr:.3f}")
            self.stdout.write(f"  {label:<10} {margin:<8.4f} │ {cells[0]} │ {cells[1]}")


def _labelled_questions(path: Path) -> list[dict]:
    """Return the questions of a JSONL file that carry a split (id, query, hits, split); refuse naming file:line."""
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("query"), str):
            raise CommandError(f"{path}:{number}: a labelled question needs a query")
        if row.get("split") not in SPLITS:
            continue  # unsplit questions are not used to choose anything
        hits = row.get("hits") or []
        if not isinstance(hits, list):
            raise CommandError(f"{path}:{number}: hits must be a list of document slugs")
        questions.append({"id": str(row.get("id", number)), "query": row["query"], "split": row["split"],
                          "hits": set(hits) if not row.get("out_of_scope") else set()})
    return questions


def _search(question: dict, *, k: int, embedder) -> LabelledSearch:
    result = search(question["query"], k=k, explain=True, embedder=embedder)
    fused = result.fused
    return LabelledSearch(
        case_id=question["id"], split=question["split"],
        vector_cosines=[row["score"] for row in result.vector_branch],
        fused=[Candidate(h.chunk_id, h.vector_score, h.matched_by_text, h.matched_by_identifier) for h in fused],
        docs=[h.doc for h in fused], hits=frozenset(question["hits"]))
