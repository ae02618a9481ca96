"""Re-run the golden cases a document touches, retrieval only, before and after its latest save.

A KB editor who fixes one document must see at once what the fix did to every golden case that names it:
the cases whose hits or hard negatives include the document's slug, each searched once at the index
version before the save and once now, with the first-hit rank of both (evals.metrics.case_outcome).
A case that got worse comes first.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from evals.metrics import GoldenCase as CaseSpec
from evals.metrics import case_outcome
from evals.models import GoldenCase
from kb.embeddings import Embedder, QueryCachingEmbedder, get_embedder
from kb.models import Document, EmbeddingSpace
from kb.search import search

# Ranks are read off the fused list to this depth (chunks), so a hit that sits just below the bot's top k
# still shows where it is ("7 → 1") instead of "not found".
RANK_DEPTH = 20
VERDICT_ORDER = {"worse": 0, "better": 1, "same": 2}


@dataclass(frozen=True)
class CaseMove:
    """What one golden case did between two index versions."""

    case_pk: int
    case_id: str
    golden_set: str
    query: str
    must_pass: bool
    before_rank: int | None  # first hit rank among distinct documents; None when no hit within RANK_DEPTH
    after_rank: int | None
    before_negative: str | None  # a hard-negative document ranked above the first hit
    after_negative: str | None
    before_docs: list[str]
    after_docs: list[str]
    verdict: str  # "worse", "better" or "same"
    before_chunk: int | None = None  # position of the first hit's chunk in the fused list (the bot reads k)
    after_chunk: int | None = None


@dataclass(frozen=True)
class RerunReport:
    """The moves of one re-run, worst first, and the versions they compare."""

    document: Document
    before_version: int
    after_version: int | None  # None: the index as it is now
    current_version: int
    k: int
    moves: list[CaseMove]

    def count(self, verdict: str) -> int:
        return sum(1 for move in self.moves if move.verdict == verdict)

    @property
    def summary(self) -> str:
        return f"{self.count('better')} better, {self.count('worse')} worse, {self.count('same')} same"


def move_verdict(*, before_rank: int | None, after_rank: int | None, before_negative: str | None = None,
                 after_negative: str | None = None) -> str:
    """Return "worse", "better" or "same": a lower first-hit rank wins, no hit loses; on equal ranks a hard
    negative that newly sits above the hit makes it worse (and one that left, better)."""
    before = before_rank if before_rank is not None else float("inf")
    after = after_rank if after_rank is not None else float("inf")
    if after > before:
        return "worse"
    if after < before:
        return "better"
    if after_negative and not before_negative:
        return "worse"
    if before_negative and not after_negative:
        return "better"
    return "same"


def affected_cases(*, document: Document) -> list[GoldenCase]:
    """Return the golden cases (current version of every set) whose hits or hard negatives name the document.

    Cases awaiting review (synthetic variants, bulk-added cases) are left out: they do not gate anything.
    """
    slug = document.slug
    return list(
        GoldenCase.objects.filter(Q(hits__contains=[slug]) | Q(hard_negatives__contains=[slug]))
        .exclude(reviewed=False)
        .select_related("golden_set")
        .order_by("golden_set__name", "case_id")
    )


def default_before_version(*, document: Document) -> int:
    """Return the index version just before the document's latest save (0 when it was never saved)."""
    latest = (document.versions.filter(index_version__isnull=False).order_by("-number")
              .values_list("index_version", flat=True).first())
    return max((latest or 1) - 1, 0)


def current_index_version() -> int:
    space = EmbeddingSpace.objects.first()
    return space.index_version if space else 0


def affected_rerun(*, document: Document, before_version: int | None = None, after_version: int | None = None,
                   k: int = 5, embedder: Embedder | None = None) -> list[CaseMove]:
    """Search every affected case at `before_version` and at `after_version` (now when None); worst first.

    Retrieval only: one search per case per version, the query embedded once for both.
    """
    return affected_report(document=document, before_version=before_version, after_version=after_version, k=k,
                           embedder=embedder).moves


def affected_report(*, document: Document, before_version: int | None = None,
                    after_version: int | None = None, k: int = 5, embedder: Embedder | None = None,
                    cases: list[GoldenCase] | None = None, current: int | None = None) -> RerunReport:
    """Return affected_rerun's moves with the versions they compare (for the page).

    `cases` and `current` take the page's affected_cases() and current_index_version() so they are not
    queried twice."""
    if before_version is None:
        before_version = default_before_version(document=document)
    if current is None:
        current = current_index_version()
    if cases is None:
        cases = affected_cases(document=document)
    if after_version is not None and after_version >= current:
        after_version = None  # "now" searches the live index (HNSW) and means the same
    embedder = QueryCachingEmbedder(embedder or get_embedder())
    depth = max(k, RANK_DEPTH)
    moves = []
    for case in cases:
        spec = CaseSpec(id=case.case_id, query=case.query, hits=list(case.hits),
                        hard_negatives=list(case.hard_negatives), must_pass=case.must_pass)
        before_chunks = _ranked_docs(case.query, depth, before_version, embedder)
        after_chunks = _ranked_docs(case.query, depth, after_version, embedder)
        before, after = case_outcome(spec, before_chunks), case_outcome(spec, after_chunks)
        moves.append(CaseMove(
            case_pk=case.pk, case_id=case.case_id, golden_set=case.golden_set.name, query=case.query,
            must_pass=case.must_pass, before_rank=before.first_hit_rank, after_rank=after.first_hit_rank,
            before_negative=before.hard_negative_above, after_negative=after.hard_negative_above,
            before_docs=before.ranked_docs, after_docs=after.ranked_docs,
            verdict=move_verdict(before_rank=before.first_hit_rank, after_rank=after.first_hit_rank,
                                 before_negative=before.hard_negative_above,
                                 after_negative=after.hard_negative_above),
            before_chunk=_first_hit_chunk(before_chunks, spec.hits),
            after_chunk=_first_hit_chunk(after_chunks, spec.hits),
        ))
    moves.sort(key=lambda m: (VERDICT_ORDER[m.verdict], m.golden_set, m.case_id))
    return RerunReport(document=document, before_version=before_version, after_version=after_version,
                       current_version=current, k=k, moves=moves)


def _ranked_docs(query: str, depth: int, at_version: int | None, embedder: Embedder) -> list[str]:
    """Return the documents of the fused list (kept and pruned chunks, best first) at that index version."""
    result = search(query, k=depth, embedder=embedder, at_version=at_version)
    return [hit.doc for hit in result.fused]


def _first_hit_chunk(chunk_docs: list[str], hits: list[str]) -> int | None:
    return next((position for position, doc in enumerate(chunk_docs, start=1) if doc in hits), None)

