"""Edits to the knowledge base: versions, section-level re-chunking, revert, soft delete, background re-embedding.

Every change to a document goes through `document_write`, also the file import: it compares the new
sections with the live ones by content hash, keeps unchanged sections (and their chunks, ids and
vectors), retires the rest at the new index version and creates chunks only for what changed. Vectors
are reused by chunk text where any chunk ever had that text; the rest are embedded in the background
(`ReembedJob`), or up front by the importer. Nothing is deleted: a retired chunk stays, so an old
trace still opens the chunk it retrieved and the index can be searched as it was at an older version.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import F

from core import clock
from core.tasks import task_queue
from kb.applicability import Audience
from kb.chunking import (
    MalformedDocument,
    ParsedDocument,
    ParsedSection,
    chunk_section,
    parse_file,
    parse_markdown,
    render_markdown,
    section_hash,
)
from kb.embeddings import Embedder
from kb.identifiers import find_identifiers
from kb.models import Chunk, Document, DocumentVersion, EmbeddingSpace, ReembedJob, Section
from kb.terms import refresh_term_stats

EMBED_BATCH = 16


class EditError(ValueError):
    """An edit that was refused because of what it holds (malformed Markdown, a changed slug…); nothing saved."""


class EditConflict(Exception):
    """Someone saved the same document (or section) after this editor opened it; nothing was saved.

    `theirs` is what is stored now, `base` what the editor started from, `yours` what they tried to save;
    `diff` shows what the other save changed, so the editor can redo their change on top of it.
    """

    def __init__(self, message: str, *, base: str, theirs: str, yours: str, current_version: int,
                 current_hash: str = ""):
        super().__init__(message)
        self.base, self.theirs, self.yours = base, theirs, yours
        self.current_version = current_version
        self.current_hash = current_hash
        self.diff = text_diff(base, theirs, "what you opened", "what is saved now")


@dataclass
class PreviewChunk:
    text: str
    tokens: int


@dataclass
class PreviewSection:
    heading_path: str
    status: str  # "unchanged", "changed" or "new"
    chunks: list[PreviewChunk]
    audience: Audience = Audience()  # whom the section applies to (the document's, or narrower)


@dataclass
class Preview:
    title: str = ""
    language: str = ""
    alternatives: tuple[str, ...] = ()
    alternative_label: str = ""
    audience: Audience = Audience()
    sections: list[PreviewSection] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # heading paths of live sections that would be retired
    error: str = ""

    @property
    def changed(self) -> int:
        return sum(1 for s in self.sections if s.status != "unchanged") + len(self.removed)


@dataclass
class WriteResult:
    document: Document
    version: DocumentVersion | None  # None when nothing changed
    index_version: int
    chunks_created: int = 0
    chunks_reused: int = 0  # new chunk rows that took the vector of a stored chunk with the same text
    chunks_retired: int = 0
    job: ReembedJob | None = None  # the background embedding of chunks that still have no vector


def text_diff(old: str, new: str, old_name: str = "before", new_name: str = "after") -> str:
    """Return a unified diff of two texts (empty when equal)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=old_name, tofile=new_name, n=2))


