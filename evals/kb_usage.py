"""From a failure to the chunk: usage of documents and chunks in traces, scores of given chunks for a query,
the "open in KB" comparison of what a trace retrieved with what its golden case expects, and the
playground's comparison of two index versions.

Selectors and plain helpers; every write to the knowledge base stays in kb/editing.py.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.db.models import Q, QuerySet
from django.urls import reverse
from pgvector.django import CosineDistance

from core import clock
from evals.models import GoldenCase
from kb.embeddings import Embedder, QueryCachingEmbedder, get_embedder
from kb.inspect import chunk_status, section_edit_url
from kb.models import Chunk, Document
from kb.search import search, text_scores
from traces.models import ReviewNote, Trace

RECENT_DAYS = 30
LATEST_TRACES = 20


def recent_since(now: dt.datetime | None = None, days: int = RECENT_DAYS) -> dt.datetime:
    """Return the start of the usage window: `days` before now."""
    return (now or clock.now()) - dt.timedelta(days=days)


# ── Document list ─────────────────────────────────────────────────────────────────────────────────


@dataclass
class DocumentUsage:
    retrieved: int = 0  # traces that retrieved at least one chunk of the document
    kept: int = 0  # … kept one after the prune
    cited: int = 0  # … whose answer cited one
    failure_notes: int = 0  # failure notes on one of its chunks (named by the note, else cited; see below)


def _array(column: str) -> str:
    # jsonb_array_elements raises on a non-array; old or hand-made rows may hold an object or null.
    return f"CASE WHEN jsonb_typeof({column}) = 'array' THEN {column} ELSE '[]'::jsonb END"


# Where a failure note counts: on the chunk it names; a note that names none counts on the chunks its trace's
# reply cited; one whose reply cited none, on the documents its golden case expects. Never on every chunk the
# trace retrieved: a trace retrieves five chunks and fails because of one, and counting all five sent editors
# to chunks that were not at fault.
NOTE_DOCS = """
            SELECT n.id AS note_id, d.slug AS doc
            FROM failing n JOIN {chunk} c ON c.id = n.chunk_id JOIN {document} d ON d.id = c.document_id
            UNION
            SELECT n.id, e->>'doc'
            FROM failing n JOIN {trace} t ON t.id = n.trace_id
            CROSS JOIN LATERAL jsonb_array_elements({evidence}) AS e
            WHERE n.chunk_id IS NULL AND e->>'kind' = 'chunk'
              AND jsonb_typeof(t.citations) = 'array' AND t.citations ? (e->>'id')
            UNION
            SELECT n.id, h.doc
            FROM failing n JOIN {trace} t ON t.id = n.trace_id JOIN {case} g ON g.trace_id = n.trace_id
            CROSS JOIN LATERAL jsonb_array_elements_text({hits}) AS h(doc)
            WHERE n.chunk_id IS NULL AND NOT EXISTS (
                SELECT 1 FROM jsonb_array_elements({evidence}) AS e
                WHERE e->>'kind' = 'chunk' AND jsonb_typeof(t.citations) = 'array' AND t.citations ? (e->>'id'))"""


def document_usage(*, since: dt.datetime) -> dict[str, DocumentUsage]:
    """Return usage since `since` per document slug, in one query whatever the number of documents.

    Each trace is reduced to its distinct documents inside a LATERAL (a few elements) before the global
    GROUP BY: a count(DISTINCT trace) over every (trace, hit) row sorted all of them and took twice as long.
    Cited documents are a subset of the retrieved ones (evidence chunks come from the retrieval).
    """
    trace, note, case = Trace._meta.db_table, ReviewNote._meta.db_table, GoldenCase._meta.db_table
    chunk, document = Chunk._meta.db_table, Document._meta.db_table
    sql = f"""
        WITH per_trace AS (
            SELECT x.doc, x.kept, x.doc = ANY(c.docs) AS cited
            FROM {trace} t
            CROSS JOIN LATERAL (
                SELECT CASE WHEN jsonb_typeof(t.citations) = 'array' AND jsonb_array_length(t.citations) > 0
                       THEN ARRAY(SELECT e->>'doc' FROM jsonb_array_elements({_array('t.evidence')}) AS e
                                  WHERE e->>'kind' = 'chunk' AND t.citations ? (e->>'id'))
                       ELSE '{{}}'::text[] END AS docs
            ) AS c
            CROSS JOIN LATERAL (
                SELECT r->>'doc' AS doc, bool_or(coalesce((r->>'kept')::boolean, false)) AS kept
                FROM jsonb_array_elements({_array('t.retrieval')}) AS r GROUP BY 1
            ) AS x
            WHERE t.created_at >= %s
        ),
        failing AS (SELECT id, trace_id, chunk_id FROM {note} WHERE verdict = 'fail' AND created_at >= %s),
        note_docs AS ({NOTE_DOCS.format(trace=trace, case=case, chunk=chunk, document=document,
                                        evidence=_array('t.evidence'), hits=_array('g.hits'))}
        )
        SELECT doc, sum(retrieved), sum(kept), sum(cited), sum(notes) FROM (
            SELECT doc, count(*) AS retrieved, count(*) FILTER (WHERE kept) AS kept,
                   count(*) FILTER (WHERE cited) AS cited, 0 AS notes FROM per_trace GROUP BY doc
            UNION ALL SELECT doc, 0, 0, 0, count(*) FROM note_docs GROUP BY doc
        ) AS usage WHERE doc IS NOT NULL GROUP BY doc
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [since, since])
        return {doc: DocumentUsage(int(r), int(k), int(c), int(n)) for doc, r, k, c, n in cursor.fetchall()}


