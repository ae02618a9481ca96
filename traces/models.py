"""One Trace row per bot turn — answered, escalated or silenced — with everything needed to review it."""

import datetime as dt

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Value
from pgvector.django import VectorField

from core.fields import ClockDateTimeField
from core.fulltext import TsVectorOr, bilingual_vector  # noqa: F401 - migrations name TsVectorOr here
from traces.fingerprint import ConfigurationParts
from traces.scoring import ScoreSpec

# Stages where a first upstream failure can start (open coding and taxonomy share them).
STAGES = ["routing", "retrieval", "pruning", "billing", "writing", "verification", "humanizing", "channel"]
STAGE_CHOICES = [(stage, stage) for stage in STAGES]


class VerdictOf(models.Func):
    """The verifier verdict of a turn from its attempts: grounded at once, rewritten into grounded, or ungrounded.

    Immutable SQL on the jsonb column, so it can back a stored generated column: no code path that writes a
    Trace (bot/turn.py, imports, the benchmark's COPY) has to remember to fill it.
    """

    template = (
        "(CASE WHEN jsonb_typeof(%(expressions)s) <> 'array' OR jsonb_array_length(%(expressions)s) = 0 THEN 'none' "
        "WHEN (%(expressions)s -> -1 -> 'verdict' ->> 'grounded') = 'true' AND jsonb_array_length(%(expressions)s) = 1 "
        "THEN 'grounded' "
        "WHEN (%(expressions)s -> -1 -> 'verdict' ->> 'grounded') = 'true' THEN 'rewritten' "
        "WHEN jsonb_path_exists(%(expressions)s, '$[*].verdict') THEN 'ungrounded' "
        "ELSE 'none' END)"
    )
    output_field = models.CharField(max_length=10)


class HasDerived(models.Func):
    """Whether any verifier verdict of the turn accepted a derived number (e.g. a sum of two facts)."""

    template = "jsonb_path_exists(%(expressions)s, '$[*].verdict.derived[*]')"
    output_field = models.BooleanField()


class TraceText(models.Func):
    """The words of a turn an analyst searches: the customer's query, the reply sent and the note for the agent."""

    template = "(%(expressions)s)"
    arg_joiner = " || ' ' || "
    output_field = models.TextField()


def trace_search_vector() -> TsVectorOr:
    """Return the text-search vector of a trace (stored in `Trace.search_vector`).

    Folded and stemmed in Spanish and English (core.fulltext), so "reconexion" finds "reconexión" the way
    retrieval does and "facturas" finds "factura" whatever the turn's language.
    """
    return bilingual_vector(TraceText(F("query"), F("final_text"), F("internal_note")))