def source_hash(source: str) -> str:
    """Return the SHA-256 of a text: a document's source, or a chunk's text (its vector's reuse key)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def document_source(document: Document) -> str:
    """Return the Markdown an editor edits (built from the sections for rows imported before versions existed)."""
    if document.source:
        return document.source
    sections = list(document.sections.live().order_by("order"))
    return render_markdown(ParsedDocument(
        slug=document.slug, title=document.title, language=document.language,
        sections=[ParsedSection(s.heading_path, s.text, s.audience) for s in sections],
        alternatives=tuple(document.alternatives), alternative_label=document.alternative_label,
        audience=document.audience))


def parse_source(source: str, *, slug: str) -> ParsedDocument:
    """Parse an editor's Markdown for the document `slug`; raise EditError with the parser's message."""
    try:
        parsed = parse_markdown(source, source=f"{slug}.md", default_slug=slug)
    except MalformedDocument as exc:
        raise EditError(str(exc).removeprefix(f"{slug}.md: ")) from exc
    if parsed.slug != slug:
        raise EditError(f"the slug cannot change in an edit ({slug!r} → {parsed.slug!r}); import a new document")
    return parsed


def chunk_preview(*, document: Document | None, source: str, slug: str, embedder: Embedder) -> Preview:
    """Return how `source` would be chunked: the exact texts the retriever scores, and which sections change."""
    try:
        parsed = parse_source(source, slug=slug)
    except EditError as exc:
        return Preview(error=str(exc))
    live = {}
    if document is not None:
        live = {s.content_hash: s.heading_path for s in document.sections.live()}
    preview = Preview(title=parsed.title, language=parsed.language, alternatives=parsed.alternatives,
                      alternative_label=parsed.alternative_label, audience=parsed.audience)
    seen = set()
    live_paths = set(live.values())
    for section in parsed.sections:
        digest = section_hash(parsed.title, section.heading_path, section.text, section.audience)
        texts = chunk_section(parsed.title, section.heading_path, section.text,
                              count_tokens=embedder.count_tokens, max_tokens=embedder.max_tokens)
        status = ("unchanged" if digest in live
                  else "changed" if section.heading_path in live_paths else "new")
        seen.add(digest)
        preview.sections.append(PreviewSection(
            section.heading_path, status, [PreviewChunk(t, embedder.count_tokens(t)) for t in texts],
            section.audience))
    new_paths = {s.heading_path for s in parsed.sections}
    preview.removed = [path for digest, path in live.items() if digest not in seen and path not in new_paths]
    return preview


# --- writes --------------------------------------------------------------------------------------------------


@transaction.atomic
def document_save(*, document: Document, source: str, base_version: int, author=None, note: str = "",
                  embedder: Embedder, kind: str = DocumentVersion.Kind.EDIT,
                  reverted_from: int | None = None) -> WriteResult:
    """Save an edited document as a new version; refuse (EditConflict) when it changed since `base_version`."""
    document = Document.objects.select_for_update().get(pk=document.pk)
    if document.deleted_at is not None:
        raise EditError("the document is deleted; restore it before editing")
    current = document_source(document)
    source = source.replace("\r\n", "\n")
    if document.version != base_version:
        if source == current:  # a resubmitted form (double click): that text is already saved
            return WriteResult(document, None, _space().index_version)
        base = _version_source(document, base_version)
        raise EditConflict(
            f"{document.slug} was saved as version {document.version} after you opened version {base_version}",
            base=base, theirs=current, yours=source, current_version=document.version)
    parsed = parse_source(source, slug=document.slug)
    return document_write(document=document, parsed=parsed, source=source, kind=kind, author=author, note=note,
                          embedder=embedder, reverted_from=reverted_from)


@transaction.atomic
def section_save(*, document: Document, section: Section, text: str, base_hash: str, base_text: str = "",
                 author=None, note: str = "", embedder: Embedder) -> WriteResult:
    """Save one section's new text; refuse when that section changed since the editor opened it."""
    document = Document.objects.select_for_update().get(pk=document.pk)
    section = Section.objects.get(pk=section.pk)
    text = text.replace("\r\n", "\n").strip()
    if section.retired_in is not None or section.content_hash != base_hash:
        now = (document.sections.live().filter(heading_path=section.heading_path).first())
        if now is not None and now.text == text:  # a resubmitted form (double click): already saved
            return WriteResult(document, None, _space().index_version)
        raise EditConflict(
            f"the section “{section.heading_path}” was changed by another save after you opened it",
            base=base_text or section.text, theirs=now.text if now else "(the section was removed)",
            yours=text, current_version=document.version, current_hash=now.content_hash if now else "")
    if not text:
        raise EditError("a section needs text; to remove it, edit the whole document")
    new_source = section_source(document=document, section=section, text=text)
    parsed = parse_source(new_source, slug=document.slug)
    return document_write(document=document, parsed=parsed, source=new_source, kind=DocumentVersion.Kind.EDIT,
                          author=author, note=note or f"edited § {section.heading_path}", embedder=embedder)


