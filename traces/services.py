"""Writes for trace review: sessions, notes, failure classes (each with its audit event)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Mapping

from django.db import connection, transaction
from django.db.models import Exists, Max, OuterRef, Subquery
from django.http import QueryDict

from core import params as core_params
from core.backfill import rows_backfill
from desk.models import ComplaintSignal
from traces.draft import TraceDraft
from traces.fingerprint import ConfigurationParts
from traces.models import (
    STAGES,
    Configuration,
    FailureClass,
    FailureClassEvent,
    QueueAssignment,
    ReviewNote,
    ReviewQueue,
    ReviewSession,
    SavedFilter,
    SessionTrace,
    Trace,
)
from traces.sampling import append_tagged, draw_uniform
from traces.scores import FAITHFUL, trace_scores_set
from traces.scoring import ScoreError
from traces.selectors import TraceFilters, parse_trace_filters, traces_filtered
from traces.signals import review_note_saved


def configuration_record(*, parts: ConfigurationParts) -> str:
    """Store the configuration's parts unless its fingerprint is known; return the fingerprint.

    One `INSERT … ON CONFLICT DO NOTHING`: no savepoint, no lock beyond the key, so it runs inside the
    turn's one transaction and two turns recording the same new configuration at once keep one row.
    """
    fields = parts.fields()
    Configuration.objects.bulk_create([Configuration(**fields)], ignore_conflicts=True)
    return fields["fingerprint"]


def trace_record(*, draft: TraceDraft, configuration: ConfigurationParts, conversation, message, reply, escalation,
                 outcome: str, escalation_reason: str = "", silenced_at: str = "") -> Trace:
    """Store one turn's trace: the draft the turn filled, its configuration and its links to the desk's rows.

    Called inside the turn's one transaction, with the reply and the escalation it recorded: all or none.
    """
    return Trace.objects.create(
        configuration_id=configuration_record(parts=configuration),
        conversation=conversation,
        message=message,
        reply=reply,
        escalation=escalation,
        provider_message_id=message.provider_message_id or "",
        channel=conversation.channel,
        outcome=outcome,
        escalation_reason=escalation_reason,
        silenced_at=silenced_at,
        **draft.row(),
    )


class ReviewError(ValueError):
    """A review write that the rules refuse (shown to the analyst as is)."""


def advisory_lock(name: str) -> None:
    """Hold a transaction-scoped PostgreSQL advisory lock named `name` (a double submit waits for the first).

    Call inside a transaction; the lock is released at its end.
    """
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


@transaction.atomic
def configuration_first_seen_set(*, fingerprint: str, at: dt.datetime) -> None:
    """Say when a configuration first ran (history written after the fact, as the demo's dashboard traffic)."""
    Configuration.objects.filter(pk=fingerprint).update(first_seen_at=at)


@transaction.atomic
def traces_backfill(*, traces: list[Trace], created_at: list[dt.datetime]) -> list[Trace]:
    """Write past traces built by the caller (unsaved) in one statement, each created at its moment."""
    return rows_backfill(model=Trace, rows=traces, created_at=created_at)


def _window_population(*, window_start: dt.datetime, window_end: dt.datetime, filters: dict) -> list[int]:
    parsed = parse_trace_filters(filters)
    # The session's window overrides any date range in the filters.
    parsed = TraceFilters(**{**parsed.__dict__, "since": window_start, "until": window_end})
    return list(traces_filtered(filters=parsed).order_by().values_list("pk", flat=True))


@transaction.atomic
def review_session_create(*, name: str, window_start: dt.datetime, window_end: dt.datetime, size: int,
                          filters: dict | None = None, seed: int | None = None, created_by=None) -> ReviewSession:
    """Create a session with `size` traces drawn uniformly from the window; the seed is recorded for replay."""
    if size < 1:
        raise ReviewError("A session needs at least one trace.")
    if window_end <= window_start:
        raise ReviewError("The window must end after it starts.")
    filters = {k: v for k, v in (filters or {}).items() if v not in ("", None) and k not in ("since", "until")}
    seed = secrets.randbelow(2**31) if seed is None else seed
    draw = draw_uniform(population_ids=_window_population(window_start=window_start, window_end=window_end,
                                                          filters=filters), size=size, seed=seed)
    session = ReviewSession.objects.create(name=name or f"Sample of {size}", window_start=window_start,
                                           window_end=window_end, filters=filters, seed=seed, requested_size=size,
                                           created_by=created_by)
    SessionTrace.objects.bulk_create(
        SessionTrace(session=session, trace_id=trace_id, source=SessionTrace.Source.UNIFORM, position=i)
        for i, trace_id in enumerate(draw.trace_ids, start=1))
    return session


@transaction.atomic
def review_session_add_verified_wrong(*, session: ReviewSession, limit: int = 100) -> int:
    """Append the window's traces whose reply an agent marked verified wrong, tagged as such; return how many."""
    session = ReviewSession.objects.select_for_update().get(pk=session.pk)
    candidates = (Trace.objects.filter(created_at__gte=session.window_start, created_at__lt=session.window_end,
                                       reply__verified_wrong_at__isnull=False)
                  .order_by("reply__verified_wrong_at", "pk").values_list("pk", flat=True)[:limit])
    return _append(session, candidates, SessionTrace.Source.VERIFIED_WRONG)


@transaction.atomic
def review_session_add_complaints(*, session: ReviewSession, limit: int = 100) -> int:
    """Append the window's traces whose reply carries a confirmed complaint, tagged as such; return how many.

    Confirmed means an agent marked the answer or the customer reacted 👎 / 😡 / 😠 to it. Suspected
    complaints (a follow-up that reads as disagreeing) are left out: the rules that suspect them miss
    no agreement on the labelled set but are words, not a person's verdict, and a session's complaint
    source should stay what customers and agents said. The browser's "suspected complaint" filter
    samples them on purpose.
    """
    session = ReviewSession.objects.select_for_update().get(pk=session.pk)
    confirmed = ComplaintSignal.objects.filter(message_id=OuterRef("reply_id"),
                                               certainty=ComplaintSignal.Certainty.CONFIRMED)
    candidates = (Trace.objects.filter(Exists(confirmed), created_at__gte=session.window_start,
                                       created_at__lt=session.window_end)
                  .annotate(complained_at=Subquery(confirmed.order_by("at").values("at")[:1]))
                  .order_by("complained_at", "pk").values_list("pk", flat=True)[:limit])
    return _append(session, candidates, SessionTrace.Source.COMPLAINT)


@transaction.atomic
def review_session_add_traces(*, session: ReviewSession, trace_ids: list[int],
                              source: str = SessionTrace.Source.UNIFORM) -> int:
    """Append the traces not yet in the session after its last one, with their source; return how many."""
    return _append(session, trace_ids, source)


def _append(session: ReviewSession, candidates, source: str) -> int:
    """Append the candidates not yet in the session after its last trace, with their source."""
    existing = list(session.items.values_list("trace_id", flat=True))
    added = append_tagged(existing=existing, candidates=candidates)
    start = (session.items.aggregate(last=Max("position"))["last"] or 0) + 1
    SessionTrace.objects.bulk_create(
        SessionTrace(session=session, trace_id=trace_id, source=source, position=i)
        for i, trace_id in enumerate(added, start=start))
    return len(added)


@transaction.atomic
def review_note_save(*, trace: Trace, author, verdict: str, session: ReviewSession | None = None,
                     queue: ReviewQueue | None = None, first_failure: str = "", stage: str = "",
                     model_faithful: bool | None = None, scores: Mapping[str, str | None] | None = None,
                     failure_class_id: int | None = None, chunk_id: int | None = None) -> ReviewNote:
    """Record (or replace) this reviewer's note on a trace of a session or of a queue, with their scores.

    `scores` maps score keys to typed values ("" clears one); the built-in faithfulness score comes from
    `model_faithful` unless `scores` names it. A failure may name its failure class and the chunk it is about
    (one the trace retrieved). All or nothing; the same note sent twice (a double submit) changes nothing.
    """
    if (session is None) == (queue is None):
        raise ReviewError("A note belongs to one session or one queue.")
    if session is not None and not session.items.filter(trace=trace).exists():
        raise ReviewError("This trace is not in the session.")
    if queue is not None and not QueueAssignment.objects.filter(item__queue=queue, item__trace=trace,
                                                                reviewer=author).exists():
        raise ReviewError("This trace is not assigned to you in this queue.")
    if verdict not in ReviewNote.Verdict.values:
        raise ReviewError("Choose pass, fail or defer.")
    first_failure = " ".join(first_failure.split())
    failure_class = None
    if verdict == ReviewNote.Verdict.FAIL:
        if not first_failure:
            raise ReviewError("Write one sentence about the first upstream failure.")
        if stage not in STAGES:
            raise ReviewError("Choose the stage where the failure starts.")
        failure_class = _live_class(failure_class_id)
        if chunk_id is not None and chunk_id not in retrieved_chunk_ids(trace):
            raise ReviewError("Name a chunk this trace retrieved.")
    else:
        first_failure, stage, chunk_id = "", "", None
    values = dict(scores or {})
    values.setdefault(FAITHFUL, {True: "yes", False: "no", None: ""}[model_faithful])
    try:
        written = trace_scores_set(trace=trace, author=author, values=values)
    except ScoreError as error:
        raise ReviewError(str(error)) from error
    faithful = {"yes": True, "no": False}.get(written.get(FAITHFUL) or "")
    defaults = {"verdict": verdict, "first_failure": first_failure, "stage": stage, "model_faithful": faithful,
                "chunk_id": chunk_id}
    if failure_class is not None or verdict != ReviewNote.Verdict.FAIL or queue is not None:
        defaults["failure_class"] = failure_class  # a session's notes get their class on the taxonomy page
    origin = {"session": session} if session is not None else {"queue": queue}
    note, _ = ReviewNote.objects.update_or_create(**origin, trace=trace, author=author, defaults=defaults)
    # Evals listen: "was the model faithful?" on an answer doubles as a judge-calibration label.
    review_note_saved.send(sender=ReviewNote, note=note)
    return note


def _live_class(failure_class_id: int | None) -> FailureClass | None:
    """Return the live class an id names, following merges; refuse an id that is no class."""
    if failure_class_id is None:
        return None
    failure_class = FailureClass.objects.filter(pk=failure_class_id).first()
    if failure_class is None:
        raise ReviewError("That failure class does not exist (deleted?): choose another.")
    seen = set()
    while failure_class.merged_into_id is not None and failure_class.pk not in seen:
        seen.add(failure_class.pk)
        failure_class = failure_class.merged_into
    return failure_class


def retrieved_chunk_ids(trace: Trace) -> list[int]:
    """Return the ids of the chunks a trace retrieved, in rank order."""
    return [row["chunk_id"] for row in (trace.retrieval or [])
            if isinstance(row, dict) and isinstance(row.get("chunk_id"), int)]


@transaction.atomic
def failure_class_create(*, name: str, definition: str, stage: str, session: ReviewSession | None = None,
                         actor=None) -> FailureClass:
    """Create a class in the team's taxonomy (`session`: where it was first coded, if in one).

    A live class of the same name (case aside) is the team's already: creating it again — a double submit,
    or a second session coding the same failure — returns that class instead of a twin.
    """
    name, definition = name.strip(), " ".join(definition.split())
    if not name or not definition:
        raise ReviewError("A class needs a name and a one-line definition.")
    if stage not in STAGES:
        raise ReviewError("Choose the stage where this failure starts.")
    advisory_lock(f"failure-class:{name.lower()}")  # two creations of one name at once make one class
    existing = FailureClass.objects.filter(name__iexact=name, merged_into__isnull=True).first()
    if existing is not None:
        return existing
    failure_class = FailureClass.objects.create(session=session, name=name, definition=definition, stage=stage)
    FailureClassEvent.objects.create(failure_class=failure_class, kind="created", actor=actor,
                                     detail={"name": name, "definition": definition, "stage": stage})
    return failure_class


@transaction.atomic
def review_notes_assign(*, note_ids: list[int], failure_class: FailureClass | None,
                        session: ReviewSession | None = None, actor=None) -> int:
    """Put failure notes (of the session, when given) in a class (or take them out with None); return how many."""
    if failure_class is not None and failure_class.merged_into_id is not None:
        raise ReviewError("Assign notes to a live class.")
    notes = ReviewNote.objects.filter(pk__in=note_ids, verdict=ReviewNote.Verdict.FAIL)
    if session is not None:
        notes = notes.filter(session=session)
    moved = notes.update(failure_class=failure_class)
    if failure_class is not None and moved:
        FailureClassEvent.objects.create(failure_class=failure_class, kind="assigned", actor=actor,
                                         detail={"notes": sorted(note_ids)})
    return moved


@transaction.atomic
def failure_class_rename(*, failure_class: FailureClass, name: str, definition: str = "", actor=None) -> FailureClass:
    """Rename a class (and optionally redefine it), keeping the old wording in its history."""
    name = name.strip()
    definition = " ".join(definition.split()) or failure_class.definition
    if not name:
        raise ReviewError("A class needs a name.")
    FailureClassEvent.objects.create(failure_class=failure_class, kind="renamed", actor=actor,
                                     detail={"from": failure_class.name, "to": name,
                                             "definition_from": failure_class.definition, "definition_to": definition})
    failure_class.name, failure_class.definition = name, definition
    failure_class.save(update_fields=["name", "definition"])
    return failure_class


@transaction.atomic
def failure_class_merge(*, source: FailureClass, target: FailureClass, actor=None) -> FailureClass:
    """Merge source into target: its notes move, it stays as history pointing at the target."""
    if source.pk == target.pk:
        raise ReviewError("Merge two different classes.")
    if target.merged_into_id is not None or source.merged_into_id is not None:
        raise ReviewError("Merge live classes only.")
    moved = list(source.notes.values_list("pk", flat=True))
    source.notes.update(failure_class=target)
    FailureClass.objects.filter(merged_into=source).update(merged_into=target)
    source.merged_into = target
    source.save(update_fields=["merged_into"])
    FailureClassEvent.objects.create(failure_class=target, kind="merged", actor=actor,
                                     detail={"from": source.pk, "from_name": source.name, "notes": moved})
    FailureClassEvent.objects.create(failure_class=source, kind="merged_into", actor=actor,
                                     detail={"into": target.pk, "into_name": target.name})
    return target


# --- saved filters ------------------------------------------------------------------------------------------------

FILTER_KEYS = tuple(name for name in TraceFilters.__dataclass_fields__ if name != "problems")
SAVED_FILTER_QUERY_MAX = 2_000


class SavedFilterError(ValueError):
    """A saved filter that cannot be stored as asked (the message says why)."""


def saved_filter_query(raw_query: str) -> str:
    """Return the browser filters of a query string, re-encoded (paging and unknown keys dropped); refuse a
    query with a value that cannot be a filter, or with no filter at all."""
    if len(raw_query) > SAVED_FILTER_QUERY_MAX:
        raise SavedFilterError(f"The filters are longer than {SAVED_FILTER_QUERY_MAX:,} characters.")
    sent = QueryDict(raw_query)
    kept = QueryDict(mutable=True)
    for key in FILTER_KEYS:
        value = sent.get(key, "").strip()
        if value:
            kept[key] = value
    filters = parse_trace_filters(kept)
    if filters.problems:
        raise SavedFilterError("Fix the filters before saving them: " + " ".join(filters.problems))
    if not filters.to_query():
        raise SavedFilterError("Choose at least one filter before saving: “all traces” needs no name.")
    return kept.urlencode()


@transaction.atomic
def saved_filter_save(*, user, name: str | None, raw_query: str) -> tuple[SavedFilter, str]:
    """Save the browser's current filters under a name of this user's; return the filter and what happened
    ("saved", "replaced": the name held other filters, "unchanged": the same ones — a second click)."""
    parsed = core_params.name(name, max_length=SavedFilter.NAME_MAX, empty="Give the filter a name.")
    if parsed.error:
        raise SavedFilterError(parsed.error)
    name = parsed.value
    query = saved_filter_query(raw_query)
    saved = SavedFilter.objects.select_for_update().filter(user=user, name=name).first()
    if saved is None:
        # A double submit can race past the read above; the unique constraint makes the second one wait.
        saved, created = SavedFilter.objects.get_or_create(user=user, name=name, defaults={"query": query})
        if created:
            return saved, "saved"
    if saved.query == query:
        return saved, "unchanged"
    saved.query = query
    saved.save(update_fields=["query", "updated_at"])
    return saved, "replaced"


def saved_filter_delete(*, user, saved_filter_id: int) -> str | None:
    """Delete one of this user's saved filters; return its name (None: not theirs, or already deleted)."""
    saved = SavedFilter.objects.filter(user=user, pk=saved_filter_id).first()
    if saved is None:
        return None
    saved.delete()
    return saved.name