class Trace(models.Model):
    class Outcome(models.TextChoices):
        ANSWERED = "answered", "Answered"
        ESCALATED = "escalated", "Escalated"
        SILENCED = "silenced", "Silenced"
        CLARIFY = "clarify", "Asked to clarify"
        DECLINED = "declined", "Declined (not plans or billing)"

    class Fallback(models.TextChoices):
        NONE = "", "—"
        TEMPLATE = "template", "Sent the verified template answer (the writer's drafts failed)"
        QUOTE = "quote", "Quoted the knowledge base (the writer's drafts failed)"
        ESCALATED = "escalated", "Escalated with the verified draft offered to the agent"

    conversation = models.ForeignKey("desk.Conversation", on_delete=models.CASCADE, related_name="traces")
    message = models.ForeignKey("desk.Message", null=True, on_delete=models.SET_NULL, related_name="traces")
    reply = models.OneToOneField("desk.Message", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="reply_trace", help_text="The bot message this turn sent.")
    escalation = models.OneToOneField("desk.Escalation", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="trace", help_text="The escalation this turn opened.")
    provider_message_id = models.CharField(max_length=128, blank=True)
    channel = models.CharField(max_length=20)
    customer_id = models.CharField(max_length=64, blank=True)
    language = models.CharField(max_length=2, blank=True)
    route = models.CharField(max_length=20, blank=True)
    routing_rule = models.CharField(max_length=100, blank=True)
    route_confidence = models.FloatField(null=True, blank=True,
                                         help_text="The router's confidence in the route; 1.0 when a rule decided.")
    router_version = models.CharField(max_length=100, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    escalation_reason = models.CharField(max_length=40, blank=True)
    silenced_at = models.CharField(max_length=10, blank=True, help_text="gate (before the turn) or send.")
    query = models.TextField(blank=True)
    retrieval = models.JSONField(default=list, blank=True)
    tool_calls = models.JSONField(default=list, blank=True)
    evidence = models.JSONField(default=list, blank=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    model = models.CharField(max_length=100, blank=True)
    attempts = models.JSONField(default=list, blank=True)
    humanizer = models.JSONField(default=dict, blank=True)
    # Database defaults, so raw inserts (the trace benchmark's generator) need not name the new columns.
    key_figures = models.JSONField(default=list, db_default=Value([], models.JSONField()), blank=True,
                                   help_text="Figures the answer had to state, mapped to the turn's E# ids.")
    fallback = models.CharField(max_length=10, choices=Fallback.choices, blank=True, db_default="",
                                help_text="What happened after the last rewrite failed.")
    fallback_draft = models.JSONField(default=dict, db_default=Value({}, models.JSONField()), blank=True)
    internal_note = models.TextField(blank=True, db_default="",
                                     help_text="The note for the agent, verified like the reply.")
    final_text = models.TextField(blank=True)
    citations = models.JSONField(default=list, blank=True)
    index_version = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.JSONField(default=dict, blank=True)
    total_ms = models.FloatField(default=0)
    token_usage = models.JSONField(default=dict, blank=True)
    # What the turn ran under (prompt, model, router, index, tuning); the row holds the parts once.
    configuration = models.ForeignKey("traces.Configuration", null=True, blank=True, on_delete=models.PROTECT,
                                      related_name="traces", db_index=False)
    created_at = ClockDateTimeField(auto_now_add=True, db_index=True)
    # Derived by PostgreSQL from `attempts`: filterable and indexed without any writer filling them.
    verdict = models.GeneratedField(expression=VerdictOf("attempts"), output_field=models.CharField(max_length=10),
                                    db_persist=True)
    has_derived = models.GeneratedField(expression=HasDerived("attempts"), output_field=models.BooleanField(),
                                        db_persist=True)
    # Stored, not an expression index: the first page of a common word walks the keyset index and tests each
    # row, and a stored vector costs microseconds per row where recomputing two to_tsvector() costs ~0.2 ms —
    # measured in bench/traces.py, where the expression index put a two-word English search at p95 218 ms on
    # 20,000 traces. The price: adding the column rewrites the table once (see docs/traces.md for 1M traces).
    search_vector = models.GeneratedField(expression=trace_search_vector(), output_field=SearchVectorField(),
                                          db_persist=True)

    class Meta:
        permissions = [('review_traces', 'Review traces, code failures and run evals')]
        ordering = ["-created_at", "-pk"]
        # Every browser filter is an equality followed by the keyset order (created_at, id): one composite index
        # per filter column lets PostgreSQL read the first page straight off the index.
        indexes = [
            models.Index(fields=["-created_at", "-id"], name="trace_keyset"),
            models.Index(fields=["outcome", "-created_at", "-id"], name="trace_outcome_keyset"),
            models.Index(fields=["escalation_reason", "-created_at", "-id"], name="trace_reason_keyset"),
            models.Index(fields=["route", "-created_at", "-id"], name="trace_route_keyset"),
            models.Index(fields=["language", "-created_at", "-id"], name="trace_language_keyset"),
            models.Index(fields=["channel", "-created_at", "-id"], name="trace_channel_keyset"),
            models.Index(fields=["verdict", "-created_at", "-id"], name="trace_verdict_keyset"),
            models.Index(fields=["prompt_version", "-created_at", "-id"], name="trace_prompt_keyset"),
            models.Index(fields=["index_version", "-created_at", "-id"], name="trace_index_keyset"),
            models.Index(fields=["model", "-created_at", "-id"], name="trace_model_keyset"),
            models.Index(fields=["configuration", "-created_at", "-id"], name="trace_config_keyset"),
            models.Index(fields=["-created_at", "-id"], condition=models.Q(has_derived=True),
                         name="trace_derived_keyset"),
            models.Index(fields=["total_ms"], name="trace_total_ms"),
            # Fallback turns are a few in a hundred: a partial index holds only them, for the filter and the day count.
            models.Index(fields=["fallback", "-created_at", "-id"], condition=~models.Q(fallback=""),
                         name="trace_fallback_keyset"),
            GinIndex(fields=["search_vector"], name="trace_text_search"),
        ]

    def __str__(self):
        return f"trace {self.pk} ({self.outcome})"


class ReviewSession(models.Model):
    """A reproducible uniform draw of traces from a window (plus tagged extras) that analysts open-code."""

    name = models.CharField(max_length=200)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = ClockDateTimeField(auto_now_add=True)
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    filters = models.JSONField(default=dict, blank=True)
    seed = models.BigIntegerField()
    requested_size = models.PositiveIntegerField()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"session {self.pk} {self.name}"


class SessionTrace(models.Model):
    """A trace in a session, with where it came from; a trace enters a session once."""

    class Source(models.TextChoices):
        UNIFORM = "uniform", "Uniform sample"
        VERIFIED_WRONG = "verified_wrong", "Verified wrong by an agent"
        COMPLAINT = "complaint", "Complaint"

    session = models.ForeignKey(ReviewSession, on_delete=models.CASCADE, related_name="items")
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="session_items")
    source = models.CharField(max_length=20, choices=Source.choices)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["session", "position"]
        constraints = [
            models.UniqueConstraint(fields=["session", "trace"], name="session_trace_once"),
        ]
        indexes = [models.Index(fields=["trace", "source"], name="session_trace_source")]


class FailureClass(models.Model):
    """An axial-coding class of first upstream failures, the team's (shared by every session and queue); merged
    classes point at the survivor. `session` only records where the class was first coded, if anywhere."""

    session = models.ForeignKey(ReviewSession, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="failure_classes")
    name = models.CharField(max_length=120)
    definition = models.CharField(max_length=300)
    stage = models.CharField(max_length=20, choices=STAGE_CHOICES)
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged")
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self):
        return self.name


