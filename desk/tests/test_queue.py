"""The escalation queue: filters, search, keyset pages, counts per reason, waiting colours, query count."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from core import clock
from desk import services
from desk.models import Channel, Escalation
from desk.selectors import QueueCursor, QueueFilters, escalation_counts, escalation_queue, wait_level
from tests.support.factories import customer_says, escalated

pytestmark = pytest.mark.django_db
QUEUE = "/desk/"
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def agent(client, make_staff):
    user = make_staff("ana", "agent")
    client.force_login(user)
    return user


def names(queryset):
    return [e.conversation.contact.name for e in queryset]


def customers(page: str) -> list[str]:
    """Return the customer names of the queue rows, top to bottom."""
    return re.findall(r'class="customer">([^<]*)</a>', page)


def many(n, *, start=None, **kwargs):
    """n escalations, one minute apart, the newest first in the queue (named c0 = oldest)."""
    start = start or clock.now() - timedelta(hours=2)
    return [escalated(name=f"c{i}", created_at=start + timedelta(minutes=i), **kwargs) for i in range(n)]


# The selector ----------------------------------------------------------------------------------

def test_open_and_taken_escalations_longest_waiting_first_with_the_customers_last_message(make_staff):
    ana = make_staff("ana", "agent")
    old, taken, new = many(3)
    resolved = escalated(name="done")
    services.conversation_resolve(conversation_id=resolved.conversation_id, agent=ana)
    services.conversation_take_over(conversation_id=taken.conversation_id, agent=ana)
    customer_says(new.conversation, "¿siguen ahí?")
    rows = list(escalation_queue(agent=ana, filters=QueueFilters()))
    assert names(rows) == ["c0", "c1", "c2"]
    assert [r.status for r in rows] == ["open", "taken", "open"]
    assert rows[2].last_customer_text == "¿siguen ahí?" and rows[0].last_customer_text == (
        "quiero hablar con una persona")


def test_newest_first_on_request(make_staff):
    many(3)
    rows = escalation_queue(agent=make_staff("ana", "agent"), filters=QueueFilters(oldest_first=False))
    assert names(rows) == ["c2", "c1", "c0"]


@pytest.mark.parametrize("oldest_first", [False, True])
def test_keyset_pages_cover_every_row_once_even_with_equal_timestamps(make_staff, oldest_first):
    ana = make_staff("ana", "agent")
    same_instant = clock.now() - timedelta(minutes=30)
    for i in range(7):
        escalated(name=f"s{i}", created_at=same_instant)
    many(5)
    filters = QueueFilters(oldest_first=oldest_first)
    seen, after = [], None
    while True:
        page = list(escalation_queue(agent=ana, filters=filters, after=after, limit=3))
        if not page:
            break
        seen += [e.pk for e in page]
        after = QueueCursor.decode(QueueCursor.of(page[-1]).encode())  # through the URL and back
    everything = list(escalation_queue(agent=ana, filters=filters, limit=None).values_list("pk", flat=True))
    assert seen == everything and len(set(seen)) == 12


def test_a_malformed_cursor_means_the_first_page():
    assert QueueCursor.decode("not-a-cursor") is None and QueueCursor.decode(None) is None
    assert QueueCursor.decode("1.2; DROP TABLE") is None


@pytest.mark.parametrize("filters, expected", [
    (QueueFilters(reason="NO_CONTEXT"), ["nc"]),
    (QueueFilters(view="mine"), ["mine"]),
    (QueueFilters(view="unassigned"), ["old", "nc", "wa-en"]),
    (QueueFilters(channel="whatsapp"), ["wa-en"]),
    (QueueFilters(language="en"), ["wa-en"]),
    (QueueFilters(waiting_over_minutes=60), ["old"]),
    (QueueFilters(search="MARISOL"), ["Marisol Rojas"]),
    (QueueFilters(search="+58 412-555 0101"), ["wa-en"]),
    (QueueFilters(search="C-2002"), ["nc"]),
    (QueueFilters(reason="NO_CONTEXT", language="en"), []),
])
def test_filters_and_search(make_staff, filters, expected):
    ana, bob = make_staff("ana", "agent"), make_staff("bob", "agent")
    now = clock.now()
    escalated(name="old", created_at=now - timedelta(minutes=90))
    escalated(name="nc", reason="NO_CONTEXT", customer_id="C-2002", created_at=now - timedelta(minutes=10))
    escalated(name="wa-en", channel=Channel.WHATSAPP, wa_id="584125550101", language="en",
              created_at=now - timedelta(minutes=5))
    mine = escalated(name="mine", created_at=now - timedelta(minutes=3))
    theirs = escalated(name="Marisol Rojas", created_at=now - timedelta(minutes=2))
    services.conversation_take_over(conversation_id=mine.conversation_id, agent=ana)
    services.conversation_take_over(conversation_id=theirs.conversation_id, agent=bob)
    rows = escalation_queue(agent=ana, filters=filters, now=now)
    assert names(rows) == expected


def test_counts_per_reason_in_one_query(make_staff, django_assert_num_queries):
    ana = make_staff("ana", "agent")
    many(2, reason="USER_REQUEST")
    taken = escalated(reason="NO_CONTEXT")
    escalated(reason="NO_CONTEXT")
    escalated(reason="TOOL_ERROR")
    services.conversation_take_over(conversation_id=taken.conversation_id, agent=ana)
    with django_assert_num_queries(1):
        counts = escalation_counts()
    assert counts == [
        {"reason": "NO_CONTEXT", "open": 1, "taken": 1, "total": 2},
        {"reason": "USER_REQUEST", "open": 2, "taken": 0, "total": 2},
        {"reason": "TOOL_ERROR", "open": 1, "taken": 0, "total": 1},
    ]


@pytest.mark.parametrize("minutes, level", [(0, ""), (4.9, ""), (5, "amber"), (14, "amber"), (15, "red"),
                                            (600, "red")])
def test_waiting_turns_amber_then_red(minutes, level):
    assert wait_level(timedelta(minutes=minutes), amber_minutes=5, red_minutes=15) == level


# The page --------------------------------------------------------------------------------------

def test_the_page_shows_counts_reason_summary_last_message_waiting_and_assignee(client, agent, settings):
    settings.DESK_WAIT_AMBER_MINUTES, settings.DESK_WAIT_RED_MINUTES = 2, 20
    now = clock.now()
    escalated(name="Pedro", reason="TOOL_ERROR", text="¿y mi factura?",
              created_at=now - timedelta(minutes=25))
    escalated(name="Lucía", created_at=now - timedelta(minutes=3))
    taken = escalated(name="Ana María", created_at=now - timedelta(minutes=1))
    services.conversation_take_over(conversation_id=taken.conversation_id, agent=agent)
    page = client.get(QUEUE).content.decode()
    assert "All <strong>3</strong>" in page
    assert '<span class="badge reason reason-tool-error" title="TOOL_ERROR">Billing system down</span> ' \
           '<strong>1</strong>' in page
    assert 'title="USER_REQUEST">Customer asked for a person</span> <strong>2</strong> <small>(1 taken)</small>' in page
    assert "Summary for TOOL_ERROR." in page and "¿y mi factura?" in page
    assert 'class="wait red"' in page and 'class="wait amber"' in page
    assert "Assigned to me" in page and "unassigned" in page
    assert customers(page) == ["Pedro", "Lucía", "Ana María"]  # the longest waiting first
    assert 'hx-trigger="every 5s"' in page and "amber after 2 min and red after 20 min" in page


def test_the_polled_rows_partial_shows_new_escalations_and_who_took_them(client, agent, make_staff):
    escalated(name="first")
    rows = client.get(QUEUE, **HTMX)
    body = rows.content.decode()
    assert body.lstrip().startswith('<div id="rows"') and "<html" not in body
    assert '<nav id="reason-counts" class="reason-counts" aria-label="Escalations per reason" ' \
           'hx-swap-oob="true">' in body
    bob = make_staff("bob", "agent")
    new = escalated(name="second")
    services.conversation_take_over(conversation_id=new.conversation_id, agent=bob)
    body = client.get(QUEUE, **HTMX).content.decode()
    assert "second" in body and "Assigned to bob" in body


def test_filters_from_the_get_form_and_the_older_link(client, agent, settings, monkeypatch):
    monkeypatch.setattr("desk.views.inbox.QUEUE_PAGE_SIZE", 2)
    many(3, reason="NO_CONTEXT")
    escalated(name="other reason")
    page = client.get(QUEUE, {"reason": "NO_CONTEXT"}).content.decode()
    # Customer names are read from their cells: a bare "c1" also turns up in random tokens on the page.
    assert customers(page) == ["c0", "c1"]
    older = page.split('class="older"')[0].rsplit('href="', 1)[1].split('"')[0].replace("&amp;", "&")
    assert "reason=NO_CONTEXT" in older and "after=" in older
    page = client.get(QUEUE + older).content.decode()
    assert customers(page) == ["c2"] and 'class="older"' not in page and "← First page" in page


def test_an_invalid_filter_is_ignored_not_an_error(client, agent):
    escalated(name="still here")
    response = client.get(QUEUE, {"waiting": "abc", "reason": "NOPE", "assignee": "x", "after": "zzz",
                                  "view": "everything", "resolved_from": "2026-13-01"})
    page = response.content.decode()
    assert response.status_code == 200 and customers(page) == ["still here"]
    assert "Waiting over (min): Enter a whole number. It was ignored." in page
    assert "Resolved from: Enter a valid date. It was ignored." in page


def _queries_for_page(client, **headers):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(QUEUE, **headers)
    assert response.status_code == 200
    return len(queries)


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "polled-rows"])
def test_the_queue_runs_the_same_number_of_queries_for_3_and_30_escalations(client, agent, make_staff,
                                                                          django_assert_num_queries, headers):
    bob = make_staff("bob", "agent")
    for escalation in many(3):
        customer_says(escalation.conversation, "otra vez yo")
    few = _queries_for_page(client, **headers)
    for i, escalation in enumerate(many(27, reason="NO_CONTEXT")):
        if i % 3 == 0:
            services.conversation_take_over(conversation_id=escalation.conversation_id, agent=bob)
    with django_assert_num_queries(few):
        response = client.get(QUEUE, **headers)
    assert response.content.decode().count('class="escalation ') == 30
    # session, user, the user's own and group permissions, the reason counts, the view counts, the rows — and
    # nothing per row; the page's header adds the agent's status and their open notifications, the poll does not
    assert few == (7 if headers else 9)


def test_the_queue_is_for_agents_and_supervisors(client, make_staff):
    client.force_login(make_staff("luis", "analyst"))
    assert client.get(QUEUE).status_code == 403
    assert client.get(QUEUE, **HTMX).status_code == 403
    assert Escalation.objects.count() == 0
    assert reverse("desk:queue") == QUEUE
