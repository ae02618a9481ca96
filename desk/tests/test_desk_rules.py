"""The desk's rules for other people's conversations, the states a page reads, clear refusals and double clicks.

Given a conversation agent A holds (or nobody holds), when A, another agent B or a supervisor does each
action, then the services do it, refuse it with a sentence that names the holder, or — for a repeat —
change nothing; and the page offers only what the services would do.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from core import clock
from desk import credit_notes, rules, services
from desk.chat import chat_message_receive
from desk.models import Conversation, Event, Message
from tests.support.factories import bot_says, escalated, events_of

HTMX = {"HTTP_HX_REQUEST": "true"}
ACTIONS = ["reply", "hand_back", "resolve", "reassign", "note", "request", "take_over", "credit_note", "mark_wrong"]
ROLES = ["holder", "other_agent", "supervisor"]  # "holder": agent A, who holds the conversation when it is held

# What each role may do, on a conversation A holds and on one nobody holds (an escalation waiting for a person).
# do: it happens; already: nothing to change (A takes over what A holds); refuse: a message says why.
EXPECTED = {
    "held_by_a": {
        "reply": {"holder": "do", "other_agent": "refuse", "supervisor": "do"},
        "hand_back": {"holder": "do", "other_agent": "refuse", "supervisor": "do"},
        "resolve": {"holder": "do", "other_agent": "refuse", "supervisor": "do"},
        "reassign": {"holder": "do", "other_agent": "refuse", "supervisor": "do"},
        "note": {"holder": "do", "other_agent": "do", "supervisor": "do"},
        "request": {"holder": "refuse", "other_agent": "do", "supervisor": "do"},
        "take_over": {"holder": "already", "other_agent": "refuse", "supervisor": "do"},
        "credit_note": {"holder": "do", "other_agent": "refuse", "supervisor": "do"},
        "mark_wrong": {"holder": "do", "other_agent": "refuse", "supervisor": "do"},
    },
    "unheld": {
        "reply": {"holder": "refuse", "other_agent": "refuse", "supervisor": "refuse"},
        "hand_back": {"holder": "do", "other_agent": "do", "supervisor": "do"},
        "resolve": {"holder": "do", "other_agent": "do", "supervisor": "do"},
        "reassign": {"holder": "do", "other_agent": "do", "supervisor": "do"},
        "note": {"holder": "do", "other_agent": "do", "supervisor": "do"},
        "request": {"holder": "refuse", "other_agent": "refuse", "supervisor": "refuse"},
        "take_over": {"holder": "do", "other_agent": "do", "supervisor": "do"},
        "credit_note": {"holder": "do", "other_agent": "do", "supervisor": "do"},
        "mark_wrong": {"holder": "do", "other_agent": "do", "supervisor": "do"},
    },
}
CASES = [(holding, action, role) for holding in EXPECTED for action in ACTIONS for role in ROLES]


# The pure rules ---------------------------------------------------------------------------------

A, B, SUPERVISOR = rules.Actor(1, "ana"), rules.Actor(2, "bob"), rules.Actor(3, "sue", supervises=True)
ACTORS = {"holder": A, "other_agent": B, "supervisor": SUPERVISOR}
STATES = {"held_by_a": rules.State(holder_id=1, holder_name="ana"), "unheld": rules.State(holder_id=None)}


@pytest.mark.parametrize(("holding", "action", "role"), CASES)
def test_the_rules_table(holding, action, role):
    verdict = rules.decide(rules.Action(action), ACTORS[role], STATES[holding], reason="ana is off sick",
                           assignee_id=4)
    assert verdict.outcome == EXPECTED[holding][action][role]
    if verdict.outcome == "refuse":
        assert verdict.message.endswith(".") and len(verdict.message) > 20
        if holding == "held_by_a" and role == "other_agent":
            assert "ana" in verdict.message  # B is told who has it


@pytest.mark.parametrize(("action", "outcome"), [
    ("reply", "refuse"), ("hand_back", "refuse"), ("reassign", "refuse"), ("request", "refuse"),
    ("take_over", "refuse"), ("resolve", "already"), ("note", "do"), ("link", "do"), ("reopen", "do"),
    ("credit_note", "do"), ("mark_wrong", "do"),
])
def test_a_resolved_conversation_is_reopened_before_anything_but_a_note_or_a_link(action, outcome):
    state = rules.State(holder_id=1, holder_name="ana", resolved=True)
    verdict = rules.decide(rules.Action(action), A, state)
    assert verdict.outcome == outcome
    if outcome == "refuse":
        assert "Reopen it first" in verdict.message


def test_only_the_holder_or_a_supervisor_reopens_what_the_holder_resolved():
    state = rules.State(holder_id=1, holder_name="ana", resolved=True)
    assert rules.decide(rules.Action.REOPEN, A, state).outcome == "do"
    assert rules.decide(rules.Action.REOPEN, SUPERVISOR, state).outcome == "do"
    refused = rules.decide(rules.Action.REOPEN, B, state)
    assert refused.outcome == "refuse" and "only ana or a supervisor" in refused.message
    nobody = rules.State(holder_id=None, resolved=True, bot_answers=True)
    assert rules.decide(rules.Action.REOPEN, B, nobody).outcome == "do"
    assert rules.decide(rules.Action.REOPEN, A, rules.State(holder_id=1, holder_name="ana")).outcome == "already"


def test_a_supervisor_takes_over_from_someone_only_with_a_reason():
    held = STATES["held_by_a"]
    refused = rules.decide(rules.Action.TAKE_OVER, SUPERVISOR, held, reason="   ")
    assert refused.outcome == "refuse" and "Say why" in refused.message
    assert rules.decide(rules.Action.TAKE_OVER, SUPERVISOR, held, reason="ana is off").outcome == "do"
    assert rules.decide(rules.Action.TAKE_OVER, SUPERVISOR, STATES["unheld"]).outcome == "do"  # nobody to take from


def test_repeats_change_nothing():
    held = STATES["held_by_a"]
    assert rules.decide(rules.Action.REQUEST, B, held, already_requested=True).outcome == "already"
    assert rules.decide(rules.Action.REASSIGN, A, held, assignee_id=1).outcome == "already"
    bot = rules.State(holder_id=None, bot_answers=True)
    assert rules.decide(rules.Action.HAND_BACK, A, bot).outcome == "already"


# The same table through the services, on the real database ---------------------------------------

@pytest.fixture
def people(make_staff):
    return {"holder": make_staff("ana", "agent"), "other_agent": make_staff("bob", "agent"),
            "supervisor": make_staff("sue", "supervisor"), "target": make_staff("carl", "agent")}


def _given(holding, people) -> Conversation:
    conversation = escalated().conversation
    bot_says(conversation, "Su saldo es Bs. 10,00")  # an answer someone may find wrong
    if holding == "held_by_a":
        services.conversation_take_over(conversation_id=conversation.pk, agent=people["holder"])
    return conversation


def _act(action, conversation, user, people):
    pk = conversation.pk
    return {
        "reply": lambda: services.agent_reply_send(conversation_id=pk, agent=user, text="Hola, le escribo yo."),
        "hand_back": lambda: services.conversation_hand_back(conversation_id=pk, agent=user),
        "resolve": lambda: services.conversation_resolve(conversation_id=pk, agent=user),
        "reassign": lambda: services.conversation_assign(conversation_id=pk, actor=user,
                                                         assignee=people["target"]),
        "note": lambda: services.note_add(conversation_id=pk, agent=user, text="revisar la factura"),
        "request": lambda: services.take_request(conversation_id=pk, agent=user, text="la conozco"),
        "take_over": lambda: services.conversation_take_over(conversation_id=pk, agent=user,
                                                             reason="ana is off sick"),
        "credit_note": lambda: credit_notes.credit_note_propose(
            conversation=conversation, agent=user, invoice_id=_an_invoice(conversation), amount="1.00",
            currency="", reason="Two days without service"),
        "mark_wrong": lambda: services.message_mark_wrong(message_id=_bot_answer(conversation).pk, agent=user,
                                                          reason="the balance is another"),
    }[action]()


def _an_invoice(conversation) -> str:
    return credit_notes.customer_invoices(customer_id=conversation.contact.customer_id).invoices[0]["id"]


def _bot_answer(conversation) -> Message:
    return Message.objects.get(conversation=conversation, author="bot", text="Su saldo es Bs. 10,00")


def _snapshot(conversation):
    conversation.refresh_from_db()
    return (conversation.handler, conversation.status, conversation.assignee_id, events_of(conversation),
            Message.objects.filter(conversation=conversation).count(),
            Message.objects.filter(conversation=conversation, verified_wrong_at__isnull=False).count(),
            conversation.credit_notes.count())


def _done(action, conversation, user, people) -> bool:
    """Whether the action's effect is there, as the next person to open the conversation would see it."""
    conversation.refresh_from_db()
    mine = Event.objects.filter(conversation=conversation, actor=user)
    return {
        "reply": lambda: Message.objects.filter(conversation=conversation, author="agent", agent=user).exists(),
        "hand_back": lambda: (conversation.handler, conversation.assignee_id) == ("bot", None),
        "resolve": lambda: conversation.status == "resolved",
        "reassign": lambda: conversation.assignee == people["target"],
        "note": lambda: mine.filter(kind="note").exists(),
        "request": lambda: mine.filter(kind="take_requested").exists(),
        "take_over": lambda: conversation.assignee == user and conversation.handler == "human",
        "credit_note": lambda: conversation.credit_notes.filter(proposed_by=user).exists(),
        "mark_wrong": lambda: _bot_answer(conversation).verified_wrong_by == user,
    }[action]()


