"""Writes to the knowledge base: import files, re-embed, refresh term statistics."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from django.db import connection, transaction

from kb.chunking import SUPPORTED_SUFFIXES, MalformedDocument, ParsedDocument, chunk_section, parse_file
from kb.embeddings import Embedder
from kb.identifiers import find_identifiers
from kb.models import Chunk, Document, EmbeddingSpace, Section, TermStat

Progress = Callable[[int], None]  # called with the number of items just finished


class KnowledgeBaseError(Exception):
    """An import or reindex that was refused; nothing was written."""


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    chunks_embedded: int = 0
    chunks_reused: int = 0
    index_version: int = 0


@dataclass
class _PlannedChunk:
    section_order: int
    piece: int
    text: str
    content_hash: str
    embedding: list[float] | None = None


@dataclass
class _PlannedDocument:
    parsed: ParsedDocument
    source: str
    content_hash: str
    existing: Document | None
    chunks: list[_PlannedChunk]


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def collect_files(path: Path) -> list[Path]:
    """Return the importable files at path (a file, or a folder searched recursively), sorted."""
    if not path.exists():
        raise KnowledgeBaseError(f"{path}: no such file or folder")
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES)


def current_space(embedder: Embedder) -> EmbeddingSpace | None:
    """Return the stored embedding space; refuse when its model is not the configured one."""
    space = EmbeddingSpace.objects.first()
    if space and (space.model_name != embedder.name or space.dimensions != embedder.dimensions):
        raise KnowledgeBaseError(
            f"The stored vectors come from {space.model_name} ({space.dimensions}-d) but the configured "
            f"embedder is {embedder.name} ({embedder.dimensions}-d). Run `python manage.py kb_reindex` "
            f"to re-embed every chunk; vectors of two models are never mixed."
        )
    return space


def documents_import(
    *,
    paths: list[Path],
    embedder: Embedder,
    on_planned: Callable[[int], None] | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Import Markdown/HTML files; re-embed only chunks whose text changed; all or nothing."""
    files: list[Path] = []
    for path in paths:
        files.extend(collect_files(Path(path)))
    if not files:
        raise KnowledgeBaseError("no .md or .html files found in " + ", ".join(str(p) for p in paths))

    parsed: list[tuple[Path, ParsedDocument, str]] = []
    seen: dict[str, Path] = {}
    for file in files:
        raw = file.read_bytes()
        try:
            document = parse_file(file, raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise KnowledgeBaseError(f"{file}: not UTF-8 text ({exc.reason})") from exc
        except MalformedDocument as exc:
            raise KnowledgeBaseError(str(exc)) from exc
        if document.slug in seen:
            raise KnowledgeBaseError(f"{file}: slug {document.slug!r} is also used by {seen[document.slug]}")
        seen[document.slug] = file
        parsed.append((file, document, hashlib.sha256(raw).hexdigest()))

    current_space(embedder)
    existing = {d.slug: d for d in Document.objects.filter(slug__in=seen)}
    report = ImportReport()
    plans: list[_PlannedDocument] = []
    for file, document, digest in parsed:
        old = existing.get(document.slug)
        if old is not None and old.content_hash == digest:
            report.unchanged.append(document.slug)
            continue
        chunks = []
        for order, section in enumerate(document.sections):
            texts = chunk_section(
                document.title,
                section.heading_path,
                section.text,
                count_tokens=embedder.count_tokens,
                max_tokens=embedder.max_tokens,
            )
            chunks.extend(_PlannedChunk(order, piece, text, _sha256(text)) for piece, text in enumerate(texts))
        plans.append(_PlannedDocument(document, str(file), digest, old, chunks))

    # Reuse the vectors of unchanged chunk texts; embed the rest before opening the transaction.
    reusable = dict(
        Chunk.objects.filter(document__in=[p.existing for p in plans if p.existing], embedding__isnull=False)
        .values_list("content_hash", "embedding")
    )
    to_embed = []
    for plan in plans:
        for chunk in plan.chunks:
            if chunk.content_hash in reusable:
                chunk.embedding = list(reusable[chunk.content_hash])
                report.chunks_reused += 1
            else:
                to_embed.append(chunk)
    if on_planned:
        on_planned(len(to_embed))
    batch = 16
    for start in range(0, len(to_embed), batch):
        group = to_embed[start:start + batch]
        for chunk, vector in zip(group, embedder.embed_passages([c.text for c in group])):
            chunk.embedding = vector
        if progress:
            progress(len(group))
    report.chunks_embedded = len(to_embed)

    with transaction.atomic():
        for plan in plans:
            _write_document(plan)
            (report.updated if plan.existing else report.created).append(plan.parsed.slug)
        space = _touch_space(embedder, bump=bool(plans))
        if plans:
            refresh_term_stats()
    report.index_version = space.index_version
    return report


def _write_document(plan: _PlannedDocument) -> Document:
    parsed = plan.parsed
    if plan.existing is None:
        document = Document.objects.create(
            slug=parsed.slug,
            title=parsed.title,
            language=parsed.language,
            source_path=plan.source,
            content_hash=plan.content_hash,
        )
    else:
        document = plan.existing
        document.title = parsed.title
        document.language = parsed.language
        document.source_path = plan.source
        document.content_hash = plan.content_hash
        document.version += 1
        document.save(update_fields=["title", "language", "source_path", "content_hash", "version", "updated_at"])
        document.sections.all().delete()  # cascades to chunks; vectors were kept in the plan
    sections = Section.objects.bulk_create(
        Section(document=document, order=order, heading_path=s.heading_path, text=s.text)
        for order, s in enumerate(parsed.sections)
    )
    Chunk.objects.bulk_create(
        Chunk(
            document=document,
            section=sections[c.section_order],
            piece=c.piece,
            language=parsed.language,
            text=c.text,
            content_hash=c.content_hash,
            embedding=c.embedding,
            identifiers=find_identifiers(c.text),
        )
        for c in plan.chunks
    )
    return document


def _touch_space(embedder: Embedder, *, bump: bool) -> EmbeddingSpace:
    space = EmbeddingSpace.objects.select_for_update().first()
    if space is None:
        return EmbeddingSpace.objects.create(model_name=embedder.name, dimensions=embedder.dimensions)
    if bump:
        space.index_version += 1
        space.save(update_fields=["index_version", "updated_at"])
    return space


def refresh_term_stats() -> None:
    """Recount how many chunks hold each lexeme, per config (for the full-text branch)."""
    table = Chunk._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {TermStat._meta.db_table}")
        for config, where, column in (
            ("spanish", "language = 'es'", "search_vector"),
            ("english", "language = 'en'", "search_vector"),
            ("simple", "TRUE", "search_vector_simple"),
        ):
            cursor.execute(
                f"INSERT INTO {TermStat._meta.db_table} (config, lexeme, ndoc) "
                f"SELECT %s, word, ndoc FROM ts_stat(%s)",
                [config, f"SELECT {column} FROM {table} WHERE {where}"],
            )


def chunks_reembed(*, embedder: Embedder, progress: Progress | None = None) -> EmbeddingSpace:
    """Re-embed every chunk with the configured embedder and record it as the embedding space."""
    ids_texts = list(Chunk.objects.order_by("pk").values_list("pk", "text"))
    vectors: dict[int, list[float]] = {}
    batch = 16
    for start in range(0, len(ids_texts), batch):
        group = ids_texts[start:start + batch]
        for (pk, _), vector in zip(group, embedder.embed_passages([t for _, t in group])):
            vectors[pk] = vector
        if progress:
            progress(len(group))
    table = Chunk._meta.db_table
    with transaction.atomic():
        space = EmbeddingSpace.objects.select_for_update().first()
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT atttypmod FROM pg_attribute WHERE attrelid = '{table}'::regclass "
                           f"AND attname = 'embedding'")
            (current_dim,) = cursor.fetchone()
            if current_dim != embedder.dimensions:
                # Deferred FK checks queued earlier in this transaction would block ALTER TABLE.
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                cursor.execute("DROP INDEX IF EXISTS kb_chunk_embedding_hnsw")
                cursor.execute(f"UPDATE {table} SET embedding = NULL")
                cursor.execute(
                    f"ALTER TABLE {table} ALTER COLUMN embedding TYPE vector({int(embedder.dimensions)})"
                )
        for pk, vector in vectors.items():
            Chunk.objects.filter(pk=pk).update(embedding=vector)
        with connection.cursor() as cursor:
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS kb_chunk_embedding_hnsw ON {table} "
                f"USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
            )
        if space is None:
            space = EmbeddingSpace.objects.create(model_name=embedder.name, dimensions=embedder.dimensions)
        else:
            space.model_name = embedder.name
            space.dimensions = embedder.dimensions
            space.index_version += 1
            space.save()
    return space
