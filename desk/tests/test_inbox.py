"""The inbox: its views (all open, unassigned, mine, waiting on the customer, resolved between dates), message
search (accents, Spanish and English word forms), customer search, a contact's history, and a constant number
of queries at 10 and 1,000 conversations."""

import re
from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core import clock
from desk import services
from desk.models import Channel, Contact, Conversation, Escalation, Message
from desk.selectors import (
    QueueCursor,
    QueueFilters,
    contact_conversations,
    escalation_queue,
    message_search,
    view_counts,
)
from tests.support.factories import bot_says, conversation_start, customer_says, escalated

pytestmark = pytest.mark.django_db
QUEUE, SEARCH = "/desk/", "/desk/search/"


def names(rows):
    return [e.conversation.contact.name for e in rows]


def customers(page: str) -> list[str]:
    return re.findall(r'class="customer">([^<]*)</a>', page)


@pytest.fixture
def desk_day(make_staff):
    """ana holds one she answered (waiting on the customer) and one the customer answered; bob holds one;
    two nobody holds; two resolved on different days."""
    ana, bob = make_staff("ana", "agent"), make_staff("bob", "agent")
    now = clock.now()
    made = {name: escalated(name=name, created_at=now - timedelta(minutes=minutes))
            for name, minutes in [("answered", 50), ("customer-last", 40), ("bobs", 30), ("free-old", 20),
                                  ("free-new", 10), ("done-early", 60), ("done-late", 55)]}
    for name in ("answered", "customer-last"):
        services.conversation_take_over(conversation_id=made[name].conversation_id, agent=ana)
        services.agent_reply_send(conversation_id=made[name].conversation_id, agent=ana, text="Ya lo reviso.")
    customer_says(made["customer-last"].conversation, "¿y entonces?")
    services.conversation_take_over(conversation_id=made["bobs"].conversation_id, agent=bob)
    for name, day in [("done-early", date(2026, 3, 2)), ("done-late", date(2026, 3, 9))]:
        services.conversation_take_over(conversation_id=made[name].conversation_id, agent=bob)
        services.conversation_resolve(conversation_id=made[name].conversation_id, agent=bob)
        resolved_at = timezone.make_aware(timezone.datetime.combine(day, timezone.datetime.min.time()))
        Escalation.objects.filter(pk=made[name].pk).update(resolved_at=resolved_at + timedelta(hours=12))
    return ana, bob


@pytest.mark.parametrize("filters, expected", [
    (QueueFilters(), ["answered", "customer-last", "bobs", "free-old", "free-new"]),
    (QueueFilters(view="unassigned"), ["free-old", "free-new"]),
    (QueueFilters(view="mine"), ["answered", "customer-last"]),
    (QueueFilters(view="waiting"), ["answered"]),
    (QueueFilters(view="resolved"), ["done-late", "done-early"]),
    (QueueFilters(view="resolved", resolved_since=date(2026, 3, 5)), ["done-late"]),
    (QueueFilters(view="resolved", resolved_until=date(2026, 3, 2)), ["done-early"]),
    (QueueFilters(view="resolved", resolved_since=date(2026, 3, 3), resolved_until=date(2026, 3, 8)), []),
])
def test_each_view_lists_what_its_name_says(desk_day, filters, expected):
    ana, _ = desk_day
    assert names(escalation_queue(agent=ana, filters=filters)) == expected


def test_the_view_counts_match_the_views(desk_day):
    ana, bob = desk_day
    assert view_counts(agent=ana) == {"open": 5, "unassigned": 2, "mine": 2, "waiting": 1}
    assert view_counts(agent=bob)["mine"] == 1


def test_resolved_pages_cover_every_row_once(make_staff):
    ana = make_staff("ana", "agent")
    at = clock.now() - timedelta(days=1)
    for i in range(7):
        e = escalated(name=f"r{i}")
        services.conversation_resolve(conversation_id=e.conversation_id, agent=ana)
        Escalation.objects.filter(pk=e.pk).update(resolved_at=at + timedelta(minutes=i % 3))  # ties
    filters, seen, after = QueueFilters(view="resolved"), [], None
    while page := list(escalation_queue(agent=ana, filters=filters, after=after, limit=3)):
        seen += [e.pk for e in page]
        after = QueueCursor.decode(QueueCursor.of(page[-1], filters.order_field).encode())
    everything = list(escalation_queue(agent=ana, filters=filters, limit=None).values_list("pk", flat=True))
    assert seen == everything and len(set(seen)) == 7


