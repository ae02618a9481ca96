"""Chromium enforces the Content-Security-Policy on pages with htmx interactions and reports no violation.

Every `securitypolicyviolation` event and every console message about the policy is recorded from the
first script of each page on, across the web chat, the queue, a conversation taken over (canned reply,
the bot's draft) and a trace.
"""

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in

pytestmark = BROWSER_MARKS

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sourceFile}:${event.lineNumber}`);
});
"""
DRAFT = "Su reconexión cuesta Bs. 350,00."


def watch_policy(page) -> list[str]:
    """Return a list that fills with every policy violation the page reports, from now on."""
    console = []
    page.add_init_script(RECORD_VIOLATIONS)
    page.on("console", lambda message: console.append(message.text)
            if "Content Security Policy" in message.text else None)
    return console


def violations(page, console: list[str]) -> list[str]:
    return [*console, *page.evaluate("window.__cspViolations || []")]


def test_pages_with_htmx_interactions_break_no_rule_of_the_policy(
        live_server, browser_page, small_kb, healthy_billing, make_staff, settings):
    from django.core.management import call_command
    from playwright.sync_api import expect

    from tests.support.factories import escalated
    from traces.models import Trace

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""  # the template writer: no model server needed
    page = browser_page
    console = watch_policy(page)
    seen = []

    # A customer in the web chat: htmx posts the message and the form clears itself (static/js/app.js).
    page.goto(f"{live_server.url}/chat/")
    page.select_option("#customer", "C-1001")
    page.click("text=Start chatting")
    page.fill("input[name=text]", "cuanto cobran por reconexion de fibra")
    page.click("form[data-reset-after-request] button[type=submit]")
    page.locator("#thread .msg.bot").first.wait_for()
    expect(page.locator("input[name=text]")).to_have_value("")
    seen += violations(page, console)

    # A supervisor takes over an escalation and builds the reply from a canned text and the bot's draft.
    make_staff("sam", "supervisor", password="sam-password-1")
    call_command("canned_replies_seed")
    escalation = escalated(suggested_reply=DRAFT)
    log_in(page, live_server.url, "sam", "sam-password-1", "/desk/")
    page.locator(f"#escalation-{escalation.pk}").wait_for()
    seen += violations(page, console)
    page.goto(f"{live_server.url}/desk/conversations/{escalation.conversation_id}/")
    page.click("text=Take over")
    page.locator("text=You have this conversation.").wait_for()
    composer = page.locator("#composer-text")
    page.click(".canned a.chip >> text=Saludo")
    assert composer.input_value().startswith("Hola, soy parte del equipo")
    page.click("#use-draft")
    expect(composer).to_have_value(DRAFT)
    assert page.url.endswith(f"/desk/conversations/{escalation.conversation_id}/")  # no round trip
    seen += violations(page, console)

    # The chat's trace: the latency bars are SVG now, not inline styles.
    trace = Trace.objects.filter(outcome="answered").latest("pk")
    page.goto(f"{live_server.url}/traces/{trace.pk}/")
    expect(page.locator(".stage-bar").first).to_be_visible()
    assert page.locator(".stage-bar rect").first.evaluate("r => getComputedStyle(r).fill") != "rgb(0, 0, 0)"
    page.screenshot(path=str(SCREENSHOTS / "csp-trace-latency.png"), full_page=True)
    seen += violations(page, console)

    assert seen == []


def test_the_browser_reports_an_inline_style_the_policy_blocks(live_server, browser_page):
    """The check above can fail: an inline style on one of our pages is reported."""
    page = browser_page
    console = watch_policy(page)
    page.goto(f"{live_server.url}/login/")
    # Waited for as the browser's console message, not with wait_for_function: a string predicate that has to be
    # polled is evaluated inside the page, which this very policy refuses.
    with page.expect_console_message(lambda message: "style-src" in message.text):
        page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p style=\"color:red\">x</p>')")
    assert any("style-src" in line for line in violations(page, console))
