"""Trace browser: filters, keyset pagination, export, permissions and the trace page from a real turn."""

import csv
import datetime as dt
import io
import json
import uuid

import pytest
from django.http import QueryDict
from django.urls import reverse

from core import clock
from desk.models import Contact, Conversation, Message
from traces.models import Trace

pytestmark = pytest.mark.django_db

GROUNDED = [{"attempt": 1, "reply": "Son Bs. 350,00 [E1]", "verdict": {"grounded": True, "problems": [],
                                                                       "warnings": [], "derived": []}}]
REWRITTEN = [{"attempt": 1, "reply": "Son Bs. 999 [E1]", "raw": "Son Bs. 999 [E1]",
              "verdict": {"grounded": False, "problems": [{"token": "999", "sentence": "Son Bs. 999",
                                                           "reason": "not in evidence"}],
                          "warnings": [], "derived": []}},
             {"attempt": 2, "reply": "Son Bs. 350,00 [E1]", "verdict": {"grounded": True, "problems": [],
                                                                        "warnings": [],
                                                                        "derived": [{"token": "700",
                                                                                     "expression": "350+350"}]}}]
UNGROUNDED = [{"attempt": n, "reply": "Bs. 1", "verdict": {"grounded": False, "problems": [{"token": "1"}],
                                                           "warnings": [], "derived": []}} for n in (1, 2, 3)]


def conversation(channel="webchat"):
    contact = Contact.objects.create(channel=channel, name="T", language="es")
    return Conversation.objects.create(contact=contact, channel=channel)


def make_trace(*, when=None, attempts=(), reply=None, **fields):
    """Create a trace row as bot/turn.py would, created_at overridden (auto_now_add ignores the argument)."""
    values = {"channel": "webchat", "language": "es", "route": "document", "outcome": "answered",
              "query": "cuanto cuesta", "prompt_version": "template-1", "model": "template", "index_version": 1,
              "total_ms": 100.0}
    values.update(fields)
    values.setdefault("conversation", conversation(values["channel"]))
    trace = Trace.objects.create(attempts=list(attempts), reply=reply, **values)
    if when is not None:
        Trace.objects.filter(pk=trace.pk).update(created_at=when)
    return Trace.objects.get(pk=trace.pk)


def bot_reply(conv, *, wrong=False, agent=None):
    return Message.objects.create(conversation=conv, direction="out", author="bot", text="x",
                                  provider_message_id=f"rec-{uuid.uuid4().hex}",
                                  verified_wrong_at=clock.now() if wrong else None,
                                  verified_wrong_reason="wrong fee" if wrong else "", verified_wrong_by=agent)


@pytest.fixture
def analyst(client, make_staff):
    user = make_staff("ana", "analyst")
    client.force_login(user)
    return user


def listed(client, mine=None, **params):
    """Return the listed trace ids (only this test's when `mine` is given: other test runs may share the DB)."""
    response = client.get(reverse("traces:list"), params)
    assert response.status_code == 200
    return [t.pk for t in response.context["traces"] if mine is None or t.pk in mine]


def test_verdict_and_derived_are_computed_by_the_database_from_the_attempts():
    assert make_trace(attempts=GROUNDED).verdict == "grounded"
    rewritten = make_trace(attempts=REWRITTEN)
    assert (rewritten.verdict, rewritten.has_derived) == ("rewritten", True)
    assert make_trace(attempts=UNGROUNDED).verdict == "ungrounded"
    assert (make_trace(outcome="escalated").verdict, make_trace().has_derived) == ("none", False)


