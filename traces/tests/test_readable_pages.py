"""The analyst's trace pages read as sentences: no raw dicts or lists, labels for codes, the turn's facts on the
review page (billing calls with their HTTP status, verifier problems, the note, scores, latency)."""

import re
import uuid

import pytest
from django.urls import reverse

from desk.models import Message
from tests.support.readable import assert_readable, visible_text
from traces import services
from traces.models import FailureClass, ReviewNote, ReviewSession
from traces.tests.test_trace_browser import UNGROUNDED, analyst, conversation, make_trace  # noqa: F401

pytestmark = pytest.mark.django_db


def session_with(trace, name):
    """Return a review session holding just this trace."""
    session = ReviewSession.objects.create(name=name, window_start=trace.created_at, window_end=trace.created_at,
                                           seed=1, requested_size=1)
    session.items.create(trace=trace, source="uniform", position=1)
    return session


STORED_LATENCY = {"gate": 0.4, "send": 3.1, "route": 2.0, "verify_1": 4.2, "write_1": 310.0, "retrieve": 42.0,
                  "humanize": 0.6}
OUTAGE = [{"capability": "invoice_change", "ok": False, "should_escalate": True, "evidence": [], "key_figures": [],
           "data": {}, "error": {"code": "http_503", "message": "billing API answered HTTP 503",
                                 "infrastructure": True}}]


def test_the_trace_page_prints_no_raw_dict_and_labels_its_codes(client, analyst):
    trace = make_trace(
        attempts=UNGROUNDED, route="account", escalation_reason="TOOL_ERROR", outcome="escalated",
        humanizer={"ok": True, "reason": "", "phrase": ""}, token_usage={"completion_tokens": 40, "prompt_tokens": 900},
        latency_ms=STORED_LATENCY, total_ms=365.0, tool_calls=OUTAGE, language="es", channel="whatsapp")
    html = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert_readable(html)
    text = visible_text(html)
    assert "Humanizer passed: no forbidden wording" in text
    assert "Tokens: prompt 900 · completion 40" in text
    assert "Billing system down" in text and "Account question" in text and "WhatsApp" in text
    assert "Why the bill changed" in text and "failed: HTTP 503" in text and "billing API answered HTTP 503" in text
    stages = re.findall(r'<span class="stage-name" title="(\w+)">', html)
    assert stages == ["gate", "route", "retrieve", "write_1", "verify_1", "humanize", "send"]
    offsets = [float(x) for x in re.findall(r'<rect x="([\d.]+)"', html)]
    assert offsets == sorted(offsets) and offsets[0] == 0 and offsets[3] > 10  # a waterfall, not bars from zero


def test_a_refused_humanizer_is_a_sentence(client, analyst):
    trace = make_trace(humanizer={"ok": False, "reason": "promises a refund", "phrase": "te devolvemos"})
    text = visible_text(client.get(reverse("traces:detail", args=[trace.pk])).content.decode())
    assert "Humanizer refused — promises a refund: “te devolvemos”" in text


