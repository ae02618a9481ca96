"""The desk over HTTP: each action as a POST with CSRF, a role matrix, partials checked too, escaping."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse

from bot.turn import run_turn
from bot.writer import TemplateWriter
from core import clock
from desk import services
from desk.models import CannedReply, Channel, Conversation, Event, Message
from desk.account import account_summary
from tests.support.factories import bot_says, conversation_start, customer_says, escalated
from traces.models import Trace

pytestmark = pytest.mark.django_db
XSS = "<script>alert(1)</script>"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def staff(make_staff):
    """Log in as a user of the given roles; return (client, user)."""

    def login(username, *roles):
        user = make_staff(username, *roles)
        browser = Client(enforce_csrf_checks=True)
        browser.force_login(user)
        return browser, user

    return login


def url(name, conversation, *extra):
    conversation_id = conversation.pk if hasattr(conversation, "pk") else conversation
    return reverse(f"desk:{name}", args=[conversation_id, *extra])


def post(browser, path, data=None, **headers):
    """POST as a browser does: fetch the page for the CSRF cookie, then send the token."""
    browser.get(reverse("desk:chat"))  # any page sets the cookie
    token = browser.cookies["csrftoken"].value
    return browser.post(path, data or {}, HTTP_X_CSRFTOKEN=token, **headers)


# The role matrix -------------------------------------------------------------------------------

ROLES = {"agent": ("agent",), "supervisor": ("supervisor",), "analyst": ("analyst",),
         "kb_editor": ("kb_editor",), "anonymous": None}
READ_PAGES = ["queue", "conversation", "conversation_thread"]
ACTIONS = ["take_over", "reply", "note", "assign", "hand_back", "resolve", "mark_wrong"]
EXPECTED_READ = {
    "queue": {"agent": 200, "supervisor": 200, "analyst": 403, "kb_editor": 403, "anonymous": "login"},
    "conversation": {"agent": 200, "supervisor": 200, "analyst": 200, "kb_editor": 403, "anonymous": "login"},
    "conversation_thread": {"agent": 200, "supervisor": 200, "analyst": 200, "kb_editor": 403,
                            "anonymous": "login"},
}


def _assert_outcome(response, expected):
    if expected == "login":
        assert response.status_code == 302 and response.url.startswith(reverse("login"))
    else:
        assert response.status_code == expected


@pytest.mark.parametrize("page", READ_PAGES)
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("htmx", [False, True], ids=["page", "htmx-partial"])
def test_role_matrix_for_reading(client, make_staff, page, role, htmx):
    escalation = escalated()
    if ROLES[role]:
        client.force_login(make_staff("someone", *ROLES[role]))
    path = reverse("desk:queue") if page == "queue" else url(page, escalation.conversation_id)
    response = client.get(path, **(HTMX if htmx else {}))
    _assert_outcome(response, EXPECTED_READ[page][role])


def _action_data(action, conversation, user):
    """Put the conversation in the state the action needs for `user`, and return the POST data."""
    if action in ("reply", "hand_back") and user is not None and user.has_perm("desk.use_desk"):
        services.conversation_take_over(conversation_id=conversation.pk, agent=user)
    if action == "assign":
        return {"assignee": user.pk if user is not None and user.has_perm("desk.use_desk") else ""}
    return {"reply": {"text": "Hola, le escribe una persona."}, "note": {"text": "revisar"},
            "mark_wrong": {"reason": "monto equivocado"}}.get(action, {})


AUDIT = {"take_over": "taken_over", "reply": None, "note": "note", "assign": "assigned",
         "hand_back": "handed_back", "resolve": "resolved", "mark_wrong": "verified_wrong"}


@pytest.mark.parametrize("action", ACTIONS)
@pytest.mark.parametrize("role", ROLES)
def test_role_matrix_for_actions(make_staff, action, role, django_capture_on_commit_callbacks):
    escalation = escalated()
    conversation = escalation.conversation
    answer = bot_says(conversation, "Su saldo es 10,00 USD")
    user = make_staff("someone", *ROLES[role]) if ROLES[role] else None
    browser = Client(enforce_csrf_checks=True)
    if user:
        browser.force_login(user)
    data = _action_data(action, conversation, user)
    events_before = Event.objects.count()
    path = url(action, conversation, answer.pk) if action == "mark_wrong" else url(action, conversation)
    with django_capture_on_commit_callbacks(execute=True):
        response = post(browser, path, data)
    if role in ("agent", "supervisor"):
        assert response.status_code == 302 and response.url == url("conversation", conversation)
        if AUDIT[action]:
            assert Event.objects.filter(conversation=conversation, kind=AUDIT[action], actor=user).exists()
        else:
            assert Message.objects.get(author="agent").agent == user
    else:
        _assert_outcome(response, "login" if role == "anonymous" else 403)
        # Nothing happened beyond what the setup did.
        assert Event.objects.count() == events_before
        assert not Message.objects.filter(author="agent").exists()


@pytest.mark.parametrize("action", ACTIONS)
def test_actions_refuse_get_and_posts_without_the_csrf_token(staff, action):
    browser, _ = staff("ana", "agent")
    escalation = escalated()
    answer = bot_says(escalation.conversation, "x")
    path = url(action, escalation.conversation_id, answer.pk) if action == "mark_wrong" else url(
        action, escalation.conversation_id)
    assert browser.get(path).status_code == 405
    assert browser.post(path, {"text": "hola", "reason": "x"}).status_code == 403  # no token
    assert Event.objects.filter(conversation=escalation.conversation).count() == 1  # only "escalated"


def test_an_analyst_reads_the_conversation_without_any_action_form(staff):
    browser, _ = staff("luis", "analyst")
    escalation = escalated(suggested_reply="Borrador del bot")
    bot_says(escalation.conversation, "Respuesta del bot")
    for response in (browser.get(url("conversation", escalation.conversation_id)),
                     browser.get(url("conversation_thread", escalation.conversation_id))):
        page = response.content.decode()
        assert response.status_code == 200 and "quiero hablar con una persona" in page
        assert page.count('method="post"') == page.count('action="/logout/"')  # only the log-out form
        assert "Take over" not in page and "composer" not in page and "Verified wrong…" not in page
    assert "Read-only" in browser.get(url("conversation", escalation.conversation_id)).content.decode()


# Take over -------------------------------------------------------------------------------------

def test_take_over_from_the_page_silences_the_bot_and_shows_the_composer(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated()
    page = browser.get(url("conversation", escalation.conversation_id)).content.decode()
    assert "Take over" in page and "composer-text" not in page
    response = post(browser, url("take_over", escalation.conversation_id))
    assert response.status_code == 302
    page = browser.get(url("conversation", escalation.conversation_id)).content.decode()
    assert "You have this conversation" in page and 'id="composer-text"' in page
    assert "taken over by ana" in page and "escalated: Customer asked for a person" in page


def test_the_agent_who_lost_the_race_is_told_who_has_the_conversation(staff):
    ana_browser, ana = staff("ana", "agent")
    bob_browser, bob = staff("bob", "agent")
    escalation = escalated()
    bob_page = bob_browser.get(url("conversation", escalation.conversation_id))  # both see "Take over"
    assert "Take over" in bob_page.content.decode()
    assert post(ana_browser, url("take_over", escalation.conversation_id)).status_code == 302
    refused = post(bob_browser, url("take_over", escalation.conversation_id))
    assert refused.status_code == 409 and "ana has this conversation." in refused.content.decode()
    refused_htmx = post(bob_browser, url("take_over", escalation.conversation_id), **HTMX)
    assert refused_htmx.status_code == 200
    body = refused_htmx.content.decode()
    assert 'id="work"' in body and "ana has this conversation." in body and "<html" not in body
    assert Conversation.objects.get(pk=escalation.conversation_id).assignee == ana


# Reply -----------------------------------------------------------------------------------------

def test_reply_with_htmx_returns_the_work_area_with_the_sent_message(staff,
                                                                      django_capture_on_commit_callbacks):
    browser, ana = staff("ana", "agent")
    conversation = escalated().conversation
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    with django_capture_on_commit_callbacks(execute=True):
        response = post(browser, url("reply", conversation), {"text": "Hola, soy Ana del equipo."}, **HTMX)
    page = response.content.decode()
    assert response.status_code == 200 and page.lstrip().startswith('<div id="work">')
    assert "Hola, soy Ana del equipo." in page
    message = Message.objects.get(author="agent")
    assert (message.agent, message.status) == (ana, "sent")
    page = browser.get(url("conversation", conversation)).content.decode()
    assert 'class="delivery sent"' in page


def test_an_empty_reply_is_refused_and_nothing_is_sent(staff):
    browser, ana = staff("ana", "agent")
    conversation = escalated().conversation
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    response = post(browser, url("reply", conversation), {"text": "   "})
    assert response.status_code == 400 and "Write something to send." in response.content.decode()
    assert not Message.objects.filter(author="agent").exists()


def test_outside_the_whatsapp_window_free_text_gives_way_to_templates_and_says_why(staff):
    browser, ana = staff("ana", "agent")
    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id="584121112233",
                                      inbound_at=clock.now() - timedelta(hours=30))
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    page = browser.get(url("conversation", conversation)).content.decode()
    assert 'id="composer-text"' not in page and "more than 24 hours ago" in page
    assert "approved template" in page and 'id="template-composer"' in page
    response = post(browser, url("reply", conversation), {"text": "hola"})
    assert response.status_code == 409 and "24 hours" in response.content.decode()
    assert not Message.objects.filter(author="agent").exists()


def test_canned_replies_of_the_customers_language_fill_the_composer(staff):
    browser, ana = staff("ana", "agent")
    conversation = escalated(language="en").conversation
    english = CannedReply.objects.create(language="en", title="Greeting",
                                         text="Hi, I'm looking at it & more.")
    CannedReply.objects.create(language="es", title="Saludo", text="Hola, lo reviso.")
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    page = browser.get(url("conversation", conversation)).content.decode()
    assert 'data-fill="Hi, I&#x27;m looking at it &amp; more."' in page and "Saludo" not in page
    prefilled = browser.get(url("conversation", conversation) + f"?canned={english.pk}").content.decode()
    assert ">Hi, I&#x27;m looking at it &amp; more.</textarea>" in prefilled


def test_the_bots_draft_starts_the_reply_once_the_agent_holds_the_conversation(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated(reason="FORBIDDEN_PHRASE", suggested_reply="Tu saldo es 20,00 USD.")
    page = browser.get(url("conversation", escalation.conversation_id)).content.decode()
    assert "Tu saldo es 20,00 USD." in page and "Start from the bot&#x27;s draft" not in page
    services.conversation_take_over(conversation_id=escalation.conversation_id, agent=ana)
    page = browser.get(url("conversation", escalation.conversation_id)).content.decode()
    assert 'id="use-draft"' in page and 'data-fill="Tu saldo es 20,00 USD."' in page
    prefilled = browser.get(url("conversation", escalation.conversation_id) + "?draft=1").content.decode()
    assert ">Tu saldo es 20,00 USD.</textarea>" in prefilled


# Note, assign, hand back, resolve, verified wrong ----------------------------------------------

def test_a_private_note_shows_in_the_thread_as_private_and_is_never_sent(staff):
    browser, ana = staff("ana", "agent")
    conversation = escalated().conversation
    response = post(browser, url("note", conversation), {"text": "Llamar mañana"}, **HTMX)
    page = response.content.decode()
    assert response.status_code == 200 and 'class="note"' in page and "Llamar mañana" in page
    assert "never sent" in page
    assert not Message.objects.filter(text="Llamar mañana").exists()


def test_reassign_moves_the_conversation_and_the_queue_shows_who_has_it(staff, make_staff):
    browser, ana = staff("ana", "agent")
    bob = make_staff("bob", "agent")
    escalation = escalated()
    page = browser.get(url("conversation", escalation.conversation_id)).content.decode()
    assert f'<option value="{bob.pk}">bob</option>' in page
    assert post(browser, url("assign", escalation.conversation_id), {"assignee": bob.pk}).status_code == 302
    assert Conversation.objects.get(pk=escalation.conversation_id).assignee == bob
    queue = browser.get(reverse("desk:queue")).content.decode()
    assert "Assigned to bob" in queue
    page = browser.get(url("conversation", escalation.conversation_id)).content.decode()
    assert "bob has this conversation." in page and "assigned to bob by ana" in page


def test_assigning_to_someone_who_is_not_an_agent_is_refused(staff, make_staff):
    browser, ana = staff("ana", "agent")
    luis = make_staff("luis", "analyst")
    escalation = escalated()
    response = post(browser, url("assign", escalation.conversation_id), {"assignee": luis.pk})
    assert response.status_code == 400 and "Pick an agent" in response.content.decode()
    assert Conversation.objects.get(pk=escalation.conversation_id).assignee is None


def test_hand_back_and_resolve_from_the_page(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated()
    conversation_id = escalation.conversation_id
    post(browser, url("take_over", conversation_id))
    assert post(browser, url("hand_back", conversation_id)).status_code == 302
    conversation = Conversation.objects.get(pk=conversation_id)
    assert (conversation.handler, conversation.assignee) == ("bot", None)
    assert post(browser, url("resolve", conversation_id)).status_code == 302
    page = browser.get(url("conversation", conversation_id)).content.decode()
    assert "handed back to the bot by ana" in page and "resolved by ana" in page
    assert Conversation.objects.get(pk=conversation_id).status == "resolved"


def test_verified_wrong_from_the_page(staff):
    browser, ana = staff("ana", "agent")
    conversation = escalated().conversation
    answer = bot_says(conversation, "Su saldo es 99,00 USD")
    response = post(browser, url("mark_wrong", conversation, answer.pk), {"reason": "El saldo real es 40,60"},
                    **HTMX)
    assert response.status_code == 200
    assert "Verified wrong by ana: El saldo real es 40,60" in response.content.decode()
    answer.refresh_from_db()
    assert answer.verified_wrong_by == ana


def test_verified_wrong_refuses_a_message_of_another_conversation_or_a_customer_message(staff):
    browser, ana = staff("ana", "agent")
    conversation, other = escalated().conversation, conversation_start()
    elsewhere = bot_says(other, "x")
    assert post(browser, url("mark_wrong", conversation, elsewhere.pk), {"reason": "no"}).status_code == 404
    customer = customer_says(conversation, "hola")
    response = post(browser, url("mark_wrong", conversation, customer.pk), {"reason": "no"})
    assert response.status_code == 409 and "Only bot answers" in response.content.decode()


# The thread ------------------------------------------------------------------------------------

def test_the_thread_interleaves_messages_and_events_with_delivery_status(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated()
    conversation = escalation.conversation
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    Message.objects.create(conversation=conversation, direction="out", author="agent", agent=ana, text="Voy",
                           status="failed", error="131047 re-engagement message")
    page = browser.get(url("conversation", conversation)).content.decode()
    order = [page.index(s) for s in ("quiero hablar con una persona", "escalated: Customer asked for a person",
                                     "taken over by ana", "Voy")]
    assert order == sorted(order)
    assert 'class="delivery failed"' in page and "131047 re-engagement message" in page


def test_polling_the_thread_answers_204_until_something_changes(staff):
    browser, ana = staff("ana", "agent")
    conversation = escalated().conversation
    first = browser.get(url("conversation_thread", conversation), **HTMX)
    version = first.content.decode().split("?v=")[1].split('"')[0]
    assert browser.get(url("conversation_thread", conversation) + f"?v={version}", **HTMX).status_code == 204
    customer_says(conversation, "¿hay alguien?")
    changed = browser.get(url("conversation_thread", conversation) + f"?v={version}", **HTMX)
    assert changed.status_code == 200 and "¿hay alguien?" in changed.content.decode()
    sent = bot_says(conversation, "x")
    version = changed.content.decode().split("?v=")[1].split('"')[0]
    browser.get(url("conversation_thread", conversation) + f"?v={version}", **HTMX)
    Message.objects.filter(pk=sent.pk).update(status="delivered")  # a status webhook arrived
    assert browser.get(url("conversation_thread", conversation) + f"?v={version}", **HTMX).status_code == 200


# Escaping --------------------------------------------------------------------------------------

def test_customer_text_stays_text_everywhere(staff, healthy_billing):
    browser, ana = staff("ana", "agent")
    escalation = escalated(name=XSS, text=XSS, suggested_reply=XSS, internal_note=XSS)
    conversation = escalation.conversation
    services.note_add(conversation_id=conversation.pk, agent=ana, text=XSS)
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    CannedReply.objects.create(language="es", title=XSS, text=XSS)
    Trace.objects.create(conversation=conversation, channel="webchat", outcome="escalated", query=XSS,
                         evidence=[{"id": "E1", "kind": "fact", "text": XSS, "value": "1"}],
                         attempts=[{"attempt": 1, "reply": XSS, "verdict": {"grounded": False, "problems": [
                             {"token": XSS, "sentence": XSS, "reason": XSS}]}}])
    pages = {
        "queue": browser.get(reverse("desk:queue")),
        "queue rows": browser.get(reverse("desk:queue"), **HTMX),
        "conversation": browser.get(url("conversation", conversation)),
        "thread": browser.get(url("conversation_thread", conversation), **HTMX),
        "draft prefill": browser.get(url("conversation", conversation) + "?draft=1"),
    }
    for where, response in pages.items():
        body = response.content.decode()
        assert response.status_code == 200, where
        assert XSS not in body, where
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body, where


# The side panel: the bot's last turn and the account -------------------------------------------

def last_turn(browser, conversation_id) -> str:
    """The conversation page loads "the bot's last turn" from the traces room (htmx); fetch that partial."""
    page = browser.get(url("conversation", conversation_id)).content.decode()
    partial = reverse("traces:last_turn", args=[conversation_id])
    assert f'hx-get="{partial}"' in page
    return browser.get(partial).content.decode()


def test_the_trace_panel_shows_route_chunks_evidence_and_verifier(staff, sample_kb, healthy_billing):
    browser, ana = staff("ana", "agent")
    conversation = conversation_start()
    trace = run_turn(message_id=customer_says(conversation, "cuanto cobran por reconexion de fibra").pk,
                     writer=TemplateWriter())
    panel = last_turn(browser, conversation.pk)
    assert "route <strong>document</strong>" in panel and "reconexion-fibra-es" in panel
    assert '<span class="badge evidence">E1</span>' in panel and "kept" in panel
    assert "grounded" in panel and reverse("traces:detail", args=[trace.pk]) in panel
    assert "/kb/chunks/" not in panel  # agents read the chunk text, not the KB editor's page
    assert "text the bot used" in panel and "Bs. 350,00" in panel


def test_kb_chunk_links_only_for_users_who_may_edit_the_kb(staff, sample_kb):
    browser, both = staff("eva", "agent", "kb_editor")
    conversation = conversation_start()
    trace = run_turn(message_id=customer_says(conversation, "cuanto cobran por reconexion de fibra").pk,
                     writer=TemplateWriter())
    page = last_turn(browser, conversation.pk)
    assert reverse("kb:chunk", args=[trace.retrieval[0]["chunk_id"]]) in page


def test_the_trace_panel_lists_billing_facts_and_each_attempts_problems(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated(reason="UNGROUNDED_OUTPUT")
    Trace.objects.create(
        conversation=escalation.conversation, channel="webchat", outcome="escalated", route="account",
        escalation_reason="UNGROUNDED_OUTPUT",
        tool_calls=[{"capability": "balance", "ok": True, "error": None}],
        evidence=[{"id": "E1", "kind": "fact", "fact_kind": "balance", "text": "Saldo = 40,60 USD",
                   "value": "40.60"}],
        attempts=[
            {"attempt": 1, "reply": "Debes 45,00 USD", "evidence_ids": ["E1"],
             "verdict": {"grounded": False, "problems": [{"token": "45,00", "sentence": "Debes 45,00 USD",
                                                          "reason": "not in the evidence"}]}},
            {"attempt": 2, "error": "timeout", "raw": ""},
        ])
    panel = last_turn(browser, escalation.conversation_id)
    assert "Saldo = 40,60 USD" in panel and '<span class="badge evidence">E1</span>' in panel
    assert "Attempt 1" in panel and "not grounded" in panel and "45,00</mark> — not in the evidence" in panel
    assert "Attempt 2" in panel and "writer error: timeout" in panel
    assert "balance" in panel


def test_the_escalation_card_and_the_last_turn_show_the_internal_note(staff):
    browser, ana = staff("ana", "agent")
    note = "Root cause: a late fee on an earlier unpaid balance — late_fee Bs. 81.20 [E8].\nUnsure: nothing."
    escalation = escalated(reason="UNGROUNDED_OUTPUT", internal_note=note, suggested_reply="Tu factura subió.")
    Trace.objects.create(conversation=escalation.conversation, channel="webchat", outcome="escalated",
                         escalation_reason="UNGROUNDED_OUTPUT", internal_note=note, fallback="escalated")
    page = browser.get(url("conversation", escalation.conversation)).content.decode()
    card = page.split('id="escalation"')[1].split("</section>")[0]
    assert 'id="internal-note"' in card and "What the bot knew" in card
    assert "late_fee Bs. 81.20 [E8]." in card and "never sent" in card
    panel = last_turn(browser, escalation.conversation_id)
    assert "Internal note" in panel and "late_fee Bs. 81.20 [E8]." in panel
    assert "Escalated with the verified draft offered to the agent" in panel


def test_an_escalation_without_a_note_shows_no_note_block(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated()
    page = browser.get(url("conversation", escalation.conversation)).content.decode()
    assert 'id="internal-note"' not in page


def test_a_silenced_turn_does_not_hide_the_bots_last_real_turn(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated()
    Trace.objects.create(conversation=escalation.conversation, channel="webchat", outcome="escalated",
                         route="human", escalation_reason="USER_REQUEST")
    Trace.objects.create(conversation=escalation.conversation, channel="webchat", outcome="silenced",
                         silenced_at="gate")
    panel = last_turn(browser, escalation.conversation_id)
    assert "route <strong>human</strong>" in panel and "silenced at" not in panel


def test_the_account_panel_shows_plan_invoice_and_payments(staff, healthy_billing):
    browser, ana = staff("ana", "agent")
    escalation = escalated(customer_id="C-1001")
    panel = browser.get(url("conversation", escalation.conversation_id)).content.decode().split(
        'id="account"')[1].split("</section>")[0]
    from billing.answers.money import money_text
    from billing.simulator.mounted import shared_simulator

    # the customer's current invoice for the clock's date, as the simulator bills it
    current = max(shared_simulator().data.accounts["C-1001"].invoices, key=lambda invoice: invoice.period)
    total = money_text(current.total.amount, current.total.currency, "es")  # USD 40,60 on 2026-11-20
    assert "Fibra 100" in panel and f"Invoice {current.period}" in panel and total in panel
    assert panel.count("<li>") == 3  # the last three payments


def account_panel(browser, conversation_id):
    page = browser.get(url("conversation", conversation_id)).content.decode()
    return page.split('id="account"')[1].split("</section>")[0]


@pytest.mark.parametrize(
    ("customer_id", "language", "price", "total", "before"),
    [
        # an unchanged Fibra 300 bill in bolívares: Bs. 1.400 + IVA 16 %
        ("C-1049", "es", "Bs. 1.400,00", "Bs. 1.624,00", "1624.00 VES"),
        ("C-1049", "en", "Bs. 1,400.00", "Bs. 1,624.00", "1624.00 VES"),
        # an unchanged Fibra 100 bill in dollars with the direct-debit discount: (20 − 1) × 1.16
        ("C-1038", "es", "USD 20,00", "USD 22,04", "22.04 USD"),
        ("C-1038", "en", "USD 20.00", "USD 22.04", "22.04 USD"),
    ],
)
def test_the_account_panel_writes_amounts_in_the_contacts_language(staff, healthy_billing, customer_id,
                                                                   language, price, total, before):
    browser, _ = staff("ana", "agent")
    escalation = escalated(customer_id=customer_id, language=language)
    panel = account_panel(browser, escalation.conversation_id)
    assert f"· {price} a month" in panel
    assert f"<strong>{total}</strong>" in panel
    assert f"· {total} ·" in panel  # the last payments paid the whole bill
    assert before not in panel  # what the panel showed before: the machine amount and the code after it


def test_the_account_panel_falls_back_to_spanish_for_a_language_billing_cannot_write(healthy_billing):
    summary = account_summary(customer_id="C-1049", language="pt")
    assert (summary.plan_price, summary.invoice_total) == ("Bs. 1.400,00", "Bs. 1.624,00")


def test_the_account_panel_says_when_the_billing_system_is_unavailable(staff, healthy_billing):
    browser, ana = staff("ana", "agent")
    escalation = escalated(customer_id="C-1001")
    healthy_billing.set_fault("503")
    response = browser.get(url("conversation", escalation.conversation_id))
    assert response.status_code == 200
    assert "Billing system unavailable" in response.content.decode()


def test_the_account_panel_asks_to_identify_an_unknown_customer_and_analysts_do_not_see_it(staff):
    browser, ana = staff("ana", "agent")
    escalation = escalated(customer_id="")
    page = browser.get(url("conversation", escalation.conversation_id)).content.decode()
    assert "not identified yet" in page
    analyst, _ = staff("luis", "analyst")
    assert 'id="account"' not in analyst.get(url("conversation", escalation.conversation_id)).content.decode()
