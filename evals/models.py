"""Evals: golden sets and their versions, eval runs with per-case items, human labels and judge verdicts.

The tables were made when evals lived in the traces app; `db_table` keeps their names so data survives.
"""

from django.conf import settings
from django.db import models

from core.fields import ClockDateTimeField
from traces.models import FailureClass, ScoreDefinition, Trace


class GoldenSet(models.Model):
    """A named, versioned set of golden cases; every change through the services bumps `current_version`."""

    name = models.CharField(max_length=100, unique=True)
    current_version = models.PositiveIntegerField(default=0)
    archived_at = models.DateTimeField(null=True, blank=True,
                                       help_text="Archived sets are hidden by default and take no new cases or runs.")
    # The set's own gates, in the shape of a gates file's thresholds ({"metrics", "must_pass", "no_new_failures"});
    # null: the repository's gates file (evals/fixtures/gates.toml) until someone edits them on the set's page.
    gates = models.JSONField(null=True, blank=True)
    gates_edited_at = models.DateTimeField(null=True, blank=True)
    gates_edited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                        related_name="+")

    class Meta:
        db_table = "traces_goldenset"
        ordering = ["name"]

    def __str__(self):
        return f"{self.name} v{self.current_version}"

    @property
    def archived(self) -> bool:
        return self.archived_at is not None


class GoldenCase(models.Model):
    class Origin(models.TextChoices):
        TRACE = "trace", "Trace"
        COMPLAINT = "complaint", "Complaint"
        VARIANT = "variant", "Variant"
        FILE = "file", "File"

    golden_set = models.ForeignKey(GoldenSet, on_delete=models.CASCADE, related_name="cases")
    case_id = models.CharField(max_length=64)
    query = models.TextField()
    context = models.JSONField(default=list, blank=True)
    customer_id = models.CharField(max_length=64, blank=True)
    facts = models.JSONField(default=list, blank=True, help_text="Strings a correct answer must contain.")
    hits = models.JSONField(default=list, blank=True, help_text="Doc slugs that count as a hit.")
    hard_negatives = models.JSONField(default=list, blank=True)
    must_pass = models.BooleanField(default=False)
    clarification_expected = models.BooleanField(default=False)
    synthetic = models.BooleanField(default=False)
    reviewed = models.BooleanField(default=True, help_text="False for synthetic cases until a human reviews them.")
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.FILE)
    split = models.CharField(max_length=4, blank=True, db_default="",
                             help_text="dev or test as the file says; empty: the split hashed from the case id.")
    language = models.CharField(max_length=2, blank=True, db_default="")
    out_of_scope = models.BooleanField(default=False, db_default=False,
                                       help_text="No document answers it: it passes when the search says no context.")
    as_of = models.DateField(null=True, blank=True,
                             help_text="The date the case's figures were written for: runs answer it on that date.")
    trace = models.ForeignKey(Trace, null=True, blank=True, on_delete=models.SET_NULL, related_name="golden_cases")
    failure_class = models.ForeignKey(FailureClass, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="golden_variants",
                                      help_text="For a generated variant: the taxonomy class it was made from.")
    created = ClockDateTimeField(auto_now_add=True)
    updated = ClockDateTimeField(auto_now=True)

    class Meta:
        db_table = "traces_goldencase"
        ordering = ["golden_set", "case_id"]
        constraints = [models.UniqueConstraint(fields=["golden_set", "case_id"], name="golden_case_id_per_set")]

    def __str__(self):
        return f"{self.golden_set.name}/{self.case_id}"


