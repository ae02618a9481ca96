"""Run golden cases through the hybrid search and score each branch on its own: vector-only, text-only, hybrid.

The vector-only and text-only rankings are the branches the hybrid fuses (their top k chunks), so a
comparison says what the fusion and the prune add to the retriever's own parts.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb.models import Chunk
from kb.search import search
from evals.metrics import GoldenCase


@dataclass(frozen=True)
class CaseRetrieval:
    case: GoldenCase
    ranked: dict[str, list[str]]  # branch → documents of its top-k chunks, best first
    has_context: bool  # the search's decision: context for the turn, or NO_CONTEXT


def retrieve_cases(cases: list[GoldenCase], *, k: int = 5, embedder=None) -> list[CaseRetrieval]:
    """Search every case once and return each branch's ranked documents and the no-context decision."""
    found = [(case, search(case.query, k=k, explain=True, embedder=embedder)) for case in cases]
    ids = {row["chunk_id"] for _, result in found for row in result.vector_branch[:k] + result.text_branch[:k]}
    doc_of = dict(Chunk.objects.filter(pk__in=ids).values_list("pk", "document__slug"))
    return [
        CaseRetrieval(case=case, ranked={
            "vector": [doc_of[row["chunk_id"]] for row in result.vector_branch[:k]],
            "text": [doc_of[row["chunk_id"]] for row in result.text_branch[:k]],
            "hybrid": [hit.doc for hit in result.results],
        }, has_context=result.context.has_context)
        for case, result in found
    ]
