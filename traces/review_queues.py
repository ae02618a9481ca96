"""Review queues: traces shared out among reviewers, their progress, their agreement and the settled labels.

Writes (`review_queue_create`, `settled_label_save`) and the reads the queue page needs. The decisions are pure
modules: who reviews which item (traces/queue_assignment.py), Cohen's kappa (traces/agreement.py).
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Count, Q

from traces.agreement import DoubleReview, Kappa, ReviewerLabels, class_kappa, differences, score_kappa, \
    verdict_kappa
from traces.models import FailureClass, QueueAssignment, QueueItem, ReviewNote, ReviewQueue, SettledLabel, TraceScore
from traces.queue_assignment import AssignmentError, assign_reviewers
from traces.sampling import draw_uniform
from traces.scores import score_definitions, values_parse
from traces.scoring import ScoreError
from traces.selectors import TraceFilters, parse_trace_filters, traces_filtered
from traces.services import ReviewError, advisory_lock
from traces.taxonomy import resolve_class

MAX_QUEUE_SIZE = 1_000
PRESET_FILTERS = {
    ReviewQueue.Preset.COMPLAINTS: {"complaint_sourced": "yes"},
    ReviewQueue.Preset.FALLBACKS: {"fallback": "yes"},
}


def queue_filters(*, preset: str, route: str = "", filters: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the trace-browser filters of a queue: the browser's (or a saved filter's), narrowed by the preset."""
    if preset not in ReviewQueue.Preset.values:
        raise ReviewError("Choose a preset from the list.")
    chosen = {k: v for k, v in (filters or {}).items() if v not in ("", None) and k not in ("since", "until")}
    chosen.update(PRESET_FILTERS.get(preset, {}))
    if preset == ReviewQueue.Preset.ROUTE:
        if not route:
            raise ReviewError("Choose the route this queue reviews.")
        chosen["route"] = route
    parsed = parse_trace_filters(chosen)
    if parsed.problems:
        raise ReviewError("Fix the filters first: " + " ".join(parsed.problems))
    return parsed.to_query()


def queue_population(*, window_start: dt.datetime, window_end: dt.datetime, filters: dict) -> list[int]:
    """Return the ids of the window's traces the filters match, newest first (the window overrides their dates)."""
    parsed = parse_trace_filters(filters)
    parsed = TraceFilters(**{**parsed.__dict__, "since": window_start, "until": window_end})
    return list(traces_filtered(filters=parsed).values_list("pk", flat=True))


@transaction.atomic
def review_queue_create(*, name: str, source: str, preset: str = "", route: str = "", filters: dict | None = None,
                        window_start: dt.datetime, window_end: dt.datetime, size: int, double_fraction: float,
                        assignees: Sequence, seed: int | None = None, created_by=None,
                        token: str = "") -> tuple[ReviewQueue, bool]:
    """Create a queue of traces shared out among the assignees; return it and whether it was created.

    `source` "sample": `size` traces drawn uniformly from the window and filters; "filter": the newest `size`
    the filters match. Each item goes to one assignee, to two for `double_fraction` of the items (seeded: the
    seed is recorded, the same seed assigns the same way). A form's `token` sent twice returns the first queue.
    """
    if token:
        advisory_lock(f"review-queue:{token}")
        made = ReviewQueue.objects.filter(token=token).first()
        if made is not None:
            return made, False
    if source not in ReviewQueue.Source.values:
        raise ReviewError("Choose a uniform sample or every trace the filter matches.")
    if not 1 <= size <= MAX_QUEUE_SIZE:
        raise ReviewError(f"A queue holds 1 to {MAX_QUEUE_SIZE:,} traces.")
    if window_end <= window_start:
        raise ReviewError("The window must end after it starts.")
    filters = queue_filters(preset=preset, route=route, filters=filters)
    population = queue_population(window_start=window_start, window_end=window_end, filters=filters)
    seed = secrets.randbelow(2**31) if seed is None else seed
    trace_ids = (draw_uniform(population_ids=population, size=size, seed=seed).trace_ids
                 if source == ReviewQueue.Source.SAMPLE else population[:size])
    if not trace_ids:
        raise ReviewError("No trace of that window matches these filters: widen the window or the filters.")
    people = {user.pk: user for user in assignees}
    try:
        plan = assign_reviewers(trace_ids=trace_ids, reviewers=list(people), double_fraction=double_fraction,
                                seed=seed)
    except AssignmentError as error:
        raise ReviewError(str(error)) from error
    try:
        with transaction.atomic():
            queue = ReviewQueue.objects.create(
                name=name or f"Queue of {len(trace_ids)}", source=source, preset=preset, filters=filters,
                window_start=window_start, window_end=window_end, size=size, seed=seed,
                double_fraction=double_fraction, created_by=created_by, token=token)
    except IntegrityError:  # pragma: no cover - the advisory lock above serialises one token's submits
        return ReviewQueue.objects.get(token=token), False
    queue.assignees.set(people.values())
    items = QueueItem.objects.bulk_create(QueueItem(queue=queue, trace_id=a.trace_id, position=a.position)
                                          for a in plan)
    QueueAssignment.objects.bulk_create(QueueAssignment(item=item, reviewer_id=reviewer)
                                        for item, a in zip(items, plan) for reviewer in a.reviewers)
    return queue, True