def test_the_page_shows_the_views_with_counts_and_the_resolved_view_with_dates(client, desk_day):
    ana, _ = desk_day
    client.force_login(ana)
    page = client.get(QUEUE).content.decode()
    assert re.search(r'Unassigned <strong class="view-count" id="count-unassigned">2</strong>', page)
    assert re.search(r'Waiting on the customer <strong class="view-count" id="count-waiting">1</strong>', page)
    page = client.get(QUEUE, {"view": "waiting"}).content.decode()
    assert customers(page) == ["answered"]
    page = client.get(QUEUE, {"view": "resolved", "resolved_from": "2026-03-05"}).content.decode()
    assert customers(page) == ["done-late"] and "Resolved from" in page and "2026-03-09 12:00" in page
    assert "Handled by" in page


def test_a_date_range_the_wrong_way_round_is_said_and_ignored(client, desk_day):
    client.force_login(desk_day[0])
    page = client.get(QUEUE, {"view": "resolved", "resolved_from": "2026-03-09",
                              "resolved_to": "2026-03-01"}).content.decode()
    assert "The end date is before the start date. It was ignored." in page
    assert customers(page) == ["done-late"]  # the start date is valid and kept; only the end was refused


# Message search ----------------------------------------------------------------------------------

@pytest.fixture
def said():
    conversation = conversation_start(name="Marisol Rojas")
    lines = {
        "accent": customer_says(conversation, "¿Cuánto cuesta la reconexión del servicio?"),
        "plural": customer_says(conversation, "Me llegaron dos facturas este mes"),
        "english": bot_says(conversation, "The late charges were removed from your invoice."),
        "phrase": customer_says(conversation, "me hicieron un cobro doble en octubre"),
        "apart": customer_says(conversation, "el doble de lo normal, y otro cobro"),
    }
    return conversation, lines


@pytest.mark.parametrize("typed, found", [
    ("reconexion", ["accent"]),            # typed without the accent
    ("RECONEXIÓN", ["accent"]),            # any case, with it
    ("factura", ["plural"]),               # Spanish word forms
    ("charge", ["english"]),               # English word forms
    ('"cobro doble"', ["phrase"]),         # a phrase, not the two words apart
    ("cobro doble", ["apart", "phrase"]),  # both words, anywhere, newest first
    ("cobro -octubre", ["apart"]),         # a word left out
    ("zzzz", []),
])
def test_message_search_folds_accents_and_word_forms(said, typed, found):
    _, lines = said
    hits, _ = message_search(text=typed)
    assert [h.pk for h in hits] == [lines[name].pk for name in found]


def test_message_search_pages_by_keyset(said):
    conversation, _ = said
    for i in range(5):
        customer_says(conversation, f"consulta de factura número {i}")
    seen, after = [], ""
    while True:
        hits, after = message_search(text="factura", after=after, size=2)
        seen += [h.pk for h in hits]
        if not after:
            break
    assert len(seen) == len(set(seen)) == 6
    assert seen == sorted(seen, reverse=True)  # newest first


def test_the_search_page_finds_messages_and_customers(client, make_staff, said):
    conversation, lines = said
    client.force_login(make_staff("ana", "agent"))
    page = client.get(SEARCH, {"q": "reconexion"}).content.decode()
    assert f'id="hit-{lines["accent"].pk}"' in page and f"conversation {conversation.pk}" in page
    page = client.get(SEARCH, {"q": "marisol"}).content.decode()
    assert 'id="contact-results"' in page and "Marisol Rojas" in page and "1 conversation" in page
    page = client.get(SEARCH, {"q": "C-1001"}).content.decode()
    assert "Marisol Rojas" in page  # by billing customer id


@pytest.mark.parametrize("query", [{"q": "x" * 201}, {"q": "\x00"}, {"q": "a", "after": "garbage"},
                                   {"q": "'\"():*&|!"}, {"q": "-"}])
def test_odd_searches_get_a_clear_answer_never_a_500(client, make_staff, said, query):
    client.force_login(make_staff("ana", "agent"))
    response = client.get(SEARCH, query)
    assert response.status_code in (200, 400)
    assert "Search messages and customers" in response.content.decode()


