"""Reads for trace review: the filtered trace list with keyset pagination, sessions, notes and taxonomy."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass, field

from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, QuerySet

from core import params as core_params
from core.keyset import keyset_page
from desk.models import ComplaintSignal, Conversation, Message
from core.fulltext import Matches, bilingual_query, newest_first
from traces import display
from traces.models import (
    FailureClass,
    ReviewNote,
    ReviewSession,
    ScoreDefinition,
    SessionTrace,
    Trace,
    TraceScore,
)
from traces.scores import score_definitions
from traces.scoring import ScoreError, value_parse
from traces.taxonomy import CodedNote, summarize

PAGE_SIZE = 50
VERDICTS = ["grounded", "rewritten", "ungrounded", "none"]
COUNT_LIMIT = 1_000  # counted exactly up to here; beyond, "1,000+" and PostgreSQL's estimate (trace_count)
SEARCH_MAX = 200
COUNT_WORK_MEM = "32MB"  # for one text-search count at a time; measured in bench/traces.py


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
    text: str = ""
    fallback: str = ""  # yes (answered by the verified-only fallback), no, or one kind (template, quote, escalated)
    score: str = ""  # "<score key>:<value>", e.g. "answered:no": a reviewer set that score to that value
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


TEXT_FILTERS = ("escalation_reason", "route", "language", "channel", "prompt_version", "model")
TEXT_FILTER_LABELS = {"escalation_reason": "Escalation reason", "route": "Route", "language": "Language",
                      "channel": "Channel", "prompt_version": "Prompt version", "model": "Model"}
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
        read[name] = core_params.text(params.get(name), label=TEXT_FILTER_LABELS[name], max_length=100)
    read["configuration"] = core_params.text(params.get("configuration"), label="Configuration", max_length=64)
    read["text"] = core_params.text(params.get("text"), label="The search", max_length=SEARCH_MAX)
    for name in YES_NO_FILTERS:
        read[name] = core_params.boolean(params.get(name), label=name.replace("_", " ").capitalize())
    read["fallback"] = core_params.choice((params.get("fallback") or "").strip().lower() or None, FALLBACKS,
                                          label="Fallback")
    read["score"] = _score_filter(params.get("score"))
    return TraceFilters(**{name: parsed.value for name, parsed in read.items()},
                        problems=tuple(parsed.error for parsed in read.values() if parsed.error))


FALLBACKS = ["yes", "no", *[kind for kind in Trace.Fallback.values if kind]]
# The fallbacks that answered the customer (the third one escalated with the draft offered to the agent).
ANSWERING_FALLBACKS = [Trace.Fallback.TEMPLATE, Trace.Fallback.QUOTE]


def _score_filter(raw) -> core_params.Parsed:
    """Read "key:value" into the score's canonical "key:value" ("answered:No" → "answered:no")."""
    text = core_params.text(raw, label="Score", max_length=120)
    if text.error or not text.value:
        return text
    key, _, value = text.value.partition(":")
    definition = ScoreDefinition.objects.filter(key=key.strip().lower()).first()
    if definition is None:
        return core_params.Parsed("", f"Score: there is no score “{key.strip()}”.")
    try:
        canonical = value_parse(definition.spec(), value)
    except ScoreError as error:
        return core_params.Parsed("", str(error))
    if canonical is None:
        return core_params.Parsed("", f"Score: write the value after “{definition.key}:”.")
    return core_params.Parsed(f"{definition.key}:{canonical}")


CHOICE_COLUMNS = ("escalation_reason", "route", "language", "channel", "prompt_version", "index_version", "model")


