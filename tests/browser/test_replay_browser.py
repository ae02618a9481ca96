"""Replay and golden cases from traces, in Debian's Chromium at 390 px and 1,440 px without sideways scroll.

A failing trace (its model writer failed twice: escalated) is replayed from its page under another configuration —
the one in force, the template writer — and the page shows both turns side by side with what changed. Traces
ticked in the trace browser are added to a golden set and land in "awaiting review" on the set's page.
Screenshots: var/screenshots/replay-390.png, replay-1440.png, awaiting-review-390.png.
"""

import re
import uuid

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, assert_no_sideways_scroll, log_in

pytestmark = BROWSER_MARKS

WIDTHS = (390, 1440)


def _say(text, writer, name="Replay"):
    from bot.turn import run_turn
    from desk.models import Channel, Contact, Conversation, Message

    contact = Contact.objects.create(channel=Channel.WEBCHAT, name=name, language="es", customer_id="C-1001")
    conversation = Conversation.objects.create(contact=contact, channel=Channel.WEBCHAT)
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="text",
                                     text=text, provider_message_id=f"web.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk, writer=writer)


def test_a_failing_trace_replayed_under_another_configuration_shows_both_turns(
        live_server, chromium, small_kb, healthy_billing, make_staff, settings):
    from playwright.sync_api import expect

    from bot.writer import LLMWriter
    from desk.models import Message
    from tests.support.fake_openai import FakeOpenAI

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    with FakeOpenAI() as fake:
        fake.chat_script = [500, 500]
        failing = _say("cuanto cobran por reconexion de fibra",
                       LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=2))
    assert (failing.outcome, failing.escalation_reason) == ("escalated", "MODEL_ERROR")
    make_staff("rosa", "analyst", password="rosa-password-1")
    messages = Message.objects.count()
    for width in WIDTHS:
        context = chromium.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        try:
            base = live_server.url
            log_in(page, base, "rosa", "rosa-password-1", f"/traces/{failing.pk}/")
            page.locator("#replay").get_by_role("button", name="Replay").click()  # the evals panel, loaded by htmx
            page.wait_for_url(re.compile(rf".*/traces/{failing.pk}/replay/"))
            page.locator("#replay-form select[name=configuration]").select_option("current")
            page.locator("#replay-form").get_by_role("button", name="Replay").click()
            table = page.locator("#replay-table")
            expect(table).to_be_visible()
            outcome = table.locator("tr.changed", has_text="Outcome")
            expect(outcome).to_contain_text("Escalated")
            expect(outcome).to_contain_text("Answered")
            expect(table.locator("tr", has_text="Reply")).to_contain_text("Bs. 350,00")
            expect(page.locator(".replay-change")).to_contain_text("better")
            assert_no_sideways_scroll(page)
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"replay-{width}.png"), full_page=True)
        finally:
            context.close()
    assert Message.objects.count() == messages  # nothing written to the conversation, nothing sent


def test_a_bulk_added_case_lands_in_awaiting_review(live_server, chromium, small_kb, healthy_billing, make_staff,
                                                    settings):
    from playwright.sync_api import expect

    from bot.writer import TemplateWriter
    from evals.models import GoldenCase, GoldenSet

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    trace = _say("cuanto cobran por reconexion de fibra", TemplateWriter())
    assert trace.outcome == "answered"
    golden_set = GoldenSet.objects.create(name="From the browser")
    make_staff("rosa", "analyst", password="rosa-password-1")
    for width in WIDTHS:
        context = chromium.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        try:
            base = live_server.url
            log_in(page, base, "rosa", "rosa-password-1", "/traces/")
            page.get_by_label(f"Select trace {trace.pk}").check()
            page.get_by_role("button", name="Add ticked traces to a golden set…").click()
            expect(page.locator("select[name=golden_set]")).to_be_visible()
            assert_no_sideways_scroll(page)
            page.locator("select[name=golden_set]").select_option(label=f"{golden_set.name} "
                                                                         f"(v{golden_set.current_version})")
            page.get_by_role("button", name="Add to the set").click()
            page.wait_for_url(f"{base}/traces/")
            page.goto(f"{base}/traces/golden/{golden_set.pk}/")
            case = GoldenCase.objects.get(golden_set=golden_set)
            assert not case.reviewed
            queue = page.locator("#review-queue")
            expect(queue.locator("h2")).to_have_text("Cases awaiting review (1)")
            expect(queue).to_contain_text(case.case_id)
            expect(page.locator("#cases .awaiting-review")).to_have_count(1)
            assert_no_sideways_scroll(page)
            if width == 390:
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / "awaiting-review-390.png"), full_page=True)
            page.locator(f"#review-{case.pk}").get_by_role("button", name="Reject").click()
            expect(page.locator("#review-queue h2")).to_have_text("Cases awaiting review (0)")
            golden_set.refresh_from_db()
        finally:
            context.close()
