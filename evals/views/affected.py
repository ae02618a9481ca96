"""The "re-run affected cases" page: a document's golden cases, before → after ranks."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from core import params
from evals.affected import affected_cases, affected_report, current_index_version, default_before_version
from kb.access import kb_editor_required
from kb.models import Document

MAX_K = 20


@login_required
@kb_editor_required
def affected_cases_page(request, slug):
    """List the golden cases that name the document; on POST re-run them (retrieval only) before and after."""
    document = get_object_or_404(Document, slug=slug)
    current = current_index_version()
    source = request.POST if request.method == "POST" else request.GET
    before = params.integer(source.get("before"), label="Before", low=0, high=current, clamp=True).value
    after = params.integer(source.get("after"), label="After", low=0, high=current, clamp=True).value
    k = params.integer(source.get("k"), label="k", default=5, low=1, high=MAX_K, clamp=True).value
    cases = affected_cases(document=document)
    report = None
    if request.method == "POST":
        report = affected_report(document=document, before_version=before, after_version=after, k=k,
                                 cases=cases, current=current)
    context = {
        "document": document,
        "cases": cases,
        "versions": document.versions.filter(index_version__isnull=False).select_related("author"),
        "report": report,
        "before": before if before is not None else default_before_version(document=document),
        "after": after,
        "current_version": current,
        "k": k,
    }
    template = "kb/affected_cases.html"
    if request.htmx and report is not None:
        template += "#moves"
    return render(request, template, context)
