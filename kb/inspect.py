"""What a KB editor reads about the index: document rows, chunk status, edit links, rank changes between index versions."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import CharField, Count, DateTimeField, OuterRef, Q, QuerySet, Subquery
from django.urls import NoReverseMatch, reverse

from kb.models import Chunk, Document, DocumentVersion


def document_rows(*, include_deleted: bool = False) -> QuerySet[Document]:
    """Return the documents with their live chunk count and their latest version's author and time."""
    latest = DocumentVersion.objects.filter(document=OuterRef("pk")).order_by("-number")
    documents = Document.objects.annotate(
        chunk_count=Count("chunks", filter=Q(chunks__retired_in__isnull=True)),
        last_edit_at=Subquery(latest.values("created_at")[:1], output_field=DateTimeField()),
        last_edit_by=Subquery(latest.values("author__username")[:1], output_field=CharField()),
        last_edit_kind=Subquery(latest.values("kind")[:1], output_field=CharField()),
    ).order_by("slug")
    if not include_deleted:
        documents = documents.filter(deleted_at__isnull=True)
    return documents


def chunk_status(chunk: Chunk) -> str:
    """Return "live" or "retired at version V", with the version the chunk was added at."""
    added = f"added at version {chunk.added_in}"
    if chunk.retired_in is None:
        return f"live, {added}"
    return f"retired at version {chunk.retired_in}, {added}"


def section_edit_url(slug: str, section_id: int) -> str:
    """Return the section editor's address (kb:section_edit when that page exists, else its planned path)."""
    try:
        return reverse("kb:section_edit", args=[slug, section_id])
    except NoReverseMatch:
        return f"/kb/documents/{slug}/sections/{section_id}/edit/"


@dataclass(frozen=True)
class RankChange:
    chunk_id: int
    now: int | None  # rank at the current version; None: gone
    then: int | None  # rank at the earlier version; None: new
    change: str  # "new", "gone", "up 2", "down 1", "same"


def rank_changes(now: list[int], then: list[int]) -> dict[int, RankChange]:
    """Compare two ranked lists of chunk ids (best first): which moved, appeared or disappeared."""
    now_rank = {c: i for i, c in enumerate(now, start=1)}
    then_rank = {c: i for i, c in enumerate(then, start=1)}
    changes = {}
    for chunk_id in list(now_rank) + [c for c in then_rank if c not in now_rank]:
        a, b = now_rank.get(chunk_id), then_rank.get(chunk_id)
        if b is None:
            change = "new"
        elif a is None:
            change = "gone"
        elif a < b:
            change = f"up {b - a}"
        elif a > b:
            change = f"down {a - b}"
        else:
            change = "same"
        changes[chunk_id] = RankChange(chunk_id=chunk_id, now=a, then=b, change=change)
    return changes


def label_branches(*results) -> None:
    """Add each branch row's document and section (one query for all given search results)."""
    results = [r for r in results if r is not None]
    ids = {row["chunk_id"] for r in results
           for row in r.vector_branch + r.text_branch + r.identifier_branch}
    labels = {pk: (slug, heading) for pk, slug, heading in
              Chunk.objects.filter(pk__in=ids).values_list("pk", "document__slug", "section__heading_path")}
    for r in results:
        for row in r.vector_branch + r.text_branch + r.identifier_branch:
            row["doc"], row["section"] = labels.get(row["chunk_id"], ("?", ""))


def mark_changes(now, then) -> list:
    """Set `change` on the hits of two search results (now, then) and return the hits gone since then."""
    changes = rank_changes([h.chunk_id for h in now.fused], [h.chunk_id for h in then.fused])
    for hit in now.fused:
        hit.change = changes[hit.chunk_id]
    for hit in then.fused:
        hit.change = changes[hit.chunk_id]
    return [hit for hit in then.fused if hit.change.change == "gone"]
