"""What `make demo` seeds: demo users with printed passwords and WhatsApp conversations through the webhook."""

import io

import pytest
from django.core.management import CommandError, call_command

from desk.models import Escalation, Message
from traces.models import Trace

pytestmark = pytest.mark.django_db


def test_demo_users_print_their_passwords_and_log_in(client):
    out = io.StringIO()
    call_command("demo_users", stdout=out)
    lines = {line.split()[0]: line.split()[1] for line in out.getvalue().splitlines()[1:]}
    assert set(lines) == {"agent", "supervisor", "analyst", "editor"}
    assert client.login(username="agent", password=lines["agent"])


def test_demo_conversations_fill_the_queue_and_replaying_adds_nothing(settings, sample_kb,
                                                                     django_capture_on_commit_callbacks):
    from bot.billing.simulator.mounted import shared_simulator

    settings.WHATSAPP_APP_SECRET = "demo-app-secret"
    with django_capture_on_commit_callbacks(execute=True):  # the queued turns run, as eager Celery does
        call_command("demo_conversations", stdout=io.StringIO())
    reasons = set(Escalation.objects.values_list("reason", flat=True))
    # TOOL_ERROR needs the simulator outage while its turn runs; here the captured turns run after
    # the command healed it (outside a test transaction they run at once). test_turn covers it.
    assert {"USER_REQUEST", "CAPABILITY_MISSING", "NO_CONTEXT"} <= reasons
    assert Trace.objects.filter(channel="whatsapp", outcome="answered").count() >= 3
    assert shared_simulator().fault is None  # the outage was only for its one conversation
    messages = Message.objects.count()
    call_command("demo_conversations", stdout=io.StringIO())
    assert Message.objects.count() == messages


def test_demo_conversations_refuse_without_a_webhook_secret(settings):
    settings.WHATSAPP_APP_SECRET = ""
    with pytest.raises(CommandError, match="WHATSAPP_APP_SECRET"):
        call_command("demo_conversations", stdout=io.StringIO())