def section_source(*, document: Document, section: Section, text: str) -> str:
    """Return the document's Markdown with one live section's text replaced by `text`."""
    source = document_source(document)
    if source.count(section.text) == 1:
        return source.replace(section.text, text)
    # The stored Markdown differs in spacing from the parsed text: rebuild it from the sections.
    sections = [ParsedSection(s.heading_path, text if s.pk == section.pk else s.text, s.audience)
                for s in document.sections.live().order_by("order")]
    return render_markdown(ParsedDocument(document.slug, document.title, document.language, sections,
                                          tuple(document.alternatives), document.alternative_label,
                                          document.audience))


def document_revert(*, document: Document, number: int, author=None, embedder: Embedder) -> WriteResult:
    """Make a new version whose content is version `number`'s (history is never rewritten)."""
    target = document.versions.filter(number=number).first()
    if target is None:
        raise EditError(f"{document.slug} has no version {number}")
    return document_save(document=document, source=target.source, base_version=document.version, author=author,
                         note=f"reverted to version {number}", embedder=embedder,
                         kind=DocumentVersion.Kind.REVERT, reverted_from=number)


@transaction.atomic
def document_delete(*, document: Document, author=None) -> WriteResult:
    """Soft-delete: retire every live section and chunk at a new index version; the history stays."""
    document = Document.objects.select_for_update().get(pk=document.pk)
    if document.deleted_at is not None:  # a second click: nothing more to do
        return WriteResult(document, None, _space().index_version)
    space = _bump_space()
    retired = Chunk.objects.live().filter(document=document).update(retired_in=space.index_version)
    document.sections.live().update(retired_in=space.index_version)
    document.deleted_at = clock.now()
    version = _record_version(document, kind=DocumentVersion.Kind.DELETE, source=document_source(document),
                              author=author, note="deleted", changed=[], index_version=space.index_version)
    _refresh_stats()
    return WriteResult(document, version, space.index_version, chunks_retired=retired)


@transaction.atomic
def document_restore(*, document: Document, author=None, embedder: Embedder) -> WriteResult:
    """Bring a soft-deleted document back as it was (its vectors are reused: no embedding needed)."""
    document = Document.objects.select_for_update().get(pk=document.pk)
    if document.deleted_at is None:
        return WriteResult(document, None, _space().index_version)
    document.deleted_at = None
    source = document_source(document)
    return document_write(document=document, parsed=parse_source(source, slug=document.slug), source=source,
                          kind=DocumentVersion.Kind.RESTORE, author=author, note="restored", embedder=embedder)