class FailureClassEvent(models.Model):
    """History of a class: created, renamed, merged, notes assigned."""

    failure_class = models.ForeignKey(FailureClass, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=20)
    detail = models.JSONField(default=dict, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]


class ReviewNote(models.Model):
    """One analyst's open code for one trace in a session or a review queue: pass, fail (with the first upstream
    failure) or defer. Notes are the team's: the trace page, the taxonomy and the KB read them wherever they
    were written."""

    class Verdict(models.TextChoices):
        PASS = "pass", "Pass"
        FAIL = "fail", "Fail"
        DEFER = "defer", "Defer"

    session = models.ForeignKey(ReviewSession, null=True, blank=True, on_delete=models.CASCADE, related_name="notes")
    queue = models.ForeignKey("traces.ReviewQueue", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="notes")
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="review_notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    first_failure = models.CharField(max_length=400, blank=True)
    stage = models.CharField(max_length=20, choices=STAGE_CHOICES, blank=True)
    model_faithful = models.BooleanField(null=True, blank=True,
                                         help_text="Was the model faithful to the context it was given?")
    failure_class = models.ForeignKey(FailureClass, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="notes")
    chunk = models.ForeignKey("kb.Chunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
                              help_text="The chunk the failure is about (the KB counts the note on it).")
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["session", "trace", "author"], name="one_note_per_analyst",
                                    condition=models.Q(session__isnull=False)),
            models.UniqueConstraint(fields=["queue", "trace", "author"], name="one_queue_note_per_reviewer",
                                    condition=models.Q(queue__isnull=False)),
            models.CheckConstraint(condition=models.Q(session__isnull=True) | models.Q(queue__isnull=True),
                                   name="review_note_one_origin"),
        ]
        indexes = [models.Index(fields=["trace"], name="review_note_trace"),
                   models.Index(fields=["failure_class"], name="review_note_class")]


