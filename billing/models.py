"""Rows billing keeps: the shared circuit-breaker state."""

from django.db import models

from core.fields import ClockDateTimeField


class BreakerState(models.Model):
    """One circuit breaker's state, shared by every web and worker process (when Redis is not configured).

    Written only through billing.api.breaker_store.DatabaseStore, under SELECT … FOR UPDATE; times are
    epoch seconds from the breaker's injected clock, not database time.
    """

    class State(models.TextChoices):
        CLOSED = "closed"
        OPEN = "open"
        HALF_OPEN = "half_open"

    name = models.CharField(max_length=100, primary_key=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.CLOSED)
    failures = models.PositiveIntegerField(default=0)
    opened_at = models.FloatField(null=True, blank=True)
    probe_id = models.CharField(max_length=64, blank=True, default="")
    probe_started_at = models.FloatField(null=True, blank=True)
    updated_at = ClockDateTimeField(auto_now=True)

    class Meta:
        db_table = "bot_breakerstate"  # made when the breaker lived in the bot app; kept so data survives
        verbose_name = "circuit breaker state"

    def __str__(self):
        return f"{self.name}: {self.state}"
