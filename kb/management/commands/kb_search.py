"""Search the knowledge base from the command line."""

import json

from django.core.management.base import BaseCommand, CommandError

from kb.applicability import PLAN_CODES, SEGMENTS, TERMS, Applicability
from kb.search import search


class Command(BaseCommand):
    help = ("Hybrid search (vector + full-text AND + identifiers → RRF → prune) and print the fused chunks and the "
            "context decision; --json prints the stable shape (matched_by_text: an AND or identifier hit). "
            "--segment / --plan / --term say who the customer is: chunks for other customers are left out.")

    def add_arguments(self, parser):
        parser.add_argument("query")
        parser.add_argument("--k", type=int, default=5)
        parser.add_argument("--language", choices=["es", "en"])
        parser.add_argument("--json", action="store_true", help="Print the stable JSON shape.")
        parser.add_argument("--segment", choices=SEGMENTS, help="The customer's segment.")
        parser.add_argument("--plan", help=f"The customer's plan code ({', '.join(PLAN_CODES)}).")
        parser.add_argument("--term", choices=TERMS, help="The customer's contract term, when known.")

    def handle(self, *args, query, k, language=None, json=False, segment=None, plan=None, term=None, **options):
        if plan and plan.strip().upper() not in PLAN_CODES:
            raise CommandError(f"--plan must be one of {', '.join(PLAN_CODES)} (got {plan!r})")
        applies_to = Applicability(segment=segment or "", plan=plan or "", term=term or "")
        result = search(query, k=k, language=language, applies_to=applies_to or None)
        if json:
            self.stdout.write(_json_dumps(result_as_json(result)))
            return
        for hit in result.fused:
            flag = "kept  " if hit.kept else "pruned"
            vector = "—" if hit.vector_score is None else f"{hit.vector_score:.3f}"
            text = "—" if hit.text_rank is None else f"{hit.text_rank:.3f}"
            whom = ", ".join(hit.audience.labels())
            self.stdout.write(
                f"{hit.rank}. [{flag}] {hit.doc} § {hit.section}  vector {vector}  text {text}  "
                f"rrf {hit.rrf:.4f}  ({hit.prune_reason}){f'  [{whom}]' if whom else ''}"
            )
        self.stdout.write(f"context: {'yes' if result.context.has_context else 'no'} ({result.context.reason})")
        if result.context.prune_rule:
            self.stdout.write(result.context.prune_rule)


def result_as_json(result) -> dict:
    """Return the stable kb_search JSON shape (README, ARCHITECTURE.md); segment, plans and term say whom each
    result applies to ("" / [] : everyone), applies_to the customer profile searched for (null: anyone)."""
    return {
        "query": result.query,
        "applies_to": (None if result.applies_to is None else
                       {"segment": result.applies_to.segment, "plan": result.applies_to.plan,
                        "term": result.applies_to.term}),
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
                "segment": hit.segment,
                "plans": hit.plans,
                "term": hit.term,
            }
            for position, hit in enumerate(result.results, start=1)
        ],
    }


def _json_dumps(payload) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2)