@pytest.fixture
def outage_review(healthy_billing, make_staff):
    """A real turn that escalated because billing answered HTTP 503, in a review session."""
    from bot.turn import run_turn
    from bot.writer import TemplateWriter
    from tests.support.factories import conversation_start

    healthy_billing.set_fault("503")
    conv = conversation_start(name="Test", channel="webchat", wa_id="", customer_id="C-1001", language="es",
                              inbound_at=None)
    message = Message.objects.create(conversation=conv, direction="in", author="customer", kind="text",
                                     text="¿Por qué mi factura llegó más alta este mes?",
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    trace = run_turn(message_id=message.pk, writer=TemplateWriter())
    assert trace.escalation_reason == "TOOL_ERROR"
    healthy_billing.set_fault(None)
    session = session_with(trace, f"outage-{uuid.uuid4().hex[:6]}")
    return session, trace


def test_the_review_page_shows_the_billing_outage_the_note_scores_and_latency(client, analyst, outage_review):
    session, trace = outage_review
    html = client.get(reverse("traces:review", args=[session.pk, 1])).content.decode()
    assert_readable(html)
    text = visible_text(html)
    assert "failed: HTTP 503" in text and "billing API answered HTTP 503" in text
    assert "Billing system down" in text  # the reason's label, the code in its tooltip
    assert 'id="review-internal-note"' in html and trace.internal_note and trace.internal_note[:40] in html
    assert 'id="latency"' in html and "Routing" in text
    assert not re.search(r'name="verdict" value="\w+"[^>]*checked', html)  # nothing decided for the analyst


def test_the_review_page_lists_each_attempts_verifier_problems_and_retrieval_scores(client, analyst, make_staff):
    retrieval = [{"rank": 1, "chunk_id": 1, "doc": "reconexion-fibra-es", "section": "Tarifas", "vector_score": 0.83,
                  "text_rank": 2, "rrf": 0.031, "kept": True, "prune_reason": "within margin"}]
    attempts = [{"attempt": 1, "raw": "Son Bs. 999 [E1]", "reply": "Son Bs. 999 [E1]",
                 "verdict": {"grounded": False, "problems": [{"token": "999", "sentence": "Son Bs. 999",
                                                              "reason": "not in the evidence"}],
                             "warnings": [], "derived": []},
                 "note_verdict": {"problems": [{"token": "12", "reason": "not in E1"}]}},
                {"attempt": 2, "raw": "Son Bs. 350,00 [E1]", "reply": "Son Bs. 350,00 [E1]",
                 "verdict": {"grounded": True, "problems": [], "warnings": [], "derived": []}}]
    trace = make_trace(attempts=attempts, retrieval=retrieval, latency_ms=STORED_LATENCY)
    session = session_with(trace, "problems")
    html = client.get(reverse("traces:review", args=[session.pk, 1])).content.decode()
    assert_readable(html)
    attempts_card = visible_text(html[html.index('id="writer-attempts"'):html.index('id="latency"')])
    assert "Attempt 1" in attempts_card and "999 — not in the evidence" in attempts_card
    assert "internal note: 12 — not in E1" in attempts_card and "Attempt 2" in attempts_card
    retrieval_card = visible_text(html[html.index('id="review-retrieval"'):html.index('id="billing-calls"')])
    assert "0.83" in retrieval_card and "0.031" in retrieval_card and "within margin" in retrieval_card


def test_the_taxonomy_history_and_charts_are_readable(client, analyst):
    trace = make_trace(outcome="escalated", escalation_reason="NO_CONTEXT")
    session = session_with(trace, "tax")
    note = services.review_note_save(session=session, trace=trace, author=analyst, verdict="fail",
                                     first_failure="The fee chunk ranked below the business one.", stage="retrieval")
    long_name = "Fee quoted from the wrong plan's document entirely"
    klass = services.failure_class_create(session=session, name=long_name, definition="d", stage="retrieval",
                                          actor=analyst)
    services.review_notes_assign(session=session, note_ids=[note.pk], failure_class=klass, actor=analyst)
    services.failure_class_rename(failure_class=klass, name=long_name + "!", definition="d2", actor=analyst)
    html = client.get(reverse("traces:taxonomy", args=[session.pk])).content.decode()
    assert_readable(html)
    history = visible_text(html[html.index("<h2>History</h2>"):])
    assert "1 note assigned" in history and f"renamed from “{long_name}” to “{long_name}!”" in history
    chart = html[html.index('aria-label="Failures by class"'):]
    chart = chart[:chart.index("</svg>")]
    assert " ".join(re.findall(r"<tspan[^>]*>(.*?)</tspan>", chart)).replace("&#x27;", "'").startswith(long_name)
    assert "…" not in chart
    stage_chart = html[html.index('aria-label="Failures by stage"'):]
    assert ">Retrieval</tspan>" in stage_chart[:stage_chart.index("</svg>")]
    assert FailureClass.objects.get(pk=klass.pk).notes.count() == 1 and ReviewNote.objects.filter(pk=note.pk).exists()


def test_the_trace_list_shows_labels_with_codes_in_tooltips(client, analyst):
    model = f"labels-{uuid.uuid4().hex[:8]}"
    make_trace(model=model, outcome="escalated", escalation_reason="USER_REQUEST", route="human", channel="whatsapp",
               attempts=UNGROUNDED)
    html = client.get(reverse("traces:list"), {"model": model}).content.decode()
    assert_readable(html)
    row = html[html.index("<tbody>"):html.index("</tbody>")]
    text = visible_text(row)
    for shown in ("Customer asked for a person", "Asked for a person", "WhatsApp", "Escalated", "Not grounded"):
        assert shown in text, shown
    assert 'title="USER_REQUEST"' in row and "USER_REQUEST" not in text