@pytest.mark.django_db
@pytest.mark.parametrize(("holding", "action", "role"), CASES)
def test_each_action_for_each_role_and_holder(people, holding, action, role, django_capture_on_commit_callbacks):
    conversation = _given(holding, people)
    user = people[role]
    before = _snapshot(conversation)
    expected = EXPECTED[holding][action][role]
    with django_capture_on_commit_callbacks(execute=True):
        if expected == "do":
            _act(action, conversation, user, people)
        else:
            error = services.Unchanged if expected == "already" else services.DeskActionError
            with pytest.raises(error) as refused:
                _act(action, conversation, user, people)
            if expected == "refuse":
                assert not isinstance(refused.value, services.Unchanged)
            assert str(refused.value)
    if expected == "do":
        assert _done(action, conversation, user, people)
    else:
        assert _snapshot(conversation) == before  # a refusal or a repeat changes nothing, writes no event


@pytest.mark.django_db
def test_a_supervisor_takes_over_from_the_holder_and_the_reason_is_in_the_thread(people, client):
    conversation = _given("held_by_a", people)
    sue = people["supervisor"]
    with pytest.raises(services.AlreadyTaken, match="Say why"):
        services.conversation_take_over(conversation_id=conversation.pk, agent=sue, reason="  ")
    services.conversation_take_over(conversation_id=conversation.pk, agent=sue, reason="ana is off sick")
    event = Event.objects.filter(conversation=conversation, kind="taken_over").last()
    assert (event.actor, event.detail["previous"], event.detail["reason"]) == (sue, "ana", "ana is off sick")
    client.force_login(people["holder"])
    page = client.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert "taken over from ana by sue: ana is off sick" in page
    assert "sue has this conversation." in page


