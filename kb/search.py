"""Hybrid search over chunks: vector + full text + identifiers → RRF → corrective prune → context decision.

`search()` is the one entry point the bot, the commands and the pages call. Every result carries what
a trace needs to show why it was retrieved, and whether the turn has context at all (`kb/context.py`).

Two statements per search: the term lookup (which words the full-text branch requires, with their
document counts; `kb/textquery.py` decides), then one statement that runs the three branches — the
vector top-N through HNSW, the full-text AND hits ranked by BM25, the identifier overlap — and returns
every candidate with its cosine and the texts of each branch's first k. The fused top k is nearly always
among those; a third statement fetches the texts of any that is not.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import NamedTuple

from django.conf import settings
from django.db import connection, transaction

from core.fulltext import ACCENTED, UNACCENTED
from kb.applicability import Applicability, Audience
from kb.calibrations import prune_rule
from kb.context import ContextDecision, decide_context
from kb.embeddings import Embedder, get_embedder
from kb.fusion import Fused, reciprocal_rank_fusion
from kb.identifiers import find_identifiers
from kb.models import Chunk, Document, EmbeddingSpace, Section, TermStat, TermTotal
from kb.pruning import Candidate, prune
from kb.textquery import (BM25_B, BM25_K1, IRREGULAR_FORMS, ConfigTotals, QueryTerm,
                          TextPlan, plan_text_query, shown_terms, strip_filler, tsquery_and)

CONFIG_BY_LANGUAGE = {"es": "spanish", "en": "english"}
LANGUAGE_BY_CONFIG = {config: language for language, config in CONFIG_BY_LANGUAGE.items()}
# An AND that can match more chunks than this (its rarest word is that common) is checked among the vector
# candidates only (TextPlan.selective): on a 100k-chunk corpus, fetching and ranking 200 matches from the heap
# cost ~10 ms, three vector branches' worth, for words that single nothing out.
TEXT_CANDIDATE_CAP = 200
# ef_search must be at least the number of rows wanted or HNSW returns fewer; at 40 the bench's
# recall@10 wandered 0.94–0.98 between builds, at 80 it held ≥ 0.998 for +0.1 ms.
MIN_EF_SEARCH = 80
IDENTIFIER_CANDIDATES = 50


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
    text_rank: float | None  # BM25 of an AND text hit; None when the chunk is not one
    text_position: int | None
    matched_by_text: bool  # holds every content word of the question (an AND): proof of relevance
    matched_by_identifier: bool
    kept: bool = True
    prune_reason: str = ""  # or, for a chunk the customer's profile rules out: "for business customers"…
    # whom the chunk's section applies to (kb/applicability.py; the document's audience, or narrower): empty
    # is everyone
    segment: str = ""
    plans: list[str] = field(default_factory=list)
    term: str = ""

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def audience(self) -> Audience:
        return Audience(segment=self.segment, plans=tuple(self.plans), term=self.term)


@dataclass
class SearchResult:
    query: str
    results: list[Hit]  # kept hits, best first (what the bot uses)
    pruned: list[Hit] = field(default_factory=list)
    vector_branch: list[dict] = field(default_factory=list)
    text_branch: list[dict] = field(default_factory=list)
    identifier_branch: list[dict] = field(default_factory=list)
    fused_ids: list[int] = field(default_factory=list)  # the whole fused list, before the cut at k (explain)
    identifiers: list[str] = field(default_factory=list)
    text_terms: list[str] = field(default_factory=list)  # "config:lexeme" the AND required
    # configs whose AND is of common words only, checked among the vector candidates (TextPlan.selective)
    text_among_candidates: list[str] = field(default_factory=list)
    context: ContextDecision = field(default_factory=lambda: ContextDecision(False, "empty query"))
    index_version: int | None = None  # the index version searched (traces record it)
    applies_to: Applicability | None = None  # the customer profile results were kept for (None: anyone)

    @property
    def fused(self) -> list[Hit]:
        return sorted(self.results + self.pruned, key=lambda h: h.rank)


class ChunkRow(NamedTuple):
    text: str
    language: str
    doc: str  # document slug
    section: str  # section heading path
    audience: Audience


@dataclass(frozen=True)
class Branches:
    """The three branches of one search, each best first."""

    vector: list[tuple[int, float]]  # (chunk id, cosine)
    text: list[tuple[int, float]]  # (chunk id, BM25) of the AND hits
    identifier: list[int]
    similarity: dict[int, float | None]  # cosine of every candidate
    # the rows of each branch's first k: the fused top k is almost always among them, so the last fetch is
    # usually not needed
    rows: dict[int, ChunkRow] = field(default_factory=dict)
    # whom each candidate applies to: every candidate's when a customer profile was given, else the rows'
    audiences: dict[int, Audience] = field(default_factory=dict)


def search(
    query: str,
    *,
    k: int = 5,
    language: str | None = None,
    embedder: Embedder | None = None,
    explain: bool = False,
    at_version: int | None = None,
    applies_to: Applicability | None = None,
) -> SearchResult:
    """Return the top-k chunks for query after fusion and the corrective prune, with the context decision.

    `applies_to` is what is known of the customer (billing's segment and plan code): a chunk whose section
    applies to other customers only (kb/applicability.py) is left out of the k, and shown among the pruned
    with the reason ("for business customers") when it ranked within them; an identifier hit stays (the
    customer quoted that document's number). Unknown parts of the profile, and chunks for everyone, are
    never left out. Without it every chunk competes, and each result says whom it applies to.

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
    identifiers = find_identifiers(query)
    with transaction.atomic():
        plan, index_version = _term_lookup(query, language, ef_search=max(MIN_EF_SEARCH, vector_n))
        branches = _branches(query_vector, plan, identifiers, vector_n=vector_n, text_n=text_n, language=language,
                             at_version=at_version, k=k, audiences=bool(applies_to))
    ranked = fuse(branches)
    position = {f.chunk_id: n for n, f in enumerate(ranked, start=1)}
    identifier_set = set(branches.identifier)
    # Left out for this customer: the chunks of the top k whose section applies to other customers only.
    excluded: dict[int, str] = {}
    if applies_to:
        for f in ranked:
            reason = "" if f.chunk_id in identifier_set else branches.audiences[f.chunk_id].excludes(applies_to)
            if reason:
                excluded[f.chunk_id] = reason
    fused = [f for f in ranked if f.chunk_id not in excluded][:k]
    left_out = [f for f in ranked[:k] if f.chunk_id in excluded]
    result = SearchResult(query=query, results=[], identifiers=identifiers, text_terms=shown_terms(plan),
                          text_among_candidates=sorted(plan.unselective(TEXT_CANDIDATE_CAP)),
                          applies_to=applies_to or None)
    if explain:
        result.vector_branch = [{"chunk_id": c, "score": round(s, 4)} for c, s in branches.vector]
        result.text_branch = [{"chunk_id": c, "rank": round(r, 4)} for c, r in branches.text]
        result.identifier_branch = [{"chunk_id": c} for c in branches.identifier]
        result.fused_ids = [f.chunk_id for f in ranked]
    if not fused:
        result.index_version = at_version or index_version
        result.context = decide_context([], min_best_score=settings.KB_CONTEXT_MIN_SCORE)
        return result

    rows = dict(branches.rows)
    missing = [f.chunk_id for f in fused + left_out if f.chunk_id not in rows]
    if missing:
        rows.update(_chunk_rows(missing))
    text_score = dict(branches.text)
    candidates = [
        Candidate(
            chunk_id=f.chunk_id,
            vector_score=branches.similarity.get(f.chunk_id),
            matched_by_text=f.chunk_id in text_score,
            matched_by_identifier=f.chunk_id in identifier_set,
        )
        for f in fused
    ]
    rule = prune_rule(embedder)  # the margin in this embedder's scale, or the seed's rule when uncalibrated
    decisions = prune(candidates, margin=rule.margin)
    outcomes = [(f, decision.kept, decision.reason) for f, decision in zip(fused, decisions)]
    outcomes += [(f, False, excluded[f.chunk_id]) for f in left_out]
    for f, kept, reason in sorted(outcomes, key=lambda outcome: position[outcome[0].chunk_id]):
        row = rows[f.chunk_id]
        similarity = branches.similarity.get(f.chunk_id)
        hit = Hit(
            chunk_id=f.chunk_id, doc=row.doc, section=row.section, language=row.language, text=row.text,
            rank=position[f.chunk_id], rrf=round(f.rrf, 6),
            vector_score=None if similarity is None else round(float(similarity), 4),
            vector_rank=f.ranks.get("vector"),
            text_rank=round(text_score[f.chunk_id], 4) if f.chunk_id in text_score else None,
            text_position=f.ranks.get("text"),
            matched_by_text=f.chunk_id in text_score,
            matched_by_identifier=f.chunk_id in identifier_set,
            kept=kept, prune_reason=reason,
            segment=row.audience.segment, plans=list(row.audience.plans), term=row.audience.term,
        )
        (result.results if hit.kept else result.pruned).append(hit)
    result.context = replace(decide_context(result.results, min_best_score=settings.KB_CONTEXT_MIN_SCORE),
                             prune_rule=rule.description)
    result.index_version = at_version or index_version
    return result


def fuse(branches: Branches) -> list[Fused]:
    """Return the branches fused by RRF, best first: the vector branch, the AND text hits, the identifier hits."""
    return reciprocal_rank_fusion(
        {
            "vector": [chunk_id for chunk_id, _ in branches.vector],
            "text": [chunk_id for chunk_id, _ in branches.text],
            "identifier": branches.identifier,
        },
        k=settings.KB_RRF_K,
    )


def text_plan(query: str, language: str | None = None, *, ef_search: int | None = None) -> TextPlan:
    """Return what the full-text branch requires of a chunk for this query (one lookup in the term statistics).

    With `ef_search` (inside the caller's transaction) the same statement sets HNSW's ef_search and its
    iterative scan for the rest of the transaction instead of a SET LOCAL round trip.
    """
    return _term_lookup(query, language, ef_search=ef_search)[0]


def _term_lookup(query: str, language: str | None, *, ef_search: int | None) -> tuple[TextPlan, int | None]:
    """Return text_plan's plan and the index version searched, read in the same statement (one round trip
    fewer per search: the trace records the version)."""
    configs = [CONFIG_BY_LANGUAGE[language]] if language else list(CONFIG_BY_LANGUAGE.values())
    # ef_search must be at least the number of rows wanted or HNSW returns fewer. The iterative scan goes on
    # past ef_search when rows are filtered out after the index: by a language filter, and by index entries
    # this transaction cannot see (rows deleted but not yet vacuumed, or deleted by an open transaction — a
    # test's fixture deleting the sample KB left the vector branch of its six new chunks empty).
    tuning = [("hnsw.ef_search", str(int(ef_search))), ("hnsw.iterative_scan", "relaxed_order")] if ef_search else []
    with connection.cursor() as cursor:
        # Lexemes per config, with where their word appears; 'simple' lexemes only when no language config
        # treats them as a stop word, so names and codes match without "de", "la", "the" matching every chunk.
        # The query's accents are folded like the chunks' (or "móvil" never meets the stored "movil").
        # The stop words of each language the query uses tell which language it is written in. A lexeme of an
        # irregular form ("paid") brings its verb's lexeme ('pay') as another form of the same word.
        irregular = [row for row in _irregular_lexemes(cursor) if row[0] in configs]
        cursor.execute(
            f"""
            WITH folded AS (SELECT translate(%s, %s, %s) AS text),
            words AS (
                SELECT u.lexeme AS word, u.positions[1] AS position,
                       to_tsvector('spanish', u.lexeme) = ''::tsvector AS stop_es,
                       to_tsvector('english', u.lexeme) = ''::tsvector AS stop_en
                FROM folded, unnest(to_tsvector('simple', folded.text)) AS u
            ),
            q AS (
                SELECT cfg, u.lexeme, u.positions[1] AS position
                FROM unnest(%s::text[]) AS cfg, folded, unnest(to_tsvector(cfg::regconfig, folded.text)) AS u
                UNION ALL
                SELECT 'simple', word, position FROM words WHERE NOT stop_es AND NOT stop_en
            ),
            irregular AS (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]) AS i(cfg, form, verb))
            SELECT 'term', q.cfg, q.lexeme, q.position, coalesce(s.ndoc, 0), NULL::float8 FROM q
            LEFT JOIN {TermStat._meta.db_table} s ON s.config = q.cfg AND s.lexeme = q.lexeme
            UNION ALL
            SELECT 'form', q.cfg, i.verb, q.position, coalesce(s.ndoc, 0), NULL FROM q
            JOIN irregular i ON i.cfg = q.cfg AND i.form = q.lexeme
            LEFT JOIN {TermStat._meta.db_table} s ON s.config = q.cfg AND s.lexeme = i.verb
            UNION ALL
            SELECT 'total', config, NULL, NULL, chunks, avg_words FROM {TermTotal._meta.db_table}
            UNION ALL
            SELECT 'stop', 'spanish', NULL, NULL, count(*) FILTER (WHERE stop_es AND NOT stop_en), NULL FROM words
            UNION ALL
            SELECT 'stop', 'english', NULL, NULL, count(*) FILTER (WHERE stop_en AND NOT stop_es), NULL FROM words
            UNION ALL
            SELECT 'set', set_config(name, value, true), NULL, NULL, NULL, NULL FROM unnest(%s::text[], %s::text[])
                AS tuning(name, value)
            UNION ALL
            (SELECT 'version', NULL, NULL, NULL, index_version, NULL FROM {EmbeddingSpace._meta.db_table}
             ORDER BY id LIMIT 1)
            """,
            [strip_filler(query), ACCENTED, UNACCENTED, configs, [c for c, _, _ in irregular],
             [f for _, f, _ in irregular], [v for _, _, v in irregular], [n for n, _ in tuning],
             [v for _, v in tuning]],
        )
        rows = cursor.fetchall()
    forms: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for kind, cfg, lexeme, position, ndoc, _ in rows:
        if kind == "form":
            forms.setdefault((cfg, int(position)), []).append((lexeme, int(ndoc)))
    terms = [QueryTerm(cfg, lexeme, int(ndoc), int(position), tuple(sorted(forms.get((cfg, int(position)), []))))
             for kind, cfg, lexeme, position, ndoc, _ in rows if kind == "term"]
    totals = {cfg: ConfigTotals(int(n), float(avg)) for kind, cfg, _, _, n, avg in rows if kind == "total"}
    stop_words = {cfg: int(n) for kind, cfg, _, _, n, _ in rows if kind == "stop"}
    version = next((int(n) for kind, _, _, _, n, _ in rows if kind == "version" and n is not None), None)
    return plan_text_query(terms, totals, stop_words=stop_words), version


_IRREGULAR_LEXEMES: list[tuple[str, str, str]] = []


def _irregular_lexemes(cursor) -> list[tuple[str, str, str]]:
    """Return (config, lexeme of the irregular form, lexeme of its verb) for IRREGULAR_FORMS, stemmed once per
    process by the server's own configs (66 to_tsvector calls a search saves)."""
    if not _IRREGULAR_LEXEMES:
        pairs = [(config, form, verb) for config, table in IRREGULAR_FORMS.items() for form, verb in table.items()]
        cursor.execute(
            """
            SELECT i.cfg, f.lexeme, v.lexeme
            FROM unnest(%s::text[], %s::text[], %s::text[]) AS i(cfg, form, verb),
                 unnest(to_tsvector(i.cfg::regconfig, i.form)) AS f, unnest(to_tsvector(i.cfg::regconfig, i.verb)) AS v
            WHERE f.lexeme <> v.lexeme ORDER BY 1, 2, 3
            """,
            [[c for c, _, _ in pairs], [f for _, f, _ in pairs], [v for _, _, v in pairs]],
        )
        _IRREGULAR_LEXEMES[:] = [tuple(row) for row in cursor.fetchall()]
    return _IRREGULAR_LEXEMES


def text_scores(query: str, chunk_ids: list[int], *, language: str | None = None) -> dict[int, float]:
    """Return the BM25 of each given chunk that is an AND text hit for the query."""
    plan = text_plan(query, language)
    if plan.empty or not chunk_ids:
        return {}
    sql, params = _text_sql(plan, live="c.id = ANY(%(only)s)", language_filter="", similarity=False, bounded=True)
    params.update(only=list(chunk_ids), text_n=len(chunk_ids))
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {sql} SELECT id, score FROM text", params)
        return {int(i): float(score) for i, score in cursor.fetchall()}


def _branches(vector: list[float], plan: TextPlan, identifiers: list[str], *, vector_n: int, text_n: int,
              language: str | None, at_version: int | None, k: int = 5, audiences: bool = False) -> Branches:
    """Run the vector, full-text and identifier branches in one statement; return them best first, with the
    rows of each branch's first k (`Branches.rows`) and, with `audiences`, whom every candidate applies to.

    Call inside the transaction in which text_plan set HNSW's ef_search.
    """
    table = Chunk._meta.db_table
    if at_version is None:
        live = "retired_in IS NULL"
    else:
        live = "added_in <= %(version)s AND (retired_in IS NULL OR retired_in > %(version)s)"
    language_filter = " AND language = %(language)s" if language else ""
    params: dict = {"v": _vector_literal(vector), "vector_n": vector_n, "text_n": text_n, "version": at_version,
                    "language": language, "identifiers": identifiers, "identifier_n": IDENTIFIER_CANDIDATES, "k": k}
    # The query vector is sent once (3 kB of text) and read back as an InitPlan, which HNSW orders by as it
    # would a parameter.
    ctes = ["qv AS MATERIALIZED (SELECT %(v)s::vector AS v)",
            (f"vec AS (SELECT id, 1 - (embedding <=> (SELECT v FROM qv)) AS score FROM {table} "
             f"WHERE embedding IS NOT NULL AND {live}{language_filter} "
             f"ORDER BY embedding <=> (SELECT v FROM qv) LIMIT %(vector_n)s)")]
    # (branch, id, score, cosine, and for the 'x' rows: text, language, document slug, section heading path;
    # for the 'x' and 'a' rows: the section's segment, plans and term)
    selects = ["SELECT 'v', id, score, score, NULL, NULL, NULL, NULL, NULL, NULL::jsonb, NULL FROM vec"]
    candidates = ["SELECT id FROM vec"]
    firsts = ["(SELECT id FROM vec ORDER BY score DESC, id LIMIT %(k)s)"]
    text_sql, text_params = _text_sql(plan, live=live, language_filter=language_filter, within="vec")
    if text_sql:
        ctes.append(text_sql)
        params.update(text_params)
        selects.append("SELECT 't', id, score, similarity, NULL, NULL, NULL, NULL, NULL, NULL::jsonb, NULL FROM text")
        firsts.append("(SELECT id FROM text ORDER BY score DESC, id LIMIT %(k)s)")
        candidates.append("SELECT id FROM text")
    if identifiers:
        ctes.append(f"ident AS (SELECT id, 1 - (embedding <=> (SELECT v FROM qv)) AS similarity FROM {table} "
                    f"WHERE identifiers && %(identifiers)s::varchar[] AND {live}{language_filter} "
                    f"ORDER BY id LIMIT %(identifier_n)s)")
        selects.append("SELECT 'i', id, NULL, similarity, NULL, NULL, NULL, NULL, NULL, NULL::jsonb, NULL FROM ident")
        firsts.append("(SELECT id FROM ident ORDER BY id LIMIT %(k)s)")
        candidates.append("SELECT id FROM ident")
    # The texts of each branch's first k ride along (the fused top k almost always comes from them).
    ctes.append(f"firsts AS ({' UNION '.join(firsts)})")
    selects.append(f"SELECT 'x', c.id, NULL, NULL, c.text, c.language, d.slug, s.heading_path, s.segment, s.plans, "
                   f"s.term FROM firsts JOIN {table} c ON c.id = firsts.id "
                   f"JOIN {Document._meta.db_table} d ON d.id = c.document_id "
                   f"JOIN {Section._meta.db_table} s ON s.id = c.section_id")
    if audiences:  # a customer profile rules chunks out before the cut at k: whom every candidate applies to
        ctes.append(f"candidates AS ({' UNION '.join(candidates)})")
        selects.append(f"SELECT 'a', c.id, NULL, NULL, NULL, NULL, NULL, NULL, s.segment, s.plans, s.term "
                       f"FROM candidates JOIN {table} c ON c.id = candidates.id "
                       f"JOIN {Section._meta.db_table} s ON s.id = c.section_id")
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(ctes)} {' UNION ALL '.join(selects)}", params)
        fetched = cursor.fetchall()
    texts = {int(row[1]): ChunkRow(*row[4:8], _audience(*row[8:])) for row in fetched if row[0] == "x"}
    whom = {int(row[1]): _audience(*row[8:]) for row in fetched if row[0] == "a"}
    whom.update((chunk_id, row.audience) for chunk_id, row in texts.items())
    rows = [row[:4] for row in fetched if row[0] not in ("x", "a")]
    similarity = {int(chunk_id): (None if cos is None else float(cos)) for _, chunk_id, _, cos in rows}
    # relaxed_order may return rows slightly out of order; every branch is ordered here, ties by chunk id.
    return Branches(
        vector=sorted(((int(c), float(s)) for b, c, s, _ in rows if b == "v"), key=lambda r: (-r[1], r[0])),
        text=sorted(((int(c), float(s)) for b, c, s, _ in rows if b == "t"), key=lambda r: (-r[1], r[0])),
        identifier=sorted(int(c) for b, c, _, _ in rows if b == "i"),
        similarity=similarity,
        rows=texts,
        audiences=whom,
    )


def _audience(segment: str | None, plans: str | list | None, term: str | None) -> Audience:
    """Return the Audience of a section row (Django reads jsonb back as its text)."""
    if isinstance(plans, str):
        plans = json.loads(plans)
    return Audience(segment=segment or "", plans=tuple(plans or ()), term=term or "")


def _text_sql(plan: TextPlan, *, live: str, language_filter: str, similarity: bool = True,
              within: str | None = None, bounded: bool = False) -> tuple[str | None, dict]:
    """Return the CTEs (ending in `text`: id, score, similarity) of the full-text branch: the AND hits, by BM25.

    A selective AND (`TextPlan.selective`) is matched over every live chunk and all its matches are ranked.
    An AND of common words is matched only among the ids of the CTE named by `within` (the vector branch's
    candidates), or not at all without one. With `bounded`, `live` already names the few chunks to check and
    every AND runs over them. Returns (None, {}) when no AND is left to run.
    """
    table = Chunk._meta.db_table
    params: dict = {"cap": TEXT_CANDIDATE_CAP}
    clauses, scores = {}, {}
    for config, lexemes in plan.conjunctions.items():
        params[f"and_{config}"] = tsquery_and(lexemes, plan.forms.get(config))
        if config == "simple":
            clauses[config] = f"c.search_vector_simple @@ %(and_{config})s::tsquery"
        else:
            clauses[config] = (f"(c.language = '{LANGUAGE_BY_CONFIG[config]}' "
                               f"AND c.search_vector @@ %(and_{config})s::tsquery)")
    corpus = list(plan.conjunctions) if bounded else plan.selective(TEXT_CANDIDATE_CAP)
    narrow = plan.unselective(TEXT_CANDIDATE_CAP) if within and not bounded else []
    if not corpus and not narrow:
        return None, {}
    for config, weights in plan.scored.items():
        params[f"lex_{config}"], params[f"idf_{config}"] = list(weights), list(weights.values())
        params[f"avg_{config}"] = max(plan.avg_words.get(config, 0.0), 1.0)
        column = "search_vector_simple" if config == "simple" else "search_vector"
        # BM25 over the query's known words: ts_filter(setweight(…, 'A', words), '{a}') keeps just those
        # lexemes with their positions (tf), reading the tsvector once.
        scores[config] = (
            f"(SELECT coalesce(sum(w.idf * u.tf * {BM25_K1 + 1} / (u.tf + {BM25_K1} * "
            f"(1 - {BM25_B} + {BM25_B} * coalesce(c.words, 1) / %(avg_{config})s))), 0) "
            f"FROM (SELECT lexeme, cardinality(positions) AS tf FROM unnest(ts_filter(setweight(c.{column}, "
            f"'A', %(lex_{config})s::text[]), '{{a}}'))) AS u "
            f"JOIN unnest(%(lex_{config})s::text[], %(idf_{config})s::float8[]) AS w(lexeme, idf) "
            f"ON w.lexeme = u.lexeme)")
    # A chunk is scored once: in its language's config when the query has words there (stemmed: "reconexión"
    # counts in "reconexion" and "reconexiones"), else in simple (a name shared across languages).
    branches = [f"WHEN c.language = '{LANGUAGE_BY_CONFIG[config]}' THEN {bm25}"
                for config, bm25 in scores.items() if config != "simple"]
    score = (f"CASE {' '.join(branches)} ELSE {scores.get('simple', '0')} END" if branches
             else scores.get("simple", "0"))
    cosine = "1 - (c.embedding <=> (SELECT v FROM qv))" if similarity else "NULL::float8"
    matches = []
    if corpus:
        # At most `cap` rows: the bound comes from the term statistics, which a fresh import may not have
        # refreshed yet.
        matches.append(f"(SELECT c.id FROM {table} c WHERE ({' OR '.join(clauses[k] for k in corpus)}) "
                       f"AND {live}{language_filter} LIMIT %(cap)s)")
    if narrow:
        matches.append(f"(SELECT c.id FROM {within} JOIN {table} c ON c.id = {within}.id "
                       f"WHERE {' OR '.join(clauses[k] for k in narrow)})")
    sql = (f"conj AS MATERIALIZED ({' UNION '.join(matches)}), "
           f"text AS (SELECT c.id, {score}::float8 AS score, {cosine} AS similarity "
           f"FROM conj JOIN {table} c ON c.id = conj.id "
           f"ORDER BY score DESC, c.id LIMIT %(text_n)s)")
    return sql, params


def _chunk_rows(ids: list[int]) -> dict[int, ChunkRow]:
    """Return the rows (text, language, document slug, section heading path, audience) of the given chunks."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT c.id, c.text, c.language, d.slug, s.heading_path, s.segment, s.plans, s.term "
            f"FROM {Chunk._meta.db_table} c "
            f"JOIN {Document._meta.db_table} d ON d.id = c.document_id "
            f"JOIN {Section._meta.db_table} s ON s.id = c.section_id WHERE c.id = ANY(%s)",
            [ids],
        )
        return {int(row[0]): ChunkRow(*row[1:5], _audience(*row[5:])) for row in cursor.fetchall()}


def _vector_literal(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def current_index_version() -> int | None:
    """Return the index version search sees now (None before anything was imported)."""
    return EmbeddingSpace.objects.values_list("index_version", flat=True).first()
