"""Every page passes the Content-Security-Policy: scripts and styles come from our files, nothing inline.

The demo's data (its users, canned replies, WhatsApp conversations, review session and golden set) fills
the pages; each role opens the pages of its rooms, a supervisor with a conversation taken over so the
composer shows its canned replies and the bot's draft.
"""

import io

import pytest
from bs4 import BeautifulSoup
from django.contrib.auth import get_user_model
from django.core.management import call_command

from desk.models import Escalation
from desk.services import conversation_take_over
from evals.models import GoldenSet
from evals.views.verifier import EXAMPLE_ANSWER, EXAMPLE_EVIDENCE
from kb.models import Document
from traces.models import ReviewSession, Trace

pytestmark = pytest.mark.django_db

DATA_SCRIPT_TYPES = {"application/json", "application/ld+json"}  # data, never run


def inline_code(html: str) -> list[str]:
    """Return each inline style or script of the page: what the policy would block."""
    soup = BeautifulSoup(html, "html.parser")
    found = [f"<style> {tag.get_text()[:60]!r}" for tag in soup.find_all("style")]
    for tag in soup.find_all(True):
        for name in tag.attrs:
            if name == "style" or name.startswith("on") or name.startswith("hx-on"):
                found.append(f"<{tag.name} {name}={str(tag.attrs[name])[:60]!r}>")
        if tag.name == "script" and not tag.get("src") and tag.get("type") not in DATA_SCRIPT_TYPES:
            found.append(f"<script> {tag.get_text()[:60]!r}")
    return found


@pytest.fixture
def demo(settings, sample_kb, healthy_billing, django_capture_on_commit_callbacks):
    """Seed what `make demo` seeds and return the demo users by name."""
    settings.WHATSAPP_APP_SECRET = "demo-app-secret"
    call_command("demo_users", stdout=io.StringIO())
    call_command("canned_replies_seed", stdout=io.StringIO())
    with django_capture_on_commit_callbacks(execute=True):
        call_command("demo_conversations", stdout=io.StringIO())
    return {user.username: user for user in get_user_model().objects.all()}


def pages_by_role(demo) -> dict[str, list[tuple[str, str, dict | None]]]:
    """Return (method, path, form) of the pages each role opens."""
    escalation = Escalation.objects.exclude(suggested_reply="").order_by("pk").first() or \
        Escalation.objects.order_by("pk").first()
    conversation = escalation.conversation
    conversation_take_over(conversation_id=conversation.pk, agent=demo["supervisor"])
    trace = Trace.objects.filter(outcome="answered").order_by("-pk").first()  # latency per stage, evidence
    session = ReviewSession.objects.order_by("pk").first()
    golden_set = GoldenSet.objects.order_by("pk").first()
    document = Document.objects.order_by("pk").first()
    desk = [("get", "/desk/", None), ("get", f"/desk/conversations/{conversation.pk}/", None)]
    traces = [("get", "/traces/", None), ("get", f"/traces/{trace.pk}/", None),
              ("get", "/traces/verifier/", None),
              ("post", "/traces/verifier/", {"answer": EXAMPLE_ANSWER, "evidence": EXAMPLE_EVIDENCE,
                                             "customer_view": "on"}),
              ("get", "/traces/sessions/", None), ("get", f"/traces/sessions/{session.pk}/", None),
              ("get", f"/traces/sessions/{session.pk}/review/1/", None),
              ("get", f"/traces/sessions/{session.pk}/taxonomy/", None)]
    evals = [("get", "/traces/golden/", None), ("get", f"/traces/golden/{golden_set.pk}/", None),
             ("get", "/traces/runs/", None), ("get", "/traces/calibration/", None)]
    return {
        "": [("get", "/login/", None), ("get", "/chat/", None)],
        "agent": [("get", "/", None), *desk],
        "supervisor": [("get", "/", None), *desk, ("get", "/desk/credit-notes/", None), *traces,
                       ("get", "/admin/", None), ("get", "/admin/desk/conversation/", None)],
        "analyst": [("get", "/", None), *traces, *evals],
        "editor": [("get", "/", None), ("get", "/kb/", None), ("get", f"/kb/documents/{document.slug}/", None),
                   ("get", f"/kb/documents/{document.slug}/edit/", None),
                   ("get", f"/kb/documents/{document.slug}/history/", None),
                   ("get", "/kb/search/?q=reconexi%C3%B3n", None), ("get", "/kb/upload/", None)],
    }


def test_every_role_sees_its_pages_with_the_policy_and_nothing_inline(client, demo):
    offenders = {}
    for role, pages in pages_by_role(demo).items():
        client.logout()
        if role:
            client.force_login(demo[role])
        for method, path, form in pages:
            response = getattr(client, method)(path, form or {})
            assert response.status_code == 200, f"{role or 'anonymous'} {method} {path}: {response.status_code}"
            policy = response["Content-Security-Policy"]
            assert "script-src 'self'" in policy and "style-src 'self'" in policy
            assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
            if found := inline_code(response.content.decode()):
                offenders[f"{role or 'anonymous'} {method} {path}"] = found
    assert offenders == {}


def test_the_check_finds_inline_code():
    """The page check above can fail: each kind of inline code is reported."""
    html = ('<div style="color:red"></div><a onclick="go()"></a><form hx-on::after-request="x()"></form>'
            '<script>run()</script><style>p{}</style><script src="/static/js/app.js"></script>'
            '<script type="application/json">{}</script>')
    assert len(inline_code(html)) == 5
