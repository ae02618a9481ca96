"""Reads for trace review: the filtered trace list with keyset pagination, sessions, notes and taxonomy."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field

from django.db.models import Exists, OuterRef, QuerySet

from core import params as core_params
from core.keyset import keyset_page
from desk.models import ComplaintSignal, Conversation, Message
from traces.models import FailureClass, ReviewNote, ReviewSession, SessionTrace, Trace
from traces.taxonomy import CodedNote, summarize

PAGE_SIZE = 50
VERDICTS = ["grounded", "rewritten", "ungrounded", "none"]


@dataclass(frozen=True)
class TraceFilters:
    """The browser's filters as typed values; empty means 'any'."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None
    outcome: str = ""
    escalation_reason: str = ""
    route: str = ""
    language: str = ""
    channel: str = ""
    verdict: str = ""
    derived: bool | None = None
    prompt_version: str = ""
    index_version: int | None = None
    model: str = ""
    configuration: str = ""
    has_note: bool | None = None
    failure_class: int | None = None
    complaint_sourced: bool | None = None
    suspected_complaint: bool | None = None
    verified_wrong: bool | None = None
    latency_above: float | None = None
    problems: tuple[str, ...] = field(default=(), compare=False)  # what was sent but could not be a filter

    def to_query(self) -> dict[str, str]:
        """Return the non-empty filters as query-string values (for links, sessions and export)."""
        query = {}
        for name, value in asdict(self).items():
            if name == "problems" or value is None or value == "":
                continue
            if isinstance(value, bool):
                value = "yes" if value else "no"
            elif isinstance(value, dt.datetime):
                value = value.isoformat()
            query[name] = str(value)
        return query


TEXT_FILTERS = ("escalation_reason", "route", "language", "channel", "prompt_version", "model", "configuration")
YES_NO_FILTERS = ("derived", "has_note", "complaint_sourced", "suspected_complaint", "verified_wrong")


def parse_trace_filters(params) -> TraceFilters:
    """Return the filters from a query dict (GET or a session's stored filters).

    A value that cannot be a filter (an impossible date, a number that is not one, a NUL character) is
    left out, and `problems` says which, for the page to show: the list is wider, never an error.
    """
    read = {
        "since": core_params.moment(params.get("since"), label="From", end=False),
        "until": core_params.moment(params.get("until"), label="To", end=True),
        "outcome": core_params.choice(params.get("outcome"), Trace.Outcome.values, label="Outcome"),
        "verdict": core_params.choice(params.get("verdict"), VERDICTS, label="Verdict"),
        "index_version": core_params.integer(params.get("index_version"), label="Index version",
                                             high=2**31 - 1),
        "failure_class": core_params.integer(params.get("failure_class"), label="Failure class"),
        "latency_above": core_params.number(params.get("latency_above"), label="Latency above"),
    }
    for name in TEXT_FILTERS:
        read[name] = core_params.text(params.get(name), label=name.replace("_", " ").capitalize(), max_length=100)
    for name in YES_NO_FILTERS:
        read[name] = core_params.boolean(params.get(name), label=name.replace("_", " ").capitalize())
    return TraceFilters(**{name: parsed.value for name, parsed in read.items()},
                        problems=tuple(parsed.error for parsed in read.values() if parsed.error))


