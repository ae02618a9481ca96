"""The search playground: a query through the three branches, the fusion and the prune, now and at an earlier
index version."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from core import params
from kb import inspect
from kb.access import kb_editor_required
from kb.embeddings import QueryCachingEmbedder, get_embedder
from kb.models import EmbeddingSpace
from kb.search import search


QUERY_MAX = 500
MAX_K = 20


@login_required
@kb_editor_required
def search_playground(request):
    """Run a query: the three branches, the fused list and the pruned, now and at an earlier index version."""
    read = {
        "q": params.text(request.GET.get("q"), label="The query", max_length=QUERY_MAX),
        "language": params.choice(request.GET.get("language"), ("es", "en"), label="The language"),
        "k": params.integer(request.GET.get("k"), label="k", default=5, low=1, high=MAX_K, clamp=True),
    }
    space = EmbeddingSpace.objects.first()
    current = space.index_version if space else 1
    read["version"] = params.integer(request.GET.get("version"), label="The index version", low=1, high=current,
                                     clamp=True)
    query, language, k, version = (read[name].value for name in ("q", "language", "k", "version"))
    language = language or None
    if version == current:
        version = None
    embedder = QueryCachingEmbedder(get_embedder())  # the query is embedded once for both versions
    result = search(query, k=k, language=language, explain=True, embedder=embedder) if query else None
    earlier = (search(query, k=k, language=language, explain=True, at_version=version, embedder=embedder)
               if query and version else None)
    gone = inspect.mark_changes(result, earlier) if result and earlier else []
    inspect.label_branches(result, earlier)
    template = "kb/search.html"
    if request.htmx:
        template += "#results"
    return render(request, template, {
        "query": query, "result": result, "earlier": earlier, "version": version, "current_version": current,
        "versions": range(current, 0, -1), "language": language or "", "k": k,
        "now_heading": f"Now · index v{current}", "earlier_heading": f"Then · index v{version}",
        "gone": gone, "languages": [("", "any"), ("es", "es"), ("en", "en")],
        "problems": [parsed.error for parsed in read.values() if parsed.error],
    })
