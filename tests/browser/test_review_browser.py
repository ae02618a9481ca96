"""An analyst goes from "sample N traces from last week" to a taxonomy chart, in Debian's Chromium.

The traces are real: web-chat conversations run through the bot turn (`bot.turn.run_turn` with the
template writer, so no model server is needed), then spread over the last week. Everything the analyst
does — drawing the sample, coding each trace (single-key shortcuts included), creating failure classes,
assigning the notes in bulk — goes through the pages, driven by Playwright against the live server.
"""

import uuid
from datetime import timedelta

from core import clock
from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in

pytestmark = BROWSER_MARKS

# Six web-chat customers, two turns each: twelve traces, most with conversation context before them.
CONVERSATIONS = [
    ("Marisol Rojas", ["hola, se me cortó el internet", "cuanto cobran por reconexion de fibra"]),
    ("Pedro Salas", ["cuando cierra mi ciclo de facturacion", "¿y cuándo vence la factura?"]),
    ("Lucía Mendoza", ["quiero cambiar de plan", "¿el cambio de plan tiene costo?"]),
    ("Jorge Paz", ["¿por qué canales los puedo contactar?", "¿atienden por whatsapp los domingos?"]),
    ("Ana Quispe", ["¿cuál es la capital de Francia?", "cuanto tarda la reconexion de fibra"]),
    ("Raúl Vargas", ["me llegó la factura dos veces", "¿puedo pagar en cuotas el cambio de plan?"]),
]

# How the analyst codes the twelve sampled traces, in the order the session presents them:
# 10 failures (retrieval 5, pruning 1, writing 3, routing 1), one pass, one defer.
CODES = [
    ("fail", "retrieval", "The fee section of the right doc was not retrieved; a sibling doc ranked first.", "yes"),
    ("pass", "", "", ""),
    ("fail", "writing", "The writer dropped the reconnection fee that was in the evidence.", "no"),
    ("fail", "retrieval", "Retrieval returned the billing-cycle doc for a plan-change question.", "yes"),
    ("fail", "pruning", "The pruner dropped the only chunk that stated the deadline.", "yes"),
    ("defer", "", "", ""),
    ("fail", "retrieval", "No chunk about Sunday opening hours was retrieved.", "yes"),
    ("fail", "routing", "A billing question was routed to the documents.", "yes"),
    ("fail", "writing", "The answer invented an instalment option the context never mentioned.", "no"),
    ("fail", "retrieval", "The hard-negative doc was ranked above the right one.", "yes"),
    ("fail", "retrieval", "Retrieval missed the duplicate-invoice section entirely.", "yes"),
    ("fail", "writing", "The writer answered a different question than the one asked.", "no"),
]


def _last_weeks_traces():
    """Run twelve real bot turns on web-chat conversations and spread their traces over the last week."""
    from bot.turn import run_turn
    from bot.writer import TemplateWriter
    from desk.models import Channel, Contact, Conversation, Message
    from traces.models import Trace

    traces = []
    for name, texts in CONVERSATIONS:
        contact = Contact.objects.create(channel=Channel.WEBCHAT, name=name, language="es")
        conversation = Conversation.objects.create(contact=contact, channel=Channel.WEBCHAT)
        for text in texts:
            message = Message.objects.create(conversation=conversation, direction="in", author="customer",
                                             kind="text", text=text, provider_message_id=f"web.{uuid.uuid4().hex}")
            trace = run_turn(message_id=message.pk, writer=TemplateWriter())
            assert trace is not None
            traces.append(trace)
    now = clock.now()
    for i, trace in enumerate(traces):
        Trace.objects.filter(pk=trace.pk).update(created_at=now - timedelta(days=6) + timedelta(hours=11 * i))
    return traces


