"""A worker process warms the whole answer path before its first customer, writing and sending nothing."""

import pytest

from bot.warmup import warm
from desk.models import Message
from traces.models import Trace


@pytest.mark.django_db
def test_the_warm_up_runs_every_part_of_a_turn_and_leaves_no_trace(sample_kb):
    reported = []
    timings = warm(report=reported.append)

    assert set(timings) == {"embedder", "router", "search", "writer", "billing client", "billing data",
                            "task registry", "answer path", "turn tables"}
    assert len(reported) == len(timings) and all(seconds >= 0 for seconds in timings.values())
    assert not Message.objects.exists() and not Trace.objects.exists()


@pytest.mark.django_db
def test_a_part_that_fails_is_left_to_the_first_turn(sample_kb, monkeypatch, caplog):
    def away(*args, **kwargs):
        raise ConnectionError("the billing API is not up yet")

    monkeypatch.setattr("bot.warmup.billing_client", away)
    timings = warm()

    assert "billing client" not in timings and "answer path" in timings
    assert "warm-up of the billing client failed; the first turn loads it" in caplog.text