def test_each_filter_narrows_the_list(client, analyst, make_staff):
    now = clock.now()
    base = make_trace(attempts=GROUNDED, when=now - dt.timedelta(days=1))
    escalated = make_trace(outcome="escalated", escalation_reason="NO_CONTEXT", route="unsupported",
                           when=now - dt.timedelta(days=10))
    english = make_trace(language="en", channel="whatsapp", attempts=REWRITTEN, prompt_version="v2",
                         model="gpt-x", index_version=7, total_ms=4000)
    conv = conversation()
    wrong = make_trace(conversation=conv, reply=bot_reply(conv, wrong=True), attempts=UNGROUNDED)
    everything = {base.pk, escalated.pk, english.pk, wrong.pk}
    assert set(listed(client, everything)) == everything
    assert listed(client, everything, outcome="escalated") == [escalated.pk]
    assert listed(client, everything, escalation_reason="NO_CONTEXT") == [escalated.pk]
    assert listed(client, everything, route="unsupported") == [escalated.pk]
    assert listed(client, everything, language="en") == [english.pk]
    assert listed(client, everything, channel="whatsapp") == [english.pk]
    assert listed(client, everything, verdict="rewritten") == [english.pk]
    assert listed(client, everything, verdict="ungrounded") == [wrong.pk]
    assert listed(client, everything, verdict="grounded") == [base.pk]
    assert listed(client, everything, derived="yes") == [english.pk]
    assert listed(client, everything, prompt_version="v2") == [english.pk]
    assert listed(client, everything, index_version="7") == [english.pk]
    assert listed(client, everything, model="gpt-x") == [english.pk]
    assert listed(client, everything, latency_above="1000") == [english.pk]
    assert listed(client, everything, verified_wrong="yes") == [wrong.pk]
    assert set(listed(client, everything, verified_wrong="no")) == everything - {wrong.pk}
    since = (now - dt.timedelta(days=5)).date().isoformat()
    assert escalated.pk not in listed(client, everything, since=since)
    assert listed(client, everything, until=(now - dt.timedelta(days=9)).date().isoformat()) == [escalated.pk]
    assert listed(client, everything, has_note="yes") == []


