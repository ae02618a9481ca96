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
from kb.models import ACCENTED, UNACCENTED, Chunk, EmbeddingSpace, TermStat
from kb.pruning import Candidate, prune

CONFIG_BY_LANGUAGE = {"es": "spanish", "en": "english"}
# A lexeme held by more than this share of chunks does not discriminate; the text branch drops it
# (PostgreSQL's ts_rank has no IDF, so without this "factura" would weigh as much as "reconexión").
# Small collections keep every lexeme held by up to MIN_DF_LIMIT chunks.
MAX_DF_RATIO = 0.2
MIN_DF_LIMIT = 20
# ts_rank normalization 8 divides by the number of unique words: a glossary chunk that names every
# fee once must not outrank the short section that is about the one fee asked for. Measured on
# evals/fixtures/golden.jsonl: 0 → MRR 0.85 with 2 must-pass failures; 8 → 0 must-pass failures.
TEXT_RANK_NORMALIZATION = 8
# The full-text branch ranks at most this many chunks: those holding the rarest query terms whose
# document counts add up to at most this (on a small knowledge base: every term). See _selective_terms.
TEXT_CANDIDATE_CAP = 500


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
    index_version: int | None = None  # the index version searched (traces record it)

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
    at_version: int | None = None,
) -> SearchResult:
    """Return the top-k chunks for query after fusion and the corrective prune.

    `at_version` searches the index as it was at that index version (chunks retired since then
    included, chunks added since then left out), by exact vector distance instead of the HNSW index
    (which holds live chunks only): for the playground and before/after comparisons, not for the bot.
    """
    query = (query or "").strip()
    if not query:
        return SearchResult(query=query, results=[], index_version=at_version or current_index_version())
    embedder = embedder or get_embedder()
    vector_n = max(settings.KB_VECTOR_CANDIDATES, k)
    text_n = max(settings.KB_TEXT_CANDIDATES, k)
    query_vector = embedder.embed_query(query)

    with transaction.atomic():
        vector_rows = _vector_branch(query_vector, n=vector_n, language=language, at_version=at_version)
        text_rows, terms = _text_branch(query, n=text_n, language=language, at_version=at_version)
        identifiers = find_identifiers(query)
        identifier_ids = (_identifier_branch(identifiers, language=language, at_version=at_version)
                          if identifiers else [])

    fused = reciprocal_rank_fusion(
        {
            "vector": [row[0] for row in vector_rows],
            "text": [row[0] for row in text_rows],
            "identifier": identifier_ids,
        },
        k=settings.KB_RRF_K,
    )[:k]
    if not fused:
        return SearchResult(query=query, results=[], identifiers=identifiers, text_terms=terms,
                            index_version=at_version or current_index_version())

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

    result = SearchResult(query=query, results=kept, pruned=pruned, identifiers=identifiers, text_terms=terms,
                          index_version=at_version or current_index_version())
    if explain:
        result.vector_branch = [{"chunk_id": c, "score": round(s, 4)} for c, s in vector_rows]
        result.text_branch = [{"chunk_id": c, "rank": round(r, 4)} for c, r in text_rows]
        result.identifier_branch = [{"chunk_id": c} for c in identifier_ids]
    return result


def _live_sql(at_version: int | None) -> tuple[str, list]:
    """Return the SQL condition (and params) for the chunks live now, or live at `at_version`."""
    if at_version is None:
        return "retired_in IS NULL", []
    return "added_in <= %s AND (retired_in IS NULL OR retired_in > %s)", [at_version, at_version]


def _vector_branch(vector: list[float], *, n: int, language: str | None,
                   at_version: int | None = None) -> list[tuple[int, float]]:
    table = Chunk._meta.db_table
    live, live_params = _live_sql(at_version)
    where = f"WHERE embedding IS NOT NULL AND {live}" + (" AND language = %s" if language else "")
    literal = _vector_literal(vector)
    params: list = [literal] + live_params + ([language] if language else []) + [literal, n]
    with connection.cursor() as cursor:
        # ef_search must be at least the number of rows wanted or HNSW returns fewer; at 40 the
        # bench's recall@10 wandered 0.94–0.98 between builds, at 80 it held ≥ 0.998 for +0.1 ms.
        cursor.execute(f"SET LOCAL hnsw.ef_search = {max(80, int(n))}")
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


def _text_terms(query: str, language: str | None) -> list[tuple[str, str, int]]:
    """Return the discriminating lexemes of the query as (config, lexeme, ndoc), rarest first."""
    configs = [CONFIG_BY_LANGUAGE[language]] if language else list(CONFIG_BY_LANGUAGE.values())
    table = Chunk._meta.db_table
    with connection.cursor() as cursor:
        # Lexemes per config; 'simple' lexemes only when no language config treats them as a stop word,
        # so names and codes match without "de", "la", "the" matching every chunk. The query's accents
        # are folded like the chunks' (or "móvil" never meets the stored "movil" in simple/english).
        # The chunk total is the planner's estimate (count(*) only on a never-analyzed table):
        # counting 100k rows cost ~3 ms per query, more than this whole lookup.
        cursor.execute(
            f"""
            WITH folded AS (SELECT translate(%s, %s, %s) AS text),
            q AS (
                SELECT cfg, unnest(tsvector_to_array(to_tsvector(cfg::regconfig, folded.text))) AS lexeme
                FROM unnest(%s::text[]) AS cfg, folded
                UNION
                SELECT 'simple', w
                FROM folded, unnest(tsvector_to_array(to_tsvector('simple', folded.text))) AS w
                WHERE to_tsvector('spanish', w) <> ''::tsvector AND to_tsvector('english', w) <> ''::tsvector
            ),
            total AS (
                SELECT CASE WHEN reltuples >= 0 THEN reltuples::bigint
                            ELSE (SELECT count(*) FROM {table}) END AS n
                FROM pg_class WHERE oid = %s::regclass
            )
            SELECT q.cfg, q.lexeme, s.ndoc FROM q
            JOIN {TermStat._meta.db_table} s ON s.config = q.cfg AND s.lexeme = q.lexeme
            WHERE s.ndoc <= greatest(%s, (SELECT n FROM total) * %s)
            ORDER BY s.ndoc, q.cfg, q.lexeme
            """,
            [query, ACCENTED, UNACCENTED, configs, table, MIN_DF_LIMIT, MAX_DF_RATIO],
        )
        return [(cfg, lexeme, int(ndoc)) for cfg, lexeme, ndoc in cursor.fetchall()]