class GoldenSetVersion(models.Model):
    golden_set = models.ForeignKey(GoldenSet, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    created_at = ClockDateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    note = models.CharField(max_length=200, blank=True)
    snapshot = models.JSONField(default=list, blank=True, help_text="The cases as exported at this version.")

    class Meta:
        db_table = "traces_goldensetversion"
        ordering = ["golden_set", "number"]
        constraints = [models.UniqueConstraint(fields=["golden_set", "number"], name="golden_version_per_set")]

    def __str__(self):
        return f"{self.golden_set.name} v{self.number}"


class EvalRun(models.Model):
    """One run of a golden-set version through retrieval (and, unless retrieval-only, the whole answer path)."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    golden_set = models.ForeignKey(GoldenSet, on_delete=models.PROTECT, related_name="runs")
    golden_version = models.PositiveIntegerField()
    retrieval_only = models.BooleanField(default=False)
    k = models.PositiveSmallIntegerField(default=5)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    error = models.TextField(blank=True)
    # The versions that make two runs comparable (or not).
    prompt_version = models.CharField(max_length=40, blank=True)
    model = models.CharField(max_length=100, blank=True, help_text="The writer: model name or 'template'.")
    index_version = models.PositiveIntegerField(null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)
    judge_version = models.CharField(max_length=40, blank=True)
    judge_model = models.CharField(max_length=100, blank=True)
    # Reported numbers: recall@k, mrr, must_pass_failures, hard_negative_wins, judge {observed, counts,
    # errors}, corrected {value, lower, upper, seed, calibration}; filled when the run finishes.
    metrics = models.JSONField(default=dict, blank=True)
    note = models.CharField(max_length=200, blank=True)
    # Set on the run that holds the answers of a human-labels file (not a run of the set): never a baseline.
    labels_file = models.CharField(max_length=300, blank=True, db_default="")
    labels_digest = models.CharField(max_length=64, blank=True, db_default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    started_at = ClockDateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "traces_evalrun"
        ordering = ["-started_at", "-pk"]

    def __str__(self):
        return f"run {self.pk} of {self.golden_set.name} v{self.golden_version}"


class EvalRunItem(models.Model):
    """What one golden case did in one run."""

    class JudgeLabel(models.TextChoices):
        PASS = "pass", "Pass"
        FAIL = "fail", "Fail"
        ERROR = "error", "Judge error"

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="items")
    case_id = models.CharField(max_length=64)
    query = models.TextField()
    must_pass = models.BooleanField(default=False)
    first_hit_rank = models.PositiveSmallIntegerField(null=True, blank=True)
    hard_negative_above = models.BooleanField(default=False)
    ranked_docs = models.JSONField(default=list, blank=True)
    retrieval = models.JSONField(default=list, blank=True, help_text="chunk_id, doc, section, scores per hit.")
    outcome = models.CharField(max_length=10, blank=True, help_text="answered / escalated (empty: retrieval only).")
    escalation_reason = models.CharField(max_length=40, blank=True)
    answer = models.TextField(blank=True)
    cited_answer = models.TextField(blank=True, db_default="",
                                    help_text="The answer with its [E#] markers, as the judge read it.")
    evidence = models.JSONField(default=list, blank=True)
    verdicts = models.JSONField(default=list, blank=True, help_text="The verifier verdict of each attempt.")
    grounded = models.BooleanField(null=True, blank=True)
    missing_facts = models.JSONField(default=list, blank=True)
    judge_label = models.CharField(max_length=5, choices=JudgeLabel.choices, blank=True)
    judge_reason = models.TextField(blank=True)
    latency_ms = models.FloatField(default=0)
    failures = models.JSONField(default=list, blank=True,
                                help_text="Why the case failed in this run; empty means it passed.")

    class Meta:
        db_table = "traces_evalrunitem"
        ordering = ["run", "case_id"]
        constraints = [models.UniqueConstraint(fields=["run", "case_id"], name="eval_item_once_per_run")]

    @property
    def passed(self) -> bool:
        return not self.failures

    def __str__(self):
        return f"{self.run_id}/{self.case_id}"


class HumanLabel(models.Model):
    """A person's pass/fail on the faithfulness of one answer (a trace or a run item), for judge calibration.

    The split (train/dev/test, 20/40/40) comes from a hash of the item's key, so it never changes.
    """

    class Label(models.TextChoices):
        PASS = "pass", "Pass"
        FAIL = "fail", "Fail"

    class Split(models.TextChoices):
        TRAIN = "train", "Train"
        DEV = "dev", "Dev"
        TEST = "test", "Test"

    trace = models.ForeignKey(Trace, null=True, blank=True, on_delete=models.CASCADE, related_name="human_labels")
    run_item = models.ForeignKey(EvalRunItem, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="human_labels")
    item_key = models.CharField(max_length=40, help_text="'trace:<id>' or 'item:<id>': what the split hashes.")
    label = models.CharField(max_length=4, choices=Label.choices)
    note = models.TextField(blank=True)
    split = models.CharField(max_length=5, choices=Split.choices)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = ClockDateTimeField(auto_now_add=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        db_table = "traces_humanlabel"
        ordering = ["-updated_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["item_key"], name="one_human_label_per_item"),
            models.CheckConstraint(
                condition=(models.Q(trace__isnull=False, run_item__isnull=True)
                           | models.Q(trace__isnull=True, run_item__isnull=False)),
                name="human_label_one_target"),
        ]


class JudgeVerdict(models.Model):
    """The judge's label for one answer under one judge version (errors recorded, never counted as a pass)."""

    trace = models.ForeignKey(Trace, null=True, blank=True, on_delete=models.CASCADE, related_name="judge_verdicts")
    run_item = models.ForeignKey(EvalRunItem, null=True, blank=True, on_delete=models.CASCADE,
                                 related_name="judge_verdicts")
    item_key = models.CharField(max_length=40)
    judge_version = models.CharField(max_length=40)
    model = models.CharField(max_length=100, blank=True)
    label = models.CharField(max_length=5, choices=EvalRunItem.JudgeLabel.choices)
    reason = models.TextField(blank=True)
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        db_table = "traces_judgeverdict"
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["item_key", "judge_version"], name="one_judge_verdict_per_version"),
            models.CheckConstraint(
                condition=(models.Q(trace__isnull=False, run_item__isnull=True)
                           | models.Q(trace__isnull=True, run_item__isnull=False)),
                name="judge_verdict_one_target"),
        ]