class ReviewQueue(models.Model):
    """Traces shared out among reviewers: a uniform sample or everything a filter matches, each item to one
    reviewer or, for `double_fraction` of them, to two (seeded, so the assignment replays)."""

    class Source(models.TextChoices):
        SAMPLE = "sample", "A uniform random sample"
        FILTER = "filter", "Every trace the filter matches (newest first, up to the size)"

    class Preset(models.TextChoices):
        NONE = "", "The trace browser's filters"
        COMPLAINTS = "complaints", "Customer complaints"
        FALLBACKS = "fallbacks", "Answered by the verified-only fallback"
        ROUTE = "route", "One route"

    name = models.CharField(max_length=200)
    source = models.CharField(max_length=10, choices=Source.choices)
    preset = models.CharField(max_length=12, choices=Preset.choices, blank=True)
    filters = models.JSONField(default=dict, blank=True, help_text="The trace browser's filters, as query values.")
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    size = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    double_fraction = models.FloatField(default=0.0, help_text="Share of the items two reviewers review (0–1).")
    assignees = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="review_queues")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = ClockDateTimeField(auto_now_add=True)
    token = models.CharField(max_length=40, blank=True,
                             help_text="The creating form's one-time token: a double submit finds the queue made.")

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["token"], condition=~models.Q(token=""),
                                               name="review_queue_token_once")]

    def __str__(self):
        return self.name

    @property
    def window_last(self):
        """The window's last included moment (the end is exclusive: "to 2026-11-20" ends at the 21st's midnight)."""
        return self.window_end - dt.timedelta(microseconds=1)


class QueueItem(models.Model):
    """A trace in a queue; its reviewers are its assignments."""

    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="items")
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="queue_items")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["queue", "position"]
        constraints = [models.UniqueConstraint(fields=["queue", "trace"], name="queue_trace_once"),
                       models.UniqueConstraint(fields=["queue", "position"], name="queue_position_once")]