def _selective_terms(terms: list[tuple[str, str, int]], cap: int) -> tuple[list[tuple[str, str, int]], bool]:
    """Choose the terms the full-text branch matches; return (terms, conjunctive).

    The rarest terms while their document counts add up to at most `cap`: the matches are then
    known to be at most `cap` chunks, found through the GIN indexes and all ranked — instead of a
    scan that ranks whichever `cap` matches of a common term come first (and can miss the one chunk
    that holds the rare name). When even the rarest term is held by more than `cap` chunks, every
    term is required (AND) and only their intersection is ranked; a config left with a single
    common term is not queried.
    """
    chosen: list[tuple[str, str, int]] = []
    total = 0
    for term in terms:  # rarest first
        if chosen and total + term[2] > cap:
            break
        chosen.append(term)
        total += term[2]
    if total <= cap:
        return chosen, False
    # Every term is common: a chunk votes only if it holds all of them, and one common word alone
    # (per config) is no evidence at all.
    per_config: dict[str, int] = {}
    for cfg, _, _ in terms:
        per_config[cfg] = per_config.get(cfg, 0) + 1
    return [t for t in terms if per_config[t[0]] >= 2], True


def _tsquery(lexemes: list[str], operator: str = " | ") -> str:
    return operator.join("'" + lexeme.replace("'", "''").replace("\\", "\\\\") + "'" for lexeme in lexemes)


def text_match_sql(selected: list[tuple[str, str, int]], conjunctive: bool) -> tuple[dict, str, str, list[str]]:
    """Return (terms per config, match condition, rank expression, tsquery params) for the selected terms.

    The params are those of ONE expression: a query using both the rank and the match passes them twice.
    """
    terms: dict[str, list[str]] = {}
    for cfg, lexeme, _ in sorted(selected, key=lambda t: (t[0], t[2], t[1])):
        terms.setdefault(cfg, []).append(lexeme)
    clauses, ranks, params = [], [], []
    for cfg, lexemes in terms.items():
        params.append(_tsquery(lexemes, " & " if conjunctive else " | "))
        # ts_rank is 0 for a chunk the query does not match, so no "CASE WHEN ... @@": every mention
        # of a tsvector column de-TOASTs it again, and that was most of this query's time.
        if cfg == "simple":
            clauses.append("search_vector_simple @@ %s::tsquery")
            ranks.append(f"ts_rank(search_vector_simple, %s::tsquery, {TEXT_RANK_NORMALIZATION})")
        else:
            lang = "es" if cfg == "spanish" else "en"
            clauses.append(f"(language = '{lang}' AND search_vector @@ %s::tsquery)")
            ranks.append(f"CASE WHEN language = '{lang}' "
                         f"THEN ts_rank(search_vector, %s::tsquery, {TEXT_RANK_NORMALIZATION}) ELSE 0 END")
    return terms, f"({' OR '.join(clauses)})", f"({' + '.join(ranks)})", params


def _text_branch(query: str, *, n: int, language: str | None,
                 at_version: int | None = None) -> tuple[list[tuple[int, float]], list[str]]:
    selected, conjunctive = _selective_terms(_text_terms(query, language), TEXT_CANDIDATE_CAP)
    if not selected:
        return [], []
    terms, match, rank, params = text_match_sql(selected, conjunctive)
    table = Chunk._meta.db_table
    language_filter = " AND language = %s" if language else ""
    live, live_params = _live_sql(at_version)
    sql = (
        f"SELECT id, rank FROM ("
        f"  SELECT id, {rank} AS rank FROM {table}"
        f"  WHERE {match} AND {live}{language_filter} LIMIT %s"
        f") AS matched ORDER BY rank DESC, id LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params + params + live_params + ([language] if language else [])
                       + [TEXT_CANDIDATE_CAP, n])
        rows = [(int(i), float(r)) for i, r in cursor.fetchall()]
    flat_terms = [f"{cfg}:{lexeme}" for cfg, lexemes in terms.items() for lexeme in lexemes]
    return rows, flat_terms


def _identifier_branch(identifiers: list[str], *, language: str | None, at_version: int | None = None) -> list[int]:
    chunks = Chunk.objects.live() if at_version is None else Chunk.objects.at_version(at_version)
    queryset = chunks.filter(identifiers__overlap=identifiers)
    if language:
        queryset = queryset.filter(language=language)
    return list(queryset.order_by("pk").values_list("pk", flat=True)[:50])


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def current_index_version() -> int | None:
    """Return the index version search sees now (None before anything was imported)."""
    return EmbeddingSpace.objects.values_list("index_version", flat=True).first()
