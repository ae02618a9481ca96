"""Reads other rooms make of the knowledge base (the bot asks which of several sibling documents applies, and
which documents publish a number a customer quoted)."""

from __future__ import annotations

from kb.identifiers import find_identifiers
from kb.models import Chunk, Document


def document_alternatives(*, slugs) -> dict[str, dict]:
    """Return {slug: {"label", "language", "alternatives"}} for the live documents among `slugs` that have
    alternatives, and for those alternatives too (so every sibling can be offered, retrieved or not)."""
    found: dict[str, dict] = {}
    wanted = set(slugs)
    for _ in range(2):  # the documents, then the siblings they name
        rows = (Document.objects.filter(slug__in=wanted - set(found), deleted_at__isnull=True)
                .exclude(alternatives=[]).values("slug", "alternative_label", "language", "alternatives"))
        for row in rows:
            found[row["slug"]] = {"label": row["alternative_label"], "language": row["language"],
                                  "alternatives": list(row["alternatives"])}
        wanted = {alternative for row in found.values() for alternative in row["alternatives"]}
    return found


def documents_publishing(text: str) -> list[str]:
    """Return the slugs of live documents whose live chunks hold an identifier (7+ digits) quoted in `text`:
    a bank account, a phone line or a tax id the provider publishes, in the documents' order."""
    identifiers = find_identifiers(text)
    if not identifiers:
        return []
    slugs = (Chunk.objects.live().filter(identifiers__overlap=identifiers, document__deleted_at__isnull=True)
             .order_by("document__slug").values_list("document__slug", flat=True).distinct())
    return list(slugs)