# The page offers what the rules allow ------------------------------------------------------------

def _page(user, conversation) -> str:
    browser = Client()
    browser.force_login(user)
    return browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()


BUTTONS = {"reply": 'id="composer-text"', "hand_back": "Hand back to the bot", "resolve": ">Resolve</button>",
           "reassign": "Reassign</button>", "note": "Add note", "request": "Ask to take it",
           "take_over": ">Take over</button>", "credit_note": "Propose a credit note</h3>",
           "mark_wrong": "Mark wrong</button>"}


@pytest.mark.django_db
@pytest.mark.parametrize("holding", list(EXPECTED))
@pytest.mark.parametrize("role", ROLES)
def test_the_page_shows_only_the_buttons_the_user_may_use(people, holding, role):
    conversation = _given(holding, people)
    page = _page(people[role], conversation)
    for action, button in BUTTONS.items():
        if action == "reassign" and holding == "unheld":
            button = "Assign</button>"
        shown = button in page
        assert shown == (EXPECTED[holding][action][role] == "do"), f"{action}: shown={shown}"


@pytest.mark.django_db
def test_another_agents_request_shows_in_the_holders_thread_and_one_click_gives_it(people):
    conversation = _given("held_by_a", people)
    ana, bob = people["holder"], people["other_agent"]
    bob_browser = Client()
    bob_browser.force_login(bob)
    path = reverse("desk:take_request", args=[conversation.pk])
    response = bob_browser.post(path, {"text": "I know this customer"}, **HTMX)
    assert response.status_code == 200 and "Asked." in response.content.decode()
    again = bob_browser.post(path, {"text": "I know this customer"}, follow=True).content.decode()
    assert "You already asked ana for this conversation." in again  # a second ask changes nothing
    assert events_of(conversation).count("take_requested") == 1
    page = _page(ana, conversation)
    assert "bob asks ana for this conversation: I know this customer" in page  # the thread
    assert "Give it to bob" in page
    ana_browser = Client()
    ana_browser.force_login(ana)
    ana_browser.post(reverse("desk:assign", args=[conversation.pk]), {"assignee": bob.pk})
    conversation.refresh_from_db()
    assert conversation.assignee == bob
    assert "Give it to" not in _page(bob, conversation)  # the request is answered: bob holds it