def document_write(*, document: Document | None, parsed: ParsedDocument, source: str, kind: str, embedder: Embedder,
                   author=None, note: str = "", vectors: dict[str, list[float]] | None = None,
                   reverted_from: int | None = None, index_version: int | None = None,
                   source_path: str = "", queue_embedding: bool = True) -> WriteResult:
    """Write `parsed` as the live content of the document (created when None); the one write path.

    Call inside a transaction holding the document's row lock. Unchanged sections keep their rows and
    chunks; changed ones are retired at the new index version and replaced. `vectors` maps chunk-text
    hashes to vectors the caller already has; other texts reuse any stored chunk's vector with the same
    text, else stay NULL and a ReembedJob is queued. `index_version` lets the importer write several
    documents under one bump.
    """
    assert transaction.get_connection().in_atomic_block, "document_write runs inside a transaction"
    wanted = [(order, s, section_hash(parsed.title, s.heading_path, s.text, s.audience))
              for order, s in enumerate(parsed.sections)]
    live = list(document.sections.live().order_by("order")) if document is not None else []
    by_hash: dict[str, list[Section]] = {}
    for section in live:
        by_hash.setdefault(section.content_hash, []).append(section)
    keep: dict[int, Section] = {}
    for order, _, digest in wanted:
        if by_hash.get(digest):
            keep[order] = by_hash[digest].pop(0)
    retire = [s for bucket in by_hash.values() for s in bucket]
    unchanged = (document is not None and not retire and len(keep) == len(wanted)
                 and all(keep[o].order == o for o in keep) and document.title == parsed.title
                 and document.language == parsed.language and document.deleted_at is None
                 and (document.source or "") == source
                 and list(document.alternatives) == list(parsed.alternatives)
                 and document.alternative_label == parsed.alternative_label
                 and document.audience == parsed.audience)
    if unchanged:
        return WriteResult(document, None, _space().index_version)

    version = index_version or _bump_space().index_version
    if document is None:
        document = Document.objects.create(slug=parsed.slug, title=parsed.title, language=parsed.language,
                                           source_path=source_path, content_hash=source_hash(source),
                                           source=source, version=0, alternatives=list(parsed.alternatives),
                                           alternative_label=parsed.alternative_label, segment=parsed.audience.segment,
                                           plans=list(parsed.audience.plans), term=parsed.audience.term)
    retired_chunks = 0
    if retire:
        retired_chunks = Chunk.objects.filter(section__in=retire, retired_in__isnull=True).update(retired_in=version)
        Section.objects.filter(pk__in=[s.pk for s in retire]).update(retired_in=version)
    # Kept sections may move; park them past any order in use so the partial unique index never collides.
    moved = [(o, s) for o, s in keep.items() if s.order != o]
    if moved:
        Section.objects.filter(pk__in=[s.pk for _, s in moved]).update(order=F("order") + 100_000)
        for order, section in moved:
            Section.objects.filter(pk=section.pk).update(order=order)
    created_sections = Section.objects.bulk_create(
        Section(document=document, order=order, heading_path=s.heading_path, text=s.text, content_hash=digest,
                added_in=version, segment=s.audience.segment, plans=list(s.audience.plans), term=s.audience.term)
        for order, s, digest in wanted if order not in keep)
    planned, reused = _planned_chunks(document, parsed, created_sections, embedder=embedder, vectors=vectors,
                                      version=version)
    if document.language != parsed.language:
        Chunk.objects.live().filter(document=document).update(language=parsed.language)
    Chunk.objects.bulk_create(planned)

    changed = sorted({s.heading_path for s in retire} | {s.heading_path for s in created_sections})
    document.title, document.language = parsed.title, parsed.language
    document.alternatives, document.alternative_label = list(parsed.alternatives), parsed.alternative_label
    document.set_audience(parsed.audience)
    document.source, document.content_hash = source, source_hash(source)
    if source_path:
        document.source_path = source_path
    record = _record_version(document, kind=kind, source=source, author=author, note=note, changed=changed,
                             index_version=version, reverted_from=reverted_from)
    result = WriteResult(document, record, version, chunks_created=len(planned), chunks_reused=reused,
                         chunks_retired=retired_chunks)
    if queue_embedding and any(c.embedding is None for c in planned):
        result.job = ReembedJob.objects.create(document=document, document_version=record.number,
                                               total=sum(1 for c in planned if c.embedding is None))
        job_id = result.job.pk
        # robust: a failing embedder marks the job failed (the page offers a retry); the save stands.
        transaction.on_commit(lambda: _queue_reembed(job_id), robust=True)
    if index_version is None:
        _refresh_stats()
    return result


def _planned_chunks(document: Document, parsed: ParsedDocument, sections: list[Section], *, embedder: Embedder,
                    vectors: dict[str, list[float]] | None, version: int) -> tuple[list[Chunk], int]:
    """Return the unsaved chunks of the new sections, each with a vector when the caller gave one for its text or
    a stored chunk of the same text has one, and how many were reused from stored chunks."""
    planned: list[Chunk] = []
    for section in sections:
        texts = chunk_section(parsed.title, section.heading_path, section.text,
                              count_tokens=embedder.count_tokens, max_tokens=embedder.max_tokens)
        for piece, text in enumerate(texts):
            planned.append(Chunk(document=document, section=section, piece=piece, language=parsed.language,
                                 text=text, content_hash=source_hash(text),
                                 identifiers=find_identifiers(text), added_in=version))
    given = vectors or {}
    stored: dict[str, list[float]] = {}
    missing = {c.content_hash for c in planned} - set(given)
    if missing:
        for digest, vector in (Chunk.objects.filter(content_hash__in=missing, embedding__isnull=False)
                               .values_list("content_hash", "embedding")):
            stored.setdefault(digest, list(vector))
    reused = 0
    for chunk in planned:
        if chunk.content_hash in given:
            chunk.embedding = given[chunk.content_hash]
        elif chunk.content_hash in stored:
            chunk.embedding = stored[chunk.content_hash]
            reused += 1
    return planned, reused