def traces_filtered(*, filters: TraceFilters) -> QuerySet[Trace]:
    """Return the traces matching the filters, newest first on (created_at, id)."""
    traces = Trace.objects.all()
    if filters.since:
        traces = traces.filter(created_at__gte=filters.since)
    if filters.until:
        traces = traces.filter(created_at__lt=filters.until)
    for name in ("outcome", "escalation_reason", "route", "language", "channel", "verdict", "prompt_version",
                 "model", "configuration"):
        value = getattr(filters, name)
        if value:
            traces = traces.filter(**{name: value})
    if filters.index_version is not None:
        traces = traces.filter(index_version=filters.index_version)
    if filters.derived is not None:
        traces = traces.filter(has_derived=filters.derived)
    if filters.latency_above is not None:
        traces = traces.filter(total_ms__gt=filters.latency_above)
    if filters.has_note is not None:
        noted = Exists(ReviewNote.objects.filter(trace=OuterRef("pk")))
        traces = traces.filter(noted if filters.has_note else ~noted)
    if filters.failure_class is not None:
        # A merged class's notes count for the class it was merged into.
        classes = [filters.failure_class, *FailureClass.objects.filter(merged_into_id=filters.failure_class)
                   .values_list("pk", flat=True)]
        traces = traces.filter(Exists(ReviewNote.objects.filter(trace=OuterRef("pk"), failure_class_id__in=classes)))
    # Complaints, like verified-wrong marks, are rare: the same list-of-reply-ids plan as below.
    for wanted, certainty in ((filters.complaint_sourced, ComplaintSignal.Certainty.CONFIRMED),
                              (filters.suspected_complaint, ComplaintSignal.Certainty.SUSPECTED)):
        if wanted is not None:
            replies = complained_replies(certainty=certainty)
            if wanted:
                traces = traces.filter(reply_id__in=replies)
            elif replies:
                traces = traces.exclude(reply_id__in=replies)
    if filters.verified_wrong is not None:
        # Marked answers are rare: hand the planner their ids as a list, so "yes" probes the unique reply_id index
        # and "no" becomes a per-row hashed NOT IN on the keyset scan (a join or EXISTS picks far worse plans).
        wrong_replies = list(Message.objects.filter(verified_wrong_at__isnull=False).values_list("pk", flat=True))
        if filters.verified_wrong:
            traces = traces.filter(reply_id__in=wrong_replies)
        elif wrong_replies:
            traces = traces.exclude(reply_id__in=wrong_replies)
    return traces.order_by("-created_at", "-pk")


def complained_replies(*, certainty: str = ComplaintSignal.Certainty.CONFIRMED) -> list[int]:
    """Return the ids of the bot messages with a complaint signal of this certainty (confirmed by default).

    Confirmed: an agent marked it, or the customer reacted 👎 / 😡 / 😠. A bot message with a confirmed and
    a suspected signal counts as confirmed only.
    """
    signals = ComplaintSignal.objects.filter(certainty=certainty)
    if certainty == ComplaintSignal.Certainty.SUSPECTED:
        signals = signals.exclude(message__complaints__certainty=ComplaintSignal.Certainty.CONFIRMED)
    return list(signals.values_list("message_id", flat=True).distinct())


def trace_page(*, filters: TraceFilters, after: str = "", size: int = PAGE_SIZE) -> tuple[list[Trace], str | None]:
    """Return one page of filtered traces older than the cursor, and the cursor of the next page."""
    traces = traces_filtered(filters=filters).select_related("conversation").defer(
        "retrieval", "tool_calls", "evidence", "attempts", "humanizer", "citations", "token_usage")
    return keyset_page(traces, after=after, size=size)


def filter_choices() -> dict[str, list]:
    """Return the known values for the select filters (small, distinct columns)."""
    return {
        "outcomes": Trace.Outcome.values,
        "verdicts": VERDICTS,
        "failure_classes": list(FailureClass.objects.filter(merged_into__isnull=True)
                                .select_related("session").order_by("session_id", "name")),
    }


def session_items(*, session: ReviewSession) -> QuerySet[SessionTrace]:
    return session.items.select_related("trace").order_by("position")


def session_taxonomy(*, session: ReviewSession):
    """Return the taxonomy summary of a session's notes (merges followed) and the live classes by id."""
    classes = {c.pk: c for c in session.failure_classes.all()}
    merged_into = {pk: c.merged_into_id for pk, c in classes.items()}
    notes = [CodedNote(verdict=n.verdict, stage=n.stage, class_id=n.failure_class_id, model_faithful=n.model_faithful)
             for n in session.notes.all()]
    return summarize(notes, merged_into), classes


def conversation_last_turn(*, conversation: Conversation):
    """Return the trace of the bot's last real turn (a silenced turn shows nothing), or None."""
    traces = Trace.objects.filter(conversation=conversation).order_by("-created_at", "-pk")
    return traces.exclude(outcome=Trace.Outcome.SILENCED).first() or traces.first()
