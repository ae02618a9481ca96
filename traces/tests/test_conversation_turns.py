"""A conversation's turns together: the conversation view in the trace browser, the turn before on a trace page,
and a reply that repeats the previous reply word for word flagged."""

import datetime as dt
import re

import pytest
from django.urls import reverse

from core import clock
from desk.models import Contact, Conversation, Message
from traces.conversation import same_words, turn_rows
from traces.models import Trace


@pytest.mark.parametrize("reply, previous, repeats", [
    ("La reconexión cuesta Bs. 350,00.", "La reconexión cuesta Bs. 350,00.", True),
    ("La reconexión  cuesta\nBs. 350,00.", "La reconexión cuesta Bs. 350,00.", True),  # spacing aside
    ("La reconexión cuesta Bs. 350,00.", "La reconexión cuesta Bs. 406,00.", False),
    ("", "", False),
])
def test_a_repeat_is_the_same_words(reply, previous, repeats):
    assert same_words(reply, previous) is repeats


def test_a_turn_without_a_reply_does_not_break_the_comparison_with_the_reply_before():
    rows = turn_rows([(1, "q1", "Cuesta 3.", "document", "answered", ""),
                      (2, "q2", "", "human", "escalated", "USER_REQUEST"),
                      (3, "q3", "Cuesta 3.", "document", "answered", "")])
    assert [r.repeats_previous for r in rows] == [False, False, True]
    assert [r.number for r in rows] == [1, 2, 3]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def conversation(db):
    contact = Contact.objects.create(channel="webchat", name="Marisol", customer_id="C-1001", language="es")
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    start = clock.now() - dt.timedelta(hours=1)
    turns = [("¿cuánto cuesta la reconexión?", "La reconexión cuesta Bs. 350,00.", "document", "answered", ""),
             ("¿y la de empresas?", "La reconexión cuesta Bs. 350,00.", "document", "answered", ""),
             ("quiero hablar con una persona", "", "human", "escalated", "USER_REQUEST")]
    made = []
    for n, (said, reply, route, outcome, reason) in enumerate(turns):
        message = Message.objects.create(conversation=conversation, direction="in", author="customer", text=said)
        trace = Trace.objects.create(conversation=conversation, message=message, channel="webchat", query=said,
                                     final_text=reply, route=route, outcome=outcome, escalation_reason=reason)
        Trace.objects.filter(pk=trace.pk).update(created_at=start + dt.timedelta(minutes=n))
        made.append(trace)
    conversation.turns = made
    return conversation


def test_the_conversation_view_lists_every_turn_in_order_with_links(client, make_staff, conversation):
    client.force_login(make_staff("ana", "analyst"))
    html = client.get(reverse("traces:conversation", args=[conversation.pk])).content.decode()
    first, second, third = conversation.turns
    page = _text(html)
    assert page.index("Turn 1") < page.index("Turn 2") < page.index("Turn 3")
    assert "Customer: ¿cuánto cuesta la reconexión? Bot: La reconexión cuesta Bs. 350,00." in page
    assert "Escalated" in page and "handed to a person" in page
    for trace in conversation.turns:
        assert f'href="{reverse("traces:detail", args=[trace.pk])}"' in html
    assert page.count("This reply repeats the previous reply word for word.") == 1
    assert f'id="turn-{second.pk}"' in html and "1 repeated reply" in page


def test_a_trace_page_shows_the_turn_before_and_flags_a_repeated_reply(client, make_staff, conversation):
    client.force_login(make_staff("ana", "analyst"))
    first, second, third = conversation.turns
    html = client.get(reverse("traces:detail", args=[second.pk])).content.decode()
    before = _text(html.split('id="previous-turn"')[1].split('id="conversation-context"')[0])
    assert f"Trace {first.pk}" in before and "Customer: ¿cuánto cuesta la reconexión?" in before
    assert "This turn's reply repeats the previous reply word for word." in before
    assert f'href="{reverse("traces:detail", args=[first.pk])}"' in html
    assert f'href="{reverse("traces:conversation", args=[conversation.pk])}"' in html
    opening = _text(client.get(reverse("traces:detail", args=[first.pk])).content.decode())
    assert "This is the conversation's first turn." in opening and "repeats the previous reply" not in opening
    escalated = _text(client.get(reverse("traces:detail", args=[third.pk])).content.decode())
    assert "repeats the previous reply" not in escalated


def test_the_conversation_view_needs_trace_access(client, make_staff, conversation):
    client.force_login(make_staff("kb", "kb_editor"))
    assert client.get(reverse("traces:conversation", args=[conversation.pk])).status_code == 403
    client.force_login(make_staff("ana", "analyst"))
    assert client.get(reverse("traces:conversation", args=[999_999])).status_code == 404
