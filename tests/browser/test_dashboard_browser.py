"""The dashboard in a browser, on the demo's two weeks: the dial's marks and points, at 1440 px and 390 px.

Screenshots go to var/screenshots/ (dashboard-1440.png, dashboard-390.png); the copies in docs/screenshots/
are from this release.
"""

import io

from django.core.management import call_command

from demo.management.commands.demo_dashboard import live_configuration, story
from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in

pytestmark = BROWSER_MARKS


def test_the_demo_dial_marks_its_changes_and_a_point_opens_its_traces(live_server, browser_page):
    call_command("demo_users", "--password", "pw-demo-1234", stdout=io.StringIO())
    call_command("demo_dashboard", stdout=io.StringIO())
    page, base = browser_page, live_server.url
    log_in(page, base, "analyst", "pw-demo-1234", "/dashboard/")
    page.goto(f"{base}/dashboard/?range=30d")
    marks = page.locator("#dial g.change-mark title").all_text_contents()
    previous, _, last = story(live_configuration())  # the story ends on the configuration the live demo runs
    assert any(f"Writer prompt version: {previous.parts.prompt_version} → {last.parts.prompt_version}" in m
               for m in marks)
    assert any("Retrieval prune margin:" in m for m in marks)
    page.screenshot(path=str(SCREENSHOTS / "dashboard-1440.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 900})
    page.reload()
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=str(SCREENSHOTS / "dashboard-390.png"), full_page=True)
    page.set_viewport_size({"width": 1440, "height": 900})
    page.reload()
    # The day with the most escalations: its point opens them (a day with none would open an empty list).
    titles = page.locator("#dial svg a circle title").all_text_contents()
    busiest = max((t for t in titles if t.startswith("Escalation rate on")),
                  key=lambda t: int(t.rsplit(": ", 1)[1].split(" of ")[0]))
    page.locator("#dial svg a", has=page.locator("title", has_text=busiest)).first.click()
    page.wait_for_url(f"{base}/traces/?**")
    assert "outcome=escalated" in page.url and page.locator("table.trace-table tbody tr").count() > 0
