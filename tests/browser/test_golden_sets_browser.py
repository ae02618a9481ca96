"""An analyst creates a golden set, gives it its own gates, fills it from the trace browser, runs it and reads
the gate decision; saved filters; the demo's calibration shows numbers on first open.

In Debian's Chromium, with real web-chat turns (template writer, offline judge: no model server). The set is
made on the golden sets page; its gates are edited on its page (a must-pass id that is not one of its cases
is refused with the reason); traces are ticked in the trace browser and added in one post (a second post
reports the ones already in the set); a run from the set's page is gated with the set's own gates and the
decision shows on the set page. Then the demo's calibration seed, and the calibration page shows TPR, TNR
and the corrected pass rate with its interval. Screenshots: var/screenshots/golden-set-gates.png,
trace-bulk-add.png.
"""

import re

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in
from tests.browser.test_evals_browser import _answered_traces

pytestmark = BROWSER_MARKS

SET_NAME = "Web chat, November"
NUMBER = re.compile(r"[01]\.\d{3}")


def test_an_analyst_builds_a_set_from_the_trace_browser_runs_it_and_sees_the_gate_decision(
        live_server, browser_page, small_kb, healthy_billing, make_staff, settings):
    from playwright.sync_api import expect

    from demo.management.commands.demo_calibration import demo_calibration_seed
    from evals.models import EvalRun, GateDecision, GoldenSet
    from traces.models import SavedFilter

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    traces = _answered_traces()
    assert len(traces) >= 5
    make_staff("rosa", "analyst", password="rosa-password-1")
    page = browser_page
    base = live_server.url
    log_in(page, base, "rosa", "rosa-password-1", "/traces/golden/")

    # Create the set; the same name again is refused with the reason.
    create = page.locator("#create-set")
    create.locator("input[name=name]").fill(SET_NAME)
    create.get_by_role("button", name="Create set").click()
    golden_set = GoldenSet.objects.get(name=SET_NAME)
    page.wait_for_url(f"{base}/traces/golden/{golden_set.pk}/")
    expect(page.locator("#gates-source")).to_contain_text("Following the repository's gates file")
    page.goto(f"{base}/traces/golden/")
    page.locator("#create-set input[name=name]").fill(SET_NAME.upper())
    page.locator("#create-set").get_by_role("button", name="Create set").click()
    expect(page.locator("#create-error")).to_contain_text(f"There is already a golden set named “{SET_NAME}”")

    _add_traces_from_the_browser(page, base, traces, golden_set)

    # Save these filters under a name; the link applies them.
    saved = page.locator("#saved-filters")
    saved.locator("input[name=name]").fill("Answered turns")
    saved.get_by_role("button", name="Save filter").click()
    expect(page.locator(".messages")).to_contain_text("Filter “Answered turns” saved.")
    assert SavedFilter.objects.get(name="Answered turns").query == "outcome=answered"
    page.goto(f"{base}/traces/")
    page.locator("#saved-filters").get_by_role("link", name="Answered turns").click()
    page.wait_for_url(f"{base}/traces/?outcome=answered")

    _save_the_set_s_own_gates(page, base, golden_set)

    # Run it from its page (eager Celery: done by the redirect); the set page shows the gate decision.
    page.locator("form[aria-label='Run this set']").get_by_role("button", name="Run this set").click()
    page.wait_for_url(f"{base}/traces/runs/?golden={golden_set.pk}")
    run = EvalRun.objects.get(golden_set=golden_set)
    decision = GateDecision.objects.get(run=run)
    page.goto(f"{base}/traces/golden/{golden_set.pk}/")
    card = page.locator("#gate-decision")
    expect(card).to_contain_text(decision.get_decision_display())
    expect(card).to_contain_text(f"golden set “{SET_NAME}”: its own gates")
    expect(card.get_by_role("link", name=f"run {run.pk}")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "golden-set-gates.png"), full_page=True)

    # Archive it: the run button goes, and the set leaves the list until asked for.
    page.locator("#archive-set").get_by_role("button", name="Archive").click()
    expect(page.locator("#archived-note")).to_contain_text("it takes no new cases or runs until unarchived")
    expect(page.locator("form[aria-label='Run this set'] button")).to_be_disabled()
    page.goto(f"{base}/traces/golden/")
    expect(page.locator(f"#set-{golden_set.pk}")).to_have_count(0)
    page.get_by_role("link", name="Show archived").click()
    expect(page.locator(f"#set-{golden_set.pk}")).to_contain_text("archived")

    # Demo-like data: the demo's calibration seed, then the calibration page's numbers on first open.
    assert demo_calibration_seed() is not None
    page.goto(f"{base}/traces/calibration/")
    expect(page.locator("#tpr")).to_contain_text(NUMBER)
    expect(page.locator("#tnr")).to_contain_text(NUMBER)
    corrected = page.locator("#corrected")
    expect(corrected).to_be_visible()
    assert re.search(r"\[[01]\.\d{3}, [01]\.\d{3}\]", corrected.inner_text())


