"""Evals panels on KB pages (their addresses stay under /kb/): usage in traces, golden cases, open in KB."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from evals import kb_usage
from evals.models import GoldenCase
from kb.access import access_document, kb_editor_required
from kb.models import Chunk, Document, EmbeddingSpace
from traces.access import may_review_traces
from traces.models import ReviewNote, Trace


@login_required
@kb_editor_required
def open_trace(request, trace_id):
    """Open a trace in the KB: the chunks it retrieved beside the ones its golden case expects, scored now."""
    trace = get_object_or_404(Trace, pk=trace_id)
    return _open_in_kb(request, trace=trace, note=None)


@login_required
@kb_editor_required
def open_note(request, note_id):
    """Open the trace of a failure note in the KB."""
    notes = ReviewNote.objects.select_related("trace", "failure_class", "author")
    note = get_object_or_404(notes, pk=note_id)
    return _open_in_kb(request, trace=note.trace, note=note)


def _open_in_kb(request, *, trace, note):
    view = kb_usage.open_in_kb(trace=trace)
    return render(request, "kb/open_in_kb.html", {
        "view": view, "trace": trace, "note": note, "may_review": may_review_traces(request.user),
        "space": EmbeddingSpace.objects.first(), "bot_k": settings.BOT_RETRIEVAL_K,
    })


def golden_cases_expecting(document: Document):
    """Return the golden cases that count this document as a hit."""
    return GoldenCase.objects.filter(hits__contains=[document.slug]).select_related("golden_set")


@login_required
@kb_editor_required
def document_usage(request):
    """The document list's 30-day usage in traces: retrieved, kept, cited, failure notes (cached, recountable)."""
    include_deleted = request.GET.get("deleted") == "1"
    documents = Document.objects.order_by("slug")  # the panel needs the slugs only, not the list's annotations
    if not include_deleted:
        documents = documents.filter(deleted_at__isnull=True)
    documents = list(documents.only("slug"))
    usage, counted_at = kb_usage.document_usage_cached(recount=request.GET.get("recount") == "1")
    for document in documents:
        document.usage = usage.get(document.slug) or kb_usage.DocumentUsage()
    return render(request, "evals/_document_usage.html", {
        "documents": documents, "include_deleted": include_deleted, "recent_days": kb_usage.RECENT_DAYS,
        "counted_at": counted_at})


@login_required
@kb_editor_required
def chunk_usage(request, chunk_id):
    """The chunk page's panels: the traces that retrieved, kept or cited it, the failure notes that count on it
    (named by the note, or cited by the failing trace's reply) and golden cases."""
    chunk = get_object_or_404(Chunk.objects.select_related("document", "section"), pk=chunk_id)
    slug = chunk.document.slug
    note_count, notes = kb_usage.failure_notes_for_chunk(chunk=chunk)
    return render(request, "evals/_chunk_usage.html", {
        "chunk": chunk, "recent_days": kb_usage.RECENT_DAYS,
        "usage": kb_usage.chunk_usage(chunk=chunk, since=kb_usage.recent_since()),
        "notes": notes, "note_count": note_count,
        "golden_cases": kb_usage.golden_cases_for_document(slug=slug)})


@login_required
@kb_editor_required
def document_golden_cases(request, slug):
    """The delete page's warning: the golden cases that expect this document as a hit."""
    document = access_document(slug)
    return render(request, "evals/_document_golden_cases.html",
                  {"document": document, "golden_cases": list(golden_cases_expecting(document))})