# The usage query reads every trace of the window: ~0.5 s of server time per 50k traces (measured on the
# 2-core dev box), so the list keeps the counts for a few minutes; "recount" refreshes them at once.
USAGE_CACHE_SECONDS = 300


def document_usage_cached(*, recount: bool = False) -> tuple[dict[str, DocumentUsage], dt.datetime]:
    """Return (usage per document slug for the last RECENT_DAYS days, when it was counted)."""
    key = f"kb:document-usage:{RECENT_DAYS}"
    cached = None if recount else cache.get(key)
    if cached is None:
        counted_at = clock.now()
        cached = (document_usage(since=recent_since(counted_at)), counted_at)
        cache.set(key, cached, USAGE_CACHE_SECONDS)
    return cached


# ── Chunk page ────────────────────────────────────────────────────────────────────────────────────

@dataclass
class ChunkUsage:
    retrieved: int
    kept: int
    cited: int
    latest: list[dict]  # the latest traces to retrieve it: {trace, rank, kept, prune_reason, cited}


def _cited(trace_evidence, citations, chunk_id: int) -> bool:
    cited = set(citations or [])
    return any(isinstance(e, dict) and e.get("chunk_id") == chunk_id and e.get("id") in cited
               for e in (trace_evidence or []))


def chunk_usage(*, chunk: Chunk, since: dt.datetime, limit: int = LATEST_TRACES) -> ChunkUsage:
    """Return how many traces since `since` retrieved / kept / cited the chunk, and the latest ones."""
    table = Trace._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT count(*),
                   count(*) FILTER (WHERE retrieval @> %s::jsonb),
                   count(*) FILTER (WHERE EXISTS (
                       SELECT 1 FROM jsonb_array_elements({_array('evidence')}) AS e
                       WHERE e->>'chunk_id' = %s
                         AND jsonb_typeof(citations) = 'array' AND citations ? (e->>'id')))
            FROM {table} WHERE created_at >= %s AND retrieval @> %s::jsonb
            """,
            [f'[{{"chunk_id": {chunk.pk}, "kept": true}}]', str(chunk.pk), since,
             f'[{{"chunk_id": {chunk.pk}}}]'],
        )
        retrieved, kept, cited = cursor.fetchone()
    latest = []
    traces = (Trace.objects.filter(retrieval__contains=[{"chunk_id": chunk.pk}])
              .only("pk", "created_at", "query", "outcome", "retrieval", "evidence", "citations")
              .order_by("-created_at", "-pk")[:limit])
    for trace in traces:
        hit = next((r for r in trace.retrieval if r.get("chunk_id") == chunk.pk), {})
        latest.append({"trace": trace, "rank": hit.get("rank"), "kept": bool(hit.get("kept")),
                       "prune_reason": hit.get("prune_reason", ""),
                       "cited": _cited(trace.evidence, trace.citations, chunk.pk)})
    return ChunkUsage(retrieved=retrieved, kept=kept, cited=cited, latest=latest)


def failure_notes_for_chunk(*, chunk: Chunk, limit: int = LATEST_TRACES) -> tuple[int, list[ReviewNote]]:
    """Return how many failure notes count on the chunk and the latest of them: the notes that name it, and
    the notes that name no chunk on a trace whose reply cited it."""
    note, trace = ReviewNote._meta.db_table, Trace._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT n.id FROM {note} n JOIN {trace} t ON t.id = n.trace_id
            WHERE n.verdict = 'fail' AND (n.chunk_id = %s OR (n.chunk_id IS NULL AND EXISTS (
                SELECT 1 FROM jsonb_array_elements({_array('t.evidence')}) AS e
                WHERE e->>'chunk_id' = %s AND jsonb_typeof(t.citations) = 'array' AND t.citations ? (e->>'id'))))
            ORDER BY n.created_at DESC, n.id DESC
            """,
            [chunk.pk, str(chunk.pk)],
        )
        ids = [row[0] for row in cursor.fetchall()]
    notes = ReviewNote.objects.filter(pk__in=ids[:limit]).select_related("author", "failure_class", "chunk")
    return len(ids), sorted(notes, key=lambda n: ids.index(n.pk))


