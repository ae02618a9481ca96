"""Search the knowledge base from the command line."""

import json

from django.core.management.base import BaseCommand

from kb.search import search


class Command(BaseCommand):
    help = ("Hybrid search (vector + full-text AND + identifiers → RRF → prune) and print the fused chunks and the "
            "context decision; --json prints the stable shape (matched_by_text: an AND or identifier hit).")

    def add_arguments(self, parser):
        parser.add_argument("query")
        parser.add_argument("--k", type=int, default=5)
        parser.add_argument("--language", choices=["es", "en"])
        parser.add_argument("--json", action="store_true", help="Print the stable JSON shape.")

    def handle(self, *args, query, k, language=None, json=False, **options):
        result = search(query, k=k, language=language)
        if json:
            self.stdout.write(_json_dumps(result_as_json(result)))
            return
        for hit in result.fused:
            flag = "kept  " if hit.kept else "pruned"
            vector = "—" if hit.vector_score is None else f"{hit.vector_score:.3f}"
            text = "—" if hit.text_rank is None else f"{hit.text_rank:.3f}"
            self.stdout.write(
                f"{hit.rank}. [{flag}] {hit.doc} § {hit.section}  vector {vector}  text {text}  "
                f"rrf {hit.rrf:.4f}  ({hit.prune_reason})"
            )
        self.stdout.write(f"context: {'yes' if result.context.has_context else 'no'} ({result.context.reason})")


def result_as_json(result) -> dict:
    """Return the stable kb_search JSON shape (README, ARCHITECTURE.md)."""
    return {
        "query": result.query,
        "results": [
            {
                "rank": position,
                "chunk_id": hit.chunk_id,
                "doc": hit.doc,
                "section": hit.section,
                "vector_score": hit.vector_score,
                "text_rank": hit.text_rank,
                "matched_by_text": hit.matched_by_text or hit.matched_by_identifier,
                "rrf": hit.rrf,
            }
            for position, hit in enumerate(result.results, start=1)
        ],
    }


def _json_dumps(payload) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2)