class QueueAssignment(models.Model):
    """One reviewer's turn at one queue item."""

    item = models.ForeignKey(QueueItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")

    class Meta:
        ordering = ["item", "reviewer"]
        constraints = [models.UniqueConstraint(fields=["item", "reviewer"], name="queue_assignment_once")]


class SettledLabel(models.Model):
    """What a doubly reviewed item's label is after the team settled the reviewers' disagreement."""

    item = models.OneToOneField(QueueItem, on_delete=models.CASCADE, related_name="settled")
    verdict = models.CharField(max_length=10, choices=ReviewNote.Verdict.choices)
    failure_class = models.ForeignKey(FailureClass, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+")
    scores = models.JSONField(default=dict, blank=True, help_text="Score key → the settled value.")
    note = models.CharField(max_length=400, blank=True)
    settled_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    settled_at = ClockDateTimeField(auto_now=True)


class ScoreDefinition(models.Model):
    """A score the team defined (yes / no, named values, a number in a range) that reviewers set on traces and
    golden answers. Built-in definitions (faithfulness) come with the product and cannot be edited."""

    class Kind(models.TextChoices):
        BOOLEAN = "boolean", "Yes / no"
        CATEGORICAL = "categorical", "Named values"
        NUMERIC = "numeric", "A number in a range"

    key = models.CharField(max_length=40, unique=True)
    name = models.CharField(max_length=120)
    description = models.CharField(max_length=400)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    values = models.JSONField(default=list, blank=True, help_text="The named values, in order (categorical).")
    low = models.FloatField(null=True, blank=True)
    high = models.FloatField(null=True, blank=True)
    built_in = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-built_in", "name", "pk"]

    def __str__(self):
        return self.name

    def spec(self) -> ScoreSpec:
        return ScoreSpec(key=self.key, name=self.name, kind=self.kind, values=tuple(self.values or ()),
                         low=self.low, high=self.high)


class TraceScore(models.Model):
    """One reviewer's value of one score on one trace (set in review; the latest value wins)."""

    definition = models.ForeignKey(ScoreDefinition, on_delete=models.CASCADE, related_name="trace_scores")
    trace = models.ForeignKey(Trace, on_delete=models.CASCADE, related_name="scores")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    value = models.CharField(max_length=60, help_text="Canonical: yes / no, the value's name, or the number.")
    number = models.FloatField(null=True, blank=True, help_text="yes 1, no 0, or the number itself.")
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        ordering = ["definition", "trace", "pk"]
        constraints = [models.UniqueConstraint(fields=["definition", "trace", "author"],
                                               name="one_trace_score_per_author")]
        indexes = [models.Index(fields=["definition", "value"], name="trace_score_value")]


class Configuration(models.Model):
    """What a turn ran under — prompt, model, router, index and tuning — stored once per fingerprint.

    The fingerprint and the tuning hash come from traces/fingerprint.py; each part is a field, so two
    configurations can be compared part by part (`Configuration.parts()` → `differences()`).
    """

    fingerprint = models.CharField(max_length=16, primary_key=True)
    prompt_version = models.CharField(max_length=40, blank=True)
    model = models.CharField(max_length=100, blank=True)
    router_version = models.CharField(max_length=100, blank=True)
    index_version = models.PositiveIntegerField(null=True, blank=True)
    kb_prune_margin = models.FloatField()
    kb_context_min_score = models.FloatField()
    bot_max_rewrites = models.PositiveIntegerField()
    phrases_hash = models.CharField(max_length=16)
    tuning_hash = models.CharField(max_length=16)
    first_seen_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-first_seen_at", "fingerprint"]

    def __str__(self):
        return f"configuration {self.fingerprint}"

    def parts(self) -> ConfigurationParts:
        return ConfigurationParts(**{name: getattr(self, name) for name in ConfigurationParts.__dataclass_fields__})


class SavedFilter(models.Model):
    """A trace-browser filter query that one analyst saved under a name; only its owner sees it."""

    NAME_MAX = 80

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=NAME_MAX)
    query = models.TextField(help_text="The filters as a query string, as the browser's filter form sends them.")
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        ordering = ["user", "name"]
        constraints = [models.UniqueConstraint(fields=["user", "name"], name="saved_filter_name_per_user")]

    def __str__(self):
        return self.name
class RollupCounts(models.Model):
    """The turns of one period counted per channel × language × route × outcome × configuration.

    Latencies and reply waits are fixed-bucket histograms over the edges in traces/rollup_stats.py, so
    percentiles merge across periods. Verified-wrong marks, complaints and first replies count in the period of
    the turn they are about, whenever they were made.
    """

    channel = models.CharField(max_length=20)
    language = models.CharField(max_length=2)
    route = models.CharField(max_length=20)
    outcome = models.CharField(max_length=10)
    configuration = models.ForeignKey(Configuration, null=True, on_delete=models.DO_NOTHING, db_constraint=False,
                                      related_name="+")
    turns = models.PositiveIntegerField()
    answered = models.PositiveIntegerField()
    escalated = models.PositiveIntegerField()
    silenced = models.PositiveIntegerField()
    clarify = models.PositiveIntegerField()
    declined = models.PositiveIntegerField(default=0, db_default=0,
                                           help_text="Turns the bot declined: not about plans, bills or payments.")
    verified_wrong = models.PositiveIntegerField()
    complaints = models.PositiveIntegerField(help_text="Turns whose answer has a confirmed complaint.")
    suspected_complaints = models.PositiveIntegerField(help_text="Suspected only (no confirmed one).")
    flagged = models.PositiveIntegerField(help_text="Verified wrong or confirmed complaint (each turn once).")
    tokens_in = models.BigIntegerField()
    tokens_out = models.BigIntegerField()
    # Histograms as pgvector vectors: pgvector's sum() adds them element-wise in C. Measured at 1M traces
    # (bench/dashboard.py): unnesting a JSON object of stage histograms cost 0.6 s at 17k rows, summing int[]
    # by subscript 0.42 s at 21k; counts stay exact while one bucket of a range holds under 2^24 turns.
    latency_hist = VectorField(help_text="Whole-turn latency, counts over LATENCY_EDGES_MS.")
    stage_latency_hist = VectorField(help_text="Per stage (STAGES one after another), counts over LATENCY_EDGES_MS.")
    first_reply_hist = VectorField(help_text="Escalation to first human reply, counts over REPLY_EDGES_S.")

    class Meta:
        abstract = True


class RollupRow(RollupCounts):
    """Rollup counts split further by escalation reason and handling agent."""

    escalation_reason = models.CharField(max_length=40)
    agent = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.DO_NOTHING,
                              db_constraint=False, related_name="+",
                              help_text="Who wrote the first reply after the turn's escalation (none yet: null).")

    class Meta:
        abstract = True