@pytest.mark.django_db
def test_a_refused_action_over_http_is_a_clear_409_never_a_500(people):
    conversation = _given("held_by_a", people)
    browser = Client()
    browser.force_login(people["other_agent"])
    answer = _bot_answer(conversation)
    credit = {"invoice": _an_invoice(conversation), "amount": "1.00", "reason": "Two days without service"}
    for name, data in [("reply", {"text": "hola"}), ("hand_back", {}), ("resolve", {}),
                       ("assign", {"assignee": people["target"].pk}), ("take_over", {}),
                       ("credit_note_propose", credit), ("mark_wrong", {"reason": "the balance is another"})]:
        args = [conversation.pk, answer.pk] if name == "mark_wrong" else [conversation.pk]
        response = browser.post(reverse(f"desk:{name}", args=args), data)
        assert response.status_code == 409, name
        assert "ana has this conversation" in response.content.decode(), name
        htmx = browser.post(reverse(f"desk:{name}", args=args), data, **HTMX)
        assert htmx.status_code == 200 and "ana has this conversation" in htmx.content.decode()
    assert events_of(conversation) == ["escalated", "taken_over"]
    assert not conversation.credit_notes.exists()
    answer.refresh_from_db()
    assert answer.verified_wrong_at is None


# States that read true ----------------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize("to_human", [False, True], ids=["reopen-to-bot", "reopen-to-human"])
def test_a_resolved_page_says_so_and_what_the_next_customer_message_does(people, settings, to_human,
                                                                        django_capture_on_commit_callbacks):
    settings.DESK_REOPEN_TO_HUMAN = to_human
    conversation = _given("held_by_a", people)
    ana = people["holder"]
    browser = Client()
    browser.force_login(ana)
    response = browser.post(reverse("desk:resolve", args=[conversation.pk]), follow=True)
    page = response.content.decode()
    assert "This conversation is resolved." in page and "Resolved." in page
    assert 'id="composer-text" rows="2" disabled' in page and ">Send</button>" not in page
    assert ">Reopen</button>" in page
    said = page.split('id="next-inbound">')[1].split("</p>")[0]
    if to_human:
        assert "reopens for ana to answer and the bot stays silent" in said
        assert "does not come back into the escalation queue" in said
    else:
        assert "reopens and the bot answers them" in said

    # What the page said is what the one inbound path does.
    with django_capture_on_commit_callbacks(execute=False):
        chat_message_receive(conversation=conversation, text="hola otra vez")
    conversation.refresh_from_db()
    assert conversation.status == "open"
    if to_human:
        assert (conversation.handler, conversation.assignee) == ("human", ana)
        assert not conversation.escalations.filter(status__in=["open", "taken"]).exists()
    else:
        assert (conversation.handler, conversation.assignee) == ("bot", None)