def distinct_values(column: str) -> list:
    """Return the distinct non-empty values of one filter column, read off its index one value at a time.

    A loose index scan (a recursive CTE that asks the (column, created_at, id) index for the next larger
    value): as many index probes as there are values, where SELECT DISTINCT reads every row — 1M traces.
    """
    if column not in CHOICE_COLUMNS:
        raise ValueError(f"not a filter column: {column}")
    table = Trace._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"""
            WITH RECURSIVE walk(v) AS (
                (SELECT {column} FROM {table} WHERE {column} IS NOT NULL ORDER BY {column} LIMIT 1)
                UNION ALL
                SELECT (SELECT {column} FROM {table} WHERE {column} > walk.v ORDER BY {column} LIMIT 1)
                FROM walk WHERE walk.v IS NOT NULL
            )
            SELECT v FROM walk WHERE v IS NOT NULL AND v::text <> ''
        """)  # noqa: S608 - the column is one of CHOICE_COLUMNS
        return [row[0] for row in cursor.fetchall()]


def traces_filtered(*, filters: TraceFilters) -> QuerySet[Trace]:
    """Return the traces matching the filters, newest first on (created_at, id).

    A text filter matches its stored values case-insensitively, by code or label ("no_context" and "Nothing
    relevant found" both mean NO_CONTEXT): the typed value is resolved to the stored values first, so the
    query is still an equality on the column's index.
    """
    traces = Trace.objects.all()
    if filters.since:
        traces = traces.filter(created_at__gte=filters.since)
    if filters.until:
        traces = traces.filter(created_at__lt=filters.until)
    for name in ("outcome", "verdict", "configuration"):
        value = getattr(filters, name)
        if value:
            traces = traces.filter(**{name: value})
    for name in TEXT_FILTERS:
        value = getattr(filters, name)
        if value:
            stored = display.matching_values(value, distinct_values(name), display.LABELS_BY_FILTER.get(name))
            traces = traces.filter(**{f"{name}__in": stored})
    if filters.text:
        traces = traces.filter(Matches(F("search_vector"), bilingual_query(filters.text)))
    if filters.index_version is not None:
        traces = traces.filter(index_version=filters.index_version)
    if filters.derived is not None:
        traces = traces.filter(has_derived=filters.derived)
    if filters.latency_above is not None:
        traces = traces.filter(total_ms__gt=filters.latency_above)
    if filters.fallback == "yes":
        traces = traces.filter(fallback__in=ANSWERING_FALLBACKS)
    elif filters.fallback == "no":
        traces = traces.exclude(fallback__in=ANSWERING_FALLBACKS)
    elif filters.fallback:
        traces = traces.filter(fallback=filters.fallback)
    if filters.score:
        key, _, value = filters.score.partition(":")
        traces = traces.filter(Exists(TraceScore.objects.filter(trace=OuterRef("pk"), definition__key=key,
                                                                value=value)))
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


def trace_page(*, filters: TraceFilters, after: str = "", size: int = PAGE_SIZE,
               matches: int | None = None) -> tuple[list[Trace], str | None]:
    """Return one page of filtered traces older than the cursor, and the cursor of the next page.

    matches: how many traces the filters match when that is known to be at most COUNT_LIMIT (trace_count).
    A text search that matches few traces is then read through its GIN index and sorted, instead of walking
    the (created_at, id) index and testing every trace: the planner cannot know a word is rare (an unknown
    word is estimated at 1 % of the rows), and that walk read all 1M traces to find none — 4.9 s.
    """
    traces = traces_filtered(filters=filters)
    if filters.text and matches is not None and matches <= COUNT_LIMIT:
        traces = newest_first(traces, few=True)
    traces = traces.select_related("conversation").defer(
        "retrieval", "tool_calls", "evidence", "attempts", "humanizer", "citations", "token_usage", "search_vector")
    return keyset_page(traces, after=after, size=size)


def trace_page_and_count(*, filters: TraceFilters, after: str = "", limit: int = COUNT_LIMIT):
    """Return (page, next cursor, count, more than `limit`) — the count first, so the page can use it."""
    count, more = trace_count(filters=filters, limit=limit)
    page, next_cursor = trace_page(filters=filters, after=after, matches=None if more else count)
    return page, next_cursor, count, more