def test_an_analyst_samples_last_weeks_traces_codes_them_and_reads_the_share_per_stage(
        live_server, browser_page, small_kb, healthy_billing, make_staff, settings):
    from playwright.sync_api import expect

    from traces.models import FailureClass, ReviewNote, ReviewSession

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""  # the template writer: no model server needed
    traces = _last_weeks_traces()
    assert {t.outcome for t in traces} >= {"answered"}
    analyst = make_staff("lena", "analyst", password="lena-password-1")
    page = browser_page

    log_in(page, live_server.url, "lena", "lena-password-1", "/traces/sessions/")

    # "Sample 12 traces from last week": the form's default window is the last seven days.
    form = page.locator("form[aria-label='New session']")
    form.locator("input[name=name]").fill("Sample 12 traces from last week")
    form.locator("input[name=size]").fill(str(len(CODES)))
    form.locator("input[name=seed]").fill("2026")
    form.locator("button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/traces/sessions/*/")
    session = ReviewSession.objects.get(name="Sample 12 traces from last week")
    assert session.seed == 2026 and session.items.count() == len(CODES)
    assert set(session.items.values_list("trace_id", flat=True)) == {t.pk for t in traces}
    expect(page.locator(".progress")).to_contain_text("0 / 12")

    # Code every trace, one at a time, with the keyboard where it helps.
    page.click("text=Review next open trace")
    for number, (verdict, stage, sentence, faithful) in enumerate(CODES, start=1):
        page.wait_for_url(f"{live_server.url}/traces/sessions/{session.pk}/review/{number}/")
        expect(page.locator("h1")).to_contain_text("Trace")
        if number == 2:
            # p goes back to the trace just coded, n comes forward again.
            page.keyboard.press("p")
            page.wait_for_url(f"{live_server.url}/traces/sessions/{session.pk}/review/1/")
            expect(page.locator("input[name=first_failure]")).to_have_value(CODES[0][2])
            page.keyboard.press("n")
            page.wait_for_url(f"{live_server.url}/traces/sessions/{session.pk}/review/2/")
        if verdict == "fail":
            page.keyboard.press("f")  # checks "fail" and puts the cursor in the sentence
            expect(page.locator("input[name=first_failure]")).to_be_focused()
            page.keyboard.type(sentence)  # its letters (n, p, f, s, d…) must not trigger shortcuts
            page.select_option("select[name=stage]", stage)
            page.check(f"input[name=model_faithful][value={faithful}]")
            page.locator("input[name=first_failure]").press("Enter")
        else:
            page.keyboard.press("s" if verdict == "pass" else "d")  # saves and moves on at once
        if number < len(CODES):
            page.wait_for_url(f"{live_server.url}/traces/sessions/{session.pk}/review/{number + 1}/")
    page.wait_for_url(f"{live_server.url}/traces/sessions/{session.pk}/")
    expect(page.locator(".progress")).to_contain_text("11 / 12")  # the deferred one is still open

    notes = {n.trace_id: n for n in ReviewNote.objects.filter(session=session, author=analyst)}
    ordered = [notes[trace_id] for trace_id in session.items.order_by("position").values_list("trace_id", flat=True)]
    assert [(n.verdict, n.stage, n.first_failure) for n in ordered] == [c[:3] for c in CODES]

    # Axial coding: two classes, the notes assigned in bulk.
    page.click("text=Taxonomy")
    page.wait_for_url(f"{live_server.url}/traces/sessions/{session.pk}/taxonomy/")
    for name, definition, stage in [
        ("Right document not retrieved", "The chunk that answers the question never reached the writer.",
         "retrieval"),
        ("Writer strays from the evidence", "The writer had the answer in context and did not use it.", "writing"),
    ]:
        new = page.locator("form[aria-label='New class']")
        new.locator("input[name=name]").fill(name)
        new.locator("input[name=definition]").fill(definition)
        new.locator("select[name=stage]").select_option(stage)
        new.locator("button[type=submit]").click()
        expect(page.locator("text=" + name).first).to_be_visible()
    classes = {c.stage: c for c in FailureClass.objects.filter(session=session)}
    for stages, failure_class in [({"retrieval", "pruning"}, classes["retrieval"]), ({"writing"}, classes["writing"])]:
        assign = page.locator("form[aria-label='Assign']")
        for note in ordered:
            if note.stage in stages:
                assign.locator(f"input[name=notes][value='{note.pk}']").check()
        assign.locator("select[name=failure_class]").select_option(label=failure_class.name)
        assign.locator("button[type=submit]").click()
        page.wait_for_load_state()
    assert ReviewNote.objects.filter(session=session, failure_class=classes["retrieval"]).count() == 6
    assert ReviewNote.objects.filter(session=session, failure_class=classes["writing"]).count() == 3

    # The headline and the chart: 6 of 10 started in retrieval (retrieval + pruning), 3 of 10 in writing.
    page.goto(f"{live_server.url}/traces/sessions/{session.pk}/taxonomy/")
    expect(page.locator("#failures")).to_have_text("10")
    expect(page.locator("#retrieval-share")).to_have_text("6 of 10")
    expect(page.locator("#generation-share")).to_have_text("3 of 10")
    headline = page.locator(".headline").inner_text()
    assert "(60%, retrieval + pruning)" in headline and "(30%, writing)" in headline
    expect(page.locator("#faithful")).to_have_text("7 of 10")
    stage_chart = page.locator("svg[aria-label='Failures by stage']")
    assert stage_chart.locator("rect > title").all_text_contents() == [
        "Retrieval: 5", "Writing: 3", "Pruning: 1", "Routing: 1"]
    widths = [int(w) for w in stage_chart.locator("rect").evaluate_all("rs => rs.map(r => r.getAttribute('width'))")]
    assert widths[0] == 300 and widths[0] > widths[1] > widths[2] == widths[3] > 0
    class_chart = page.locator("svg[aria-label='Failures by class']")
    assert class_chart.locator("rect > title").all_text_contents() == [
        "Right document not retrieved: 6", "Writer strays from the evidence: 3", "(unassigned): 1"]
    page.screenshot(path=str(SCREENSHOTS / "review-taxonomy.png"), full_page=True)