def _add_traces_from_the_browser(page, base, traces, golden_set):
    """Tick traces in the trace browser and add them to the set; a second add reports the ones it holds."""
    from playwright.sync_api import expect

    # Tick three traces in the trace browser, choose the set, add them.
    page.goto(f"{base}/traces/?outcome=answered")
    first_three = traces[:3]
    for trace in first_three:
        page.get_by_label(f"Select trace {trace.pk}").check()
    page.get_by_role("button", name="Add ticked traces to a golden set…").click()
    expect(page.locator("h1")).to_have_text("Add 3 traces to a golden set")
    page.locator("select[name=golden_set]").select_option(label=f"{SET_NAME} (v0)")
    page.get_by_role("button", name="Add to the set").click()
    page.wait_for_url(f"{base}/traces/?outcome=answered")
    expect(page.locator(".messages")).to_contain_text(f"3 added to {SET_NAME} (version 1).")
    # Again with one more: the three are skipped and said so.
    for trace in traces[:4]:
        page.get_by_label(f"Select trace {trace.pk}").check()
    page.get_by_role("button", name="Add ticked traces to a golden set…").click()
    expect(page.locator("#bulk-traces")).to_contain_text(f"{SET_NAME}/t{first_three[0].pk}")
    page.locator("select[name=golden_set]").select_option(label=f"{SET_NAME} (v1)")
    page.screenshot(path=str(SCREENSHOTS / "trace-bulk-add.png"), full_page=True)
    page.get_by_role("button", name="Add to the set").click()
    expect(page.locator(".messages")).to_contain_text(f"1 added to {SET_NAME} (version 2), 3 already in the set.")
    assert sorted(golden_set.cases.values_list("trace_id", flat=True)) == sorted(t.pk for t in traces[:4])
    # Added in bulk, they wait for review: approved on the set's page, they count in runs.
    page.goto(f"{base}/traces/golden/{golden_set.pk}/")
    expect(page.locator("#review-queue h2")).to_have_text("Cases awaiting review (4)")
    for case in golden_set.cases.all():
        page.locator(f"#review-{case.pk}").get_by_role("button", name="Approve").click()
        expect(page.locator(f"#review-{case.pk}")).to_have_count(0)
    expect(page.locator("#review-queue h2")).to_have_text("Cases awaiting review (0)")
    page.goto(f"{base}/traces/?outcome=answered")


def _save_the_set_s_own_gates(page, base, golden_set):
    """Give the set its own gates on its page: a must-pass id that is not its case is refused first."""
    from playwright.sync_api import expect

    # The set's own gates: a must-pass id that is not its case is refused; then every case must pass retrieval.
    page.goto(f"{base}/traces/golden/{golden_set.pk}/")
    expect(page.locator("#cases tbody tr")).to_have_count(4)
    case_ids = sorted(golden_set.cases.values_list("case_id", flat=True))
    gates = page.locator("#gates")
    gates.locator("input[name=must_pass]").fill(f"{case_ids[0]}, g999")
    gates.get_by_role("button", name="Save gates").click()
    expect(page.locator("#gates-errors")).to_contain_text("Must-pass ids must be cases of this set; not in it: g999.")
    page.locator("#gates input[name=must_pass]").fill(case_ids[0])
    page.get_by_label("Recall@5: block below").fill("0.5")
    page.locator("#gates").get_by_role("button", name="Save gates").click()
    expect(page.locator(".messages")).to_contain_text(f"Gates of {SET_NAME} saved")
    expect(page.locator("#gates-source")).to_contain_text("This set's own gates")
    golden_set.refresh_from_db()
    assert golden_set.gates["must_pass"] == [case_ids[0]]
    assert golden_set.gates["metrics"]["recall@5"]["block_below"] == 0.5
