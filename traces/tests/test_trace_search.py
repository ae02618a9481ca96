"""Trace browser: filter choices from the data with labels, case-insensitive filters, text search and the count."""

import re
import uuid

import pytest
from django.urls import reverse

from traces import selectors
from traces.display import latency_waterfall, matching_values
from traces.tests.test_trace_browser import analyst, listed, make_trace  # noqa: F401 - the fixture is used

pytestmark = pytest.mark.django_db


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def page(client, **params) -> str:
    response = client.get(reverse("traces:list"), params)
    assert response.status_code == 200
    return response.content.decode()


def options(html: str, name: str) -> dict[str, str]:
    """Return {value: label} of one select of the filter form."""
    select = re.search(rf'<select name="{name}">(.*?)</select>', html, re.S).group(1)
    return {value: re.sub(r"<.*?>", "", label).strip()
            for value, label in re.findall(r'<option value="([^"]*)"[^>]*>(.*?)</option>', select)}


def test_filter_choices_come_from_the_data_with_human_labels(client, analyst):
    model = unique("model")
    make_trace(outcome="escalated", escalation_reason="TOOL_ERROR", route="account", model=model,
               prompt_version="prompt-z9", index_version=41, language="en", channel="whatsapp")
    html = page(client)
    assert options(html, "escalation_reason")["TOOL_ERROR"] == "Billing system down"
    assert options(html, "route")["account"] == "Account question"
    assert options(html, "language")["en"] == "English"
    assert options(html, "channel")["whatsapp"] == "WhatsApp"
    assert options(html, "model")[model] == model
    assert options(html, "prompt_version")["prompt-z9"] == "prompt-z9"
    assert options(html, "index_version")["41"] == "v41"
    assert "" in options(html, "route")  # "any" stays first
    assert 'title="TOOL_ERROR"' in html  # the code is still there, in the tooltip
    assert "TOOL_ERROR</option>" not in html


@pytest.mark.parametrize("typed", ["no_context", "No_Context", "NO_CONTEXT", "nothing relevant found",
                                   " Nothing  Relevant Found "])
def test_a_filter_matches_its_stored_value_by_code_or_label_in_any_case(client, analyst, typed):
    model = unique("reason")
    escalated = make_trace(outcome="escalated", escalation_reason="NO_CONTEXT", model=model)
    other = make_trace(outcome="escalated", escalation_reason="USER_REQUEST", model=model)
    mine = {escalated.pk, other.pk}
    assert listed(client, mine, escalation_reason=typed) == [escalated.pk]
    html = page(client, escalation_reason=typed, model=model)
    assert "No traces match" not in html
    assert re.search(r'<option value="NO_CONTEXT"[^>]*selected', html)  # the form shows what it filtered on


def test_other_text_filters_are_case_insensitive_too(client, analyst):
    model = unique("Model-MiXed")
    trace = make_trace(model=model, language="en", route="document", channel="whatsapp", prompt_version="V2-x")
    mine = {trace.pk}
    assert listed(client, mine, model=model.upper()) == [trace.pk]
    assert listed(client, mine, model=model.lower(), language="EN", route="Knowledge-base question",
                  channel="whatsApp", prompt_version="v2-X") == [trace.pk]


def test_a_value_no_trace_has_matches_nothing_and_says_so(client, analyst):
    html = page(client, escalation_reason="not-a-reason")
    assert "No traces match" in html
    assert "“not-a-reason” (no trace has it)" in html
    assert "0 traces match." in html


SPANISH = "¿Cuánto cuesta la reconexión de la fibra?"
ENGLISH = "How much are the reconnection charges?"


@pytest.fixture
def searchable():
    model = unique("search")
    return model, {
        "es": make_trace(model=model, language="es", query=SPANISH, final_text="La reconexión cuesta Bs. 350,00."),
        "en": make_trace(model=model, language="en", query=ENGLISH, final_text="It costs 12 dollars."),
        "note": make_trace(model=model, outcome="escalated", escalation_reason="NO_CONTEXT", query="hola",
                           internal_note="Root cause: the late fee was charged twice in November."),
        "plain": make_trace(model=model, query="quiero cambiar mi plan", final_text="Claro."),
    }