def test_keyset_pagination_walks_every_trace_once_even_with_equal_timestamps(client, analyst):
    when = clock.now()
    model = f"keyset-{uuid.uuid4().hex[:8]}"
    ids = [make_trace(model=model, when=when - dt.timedelta(seconds=i // 3)).pk for i in range(120)]
    seen, url, pages = [], reverse("traces:list"), 0
    params = {"model": model}
    while True:
        response = client.get(url, params)
        seen += [t.pk for t in response.context["traces"]]
        pages += 1
        if not response.context["next_query"]:
            break
        params = QueryDict(response.context["next_query"]).dict()
    assert pages == 3 and len(seen) == 120 and set(seen) == set(ids)
    ordered = list(Trace.objects.filter(pk__in=ids).order_by("-created_at", "-pk").values_list("pk", flat=True))
    assert seen == ordered


def test_export_streams_the_current_filter_as_jsonl_and_csv(client, analyst):
    english = make_trace(language="en", query="reconnection fee?", model="export-test")
    make_trace(language="es", model="export-test")
    response = client.get(reverse("traces:export", args=["jsonl"]), {"language": "en", "model": "export-test"})
    assert response.streaming and response["Content-Type"] == "application/x-ndjson"
    rows = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    assert [(r["id"], r["query"]) for r in rows] == [(english.pk, "reconnection fee?")]
    response = client.get(reverse("traces:export", args=["csv"]), {"language": "en", "model": "export-test"})
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [int(r["id"]) for r in table] == [english.pk] and table[0]["language"] == "en"
    assert client.get(reverse("traces:export", args=["xml"])).status_code == 404


@pytest.mark.parametrize("role, list_status, export_status, sessions_status", [
    ("analyst", 200, 200, 200), ("supervisor", 200, 200, 200), ("agent", 200, 403, 403), ("kb_editor", 403, 403, 403),
])
def test_permissions_per_role(client, make_staff, role, list_status, export_status, sessions_status):
    trace = make_trace()
    client.force_login(make_staff(f"u-{role}", role))
    assert client.get(reverse("traces:list")).status_code == list_status
    assert client.get(reverse("traces:detail", args=[trace.pk])).status_code == list_status
    assert client.get(reverse("traces:export", args=["csv"])).status_code == export_status
    assert client.get(reverse("traces:sessions")).status_code == sessions_status


def test_anonymous_users_are_sent_to_log_in(client):
    assert client.get(reverse("traces:list")).status_code == 302


def test_the_trace_page_highlights_refused_numbers(client, analyst):
    trace = make_trace(attempts=REWRITTEN)
    html = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert '<mark class="bad">999</mark>' in html and "rewritten" in html and "derived 700" in html


def test_the_trace_page_renders_every_part_of_a_real_pipeline_trace(client, analyst, sample_kb):
    from bot.turn import run_turn
    from bot.writer import TemplateWriter

    conv = conversation()
    message = Message.objects.create(conversation=conv, direction="in", author="customer", kind="text",
                                     text="cuanto cobran por reconexion de fibra",
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    trace = run_turn(message_id=message.pk, writer=TemplateWriter())
    html = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    for part in ("Retrieval", "reconexion-fibra-es", "Billing calls", "Evidence", "E1", "Writer attempts",
                 "grounded", "Sent to the customer", "Latency", "retrieve", trace.query):
        assert part in html, part
    assert Trace.objects.get(pk=trace.pk).verdict == "grounded"


def test_the_trace_page_shows_the_conversation_before_the_traced_message_escaped(client, analyst):
    conv = conversation()
    say = lambda author, text, direction="in": Message.objects.create(  # noqa: E731
        conversation=conv, direction=direction, author=author, text=text)
    say("customer", "hola, mi internet no anda")
    say("bot", "¿Me das tu número de cliente?", "out")
    say("customer", "<b>12345</b> & ya pagué")
    inbound = say("customer", "cuanto cobran por reconexion")
    say("bot", "Son Bs. 350,00", "out")  # after the traced message: not context
    trace = make_trace(conversation=conv, message=inbound, query=inbound.text)
    html = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    context = html[html.index('id="conversation-context"'):html.index("<h2>Query</h2>")]
    assert context.index("mi internet no anda") < context.index("número de cliente") < context.index("12345")
    assert "&lt;b&gt;12345&lt;/b&gt; &amp; ya pagué" in context and "<b>12345</b>" not in html
    assert "Customer" in context and "Bot" in context
    assert "cuanto cobran" not in context and "Son Bs. 350,00" not in context
    assert html.index('id="conversation-context"') < html.index("<h2>Query</h2>")


def test_the_first_message_of_a_conversation_has_no_context(client, analyst):
    conv = conversation()
    inbound = Message.objects.create(conversation=conv, direction="in", author="customer", text="hola")
    trace = make_trace(conversation=conv, message=inbound)
    html = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert "first message of the conversation" in html


def test_the_trace_page_shows_the_fallback_path_the_key_figures_and_the_internal_note(client, analyst):
    trace = make_trace(
        attempts=UNGROUNDED, route="account", fallback="template",
        key_figures=[{"evidence_id": "E3", "value": "324.80", "role": "primary", "name": "delta"}],
        fallback_draft={"reply": "Tu factura subió Bs. 324,80 [E3].",
                        "verdict": {"grounded": True, "problems": [], "warnings": [], "derived": []}},
        internal_note="Root cause: a promotion ended — discount_ended Bs. 280.00 [E7].",
        final_text="Tu factura subió Bs. 324,80.")
    body = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert "Sent the verified template answer (the writer&#x27;s drafts failed)" in body
    assert "Tu factura subió Bs. 324,80 [E3]." in body and "E3 · delta · 324.80" in body
    assert 'id="internal-note"' in body and "discount_ended Bs. 280.00 [E7]." in body
    assert trace.verdict == "ungrounded"  # the writer's verdict; the fallback is its own column


def test_a_clarifying_question_has_its_own_outcome_and_label(client, analyst):
    trace = make_trace(outcome="clarify", final_text="¿Te refieres al plan mensual o al anual?")
    body = client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    assert f'Trace {trace.pk} · <span title="clarify">Asked to clarify</span>' in body
    assert trace.pk in listed(client, mine={trace.pk}, outcome="clarify")
