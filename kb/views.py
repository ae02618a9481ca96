from django.contrib.auth.decorators import login_required, permission_required
from django.shortcuts import get_object_or_404, render

from kb import diagnose  # issue 9: from a failure to the chunk
from kb.models import Chunk, Document, EmbeddingSpace

kb_editor_required = permission_required("desk.edit_kb", raise_exception=True)


@login_required
@kb_editor_required
def document_list(request):
    """List the documents with language, version, live chunks, last edit and 30-day usage in traces."""
    include_deleted = request.GET.get("deleted") == "1"
    documents = list(diagnose.document_rows(include_deleted=include_deleted))
    usage, counted_at = diagnose.document_usage_cached(recount=request.GET.get("recount") == "1")
    for document in documents:
        document.usage = usage.get(document.slug) or diagnose.DocumentUsage()
    return render(request, "kb/document_list.html", {
        "documents": documents, "space": EmbeddingSpace.objects.first(), "include_deleted": include_deleted,
        "recent_days": diagnose.RECENT_DAYS, "counted_at": counted_at,
    })


@login_required
@kb_editor_required
def document_detail(request, slug):
    """Show a document's live sections, the chunks the retriever scores and its latest re-embedding."""
    from django.db.models import Prefetch

    document = get_object_or_404(Document, slug=slug)
    # Only what search sees now; retired sections and chunks stay reachable from the history and old traces.
    sections = document.sections.live().prefetch_related(
        Prefetch("chunks", queryset=Chunk.objects.live().order_by("piece")))
    return render(request, "kb/document_detail.html", {"document": document, "sections": sections,
                                                       "job": document.reembed_jobs.first()})


@login_required
@kb_editor_required
def chunk_detail(request, chunk_id):
    """Show one chunk as the retriever scores it, its status, and the traces, notes and cases naming it."""
    chunk = get_object_or_404(Chunk.objects.select_related("document", "section"), pk=chunk_id)
    slug = chunk.document.slug
    return render(request, "kb/chunk_detail.html", {
        "chunk": chunk, "status": diagnose.chunk_status(chunk), "recent_days": diagnose.RECENT_DAYS,
        "usage": diagnose.chunk_usage(chunk=chunk, since=diagnose.recent_since()),
        "notes": diagnose.failure_notes_for_document(slug=slug),
        "golden_cases": diagnose.golden_cases_for_document(slug=slug),
        "edit_url": diagnose.section_edit_url(slug, chunk.section_id),
    })


@login_required
@kb_editor_required
def search_playground(request):
    """Run a query: the three branches, the fused list and the pruned, now and at an earlier index version."""
    from kb.embeddings import QueryCachingEmbedder, get_embedder
    from kb.search import search

    query = (request.GET.get("q") or "").strip()[:500]
    language = request.GET.get("language") if request.GET.get("language") in ("es", "en") else None
    k = _int_param(request.GET.get("k"), default=5, low=1, high=20)
    space = EmbeddingSpace.objects.first()
    current = space.index_version if space else 1
    version = _int_param(request.GET.get("version"), default=None, low=1, high=current)
    if version == current:
        version = None
    embedder = QueryCachingEmbedder(get_embedder())  # the query is embedded once for both versions
    result = search(query, k=k, language=language, explain=True, embedder=embedder) if query else None
    earlier = (search(query, k=k, language=language, explain=True, at_version=version, embedder=embedder)
               if query and version else None)
    gone = diagnose.mark_changes(result, earlier) if result and earlier else []
    diagnose.label_branches(result, earlier)
    template = "kb/search.html"
    if request.htmx:
        template += "#results"
    return render(request, template, {
        "query": query, "result": result, "earlier": earlier, "version": version, "current_version": current,
        "versions": range(current, 0, -1), "language": language or "", "k": k,
        "now_heading": f"Now · index v{current}", "earlier_heading": f"Then · index v{version}",
        "gone": gone, "languages": [("", "any"), ("es", "es"), ("en", "en")],
    })


def _int_param(raw, *, default, low, high):
    """Return raw as an int clamped to [low, high]; default when missing or not a number."""
    try:
        return min(max(int(raw), low), high)
    except (TypeError, ValueError):
        return default


@login_required
@kb_editor_required
def open_trace(request, trace_id):
    """Open a trace in the KB: the chunks it retrieved beside the ones its golden case expects, scored now."""
    from traces.models import Trace

    trace = get_object_or_404(Trace, pk=trace_id)
    return _open_in_kb(request, trace=trace, note=None)


@login_required
@kb_editor_required
def open_note(request, note_id):
    """Open the trace of a failure note in the KB."""
    from traces.models import ReviewNote

    notes = ReviewNote.objects.select_related("trace", "failure_class", "author")
    note = get_object_or_404(notes, pk=note_id)
    return _open_in_kb(request, trace=note.trace, note=note)


def _open_in_kb(request, *, trace, note):
    view = diagnose.open_in_kb(trace=trace)
    return render(request, "kb/open_in_kb.html", {
        "view": view, "trace": trace, "note": note, "may_review": request.user.has_perm("desk.review_traces"),
        "space": EmbeddingSpace.objects.first(), "bot_k": diagnose.BOT_K,
    })