class GateDecision(models.Model):
    """One decision of the release gate: which run, against which baseline, under which gates, and why."""

    class Verdict(models.TextChoices):
        GO = "go", "Go"
        ITERATE = "iterate", "Iterate"
        BLOCK = "block", "Block"

    run = models.ForeignKey(EvalRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="gate_decisions")
    golden_set = models.ForeignKey(GoldenSet, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="gate_decisions")
    baseline = models.CharField(max_length=300, blank=True,
                                help_text="What the run was compared with: 'run 12', a run file's path, or empty.")
    gates_file = models.CharField(max_length=300)
    gates_hash = models.CharField(max_length=64, help_text="sha256 of the gates file's text.")
    decision = models.CharField(max_length=8, choices=Verdict.choices)
    # One row per gate: {"metric", "value", "judged_on", "decision", "detail"}.
    reasons = models.JSONField(default=list, blank=True)
    newly_failing = models.JSONField(default=list, blank=True)
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"{self.get_decision_display()} · {self.gates_file}"

    @property
    def failed_gates(self) -> list[dict]:
        return [row for row in self.reasons if row.get("decision") in ("iterate", "block")]


class JudgeTestRead(models.Model):
    """One read of the test split for a judge version: its TPR/TNR measured against the human labels.

    The test split is read once per judge version to report it; iterating happens on dev. Every read is kept,
    so a second read of the same version is visible as such (the first is the final one).
    """

    judge_version = models.CharField(max_length=40, db_index=True)
    purpose = models.CharField(max_length=200, help_text="Why the test split was read: a page, a run's correction.")
    run = models.ForeignKey(EvalRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="test_reads")
    reader = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    pairs = models.PositiveIntegerField(default=0, help_text="Labelled answers the judge gave a verdict on.")
    human_passes = models.PositiveIntegerField(default=0)
    human_fails = models.PositiveIntegerField(default=0)
    true_passes = models.PositiveIntegerField(default=0)
    true_fails = models.PositiveIntegerField(default=0)
    digest = models.CharField(max_length=64, help_text="sha256 of the (item, human label, verdict) triples read.")
    created_at = ClockDateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self):
        return f"test split read for {self.judge_version} ({self.purpose})"

    @property
    def tpr(self) -> float | None:
        return self.true_passes / self.human_passes if self.human_passes else None

    @property
    def tnr(self) -> float | None:
        return self.true_fails / self.human_fails if self.human_fails else None


class GoldenCaseScore(models.Model):
    """One person's value of a team-defined score on a golden case's expected answer."""

    definition = models.ForeignKey(ScoreDefinition, on_delete=models.CASCADE, related_name="golden_case_scores")
    golden_case = models.ForeignKey(GoldenCase, on_delete=models.CASCADE, related_name="scores")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    value = models.CharField(max_length=60)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        ordering = ["golden_case", "definition"]
        constraints = [models.UniqueConstraint(fields=["definition", "golden_case"],
                                               name="one_score_per_golden_case")]
