"""The desk's rules and states in Chromium: each role's view of a conversation ana holds, a resolved page and the
customer search fit 390 px and 1440 px without sideways scroll, and a double-clicked Send sends once."""

import pytest

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS
WIDTHS = [390, 1440]


@pytest.mark.parametrize("width", WIDTHS)
def test_each_role_sees_its_own_actions_and_the_page_fits(live_server, browser_page, healthy_billing, make_staff,
                                                         width):
    from desk import services
    from desk.models import Message
    from tests.support.factories import escalated

    ana = make_staff("ana", "agent", password="pw-ana-12345")
    make_staff("bob", "agent", password="pw-bob-12345")
    make_staff("sue", "supervisor", password="pw-sue-12345")
    held = escalated(name="Marisol Rojas", customer_id="C-1001").conversation
    services.conversation_take_over(conversation_id=held.pk, agent=ana)
    escalated(name="Pedro Salas", customer_id="")  # waiting: the "next conversation" after a resolve
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    path = f"/desk/conversations/{held.pk}/"

    log_in(page, live_server.url, "bob", "pw-bob-12345", path)
    assert page.locator("#composer-text").count() == 0 and page.get_by_text("Hand back to the bot").count() == 0
    page.fill("#ask-text", "I spoke to her yesterday")
    page.get_by_role("button", name="Ask to take it").click()
    page.get_by_text("Asked.").wait_for()
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"desk-held-by-other-{width}.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server.url, "sue", "pw-sue-12345", path)
    assert page.locator("#take-over-reason").is_visible()
    assert_no_sideways_scroll(page)
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server.url, "ana", "pw-ana-12345", path)
    assert "bob asks for this conversation" in page.locator("#take-requests").inner_text()
    page.fill("#composer-text", "Hola Marisol, le escribe Ana.")
    page.locator("#composer button[type=submit]").dblclick()
    page.get_by_text("Hola Marisol, le escribe Ana.").first.wait_for()
    page.wait_for_load_state("networkidle")
    assert Message.objects.filter(conversation=held, author="agent").count() == 1
    page.fill("#identify-q", "V-26042465")
    page.get_by_role("button", name="Search billing").click()
    page.get_by_text("found by cédula/RIF").wait_for()
    assert_no_sideways_scroll(page)
    page.get_by_role("button", name="Resolve").click()
    page.locator("#next-inbound").wait_for()
    assert "Pedro Salas" in page.locator("#next-conversation").inner_text()
    assert page.locator("#composer-text").is_disabled()
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"desk-resolved-{width}.png"), full_page=True)