# --- progress ---------------------------------------------------------------------------------------------------

def _done_notes(queue: ReviewQueue):
    """Notes that count as reviewed: pass or fail (a deferred trace is still to do)."""
    return ReviewNote.objects.filter(queue=queue).exclude(verdict=ReviewNote.Verdict.DEFER)


@dataclass
class ReviewerProgress:
    reviewer: object
    assigned: int
    done: int
    deferred: int

    @property
    def left(self) -> int:
        return self.assigned - self.done


def queue_progress(*, queue: ReviewQueue) -> tuple[list[ReviewerProgress], int, int]:
    """Return each assignee's progress and (items not yet reviewed by all their reviewers, items)."""
    done = set(_done_notes(queue).values_list("trace_id", "author_id"))
    deferred = set(ReviewNote.objects.filter(queue=queue, verdict=ReviewNote.Verdict.DEFER)
                   .values_list("trace_id", "author_id"))
    per_reviewer: dict[int, list[int]] = {}
    open_items = set()
    items = set()
    for item_id, trace_id, reviewer_id in QueueAssignment.objects.filter(item__queue=queue).values_list(
            "item_id", "item__trace_id", "reviewer_id"):
        counts = per_reviewer.setdefault(reviewer_id, [0, 0, 0])
        counts[0] += 1
        items.add(item_id)
        if (trace_id, reviewer_id) in done:
            counts[1] += 1
        else:
            open_items.add(item_id)
            counts[2] += (trace_id, reviewer_id) in deferred
    progress = [ReviewerProgress(reviewer=user, assigned=per_reviewer.get(user.pk, [0, 0, 0])[0],
                                 done=per_reviewer.get(user.pk, [0, 0, 0])[1],
                                 deferred=per_reviewer.get(user.pk, [0, 0, 0])[2])
                for user in queue.assignees.order_by("username")]
    return progress, len(open_items), len(items)


def reviewer_items(*, queue: ReviewQueue, reviewer) -> list[QueueItem]:
    """Return the items assigned to this reviewer, in queue order."""
    return list(QueueItem.objects.filter(queue=queue, assignments__reviewer=reviewer).select_related("trace")
                .order_by("position"))


def next_item(*, queue: ReviewQueue, reviewer) -> QueueItem | None:
    """Return this reviewer's first item they have not reviewed (deferred ones come back last), or None."""
    mine = reviewer_items(queue=queue, reviewer=reviewer)
    notes = dict(ReviewNote.objects.filter(queue=queue, author=reviewer).values_list("trace_id", "verdict"))
    fresh = [item for item in mine if item.trace_id not in notes]
    deferred = [item for item in mine if notes.get(item.trace_id) == ReviewNote.Verdict.DEFER]
    return (fresh or deferred or [None])[0]


# --- agreement ------------------------------------------------------------------------------------------------

@dataclass
class Disagreement:
    item: QueueItem
    notes: tuple[ReviewNote, ReviewNote]
    scores: tuple[dict[str, str], dict[str, str]]
    about: list[str]
    settled: SettledLabel | None = None
    score_names: dict[str, str] = field(default_factory=dict)

    @property
    def about_text(self) -> str:
        """Return what the reviewers differ on, in words ("the verdict, Answered the question")."""
        words = {"verdict": "the verdict", "failure class": "the failure class"}
        return ", ".join(words.get(about) or self.score_names.get(about.removeprefix("score:"), about)
                         for about in self.about)

    @property
    def settled_scores(self) -> list[tuple[str, str]]:
        """Return the settled scores as (name, value)."""
        scores = self.settled.scores if self.settled is not None else {}
        return [(self.score_names.get(key, key), value) for key, value in sorted(scores.items())]

    @property
    def sides(self) -> list[tuple[ReviewNote, list[tuple[str, str]]]]:
        """Return each reviewer's note with their scores, sorted by key."""
        return [(note, sorted(scores.items())) for note, scores in zip(self.notes, self.scores)]

    @property
    def score_keys(self) -> list[tuple[str, str]]:
        """Return the scores in dispute with the value the settle form starts from (settled, else the first's)."""
        keys = [about.removeprefix("score:") for about in self.about if about.startswith("score:")]
        start = self.settled.scores if self.settled is not None else self.scores[0]
        return [(key, start.get(key, "")) for key in keys]


@dataclass
class QueueAgreement:
    doubled: int  # items assigned to two reviewers
    both_reviewed: int  # … that both have reviewed (pass or fail)
    verdict: Kappa | None = None
    classes: list[tuple[FailureClass, Kappa]] = field(default_factory=list)
    scores: list[tuple[object, Kappa]] = field(default_factory=list)  # (ScoreDefinition, Kappa)
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def settled(self) -> int:
        return sum(1 for d in self.disagreements if d.settled is not None)