def test_search_and_history_are_for_people_who_read_conversations(client, make_staff, said):
    conversation, _ = said
    client.force_login(make_staff("kim", "kb_editor"))
    assert client.get(SEARCH, {"q": "factura"}).status_code == 403
    assert client.get(f"/desk/contacts/{conversation.contact_id}/").status_code == 403
    client.force_login(make_staff("luis", "analyst"))
    assert client.get(SEARCH, {"q": "factura"}).status_code == 200
    assert client.get("/desk/contacts/999999/").status_code == 404


# A contact's history -----------------------------------------------------------------------------

def test_a_contact_page_lists_every_conversation_with_its_escalations(client, make_staff):
    ana = make_staff("ana", "agent")
    first = escalated(name="Pedro", reason="TOOL_ERROR")
    services.conversation_resolve(conversation_id=first.conversation_id, agent=ana)
    contact = first.conversation.contact
    second = Conversation.objects.create(contact=contact, channel=contact.channel)
    customer_says(second, "hola otra vez")
    client.force_login(ana)
    page = client.get(f"/desk/contacts/{contact.pk}/").content.decode()
    assert "2 conversations" in page
    assert page.index(f"conversation-{second.pk}") < page.index(f"conversation-{first.conversation_id}")
    assert "Billing system down" in page and "resolved" in page
    conversation_page = client.get(f"/desk/conversations/{second.pk}/").content.decode()
    assert f'href="/desk/contacts/{contact.pk}/" id="contact-history"' in conversation_page


# Constant queries --------------------------------------------------------------------------------

def _bulk(n: int, agent, *, start: int = 0) -> None:
    """n escalated conversations, a third held by `agent` (half of those answered by them), a sixth resolved."""
    now = clock.now()
    contacts = Contact.objects.bulk_create(
        [Contact(channel=Channel.WHATSAPP, wa_id=f"58412{start + i:07d}", name=f"bulk {i}") for i in range(n)])
    held = [i % 3 == 0 for i in range(n)]
    conversations = Conversation.objects.bulk_create(
        [Conversation(contact=c, channel=Channel.WHATSAPP, handler="human" if held[i] else "bot",
                      assignee=agent if held[i] else None) for i, c in enumerate(contacts)])
    messages = []
    for i, conversation in enumerate(conversations):
        messages.append(Message(conversation=conversation, direction="in", author="customer",
                                text=f"factura número {i} con cobro doble"))
        if held[i] and i % 2:
            messages.append(Message(conversation=conversation, direction="out", author="agent", agent=agent,
                                    text="lo reviso"))
    Message.objects.bulk_create(messages)
    Escalation.objects.bulk_create(
        [Escalation(conversation=c, reason="NO_CONTEXT", summary="s",
                    status="resolved" if i % 6 == 5 else ("taken" if held[i] else "open"),
                    resolved_at=now if i % 6 == 5 else None) for i, c in enumerate(conversations)])


def _count(client, path, params) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, params)
    assert response.status_code == 200
    return len(queries)


INBOX_PAGES = [
    (QUEUE, {}), (QUEUE, {"view": "unassigned"}), (QUEUE, {"view": "mine"}), (QUEUE, {"view": "waiting"}),
    (QUEUE, {"view": "resolved"}), (SEARCH, {"q": "factura"}), (SEARCH, {"q": "bulk"}),
]


def test_the_inbox_runs_as_many_queries_for_1000_conversations_as_for_10(client, make_staff):
    ana = make_staff("ana", "agent")
    client.force_login(ana)
    _bulk(10, ana)
    few = [_count(client, path, params) for path, params in INBOX_PAGES]
    _bulk(990, ana, start=10)
    assert [_count(client, path, params) for path, params in INBOX_PAGES] == few


def test_a_contact_history_is_three_queries_whatever_its_length(django_assert_num_queries):
    contact = conversation_start(name="many").contact
    for _ in range(12):
        customer_says(Conversation.objects.create(contact=contact, channel=contact.channel), "hola")
    with django_assert_num_queries(2):  # conversations with counts, then their escalations
        conversations = contact_conversations(contact=contact)
        assert len(conversations) == 13 and all(not c.escalations.all() for c in conversations)
