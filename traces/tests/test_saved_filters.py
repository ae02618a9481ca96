"""Saved filters on the trace browser: each analyst saves, applies and deletes their own; odd input never 500s."""

import re
import uuid
from html import unescape

import pytest
from django.urls import reverse

from traces.models import SavedFilter
from traces.tests.test_trace_browser import make_trace

pytestmark = pytest.mark.django_db


def unique(prefix="ana"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


@pytest.fixture
def analyst(client, make_staff):
    user = make_staff(unique(), "analyst")
    client.force_login(user)
    return user


def test_an_analyst_saves_the_current_filters_and_applying_them_lists_the_same_traces(client, analyst):
    escalated = make_trace(outcome="escalated", escalation_reason="NO_CONTEXT", query="¿capital de Francia?")
    make_trace(outcome="answered", query="cuanto cuesta")
    listed = client.get(reverse("traces:list"), {"outcome": "escalated", "after": "junk", "bogus": "1"})
    page = listed.content.decode()
    assert 'name="query" value="outcome=escalated"' in page  # paging and unknown keys are not part of it

    saved = client.post(reverse("traces:saved_filter_save"), {"name": "  Escalated  turns ", "query":
                                                              "outcome=escalated&bogus=1&after=x"})
    stored = SavedFilter.objects.get(user=analyst)
    assert (stored.name, stored.query) == ("Escalated turns", "outcome=escalated")
    assert saved.status_code == 302 and saved["Location"] == f"{reverse('traces:list')}?outcome=escalated"

    page = client.get(reverse("traces:list")).content.decode()
    link = f'href="{reverse("traces:list")}?outcome=escalated">Escalated turns</a>'
    assert link in page
    applied = client.get(f"{reverse('traces:list')}?{stored.query}").content.decode()
    assert f'name="trace" value="{escalated.pk}"' in applied and "1 trace matches." in text(applied)

    again = client.post(reverse("traces:saved_filter_save"), {"name": "Escalated turns", "query": "outcome=escalated"},
                        follow=True)  # a double click
    assert "already holds these filters" in text(again.content.decode())
    replaced = client.post(reverse("traces:saved_filter_save"),
                           {"name": "Escalated turns", "query": "outcome=escalated&channel=whatsapp"}, follow=True)
    assert "now holds these filters" in text(replaced.content.decode())
    assert SavedFilter.objects.get(user=analyst).query == "outcome=escalated&channel=whatsapp"


@pytest.mark.parametrize("name, query, message", [
    ("", "outcome=escalated", "Give the filter a name."),
    ("x" * 81, "outcome=escalated", "The name is longer than 80 characters."),
    ("bad\x00name", "outcome=escalated", "The name contains a NUL character"),
    ("all", "", "Choose at least one filter before saving"),
    ("all", "bogus=1&after=2", "Choose at least one filter before saving"),
    ("dates", "since=2026-13-45", "Fix the filters before saving them"),
    ("long", "text=" + "a" * 3000, "The filters are longer than 2,000 characters."),
])
def test_a_bad_name_or_filter_is_refused_with_the_reason(client, analyst, name, query, message):
    response = client.post(reverse("traces:saved_filter_save"), {"name": name, "query": query}, follow=True)
    assert response.status_code == 200
    assert message in text(response.content.decode())
    assert not SavedFilter.objects.filter(user=analyst).exists()


def test_another_users_saved_filters_are_neither_listed_nor_deletable(client, analyst, make_staff):
    other = make_staff(unique("bea"), "analyst")
    theirs = SavedFilter.objects.create(user=other, name="Bea's secret view", query="outcome=answered")
    mine = SavedFilter.objects.create(user=analyst, name="Mine", query="outcome=escalated")
    page = client.get(reverse("traces:list")).content.decode()
    assert "Mine" in page and "Bea's secret view" not in unescape(page)

    forged = client.post(reverse("traces:saved_filter_delete", args=[theirs.pk]), follow=True)
    assert forged.status_code == 200 and "not in your list" in text(forged.content.decode())
    assert SavedFilter.objects.filter(pk=theirs.pk).exists()

    deleted = client.post(reverse("traces:saved_filter_delete", args=[mine.pk]), follow=True)
    assert "Filter “Mine” deleted." in text(deleted.content.decode())
    twice = client.post(reverse("traces:saved_filter_delete", args=[mine.pk]), follow=True)  # a double click
    assert twice.status_code == 200 and "not in your list" in text(twice.content.decode())
    # The same name is each user's own.
    client.post(reverse("traces:saved_filter_save"), {"name": "Bea's secret view", "query": "outcome=answered"})
    assert SavedFilter.objects.filter(name="Bea's secret view").count() == 2


def test_saving_needs_a_post_and_a_user_who_may_read_traces(client, make_staff):
    client.force_login(make_staff(unique("ed"), "kb_editor"))
    assert client.post(reverse("traces:saved_filter_save"), {"name": "x", "query": "outcome=answered"}).status_code \
        == 403
    client.force_login(make_staff(unique("an"), "analyst"))
    assert client.get(reverse("traces:saved_filter_save")).status_code == 405