def trace_count_estimate(*, filters: TraceFilters) -> int:
    """Return PostgreSQL's estimate of how many traces the filters match (the planner's row count: no row is
    read), for a page that knows only that there are more than COUNT_LIMIT."""
    sql, sql_params = traces_filtered(filters=filters).order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", sql_params)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    return int(plan[0]["Plan"]["Plan Rows"])


def trace_count(*, filters: TraceFilters, limit: int = COUNT_LIMIT) -> tuple[int, bool]:
    """Return how many traces match, counted up to `limit`, and whether there are more than that.

    Counting stops at limit + 1 rows (a LIMIT subquery), so a broad filter over millions of traces costs what
    1,001 rows cost, and a narrow one is exact. The cost grows with the limit, not with the table: at 1M traces
    a mid-frequency word with another filter took 605 ms p95 to count to 10,001 (its matches are scattered over
    the table, one heap page each); the page shows PostgreSQL's estimate beyond the exact count instead.
    """
    with transaction.atomic(), connection.cursor() as cursor:
        if filters.text:
            # A common word's posting list is a bitmap of ~250,000 rows; in the default 4 MB it turns lossy and
            # every row of every page is tested again (1M traces, "plan" + outcome: 879 ms; with 32 MB: 136 ms).
            cursor.execute(f"SET LOCAL work_mem = '{COUNT_WORK_MEM}'")
        counted = traces_filtered(filters=filters).order_by()[:limit + 1].count()
    return min(counted, limit), counted > limit


def filter_choices() -> dict[str, list]:
    """Return the options of the select filters, taken from the data, labelled (small, distinct columns)."""
    from_data = {
        name: display.choices(distinct_values(name), display.LABELS_BY_FILTER.get(name)) for name in TEXT_FILTERS
    }
    from_data["index_version"] = [display.Choice(str(v), f"v{v}") for v in sorted(distinct_values("index_version"))]
    return {
        **from_data,
        "outcomes": [display.Choice(value, label) for value, label in Trace.Outcome.choices],
        "verdicts": [display.Choice(v, display.VERDICT_LABELS[v]) for v in VERDICTS],
        "failure_classes": list(FailureClass.objects.filter(merged_into__isnull=True).order_by("name", "pk")),
        "fallbacks": [display.Choice("yes", "Answered by the verified-only fallback"),
                      display.Choice("no", "Not answered by the fallback"),
                      *[display.Choice(value, label) for value, label in Trace.Fallback.choices if value]],
        "scores": score_choices(),
    }


def score_choices() -> list[display.Choice]:
    """Return the score filter's options: every value of every score a select can offer ("Answered = no")."""
    return [display.Choice(f"{d.key}:{value}", f"{d.name} = {value}")
            for d in score_definitions() for value in d.spec().choices()]


def session_items(*, session: ReviewSession) -> QuerySet[SessionTrace]:
    return session.items.select_related("trace").order_by("position")


def session_taxonomy(*, session: ReviewSession | None = None):
    """Return the taxonomy summary of a session's notes (every note, sessions and queues, without one; merges
    followed) and the team's classes by id."""
    classes = {c.pk: c for c in FailureClass.objects.all()}
    merged_into = {pk: c.merged_into_id for pk, c in classes.items()}
    notes = session.notes.all() if session is not None else ReviewNote.objects.all()
    coded = [CodedNote(verdict=n.verdict, stage=n.stage, class_id=n.failure_class_id, model_faithful=n.model_faithful)
             for n in notes.only("verdict", "stage", "failure_class_id", "model_faithful")]
    return summarize(coded, merged_into), classes


def conversation_last_turn(*, conversation: Conversation):
    """Return the trace of the bot's last real turn (a silenced turn shows nothing), or None."""
    traces = Trace.objects.filter(conversation=conversation).order_by("-created_at", "-pk")
    return traces.exclude(outcome=Trace.Outcome.SILENCED).first() or traces.first()