class HourlyRollup(RollupRow):
    """One hour's rollup rows. Written only by traces/rollups.py (delete and insert per range of hours, in one
    transaction); the dashboard reads them for the hours of a day not complete yet."""

    hour = models.DateTimeField(help_text="Start of the hour (UTC).")

    class Meta:
        indexes = [models.Index(fields=["hour"], name="rollup_hour")]

    def __str__(self):
        return f"rollup {self.hour:%Y-%m-%d %H}:00 {self.outcome} ×{self.turns}"


class DailyRollup(RollupRow):
    """One local day's rollup rows (TIME_ZONE), summed from its hours whenever one of them is rolled.

    What the dashboard reads for whole days: about ten times fewer rows than the hours hold (a dimension
    tuple seen in several hours of a day is one row), so a 30-day page sums thousands of rows, not ~100,000.
    """

    day_start = models.DateTimeField(help_text="The local midnight the day starts at.")

    class Meta:
        indexes = [
            models.Index(fields=["day_start"], name="rollup_day"),
            # The dashboard's two reads that need the reason or the agent, from the index alone: at 1M traces
            # nine daily rows in ten are escalations, most with an agent, each ~1.4 kB with its histograms
            # (stored inline: rows under ~2 kB are never toasted). On the bench's 90 days, the reason's rows
            # read from the table took 28 ms, from this index 5; the agent's 19 and 4.
            models.Index(fields=["day_start"], name="rollup_day_escalated",
                         include=["escalation_reason", "escalated", "channel", "language", "route"],
                         condition=models.Q(outcome="escalated")),
            models.Index(fields=["day_start"], name="rollup_day_agent",
                         include=["agent", "escalated", "channel", "language", "route", "first_reply_hist"],
                         condition=models.Q(agent__isnull=False)),
        ]

    def __str__(self):
        return f"daily rollup {self.day_start:%Y-%m-%d} {self.outcome} ×{self.turns}"


class DailyOutcomeRollup(RollupCounts):
    """DailyRollup summed over escalation reasons and handling agents: one row per local day × channel ×
    language × route × outcome × configuration, written in the transaction that writes the day's DailyRollup.

    What the dashboard reads for every number that needs neither the reason nor the agent (the day counts,
    the routes, the histograms, the tokens, the comparison): at 1M traces about 50 rows a day instead of ~310.
    """

    day_start = models.DateTimeField(help_text="The local midnight the day starts at.")

    class Meta:
        indexes = [models.Index(fields=["day_start"], name="rollup_outcome_day")]

    def __str__(self):
        return f"daily outcome rollup {self.day_start:%Y-%m-%d} {self.outcome} ×{self.turns}"


class RolledHour(models.Model):
    """An hour whose rollup rows are written (an hour without turns has a RolledHour and no HourlyRollup)."""

    hour = models.DateTimeField(primary_key=True)
    rolled_at = models.DateTimeField()

    class Meta:
        ordering = ["-hour"]