@pytest.mark.parametrize("text, expected", [
    ("reconexion", {"es"}),  # no accent typed, accented text stored
    ("RECONEXIÓN", {"es"}),  # accent and capitals typed
    ("reconexiones", {"es"}),  # Spanish stemming: the plural finds the singular
    ("cuanto cuesta", {"es"}),  # every word must be there
    ("charge", {"en", "note"}),  # English stemming: charge / charges / charged
    ("reconnection", {"en"}),
    ("twice", {"note"}),  # the internal note is searched
    ("350", {"es"}),  # the reply is searched
    ('"late fee"', {"note"}),  # a phrase
    ("charge -twice", {"en"}),  # and a word left out
    ("cambiar OR reconnection", {"plain", "en"}),
    ("facturación", set()),
])
def test_text_search_over_query_reply_and_note(client, analyst, searchable, text, expected):
    model, traces = searchable
    mine = {t.pk for t in traces.values()}
    found = set(listed(client, mine, text=text, model=model))
    assert found == {traces[name].pk for name in expected}


def test_text_search_keeps_keyset_pagination_and_the_other_filters(client, analyst):
    model = unique("paged")
    ids = [make_trace(model=model, query=f"reconexión número {i}").pk for i in range(55)]
    make_trace(model=model, query="otra cosa")
    first = client.get(reverse("traces:list"), {"text": "reconexion", "model": model})
    assert len(first.context["traces"]) == selectors.PAGE_SIZE and "text=reconexion" in first.context["next_query"]
    second = client.get(f"{reverse('traces:list')}?{first.context['next_query']}")
    seen = [t.pk for t in first.context["traces"]] + [t.pk for t in second.context["traces"]]
    assert sorted(seen) == sorted(ids) and not second.context["next_query"]
    assert "55 traces match." in first.content.decode()


def test_the_search_uses_its_index():
    """The page's query must be able to use the GIN expression index (same expression, same literals)."""
    from django.db import connection

    queryset = selectors.traces_filtered(filters=selectors.TraceFilters(text="reconexion"))
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")  # keep the planner off the keyset index
        sql, params = queryset.query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "trace_text_search" in plan, plan


def test_the_count_is_exact_below_the_limit_and_capped_above_it(client, analyst, monkeypatch):
    model = unique("count")
    for _ in range(4):
        make_trace(model=model)
    assert "4 traces match." in page(client, model=model)
    monkeypatch.setattr(selectors, "COUNT_LIMIT", 3)
    # Beyond the exact count the page may add the planner's estimate (it reads no row to make it).
    assert re.search(r"3\+ traces match( \(about [\d,]+ by PostgreSQL's estimate\))?\.", page(client, model=model))
    assert selectors.trace_count_estimate(filters=selectors.parse_trace_filters({"model": model})) >= 1
    monkeypatch.setattr(selectors, "COUNT_LIMIT", 4)
    assert "4 traces match." in page(client, model=model)
    assert selectors.trace_count(filters=selectors.parse_trace_filters({"model": model}), limit=10_000) == (4, False)


def test_a_bad_search_is_refused_with_a_message_not_a_500(client, analyst):
    html = page(client, text="x" * 201)
    assert "The search is longer than 200 characters." in html
    assert page(client, text="\x00")  # a NUL is a message too
    assert "trace" in page(client, text="!!! ::: &&&")  # no words at all: nothing matches, no error


def test_choice_matching_is_by_code_or_label():
    labels = {"NO_CONTEXT": "Nothing relevant found"}
    assert matching_values("no_context", ["NO_CONTEXT", "USER_REQUEST"], labels) == ["NO_CONTEXT"]
    assert matching_values("NOTHING relevant found", ["NO_CONTEXT"], labels) == ["NO_CONTEXT"]
    assert matching_values("gpt-X", ["gpt-x", "GPT-X", "gpt-y"]) == ["gpt-x", "GPT-X"]
    assert matching_values("", ["a"]) == [] and matching_values("zzz", ["a"]) == []


def test_the_latency_waterfall_runs_in_the_turns_stage_order():
    # JSONB hands the keys back sorted by length, not in the order the turn ran them.
    stored = {"gate": 1.0, "send": 2.0, "route": 3.0, "verify_1": 4.0, "write_1": 100.0, "write_2": 50.0,
              "humanize": 1.0, "retrieve": 40.0, "verify_2": 4.0}
    bars = latency_waterfall(stored, total_ms=210.0)
    assert [b.name for b in bars] == ["gate", "route", "retrieve", "write_1", "verify_1", "write_2", "verify_2",
                                      "humanize", "send"]
    assert [b.label for b in bars][3:5] == ["Writer (attempt 1)", "Verifier (attempt 1)"]
    assert [b.start_ms for b in bars][:4] == [0.0, 1.0, 4.0, 44.0]  # each starts where the one before ended
    assert bars[3].offset_pct == pytest.approx(100 * 44 / 210, abs=0.01)
    assert bars[-1].offset_pct + bars[-1].width_pct <= 100