def _record_version(document: Document, *, kind, source, author, note, changed, index_version,
                    reverted_from=None) -> DocumentVersion:
    document.version += 1
    document.save(update_fields=["title", "language", "source", "content_hash", "source_path", "version",
                                 "deleted_at", "updated_at", "alternatives", "alternative_label",
                                 "segment", "plans", "term"])
    return DocumentVersion.objects.create(
        document=document, number=document.version, kind=kind, title=document.title, language=document.language,
        source=source, content_hash=source_hash(source), changed_sections=changed, index_version=index_version,
        reverted_from=reverted_from, author=author if getattr(author, "pk", None) else None, note=note[:300])


def _version_source(document: Document, number: int) -> str:
    version = document.versions.filter(number=number).first()
    return version.source if version else ""


def _space() -> EmbeddingSpace:
    space = EmbeddingSpace.objects.first()
    if space is None:
        from kb.embeddings import get_embedder

        embedder = get_embedder()
        space = EmbeddingSpace.objects.create(model_name=embedder.name, dimensions=embedder.dimensions)
    return space


def _bump_space() -> EmbeddingSpace:
    space = EmbeddingSpace.objects.select_for_update().first() or _space()
    space.index_version += 1
    space.save(update_fields=["index_version", "updated_at"])
    return space


def _refresh_stats() -> None:
    refresh_term_stats()


def _queue_reembed(job_id: int) -> None:
    task_queue("kb.reembed_document", job_id)


# --- background embedding ------------------------------------------------------------------------------------


def reembed_job_run(*, job: ReembedJob, embedder: Embedder) -> ReembedJob:
    """Embed the document's live chunks that have no vector, in batches, recording progress on the job."""
    ReembedJob.objects.filter(pk=job.pk).update(status=ReembedJob.Status.RUNNING)
    pending = list(Chunk.objects.live().filter(document_id=job.document_id, embedding__isnull=True)
                   .order_by("pk").values_list("pk", "text"))
    ReembedJob.objects.filter(pk=job.pk).update(total=len(pending), done=0)
    try:
        for start in range(0, len(pending), EMBED_BATCH):
            group = pending[start:start + EMBED_BATCH]
            vectors = embedder.embed_passages([text for _, text in group])
            with transaction.atomic():
                for (pk, _), vector in zip(group, vectors):
                    Chunk.objects.filter(pk=pk, embedding__isnull=True).update(embedding=vector)
                ReembedJob.objects.filter(pk=job.pk).update(done=start + len(group))
    except Exception as exc:  # the job page must say why; the chunks stay findable by their text
        ReembedJob.objects.filter(pk=job.pk).update(status=ReembedJob.Status.FAILED, error=str(exc)[:2000],
                                                    finished_at=clock.now())
        raise
    ReembedJob.objects.filter(pk=job.pk).update(status=ReembedJob.Status.DONE, finished_at=clock.now())
    job.refresh_from_db()
    return job


@transaction.atomic
def reembed_job_retry(*, job: ReembedJob) -> ReembedJob:
    """Queue a failed job again (a second click, or a job already running or done, changes nothing)."""
    updated = ReembedJob.objects.filter(pk=job.pk, status=ReembedJob.Status.FAILED).update(
        status=ReembedJob.Status.QUEUED, error="", finished_at=None)
    if updated:
        transaction.on_commit(lambda: _queue_reembed(job.pk), robust=True)
    job.refresh_from_db()
    return job


def read_upload(name: str, raw: bytes) -> tuple[ParsedDocument, str]:
    """Parse an uploaded .md/.html file; return it and the Markdown to store. Raise EditError with the reason."""
    path = Path(name)
    try:
        parsed = parse_file(path, raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise EditError(f"{name}: not UTF-8 text") from exc
    except MalformedDocument as exc:
        raise EditError(str(exc)) from exc
    source = raw.decode("utf-8") if path.suffix.lower() in {".md", ".markdown"} else render_markdown(parsed)
    return parsed, source
