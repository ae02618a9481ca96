"""Writes to the knowledge base: import files, re-embed, refresh term statistics."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from django.db import connection, transaction

from kb.chunking import SUPPORTED_SUFFIXES, ParsedDocument, chunk_section
from kb.editing import EMBED_BATCH, EditError, document_write, read_upload, source_hash
from kb.embeddings import Embedder
from kb.models import Chunk, Document, EmbeddingSpace
from kb.terms import refresh_term_stats

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


def _embed_in_batches(items: list[tuple], embedder: Embedder, progress: Progress | None) -> dict:
    """Embed (key, text) pairs EMBED_BATCH at a time; return {key: vector}, reporting progress per batch."""
    vectors = {}
    for start in range(0, len(items), EMBED_BATCH):
        group = items[start:start + EMBED_BATCH]
        for (key, _), vector in zip(group, embedder.embed_passages([text for _, text in group])):
            vectors[key] = vector
        if progress:
            progress(len(group))
    return vectors


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
    author=None,
) -> ImportReport:
    """Import Markdown/HTML files; re-embed only chunks whose text changed; all or nothing."""
    files: list[Path] = []
    for path in paths:
        files.extend(collect_files(Path(path)))
    if not files:
        raise KnowledgeBaseError("no .md or .html files found in " + ", ".join(str(p) for p in paths))
    return documents_import_files(files=[(str(f), f.read_bytes()) for f in files], embedder=embedder,
                                  on_planned=on_planned, progress=progress, author=author)


def documents_import_files(
    *,
    files: list[tuple[str, bytes]],
    embedder: Embedder,
    on_planned: Callable[[int], None] | None = None,
    progress: Progress | None = None,
    author=None,
) -> ImportReport:
    """Import (name, bytes) pairs — files from disk or uploads — as new document versions; all or nothing.

    Vectors are computed before the transaction opens (the slow part), for chunk texts no stored
    chunk has; then every changed document is written under one index version bump.
    """
    parsed: list[tuple[str, ParsedDocument, str]] = []
    seen: dict[str, str] = {}
    for name, raw in files:
        try:
            document, source = read_upload(name, raw)
        except EditError as exc:
            raise KnowledgeBaseError(str(exc)) from exc
        if document.slug in seen:
            raise KnowledgeBaseError(f"{name}: slug {document.slug!r} is also used by {seen[document.slug]}")
        seen[document.slug] = name
        parsed.append((name, document, source))

    current_space(embedder)
    existing = {d.slug: d for d in Document.objects.filter(slug__in=seen)}
    report = ImportReport()
    plans = []
    for name, document, source in parsed:
        old = existing.get(document.slug)
        if old is not None and old.deleted_at is None and old.content_hash == source_hash(source):
            report.unchanged.append(document.slug)
            continue
        plans.append((name, document, source, old))

    # Embed the chunk texts no stored chunk has, before opening the transaction.
    texts: dict[str, str] = {}
    for _, document, _, _ in plans:
        for section in document.sections:
            for text in chunk_section(document.title, section.heading_path, section.text,
                                      count_tokens=embedder.count_tokens, max_tokens=embedder.max_tokens):
                texts.setdefault(source_hash(text), text)
    stored = set(Chunk.objects.filter(content_hash__in=list(texts), embedding__isnull=False)
                 .values_list("content_hash", flat=True))
    to_embed = [(digest, text) for digest, text in texts.items() if digest not in stored]
    if on_planned:
        on_planned(len(to_embed))
    vectors: dict[str, list[float]] = _embed_in_batches(to_embed, embedder, progress)
    report.chunks_embedded = len(to_embed)

    with transaction.atomic():
        space = _touch_space(embedder, bump=bool(plans))
        for name, document, source, old in plans:
            if old is not None:
                old = Document.objects.select_for_update().get(pk=old.pk)
                old.deleted_at = None
            result = document_write(document=old, parsed=document, source=source, embedder=embedder,
                                    kind="import", author=author, note=f"imported from {Path(name).name}",
                                    vectors=vectors, index_version=space.index_version, source_path=name)
            report.chunks_reused += result.chunks_reused
            (report.updated if old is not None else report.created).append(document.slug)
        if plans:
            refresh_term_stats()
    report.index_version = space.index_version
    return report


def _touch_space(embedder: Embedder, *, bump: bool) -> EmbeddingSpace:
    space = EmbeddingSpace.objects.select_for_update().first()
    if space is None:
        return EmbeddingSpace.objects.create(model_name=embedder.name, dimensions=embedder.dimensions)
    if bump:
        space.index_version += 1
        space.save(update_fields=["index_version", "updated_at"])
    return space


def chunks_reembed(*, embedder: Embedder, progress: Progress | None = None) -> EmbeddingSpace:
    """Re-embed every chunk with the configured embedder and record it as the embedding space."""
    ids_texts = list(Chunk.objects.order_by("pk").values_list("pk", "text"))
    vectors: dict[int, list[float]] = _embed_in_batches(ids_texts, embedder, progress)
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
                f"USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64) "
                f"WHERE retired_in IS NULL"
            )
        if space is None:
            space = EmbeddingSpace.objects.create(model_name=embedder.name, dimensions=embedder.dimensions)
        else:
            space.model_name = embedder.name
            space.dimensions = embedder.dimensions
            space.index_version += 1
            space.save()
    return space
