"""The dashboard's satisfaction card: the customers' answers per agent, per escalation reason and per day, with
rates and counts, and the same numbers in the CSV."""

import csv
import datetime as dt
import io

import pytest
from django.urls import reverse

from core import clock
from desk.models import Channel, Contact, Conversation, Satisfaction

pytestmark = pytest.mark.django_db

NOW = dt.datetime(2026, 11, 20, 19, 30, tzinfo=dt.UTC)


def asked(*, agent, reason, answer, days_ago=0):
    contact = Contact.objects.create(channel=Channel.WHATSAPP, wa_id=f"58412{Contact.objects.count():07d}")
    conversation = Conversation.objects.create(contact=contact, channel=Channel.WHATSAPP, status="resolved")
    satisfaction = Satisfaction.objects.create(conversation=conversation, agent=agent, reason=reason, answer=answer)
    Satisfaction.objects.filter(pk=satisfaction.pk).update(asked_at=NOW - dt.timedelta(days=days_ago, hours=1))


def test_satisfaction_per_agent_reason_and_day_beside_the_dial(client, make_staff):
    with clock.pinned(NOW, frozen=True):
        ana, beto = make_staff("ana", "agent"), make_staff("beto", "agent")
        asked(agent=ana, reason="USER_REQUEST", answer="good")
        asked(agent=ana, reason="USER_REQUEST", answer="bad", days_ago=1)
        asked(agent=ana, reason="NO_CONTEXT", answer="")
        asked(agent=beto, reason="TOOL_ERROR", answer="good")
        client.force_login(make_staff("sol", "supervisor"))
        html = client.get("/dashboard/?range=7d").content.decode()
        rows = list(csv.reader(io.StringIO(client.get(reverse("dashboard:csv") + "?range=7d").content.decode())))
    card = html[html.index('id="satisfaction"'):html.index('id="reasons"')]
    assert html.index('id="dial"') < html.index('id="satisfaction"')
    assert "Asked <strong>4</strong> · answered 75% (3 of 4) · Good <strong>67% (2 of 3)</strong>" in card
    assert ('<td data-label="Agent">ana</td><td data-label="Asked" class="num">3</td><td data-label="Answered" '
            'class="num">67% (2 of 3)</td><td data-label="Good" class="num">50% (1 of 2)</td>') in card
    assert "Customer asked for a person" in card  # reasons by their label, not their code
    assert "USER_REQUEST" not in card
    assert "Good on 2026-11-19: 0 of 1</title>" in card and "Bad on 2026-11-19: 1 of 1</title>" in card
    assert ["satisfaction", "agent:" + str(beto.pk), "good", "1"] in rows


def test_an_agent_sees_only_their_own_answers(client, make_staff):
    with clock.pinned(NOW, frozen=True):
        ana, beto = make_staff("ana", "agent"), make_staff("beto", "agent")
        asked(agent=ana, reason="USER_REQUEST", answer="good")
        asked(agent=beto, reason="USER_REQUEST", answer="bad")
        client.force_login(ana)
        html = client.get("/dashboard/?range=7d").content.decode()
    card = html[html.index('id="satisfaction"'):]
    assert "Asked <strong>1</strong>" in card and "beto" not in card