def golden_cases_for_document(*, slug: str) -> QuerySet[GoldenCase]:
    """Return the golden cases that expect the document as a hit or name it a hard negative."""
    return (GoldenCase.objects.filter(Q(hits__contains=[slug]) | Q(hard_negatives__contains=[slug]))
            .select_related("golden_set").order_by("golden_set__name", "case_id"))


# ── Scores of given chunks for a query ──────────────────────────────────────────────────────────

@dataclass
class ChunkScore:
    chunk_id: int
    vector_score: float | None
    text_rank: float | None  # BM25 when the chunk is an AND text hit for the query; None otherwise
    vector_position: int | None = None  # position in the vector branch, None when outside its candidates
    text_position: int | None = None
    fused_rank: int | None = None  # position in the whole RRF-fused list; None when neither branch found it
    in_top_k: bool = False
    kept: bool | None = None  # when in the top k: kept by the prune, or pruned (reason)
    prune_reason: str = ""


def score_chunks(query: str, chunk_ids: list[int], *, language: str | None = None, k: int | None = None,
                 embedder: Embedder | None = None) -> dict[int, ChunkScore]:
    """Return each given chunk's scores for the query now: vector similarity, text rank and its rank
    in the full search (the whole fused list, and kept/pruned when within the top k)."""
    k = k or settings.BOT_RETRIEVAL_K
    embedder = QueryCachingEmbedder(embedder or get_embedder())
    ids = list(dict.fromkeys(chunk_ids))
    if not ids or not (query or "").strip():
        return {c: ChunkScore(chunk_id=c, vector_score=None, text_rank=None) for c in ids}
    vector = embedder.embed_query(query.strip())
    similarity = {
        row["pk"]: row["similarity"]
        for row in Chunk.objects.filter(pk__in=ids)
        .annotate(similarity=1 - CosineDistance("embedding", vector)).values("pk", "similarity")
    }
    text = text_scores(query, ids, language=language)
    result = search(query, k=k, language=language, embedder=embedder, explain=True)
    vector_ids = [row["chunk_id"] for row in result.vector_branch]
    text_ids = [row["chunk_id"] for row in result.text_branch]
    fused_rank = {chunk_id: position for position, chunk_id in enumerate(result.fused_ids, start=1)}
    top = {hit.chunk_id: hit for hit in result.fused}
    scores = {}
    for chunk_id in ids:
        sim = similarity.get(chunk_id)
        hit = top.get(chunk_id)
        scores[chunk_id] = ChunkScore(
            chunk_id=chunk_id,
            vector_score=None if sim is None else round(float(sim), 4),
            text_rank=round(text[chunk_id], 4) if chunk_id in text else None,
            vector_position=vector_ids.index(chunk_id) + 1 if chunk_id in vector_ids else None,
            text_position=text_ids.index(chunk_id) + 1 if chunk_id in text_ids else None,
            fused_rank=fused_rank.get(chunk_id),
            in_top_k=hit is not None,
            kept=hit.kept if hit else None,
            prune_reason=hit.prune_reason if hit else "",
        )
    return scores


# ── Open in KB ──────────────────────────────────────────────────────────────────────────────────

def golden_case_for_trace(*, trace: Trace) -> GoldenCase | None:
    """Return the golden case to compare a trace with: reviewed before unreviewed, must-pass first, newest."""
    return (trace.golden_cases.select_related("golden_set")
            .order_by("-reviewed", "-must_pass", "-updated", "-pk").first())


