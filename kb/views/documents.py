"""The knowledge base as the retriever sees it: the document list, a document's live sections and chunks, one chunk."""

from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, render

from kb import inspect
from kb.access import kb_editor_required
from kb.models import Chunk, Document, EmbeddingSpace


@login_required
@kb_editor_required
def document_list(request):
    """List the documents with language, version, live chunks and last edit (usage in traces loads beside it)."""
    include_deleted = request.GET.get("deleted") == "1"
    documents = list(inspect.document_rows(include_deleted=include_deleted))
    return render(request, "kb/document_list.html", {
        "documents": documents, "space": EmbeddingSpace.objects.first(), "include_deleted": include_deleted,
    })


@login_required
@kb_editor_required
def document_detail(request, slug):
    """Show a document's live sections, the chunks the retriever scores and its latest re-embedding."""
    document = get_object_or_404(Document, slug=slug)
    # Only what search sees now; retired sections and chunks stay reachable from the history and old traces.
    sections = document.sections.live().prefetch_related(
        Prefetch("chunks", queryset=Chunk.objects.live().order_by("piece")))
    return render(request, "kb/document_detail.html", {"document": document, "sections": sections,
                                                       "job": document.reembed_jobs.first()})


@login_required
@kb_editor_required
def chunk_detail(request, chunk_id):
    """Show one chunk as the retriever scores it and its status (the traces naming it load beside it)."""
    chunk = get_object_or_404(Chunk.objects.select_related("document", "section"), pk=chunk_id)
    return render(request, "kb/chunk_detail.html", {
        "chunk": chunk, "status": inspect.chunk_status(chunk),
        "edit_url": inspect.section_edit_url(chunk.document.slug, chunk.section_id),
    })
