"""Who edits the knowledge base, and the one way to reach a document or section by address."""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.shortcuts import get_object_or_404

from kb.models import Document, Section

kb_editor_required = permission_required("kb.edit_kb", raise_exception=True)


def may_edit_kb(user) -> bool:
    """KB editors open the KB's pages (chunk links elsewhere show only to them)."""
    return user.is_authenticated and user.has_perm("kb.edit_kb")


def access_document(slug: str, *, live: bool = False) -> Document:
    """Return the document (any, or only a not-deleted one when `live`); 404 otherwise."""
    queryset = Document.objects.all()
    if live:
        queryset = queryset.filter(deleted_at__isnull=True)
    return get_object_or_404(queryset, slug=slug)


def access_section(document: Document, section_id: int) -> Section:
    """Return one of the document's sections (a retired one too: its editor gets the conflict, not a 404)."""
    return get_object_or_404(Section, pk=section_id, document=document)