@dataclass
class ChunkRow:
    chunk_id: int
    doc: str
    section: str
    section_id: int | None
    status: str
    rank: int | None = None
    vector_score: float | None = None
    text_rank: float | None = None
    kept: bool | None = None
    prune_reason: str = ""
    score: ChunkScore | None = None  # the score now (expected side)
    hard_negative_above: bool = False
    expected: bool = False
    edit_url: str = ""
    edit_label: str = "Edit section"
    exists: bool = True


@dataclass
class OpenInKb:
    trace: Trace
    retrieved: list[ChunkRow]
    case: GoldenCase | None = None
    other_cases: list[GoldenCase] = field(default_factory=list)
    expected: list[ChunkRow] = field(default_factory=list)
    hard_negatives_now: list[ChunkRow] = field(default_factory=list)  # hard negatives above the hits now
    best_expected_rank_then: int | None = None
    best_expected_rank_now: int | None = None


def _chunk_row(chunk: Chunk | None, chunk_id: int, doc: str = "", section: str = "") -> ChunkRow:
    if chunk is None:  # the document was removed for good (not a soft delete)
        return ChunkRow(chunk_id=chunk_id, doc=doc, section=section, section_id=None,
                        status="no longer stored",
                        exists=False)
    row = ChunkRow(chunk_id=chunk.pk, doc=chunk.document.slug, section=chunk.section.heading_path,
                   section_id=chunk.section_id, status=chunk_status(chunk))
    if chunk.section.retired_in is None:
        row.edit_url = section_edit_url(row.doc, chunk.section_id)
    else:  # a retired section cannot be edited; its document's current text can
        row.edit_url, row.edit_label = reverse("kb:document", args=[row.doc]), "Current document"
    return row


def open_in_kb(*, trace: Trace, embedder: Embedder | None = None) -> OpenInKb:
    """Return what the trace retrieved beside what its golden case says it should have (scored for it now)."""
    recorded = [r for r in (trace.retrieval or []) if isinstance(r, dict) and r.get("chunk_id") is not None]
    case = golden_case_for_trace(trace=trace)
    hits = set(case.hits) if case else set()
    negatives = set(case.hard_negatives) if case else set()
    expected_chunks = (list(Chunk.objects.live().filter(document__slug__in=hits)
                            .select_related("document", "section")
                            .order_by("document__slug", "section__order", "piece"))
                       if hits else [])
    chunks = Chunk.objects.select_related("document", "section").in_bulk([r["chunk_id"] for r in recorded])

    retrieved = []
    for r in sorted(recorded, key=lambda r: r.get("rank") or 0):
        row = _chunk_row(chunks.get(r["chunk_id"]), r["chunk_id"], r.get("doc", ""), r.get("section", ""))
        row.rank, row.kept, row.prune_reason = r.get("rank"), bool(r.get("kept")), r.get("prune_reason", "")
        row.vector_score, row.text_rank = r.get("vector_score"), r.get("text_rank")
        row.expected = row.doc in hits
        retrieved.append(row)
    then = [row.rank for row in retrieved if row.expected and row.rank is not None]
    best_then = min(then) if then else None
    for row in retrieved:
        row.hard_negative_above = row.doc in negatives and (best_then is None or (row.rank or 0) < best_then)

    view = OpenInKb(trace=trace, retrieved=retrieved, case=case, best_expected_rank_then=best_then,
                    other_cases=list(trace.golden_cases.exclude(pk=case.pk)) if case else [])
    if case is None:
        return view
    negative_chunks = list(Chunk.objects.live().filter(document__slug__in=negatives)
                           .select_related("document", "section")) if negatives else []
    scores = score_chunks(trace.query, [c.pk for c in expected_chunks + negative_chunks], embedder=embedder)
    for chunk in expected_chunks:
        row = _chunk_row(chunk, chunk.pk)
        row.score, row.expected = scores[chunk.pk], True
        view.expected.append(row)
    view.expected.sort(key=lambda row: (row.score.fused_rank is None, row.score.fused_rank or 0,
                                        row.chunk_id))
    now = [row.score.fused_rank for row in view.expected if row.score.fused_rank is not None]
    view.best_expected_rank_now = min(now) if now else None
    for chunk in negative_chunks:
        score = scores[chunk.pk]
        if score.fused_rank is not None and (view.best_expected_rank_now is None
                                             or score.fused_rank < view.best_expected_rank_now):
            row = _chunk_row(chunk, chunk.pk)
            row.score, row.hard_negative_above = score, True
            view.hard_negatives_now.append(row)
    view.hard_negatives_now.sort(key=lambda row: row.score.fused_rank)
    return view


# ── Playground: two index versions side by side ─────────────────────────────────────────────────