@pytest.mark.django_db
def test_reopen_is_for_the_holder_and_supervisors_and_opens_the_composer_again(people):
    conversation = _given("held_by_a", people)
    services.conversation_resolve(conversation_id=conversation.pk, agent=people["holder"])
    bob_page = _page(people["other_agent"], conversation)
    assert ">Reopen</button>" not in bob_page and "only ana or a supervisor may reopen it" in bob_page
    with pytest.raises(services.DeskActionError, match="only ana or a supervisor"):
        services.conversation_reopen(conversation_id=conversation.pk, agent=people["other_agent"])
    browser = Client()
    browser.force_login(people["holder"])
    page = browser.post(reverse("desk:reopen", args=[conversation.pk]), follow=True).content.decode()
    assert "Reopened." in page and "reopened by ana" in page and ">Send</button>" in page
    conversation.refresh_from_db()
    assert (conversation.status, conversation.assignee) == ("open", people["holder"])


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["take_over", "hand_back", "resolve"])
def test_after_the_action_a_confirmation_and_the_longest_waiting_escalation(people, action):
    from datetime import timedelta

    conversation = escalated().conversation
    ana = people["holder"]
    if action != "take_over":
        services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    now = clock.now()
    newer = escalated(name="Newer Customer", created_at=now - timedelta(minutes=5))
    oldest = escalated(name="Oldest Customer", created_at=now - timedelta(minutes=50))
    taken = escalated(name="Taken Customer", created_at=now - timedelta(minutes=90))
    services.conversation_take_over(conversation_id=taken.conversation_id, agent=people["other_agent"])
    browser = Client()
    browser.force_login(ana)
    page = browser.post(reverse(f"desk:{action}", args=[conversation.pk]), follow=True).content.decode()
    confirmation = {"take_over": "You have this conversation now", "hand_back": "Handed back",
                    "resolve": "Resolved."}[action]
    assert confirmation in page
    link = page.split('id="next-conversation">')[1].split("</p>")[0]
    assert reverse("desk:conversation", args=[oldest.conversation_id]) in link and "Oldest Customer" in link
    assert "Newer Customer" not in link and "Taken Customer" not in link
    # The confirmation shows once: reloading the page does not repeat it.
    assert confirmation not in browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    del newer


@pytest.mark.django_db
def test_with_nobody_waiting_the_page_says_the_queue_is_empty(people):
    conversation = escalated().conversation
    browser = Client()
    browser.force_login(people["holder"])
    page = browser.post(reverse("desk:take_over", args=[conversation.pk]), follow=True).content.decode()
    assert "The queue is empty: no escalation is waiting for an agent." in page


# Clear errors and double clicks -------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize(("name", "text", "message"), [
    ("reply", "   \n\t ", "Write something to send."),
    ("reply", "x" * 4097, "A reply has at most 4096 characters; this one has 4097."),
    ("note", "  ", "Write something in the note."),
    ("note", "x" * 4001, "A note has at most 4000 characters; this one has 4001."),
])
def test_an_empty_or_too_long_text_says_what_to_do(people, name, text, message):
    conversation = _given("held_by_a", people)
    browser = Client()
    browser.force_login(people["holder"])
    for headers in ({}, HTMX):
        response = browser.post(reverse(f"desk:{name}", args=[conversation.pk]), {"text": text}, **headers)
        assert response.status_code == (400 if not headers else 200)
        assert message in response.content.decode()
    assert events_of(conversation) == ["escalated", "taken_over"]
    assert not Message.objects.filter(author="agent").exists()


