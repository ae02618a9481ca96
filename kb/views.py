from django.contrib.auth.decorators import login_required, permission_required
from django.db.models import Count
from django.shortcuts import get_object_or_404, render

from kb.models import Chunk, Document, EmbeddingSpace

kb_editor_required = permission_required("desk.edit_kb", raise_exception=True)


@login_required
@kb_editor_required
def document_list(request):
    """List the documents with language, version and chunk count."""
    documents = Document.objects.annotate(chunk_count=Count("chunks")).order_by("slug")
    return render(
        request,
        "kb/document_list.html",
        {"documents": documents, "space": EmbeddingSpace.objects.first()},
    )


@login_required
@kb_editor_required
def document_detail(request, slug):
    """Show a document's sections and the chunks the retriever scores."""
    document = get_object_or_404(Document, slug=slug)
    sections = document.sections.prefetch_related("chunks")
    return render(request, "kb/document_detail.html", {"document": document, "sections": sections})


@login_required
@kb_editor_required
def chunk_detail(request, chunk_id):
    """Show one chunk exactly as the retriever scores it."""
    chunk = get_object_or_404(Chunk.objects.select_related("document", "section"), pk=chunk_id)
    return render(request, "kb/chunk_detail.html", {"chunk": chunk})


@login_required
@kb_editor_required
def search_playground(request):
    """Run a query and show both branches, the fused list and what was pruned."""
    from kb.search import search

    query = (request.GET.get("q") or "").strip()[:500]
    try:
        k = min(max(int(request.GET.get("k") or 5), 1), 20)
    except ValueError:
        k = 5
    result = search(query, k=k, explain=True) if query else None
    template = "kb/search.html"
    if request.htmx:
        template += "#results"
    return render(request, template, {"query": query, "result": result})
