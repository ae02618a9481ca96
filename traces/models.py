"""One Trace row per bot turn — answered, escalated or silenced — with everything needed to review it."""

from django.db import models


class Trace(models.Model):
    class Outcome(models.TextChoices):
        ANSWERED = "answered", "Answered"
        ESCALATED = "escalated", "Escalated"
        SILENCED = "silenced", "Silenced"

    conversation = models.ForeignKey("desk.Conversation", on_delete=models.CASCADE, related_name="traces")
    message = models.ForeignKey("desk.Message", null=True, on_delete=models.SET_NULL, related_name="traces")
    reply = models.OneToOneField("desk.Message", null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="reply_trace", help_text="The bot message this turn sent.")
    provider_message_id = models.CharField(max_length=128, blank=True)
    channel = models.CharField(max_length=20)
    customer_id = models.CharField(max_length=64, blank=True)
    language = models.CharField(max_length=2, blank=True)
    route = models.CharField(max_length=20, blank=True)
    routing_rule = models.CharField(max_length=100, blank=True)
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
    final_text = models.TextField(blank=True)
    citations = models.JSONField(default=list, blank=True)
    index_version = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.JSONField(default=dict, blank=True)
    total_ms = models.FloatField(default=0)
    token_usage = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self):
        return f"trace {self.pk} ({self.outcome})"