@pytest.mark.django_db
def test_a_double_clicked_send_or_note_acts_once(people, django_capture_on_commit_callbacks):
    conversation = _given("held_by_a", people)
    browser = Client()
    browser.force_login(people["holder"])
    page = browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    key = page.split('name="form_key" value="')[1].split('"')[0]
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(2):
            browser.post(reverse("desk:reply", args=[conversation.pk]), {"text": "Hola", "form_key": key})
    second = browser.post(reverse("desk:note", args=[conversation.pk]), {"text": "n", "form_key": key},
                          follow=True)
    browser.post(reverse("desk:note", args=[conversation.pk]), {"text": "n", "form_key": key})
    assert Message.objects.filter(author="agent", text="Hola").count() == 1
    assert events_of(conversation).count("note") == 1
    assert second.status_code == 200
    again = browser.post(reverse("desk:reply", args=[conversation.pk]), {"text": "Hola", "form_key": key},
                         follow=True).content.decode()
    assert "This reply was sent already." in again
    # A new form (a new key) is a new reply.
    fresh = browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    new_key = fresh.split('name="form_key" value="')[1].split('"')[0]
    assert new_key != key
    browser.post(reverse("desk:reply", args=[conversation.pk]), {"text": "Hola", "form_key": new_key})
    assert Message.objects.filter(author="agent", text="Hola").count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "data", "kind", "said"), [
    ("take_over", {}, "taken_over", "You already have this conversation."),
    ("resolve", {}, "resolved", "This conversation is already resolved."),
    ("hand_back", {}, "handed_back", "The bot already answers this conversation."),
    ("assign", "carl", "assigned", "carl already has this conversation."),
])
def test_a_double_clicked_button_acts_once_and_says_so(people, name, data, kind, said):
    conversation = escalated().conversation
    ana = people["holder"]
    if name != "take_over":
        services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    data = {"assignee": people["target"].pk} if data == "carl" else data
    browser = Client()
    browser.force_login(ana if name != "assign" else people["supervisor"])
    first = browser.post(reverse(f"desk:{name}", args=[conversation.pk]), data)
    second = browser.post(reverse(f"desk:{name}", args=[conversation.pk]), data, follow=True)
    assert first.status_code == 302 and second.status_code == 200
    assert said in second.content.decode()
    assert events_of(conversation).count(kind) == 1


@pytest.mark.django_db
def test_a_double_clicked_verified_wrong_is_one_verdict(people):
    conversation = _given("held_by_a", people)
    answer = bot_says(conversation, "Su saldo es 99,00 USD")
    browser = Client()
    browser.force_login(people["holder"])
    path = reverse("desk:mark_wrong", args=[conversation.pk, answer.pk])
    browser.post(path, {"reason": "El saldo es 40,60"})
    page = browser.post(path, {"reason": "otra cosa"}, follow=True).content.decode()
    assert "ana marked this answer verified wrong already." in page
    answer.refresh_from_db()
    assert answer.verified_wrong_reason == "El saldo es 40,60"
    assert events_of(conversation).count("verified_wrong") == 1


# Error pages keep the navigation and a way back, for every role -----------------------------------

ERROR_ROLES = {"agent": "Desk", "supervisor": "Credit notes", "analyst": "Traces", "kb_editor": "Knowledge base"}


@pytest.mark.django_db
@pytest.mark.parametrize("role", ERROR_ROLES)
def test_desk_error_pages_keep_the_navigation_and_a_way_back(make_staff, settings, role):
    settings.DEBUG = False
    conversation = escalated().conversation
    browser = Client(raise_request_exception=False)
    browser.force_login(make_staff(f"err-{role}", role))
    referer = {"HTTP_REFERER": f"http://testserver{reverse('desk:conversation', args=[conversation.pk])}"}
    missing = browser.get(reverse("desk:conversation", args=[999999]), **referer)
    action = browser.post(reverse("desk:resolve", args=[conversation.pk]), **referer)
    expected_action = 302 if role in ("agent", "supervisor") else 403
    assert missing.status_code == (404 if role != "kb_editor" else 403)
    assert action.status_code == expected_action
    for response in (missing, action) if expected_action == 403 else (missing,):
        html = response.content.decode()
        assert '<header class="topbar">' in html and f">{ERROR_ROLES[role]}</a>" in html
        assert '<a href="/">Start page</a>' in html
        assert 'rel="prev"' in html  # back to where the person came from