def queue_agreement(*, queue: ReviewQueue) -> QueueAgreement:
    """Return κ per failure class (presence / absence), for pass / fail and per score over the items two
    reviewers both reviewed, and the items they disagree on with what was settled."""
    doubled = list(QueueItem.objects.filter(queue=queue).annotate(reviewers=Count("assignments"))
                   .filter(reviewers=2).select_related("trace").order_by("position"))
    notes: dict[tuple[int, int], ReviewNote] = {
        (n.trace_id, n.author_id): n for n in _done_notes(queue).select_related("author", "failure_class", "chunk")}
    reviewers = {}
    for item_id, reviewer_id in QueueAssignment.objects.filter(item__in=doubled).values_list("item_id",
                                                                                              "reviewer_id"):
        reviewers.setdefault(item_id, []).append(reviewer_id)
    merged_into = dict(FailureClass.objects.values_list("pk", "merged_into_id"))
    trace_ids = [item.trace_id for item in doubled]
    scores: dict[tuple[int, int], dict[str, str]] = {}
    for trace_id, author_id, key, value in TraceScore.objects.filter(trace_id__in=trace_ids).values_list(
            "trace_id", "author_id", "definition__key", "value"):
        scores.setdefault((trace_id, author_id), {})[key] = value
    settled = {s.item_id: s for s in SettledLabel.objects.filter(item__in=doubled).select_related(
        "settled_by", "failure_class")}
    names = {d.key: d.name for d in score_definitions()}
    reviews, result = [], QueueAgreement(doubled=len(doubled), both_reviewed=0)
    for item in doubled:
        first_id, second_id = sorted(reviewers.get(item.pk, []))
        pair = notes.get((item.trace_id, first_id)), notes.get((item.trace_id, second_id))
        if None in pair:
            continue
        pair_scores = scores.get((item.trace_id, first_id), {}), scores.get((item.trace_id, second_id), {})
        labels = [ReviewerLabels(verdict=note.verdict, failure_class=resolve_class(note.failure_class_id, merged_into),
                                 scores=tuple(sorted(s.items()))) for note, s in zip(pair, pair_scores)]
        review = DoubleReview(item=item.pk, first=labels[0], second=labels[1])
        reviews.append(review)
        about = differences(review)
        if about:
            result.disagreements.append(Disagreement(item=item, notes=pair, scores=pair_scores, about=about,
                                                     settled=settled.get(item.pk), score_names=names))
    result.both_reviewed = len(reviews)
    if not reviews:
        return result
    result.verdict = verdict_kappa(reviews)
    used = sorted({c for r in reviews for c in (r.first.failure_class, r.second.failure_class) if c is not None})
    classes = FailureClass.objects.in_bulk(used)
    result.classes = [(classes[c], class_kappa(reviews, c)) for c in used]
    keys = {k for r in reviews for k, _ in (*r.first.scores, *r.second.scores)}
    result.scores = [(d, score_kappa(reviews, d.key)) for d in score_definitions() if d.key in keys]
    return result


# --- settling -----------------------------------------------------------------------------------------------------

@transaction.atomic
def settled_label_save(*, item: QueueItem, verdict: str, failure_class_id: int | None = None,
                       scores: Mapping[str, str | None] | None = None, note: str = "",
                       actor) -> tuple[SettledLabel, str]:
    """Record the settled label of a doubly reviewed item, who settled it and when; return it and what happened
    ("settled", "changed", "unchanged": the same label again — a double submit)."""
    if item.assignments.count() != 2:
        raise ReviewError("Only an item two reviewers reviewed is settled.")
    if verdict not in (ReviewNote.Verdict.PASS, ReviewNote.Verdict.FAIL):
        raise ReviewError("Settle on pass or fail.")
    failure_class = None
    if verdict == ReviewNote.Verdict.FAIL and failure_class_id is not None:
        failure_class = FailureClass.objects.filter(pk=failure_class_id, merged_into__isnull=True).first()
        if failure_class is None:
            raise ReviewError("Choose a live failure class.")
    try:
        parsed = values_parse({k: v for k, v in (scores or {}).items()})
    except ScoreError as error:
        raise ReviewError(str(error)) from error
    settled_scores = {d.key: v for d, v in parsed.items() if v is not None}
    note = " ".join(note.split())[:400]
    existing = SettledLabel.objects.select_for_update().filter(item=item).first()
    fields = {"verdict": verdict, "failure_class": failure_class, "scores": settled_scores, "note": note}
    if existing is not None:
        if (existing.verdict, existing.failure_class_id, existing.scores, existing.note) == (
                verdict, failure_class.pk if failure_class else None, settled_scores, note):
            return existing, "unchanged"
        for name, value in fields.items():
            setattr(existing, name, value)
        existing.settled_by = actor
        existing.save()
        return existing, "changed"
    return SettledLabel.objects.create(item=item, settled_by=actor, **fields), "settled"


def settled_faithfulness(*, key: str) -> list[tuple[int, str, object]]:
    """Return (trace id, settled value, who settled it) for every settled item with the score `key` set."""
    rows = SettledLabel.objects.filter(Q(scores__has_key=key)).select_related("item", "settled_by")
    return [(s.item.trace_id, s.scores[key], s.settled_by) for s in rows.order_by("pk")]
