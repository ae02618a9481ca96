"""Hybrid search over chunks: vector + full text + identifiers → RRF → corrective prune.

`search()` is the one entry point the bot, the commands and the pages call. Every result
carries what a trace needs to show why it was retrieved.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from django.conf import settings
from django.db import connection, transaction

from pgvector.django import CosineDistance

from kb.embeddings import Embedder, get_embedder
from kb.fusion import reciprocal_rank_fusion
from kb.identifiers import find_identifiers
from kb.models import Chunk, TermStat
from kb.pruning import Candidate, prune

CONFIG_BY_LANGUAGE = {"es": "spanish", "en": "english"}
# A lexeme held by more than this share of chunks does not discriminate; the text branch drops it
# (PostgreSQL's ts_rank has no IDF, so without this "factura" would weigh as much as "reconexión").
# Small collections keep every lexeme held by up to MIN_DF_LIMIT chunks.
MAX_DF_RATIO = 0.2
MIN_DF_LIMIT = 20
# ts_rank normalization 8 divides by the number of unique words: a glossary chunk that names every
# fee once must not outrank the short section that is about the one fee asked for. Measured on
# kb/fixtures/golden.jsonl: 0 → MRR 0.85 with 2 must-pass failures; 8 → 0 must-pass failures.
TEXT_RANK_NORMALIZATION = 8
# Safety net: never rank more than this many full-text matches for one query.
TEXT_CANDIDATE_CAP = 2000


@dataclass
class Hit:
    chunk_id: int
    doc: str
    section: str
    language: str
    text: str
    rank: int  # 1-based position in the fused list
    rrf: float
    vector_score: float | None
    vector_rank: int | None
    text_rank: float | None  # ts_rank of the full-text hit; None when not a text hit
    text_position: int | None
    matched_by_text: bool
    matched_by_identifier: bool
    kept: bool = True
    prune_reason: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class SearchResult:
    query: str
    results: list[Hit]  # kept hits, best first (what the bot uses)
    pruned: list[Hit] = field(default_factory=list)
    vector_branch: list[dict] = field(default_factory=list)
    text_branch: list[dict] = field(default_factory=list)
    identifier_branch: list[dict] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    text_terms: list[str] = field(default_factory=list)

    @property
    def fused(self) -> list[Hit]:
        return sorted(self.results + self.pruned, key=lambda h: h.rank)


def search(
    query: str,
    *,
    k: int = 5,
    language: str | None = None,
    embedder: Embedder | None = None,
    explain: bool = False,
) -> SearchResult:
    """Return the top-k chunks for query after fusion and the corrective prune."""
    query = (query or "").strip()
    if not query:
        return SearchResult(query=query, results=[])
    embedder = embedder or get_embedder()
    vector_n = max(settings.KB_VECTOR_CANDIDATES, k)
    text_n = max(settings.KB_TEXT_CANDIDATES, k)
    query_vector = embedder.embed_query(query)

    with transaction.atomic():
        vector_rows = _vector_branch(query_vector, n=vector_n, language=language)
        text_rows, terms = _text_branch(query, n=text_n, language=language)
        identifiers = find_identifiers(query)
        identifier_ids = _identifier_branch(identifiers, language=language) if identifiers else []

    fused = reciprocal_rank_fusion(
        {
            "vector": [row[0] for row in vector_rows],
            "text": [row[0] for row in text_rows],
            "identifier": identifier_ids,
        },
        k=settings.KB_RRF_K,
    )[:k]
    if not fused:
        return SearchResult(query=query, results=[], identifiers=identifiers, text_terms=terms)

    ids = [f.chunk_id for f in fused]
    rows = {
        row["pk"]: row
        for row in Chunk.objects.filter(pk__in=ids)
        .annotate(similarity=1 - CosineDistance("embedding", query_vector))
        .values("pk", "text", "language", "document__slug", "section__heading_path", "similarity")
    }
    text_rank = {chunk_id: (rank, position) for position, (chunk_id, rank) in enumerate(text_rows, start=1)}
    identifier_set = set(identifier_ids)
    candidates = [
        Candidate(
            chunk_id=f.chunk_id,
            vector_score=rows[f.chunk_id]["similarity"],
            matched_by_text=f.chunk_id in text_rank,
            matched_by_identifier=f.chunk_id in identifier_set,
        )
        for f in fused
    ]
    decisions = {d.chunk_id: d for d in prune(candidates, margin=settings.KB_PRUNE_MARGIN)}

    kept, pruned = [], []
    for position, f in enumerate(fused, start=1):
        row = rows[f.chunk_id]
        hit = Hit(
            chunk_id=f.chunk_id,
            doc=row["document__slug"],
            section=row["section__heading_path"],
            language=row["language"],
            text=row["text"],
            rank=position,
            rrf=round(f.rrf, 6),
            vector_score=None if row["similarity"] is None else round(float(row["similarity"]), 4),
            vector_rank=f.ranks.get("vector"),
            text_rank=round(text_rank[f.chunk_id][0], 4) if f.chunk_id in text_rank else None,
            text_position=f.ranks.get("text"),
            matched_by_text=f.chunk_id in text_rank,
            matched_by_identifier=f.chunk_id in identifier_set,
            kept=decisions[f.chunk_id].kept,
            prune_reason=decisions[f.chunk_id].reason,
        )
        (kept if hit.kept else pruned).append(hit)

    result = SearchResult(query=query, results=kept, pruned=pruned, identifiers=identifiers, text_terms=terms)
    if explain:
        result.vector_branch = [{"chunk_id": c, "score": round(s, 4)} for c, s in vector_rows]
        result.text_branch = [{"chunk_id": c, "rank": round(r, 4)} for c, r in text_rows]
        result.identifier_branch = [{"chunk_id": c} for c in identifier_ids]
    return result


def _vector_branch(vector: list[float], *, n: int, language: str | None) -> list[tuple[int, float]]:
    table = Chunk._meta.db_table
    where = "WHERE embedding IS NOT NULL" + (" AND language = %s" if language else "")
    params: list = [_vector_literal(vector)] + ([language] if language else []) + [_vector_literal(vector), n]
    with connection.cursor() as cursor:
        # ef_search must be at least the number of rows wanted or HNSW returns fewer.
        cursor.execute(f"SET LOCAL hnsw.ef_search = {max(40, int(n))}")
        if language:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(
            f"SELECT id, 1 - (embedding <=> %s::vector) AS score FROM {table} {where} "
            f"ORDER BY embedding <=> %s::vector LIMIT %s",
            params,
        )
        rows = cursor.fetchall()
    # relaxed_order may return rows slightly out of order; the branch ranks by the score.
    return sorted(((int(i), float(s)) for i, s in rows), key=lambda r: (-r[1], r[0]))


def _text_terms(query: str, language: str | None) -> dict[str, list[str]]:
    """Return the discriminating lexemes of the query per text-search config."""
    configs = [CONFIG_BY_LANGUAGE[language]] if language else list(CONFIG_BY_LANGUAGE.values())
    total = Chunk.objects.count() or 1
    limit = max(MIN_DF_LIMIT, int(total * MAX_DF_RATIO))
    with connection.cursor() as cursor:
        # Lexemes per config; 'simple' lexemes only when no language config treats them as a stop word,
        # so names and codes match without "de", "la", "the" matching every chunk.
        cursor.execute(
            f"""
            WITH q AS (
                SELECT cfg, unnest(tsvector_to_array(to_tsvector(cfg::regconfig, %s))) AS lexeme
                FROM unnest(%s::text[]) AS cfg
                UNION
                SELECT 'simple', w FROM unnest(tsvector_to_array(to_tsvector('simple', %s))) AS w
                WHERE to_tsvector('spanish', w) <> ''::tsvector AND to_tsvector('english', w) <> ''::tsvector
            )
            SELECT q.cfg, q.lexeme FROM q
            JOIN {TermStat._meta.db_table} s ON s.config = q.cfg AND s.lexeme = q.lexeme
            WHERE s.ndoc <= %s
            ORDER BY q.cfg, s.ndoc, q.lexeme
            """,
            [query, configs, query, limit],
        )
        terms: dict[str, list[str]] = {}
        for cfg, lexeme in cursor.fetchall():
            terms.setdefault(cfg, []).append(lexeme)
    return terms


def _tsquery(lexemes: list[str]) -> str:
    return " | ".join("'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'" for lexeme in lexemes)


def _text_branch(query: str, *, n: int, language: str | None) -> tuple[list[tuple[int, float]], list[str]]:
    terms = _text_terms(query, language)
    if not terms:
        return [], []
    table = Chunk._meta.db_table
    clauses, ranks, params, rank_params = [], [], [], []
    for cfg, lexemes in terms.items():
        tsquery = _tsquery(lexemes)
        if cfg == "simple":
            clauses.append("search_vector_simple @@ %s::tsquery")
            ranks.append("CASE WHEN search_vector_simple @@ %s::tsquery "
                         f"THEN ts_rank(search_vector_simple, %s::tsquery, {TEXT_RANK_NORMALIZATION}) ELSE 0 END")
            params.append(tsquery)
            rank_params.extend([tsquery, tsquery])
        else:
            lang = "es" if cfg == "spanish" else "en"
            clauses.append(f"(language = '{lang}' AND search_vector @@ %s::tsquery)")
            ranks.append(f"CASE WHEN language = '{lang}' AND search_vector @@ %s::tsquery "
                         f"THEN ts_rank(search_vector, %s::tsquery, {TEXT_RANK_NORMALIZATION}) ELSE 0 END")
            params.append(tsquery)
            rank_params.extend([tsquery, tsquery])
    language_filter = " AND language = %s" if language else ""
    sql = (
        f"SELECT id, rank FROM ("
        f"  SELECT id, ({' + '.join(ranks)}) AS rank FROM {table}"
        f"  WHERE ({' OR '.join(clauses)}){language_filter} LIMIT %s"
        f") AS matched ORDER BY rank DESC, id LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, rank_params + params + ([language] if language else []) + [TEXT_CANDIDATE_CAP, n])
        rows = [(int(i), float(r)) for i, r in cursor.fetchall()]
    flat_terms = [f"{cfg}:{lexeme}" for cfg, lexemes in terms.items() for lexeme in lexemes]
    return rows, flat_terms


def _identifier_branch(identifiers: list[str], *, language: str | None) -> list[int]:
    queryset = Chunk.objects.filter(identifiers__overlap=identifiers)
    if language:
        queryset = queryset.filter(language=language)
    return list(queryset.order_by("pk").values_list("pk", flat=True)[:50])


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"
