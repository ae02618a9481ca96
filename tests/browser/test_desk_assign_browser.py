"""The desk's team and identity in Chromium at 390 px and 1,440 px: the j/k highlight survives the inbox's
5-second refresh; a customer billing knows by the conversation's WhatsApp number is linked with one click;
the supervisor reads each agent's load and reassigns; an agent becomes available and is given the oldest
escalation waiting."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS
WIDTHS = [390, 1440]


def _next_poll(page):
    """Wait for the inbox's next poll of its rows (htmx asks every 5 s) and for it to settle."""
    with page.expect_response(lambda r: "/desk/" in r.url and r.request.headers.get("hx-request") == "true"):
        pass
    # A locator, not wait_for_function: a string predicate that has to be polled is evaluated inside the page, which
    # the desk's Content-Security-Policy (script-src 'self') refuses whenever the rows are still settling.
    expect(page.locator("#rows.htmx-settling, #rows.htmx-swapping")).to_have_count(0)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_highlighted_row_survives_the_refresh_and_enter_opens_it(live_server, browser_page, make_staff,
                                                                     width):
    from tests.support.factories import escalated

    make_staff("ana", "agent", password="pw-ana-12345")
    escalated(name="Primera")
    second = escalated(name="Segunda").conversation
    escalated(name="Tercera")
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "ana", "pw-ana-12345", "/desk/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    expect(page.locator("tr.kb-current .customer")).to_have_text("Segunda")
    escalated(name="Cuarta")  # the list changes under the highlight
    _next_poll(page)
    expect(page.locator("#rows .customer", has_text="Cuarta")).to_be_visible()
    expect(page.locator("tr.kb-current .customer")).to_have_text("Segunda")  # still visibly the current row
    assert_no_sideways_scroll(page)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/desk/conversations/{second.pk}/")


def test_a_highlighted_row_that_leaves_the_list_is_not_opened(live_server, browser_page, make_staff):
    from desk import services
    from tests.support.factories import escalated

    make_staff("ana", "agent", password="pw-ana-12345")
    bob = make_staff("bob", "agent")
    first = escalated(name="Primera")
    escalated(name="Segunda")
    page = browser_page
    log_in(page, live_server.url, "ana", "pw-ana-12345", "/desk/?view=unassigned")
    page.keyboard.press("j")
    expect(page.locator("tr.kb-current .customer")).to_have_text("Primera")
    services.conversation_take_over(conversation_id=first.conversation_id, agent=bob)  # leaves "unassigned"
    _next_poll(page)
    expect(page.locator("#rows .customer", has_text="Primera")).to_have_count(0)
    expect(page.locator("tr.kb-current")).to_have_count(0)
    page.keyboard.press("Enter")
    assert page.url.endswith("/desk/?view=unassigned")  # Enter opened nothing
    page.keyboard.press("j")
    expect(page.locator("tr.kb-current .customer")).to_have_text("Segunda")


@pytest.mark.parametrize("width", WIDTHS)
def test_link_the_customer_billing_has_for_the_whatsapp_number(live_server, browser_page, healthy_billing,
                                                                make_staff, width):
    from desk.models import Contact, Event
    from tests.support.factories import escalated

    make_staff("ana", "agent", password="pw-ana-12345")
    conversation = escalated(name="Cliente WhatsApp", channel="whatsapp", wa_id="584264468662",
                             customer_id="").conversation
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "ana", "pw-ana-12345", f"/desk/conversations/{conversation.pk}/")
    offer = page.locator("#whatsapp-offer")
    expect(offer).to_contain_text("Billing has C-1001 (Marisol Rojas Rojas) for this number")
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"desk-whatsapp-offer-{width}.png"), full_page=True)
    offer.get_by_role("button", name="Link C-1001").dblclick()
    expect(page.locator(".conv-head")).to_contain_text("customer C-1001")
    expect(page.locator("#thread")).to_contain_text("linked to billing customer C-1001 (Marisol Rojas Rojas) by ana")
    expect(page.locator("#account")).to_contain_text("Open balance")
    expect(page.locator("#whatsapp-offer")).to_have_count(0)
    assert Contact.objects.get(pk=conversation.contact_id).customer_id == "C-1001"
    assert Event.objects.filter(conversation=conversation, kind="customer_linked").count() == 1
    assert_no_sideways_scroll(page)
    page.locator("#account").screenshot(path=str(SCREENSHOTS / f"desk-account-bill-{width}.png"))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_supervisor_reads_the_load_and_reassigns(live_server, browser_page, make_staff, width):
    from desk import services
    from desk.models import AgentProfile, Conversation
    from tests.support.factories import escalated

    make_staff("sol", "supervisor", password="pw-sol-12345")
    ana = make_staff("ana", "agent", password="pw-ana-12345")
    bob = make_staff("bob", "agent")
    held = escalated(name="María Fernanda de los Ángeles Rodríguez-Villalobos")
    services.conversation_take_over(conversation_id=held.conversation_id, agent=ana)
    escalated(name="Esperando")
    AgentProfile.objects.create(user=ana, status="available", capacity=1)  # full: "Esperando" waits
    page = browser_page
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server.url, "sol", "pw-sol-12345", "/desk/")
    page.locator("#team-link").click()
    expect(page.locator(f"#agent-{ana.pk}")).to_contain_text("Available")
    expect(page.locator(f"#agent-{ana.pk} .load")).to_contain_text("1 of 1 full")
    expect(page.locator(f"#agent-{bob.pk}")).to_contain_text("Away")
    expect(page.locator("#waiting-count")).to_have_text("1")
    assert_no_sideways_scroll(page)
    page.screenshot(path=str(SCREENSHOTS / f"desk-team-load-{width}.png"), full_page=True)
    page.select_option(f"#reassign-{held.conversation_id}", label="bob")
    page.locator(f"#held-{held.conversation_id}").get_by_role("button", name="Reassign").click()
    expect(page.locator(f"#held-{held.conversation_id}")).to_contain_text("bob")
    expect(page.locator(f"#agent-{ana.pk} .load")).to_contain_text("1 of 1")  # the waiting one came to ana
    expect(page.locator("#waiting-count")).to_have_text("0")
    assert Conversation.objects.get(pk=held.conversation_id).assignee == bob
    assert_no_sideways_scroll(page)


def test_an_agent_becomes_available_in_the_header_and_gets_the_oldest_waiting(live_server, browser_page,
                                                                              make_staff, settings):
    from tests.support.factories import escalated

    settings.DESK_AGENT_CAPACITY = 1

    make_staff("ana", "agent", password="pw-ana-12345")
    escalated(name="La más antigua")
    escalated(name="Después")
    page = browser_page
    log_in(page, live_server.url, "ana", "pw-ana-12345", "/desk/")
    expect(page.locator("#agent-status")).to_contain_text("Away")
    page.get_by_role("button", name="Become available").click()
    expect(page.locator("#agent-status")).to_contain_text("Available")
    expect(page.locator("tr", has_text="La más antigua")).to_contain_text("Assigned to me")
    expect(page.locator("tr", has_text="Después")).to_contain_text("unassigned")  # capacity 1: it waits
