"""The trace browser: the filtered list, the analyst's saved filters and the export of what the filter matches."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest, PermissionDenied
from django.http import Http404, QueryDict, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core import clock, csv_safe, params
from traces import display, selectors, services
from traces.access import may_read_traces, may_review_traces, require_trace_reviewer
from traces.models import STAGES, SavedFilter


@login_required
def trace_list(request):
    """List traces newest first with the browser's filters, keyset-paginated on (created_at, id)."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    filters = selectors.parse_trace_filters(request.GET)
    after = params.cursor(request.GET.get("after"))
    page, next_cursor, count, more = selectors.trace_page_and_count(
        filters=filters, after=request.GET.get("after", "") if after.ok else "", limit=selectors.COUNT_LIMIT)
    query = QueryDict(mutable=True)
    query.update(filters.to_query())
    next_query = query.copy()
    if next_cursor:
        next_query["after"] = next_cursor
    choices = selectors.filter_choices()
    return render(request, "traces/trace_list.html", {
        "traces": page, "filters": filters, "params": request.GET, "choices": choices,
        "select_filters": _select_filters(filters, choices),
        "score_listed": any(c.value == filters.score for c in choices["scores"]),
        "count": count, "count_more": more,
        "count_text": _count_text(count, more, selectors.trace_count_estimate(filters=filters) if more else None),
        "stages": STAGES, "filter_query": query.urlencode(),
        "next_query": next_query.urlencode() if next_cursor else "",
        "may_review": may_review_traces(request.user),
        "problems": [*filters.problems, *([after.error] if after.error else [])],
        "saved_filters": SavedFilter.objects.filter(user=request.user).order_by("name"),
        "next_path": request.get_full_path(),
    })


@login_required
@require_POST
def saved_filter_save(request):
    """Save the browser's current filters under a name (the user's own list); a bad name or filter says why."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    raw_query = request.POST.get("query", "")
    try:
        saved, what = services.saved_filter_save(user=request.user, name=request.POST.get("name"),
                                                 raw_query=raw_query)
    except services.SavedFilterError as error:
        messages.error(request, str(error))
        back = QueryDict(raw_query[:services.SAVED_FILTER_QUERY_MAX]).urlencode()
        return redirect(f"{reverse('traces:list')}?{back}" if back else reverse("traces:list"))
    messages.success(request, {"saved": f"Filter “{saved.name}” saved.",
                               "replaced": f"Filter “{saved.name}” now holds these filters.",
                               "unchanged": f"Filter “{saved.name}” already holds these filters."}[what])
    return redirect(f"{reverse('traces:list')}?{saved.query}")


@login_required
@require_POST
def saved_filter_delete(request, saved_filter_id):
    """Delete one of the user's saved filters; another user's (or one already deleted) is not found."""
    if not may_read_traces(request.user):
        raise PermissionDenied
    name = services.saved_filter_delete(user=request.user, saved_filter_id=saved_filter_id)
    if name is None:
        messages.info(request, "That saved filter is not in your list (already deleted?).")
    else:
        messages.success(request, f"Filter “{name}” deleted.")
    return redirect("traces:list")


def _count_text(count: int, more: bool, estimate: int | None = None) -> str:
    if more:
        about = f" (about {estimate:,} by PostgreSQL's estimate)" if estimate and estimate > count else ""
        return f"{count:,}+ traces match{about}."
    return f"{count:,} trace{'s' if count != 1 else ''} match{'es' if count == 1 else ''}."


SELECT_FILTERS = [("escalation_reason", "Escalation reason"), ("route", "Route"), ("language", "Language"),
                  ("channel", "Channel"), ("prompt_version", "Prompt"), ("index_version", "Index"),
                  ("model", "Model")]


def _select_filters(filters, choices) -> list[dict]:
    """Shape the data-backed select filters: options, the one selected, and a value typed that no trace has."""
    shaped = []
    for name, label in SELECT_FILTERS:
        raw = getattr(filters, name)
        raw = "" if raw is None else str(raw)
        options = choices[name]
        matched = display.matching_values(raw, [c.value for c in options], display.LABELS_BY_FILTER.get(name))
        selected = matched[0] if len(matched) == 1 else raw
        shaped.append({"name": name, "label": label, "options": options, "selected": selected,
                       "unknown": raw if raw and not matched else ""})
    return shaped


EXPORT_COLUMNS = ["id", "created_at", "channel", "language", "route", "routing_rule", "outcome", "escalation_reason",
                  "verdict", "has_derived", "prompt_version", "model", "index_version", "total_ms", "query",
                  "final_text", "conversation_id", "provider_message_id"]


def _export_rows(filters):
    traces = selectors.traces_filtered(filters=filters).values_list(*EXPORT_COLUMNS)
    for row in traces.iterator(chunk_size=2000):
        record = dict(zip(EXPORT_COLUMNS, row))
        record["created_at"] = record["created_at"].isoformat()
        yield record


class _Echo:
    def write(self, value):
        return value


@login_required
def trace_export(request, fmt):
    """Stream the traces of the current filter as JSONL or CSV."""
    require_trace_reviewer(request.user)
    if fmt not in ("jsonl", "csv"):
        raise Http404("Export as jsonl or csv.")
    filters = selectors.parse_trace_filters(request.GET)
    if filters.problems:  # a download wider than the analyst asked for would be read as the answer
        raise BadRequest(" ".join(filters.problems))
    stamp = clock.now().strftime("%Y%m%d-%H%M%S")
    if fmt == "jsonl":
        body = (json.dumps(record, ensure_ascii=False) + "\n" for record in _export_rows(filters))
        response = StreamingHttpResponse(body, content_type="application/x-ndjson")
    else:
        writer = csv_safe.writer(_Echo())
        body = (writer.writerow(row) for row in _rows_with_header(_export_rows(filters), writer))
        response = StreamingHttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="traces-{stamp}.{fmt}"'
    return response


def _rows_with_header(records, writer):
    yield EXPORT_COLUMNS
    for record in records:
        yield [record[c] for c in EXPORT_COLUMNS]
