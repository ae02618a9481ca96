"""Two reviewers work one review queue with the keyboard; the queue page shows Cohen's kappa and a disagreement
that a supervisor settles; a score the team defined, set in review, filters the trace browser — in Chromium, at
390 and 1,440 px without sideways scroll."""

from datetime import timedelta

from core import clock
from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, WAIT_MS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS

QUERIES = ["cuanto cobran por reconexion de fibra", "¿cuándo vence la factura?", "¿el cambio de plan tiene costo?",
           "¿atienden por whatsapp los domingos?"]
# Each reviewer's code per position: (verdict, "answered the question").
ANA = {1: ("pass", "yes"), 2: ("fail", "no"), 3: ("pass", "yes"), 4: ("pass", "yes")}
BOB = {1: ("pass", "yes"), 2: ("fail", "no"), 3: ("fail", "no"), 4: ("pass", "yes")}


def _traces():
    from traces.tests.test_trace_browser import make_trace

    now = clock.now()
    return [make_trace(query=query, final_text=f"Respuesta {i}.", when=now - timedelta(hours=i + 1))
            for i, query in enumerate(QUERIES)]


def _fits(page, name):
    for width in (390, 1440):
        page.set_viewport_size({"width": width, "height": 900})
        assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _review_all(page, base, queue_id, codes):
    """Start from the queue page with "n" and code every item with the keyboard: s saves a pass, f a failure."""
    from playwright.sync_api import expect

    page.goto(f"{base}/traces/queues/{queue_id}/")
    with page.expect_navigation():
        page.keyboard.press("n")
    _fits(page, "review-queue-item")  # the review page with its scores, at both widths
    page.set_viewport_size({"width": 1440, "height": 900})
    for _ in codes:
        assert "/review/" in page.url, page.url
        position = int(page.url.rstrip("/").rsplit("/", 1)[1])
        verdict, answered = codes[position]
        page.check(f"input[name=score_answered][value={answered}]")
        if verdict == "pass":
            with page.expect_navigation():
                page.keyboard.press("s")
        else:
            page.keyboard.press("f")
            expect(page.locator("#first_failure")).to_be_focused()
            page.select_option("select[name=stage]", "retrieval")
            page.fill("#first_failure", "The answer talks about another plan.")
            with page.expect_navigation():
                page.press("#first_failure", "Enter")
    assert page.url == f"{base}/traces/queues/{queue_id}/"


def test_two_reviewers_work_a_queue_see_kappa_settle_and_filter_by_their_score(
        live_server, chromium, make_staff, settings):
    from playwright.sync_api import expect

    from traces.models import ReviewQueue, SettledLabel

    traces = _traces()
    base = live_server.url
    for name in ("ana", "bob", "cy"):
        make_staff(name, "supervisor" if name == "cy" else "analyst", password=f"{name}-password-1")
    pages = {}
    for name in ("ana", "bob", "cy"):
        context = chromium.new_context(viewport={"width": 1440, "height": 900})
        pages[name] = context.new_page()
        pages[name].set_default_timeout(WAIT_MS)
    ana, bob, cy = pages["ana"], pages["bob"], pages["cy"]

    # Ana defines the score, then a queue of the four traces, every one reviewed by both.
    log_in(ana, base, "ana", "ana-password-1", "/traces/scores/")
    ana.fill("input[name=name]", "Answered the question")
    ana.fill("input[name=key]", "answered")
    ana.fill("input[name=description]", "Did the reply answer what the customer asked?")
    ana.check("input[name=kind][value=boolean]")
    ana.click("button:has-text('Define score')")
    expect(ana.locator("#score-definitions")).to_contain_text("Answered the question")
    _fits(ana, "review-scores")
    ana.goto(f"{base}/traces/queues/")
    ana.fill("input[name=name]", "Week 47")
    ana.fill("input[name=size]", "4")
    ana.fill("input[name=double_percent]", "100")
    ana.fill("input[name=seed]", "5")
    for reviewer in ("ana", "bob"):
        ana.check(f"label:has-text('{reviewer}') >> input[name=assignees]")
    _fits(ana, "review-queue-new")
    ana.set_viewport_size({"width": 1440, "height": 900})
    ana.click("button:has-text('Create queue')")
    queue = ReviewQueue.objects.get(name="Week 47")
    assert queue.items.count() == 4

    _review_all(ana, base, queue.pk, ANA)
    expect(ana.locator("tr[data-reviewer=ana] .reviewed")).to_have_text("4")
    expect(ana.locator("#queue-left")).to_have_text("4")  # bob's turn at every trace is still open
    log_in(bob, base, "bob", "bob-password-1", f"/traces/queues/{queue.pk}/")
    _review_all(bob, base, queue.pk, BOB)

    # κ on pass/fail and on the score: 3 of 4 agree, p_e = (3·2 + 1·2)/16 = 0.5 → κ = 0.50.
    expect(bob.locator("#queue-left")).to_have_text("0")
    expect(bob.locator("tr[data-kappa=verdict] .kappa")).to_have_text("0.50")
    expect(bob.locator("tr[data-kappa=score-answered] .kappa")).to_have_text("0.50")
    disputed = queue.items.get(position=3).trace_id
    expect(bob.locator(f"section.disagreement[data-trace='{disputed}']")).to_contain_text(
        "They differ on the verdict, Answered the question.")

    # A supervisor settles it; the page says who and when.
    log_in(cy, base, "cy", "cy-password-1", f"/traces/queues/{queue.pk}/")
    form = cy.locator(f"section.disagreement[data-trace='{disputed}'] form")
    form.locator("select[name=verdict]").select_option("fail")
    form.locator("input[name=score_answered]").fill("no")
    form.locator("input[name=note]").fill("The reply answered a different plan.")
    form.locator("button").click()
    expect(cy.locator(f"section.disagreement[data-trace='{disputed}'] .settled")).to_contain_text("by cy")
    assert SettledLabel.objects.get(item__trace_id=disputed).settled_by.username == "cy"
    _fits(cy, "review-queue-agreement")

    # The score filters the trace browser: the two traces a reviewer said did not answer the question.
    cy.set_viewport_size({"width": 1440, "height": 900})
    cy.goto(f"{base}/traces/")
    cy.select_option("select[name=score]", "answered:no")
    cy.click("button:has-text('Filter')")
    expect(cy.locator("#trace-count")).to_have_text("2 traces match.")
    unanswered = {queue.items.get(position=p).trace_id for p in (2, 3)}
    for trace in traces:
        row = cy.locator(f"a[href='/traces/{trace.pk}/']")
        expect(row).to_have_count(1 if trace.pk in unanswered else 0)
    _fits(cy, "review-score-filter")
    for page in pages.values():
        page.context.close()
