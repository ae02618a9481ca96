"""Assignment by capacity: who gets a waiting escalation (pure), and the assigner on the real database.

Given agents with a status and a capacity, a new escalation goes to the available agent with the most room
(ties: who has waited longest since their last assignment); with nobody free it waits, oldest first, and
is handed out as room frees. Two assigners at once never give anyone more than their capacity.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import pytest
from django.db import connections
from django.test import Client
from django.urls import reverse

from desk import services
from desk.assignment import AgentLoad, Assignment, choose_agent, plan_assignments
from desk.capacity import agent_capacity_set, agent_status_set, escalations_assign_waiting, team_load
from desk.models import AgentProfile, Conversation, Escalation, Event
from tests.support.factories import escalated

T0 = datetime(2026, 11, 20, 9, 0)


def agent(agent_id, *, available=True, capacity=3, load=0, last=None):
    return AgentLoad(agent_id=agent_id, available=available, capacity=capacity, load=load, last_assigned_at=last)


@pytest.mark.parametrize(("team", "chosen"), [
    ([agent(1, load=2), agent(2, load=0)], 2),  # the most free capacity
    ([agent(1, capacity=5, load=2), agent(2, capacity=3, load=1)], 1),  # 3 free beats 2 free
    ([agent(1, last=T0), agent(2, last=T0 - timedelta(hours=1))], 2),  # a tie: who waited longest
    ([agent(1, last=T0), agent(2, last=None)], 2),  # never assigned waited longest
    ([agent(2), agent(1)], 1),  # nothing else tells them apart: the lower id, every time
    ([agent(1, available=False), agent(2, load=3)], None),  # away, or full: nobody
    ([agent(1, capacity=0)], None),
    ([agent(1, load=5)], None),  # over capacity (a manual take-over) is full, not negative room
    ([], None),
])
def test_who_gets_the_next_escalation(team, chosen):
    picked = choose_agent(team)
    assert (picked.agent_id if picked else None) == chosen


def test_the_plan_hands_out_oldest_first_and_stops_when_nobody_has_room():
    team = [agent(1, capacity=2, load=1), agent(2, capacity=1, load=0, last=T0)]
    plan = plan_assignments(team, [10, 11, 12, 13], now=T0)
    # 1 and 2 have one free each; 2 was assigned at T0, 1 never: 1 first, then 2; then nobody has room.
    assert plan == [Assignment(10, 1), Assignment(11, 2)]
    assert plan_assignments([agent(1, available=False)], [10], now=T0) == []


def test_the_plan_spreads_by_room_then_by_turn():
    plan = plan_assignments([agent(1, capacity=3), agent(2, capacity=3)], [10, 11, 12, 13], now=T0)
    assert [step.agent_id for step in plan] == [1, 2, 1, 2]


# On the database ---------------------------------------------------------------------------------

def available(make_staff, name, capacity=None):
    user = make_staff(name, "agent")
    agent_status_set(agent=user, status="available")
    if capacity is not None:
        AgentProfile.objects.filter(user=user).update(capacity=capacity)
    return user


@pytest.mark.django_db
def test_a_new_escalation_goes_to_the_agent_with_most_room_and_waits_when_nobody_has_any(
        make_staff, settings, django_capture_on_commit_callbacks):
    settings.DESK_AGENT_CAPACITY = 1
    ana, bob = available(make_staff, "ana"), available(make_staff, "bob", capacity=2)
    with django_capture_on_commit_callbacks(execute=True):
        first = escalated(name="first")
    assert Conversation.objects.get(pk=first.conversation_id).assignee == bob  # 2 free beats 1
    with django_capture_on_commit_callbacks(execute=True):
        second = escalated(name="second")
    # both have one free now; ana was never assigned, so she has waited longest
    assert Conversation.objects.get(pk=second.conversation_id).assignee == ana
    with django_capture_on_commit_callbacks(execute=True):
        third = escalated(name="third")
    assert Conversation.objects.get(pk=third.conversation_id).assignee == bob  # the only one with room
    with django_capture_on_commit_callbacks(execute=True):
        fourth = escalated(name="fourth")
    with django_capture_on_commit_callbacks(execute=True):
        fifth = escalated(name="fifth")
    for waiting in (fourth, fifth):  # everyone is full: they wait, unassigned
        assert Conversation.objects.get(pk=waiting.conversation_id).assignee is None
        assert Escalation.objects.get(pk=waiting.pk).status == "open"
    assert {row.user.get_username(): row.load for row in team_load()} == {"ana": 1, "bob": 2}
    automatic = Event.objects.filter(kind="assigned", detail__automatic=True)
    assert sorted(e.detail["assignee"] for e in automatic) == ["ana", "bob", "bob"]

    # ana resolves hers: the oldest waiting (fourth) is hers now, as room frees; fifth still waits
    with django_capture_on_commit_callbacks(execute=True):
        services.conversation_resolve(conversation_id=second.conversation_id, agent=ana)
    assert Conversation.objects.get(pk=fourth.conversation_id).assignee == ana
    assert Conversation.objects.get(pk=fifth.conversation_id).assignee is None
    # bob hands one back: fifth is his
    with django_capture_on_commit_callbacks(execute=True):
        services.conversation_hand_back(conversation_id=first.conversation_id, agent=bob)
    assert Conversation.objects.get(pk=fifth.conversation_id).assignee == bob


@pytest.mark.django_db
def test_waiting_escalations_go_oldest_first_when_someone_becomes_available(make_staff,
                                                                            django_capture_on_commit_callbacks):
    older, newer = escalated(name="older"), escalated(name="newer")
    Escalation.objects.filter(pk=newer.pk).update(created_at=older.created_at + timedelta(minutes=1))
    ana = make_staff("ana", "agent")
    AgentProfile.objects.create(user=ana, capacity=1)
    with django_capture_on_commit_callbacks(execute=True):
        agent_status_set(agent=ana, status="available")
    assert Conversation.objects.get(pk=older.conversation_id).assignee == ana
    assert Conversation.objects.get(pk=newer.conversation_id).assignee is None
    sol = make_staff("sol", "supervisor")
    with django_capture_on_commit_callbacks(execute=True):
        agent_capacity_set(supervisor=sol, agent=ana, capacity=2)
    assert Conversation.objects.get(pk=newer.conversation_id).assignee == ana


@pytest.mark.django_db
def test_away_agents_get_nothing_and_a_double_click_on_the_status_changes_nothing(make_staff):
    ana = make_staff("ana", "agent")
    escalated()
    assert escalations_assign_waiting() == []  # nobody said they are available
    agent_status_set(agent=ana, status="available")
    agent_status_set(agent=ana, status="available")
    assert AgentProfile.objects.filter(user=ana).count() == 1
    assert len(escalations_assign_waiting()) == 1 and escalations_assign_waiting() == []


@pytest.mark.django_db(transaction=True)
def test_two_assigners_at_once_never_give_anyone_more_than_their_capacity(make_staff):
    """Four workers run the assigner together over 12 waiting escalations; capacities 2 and 3 must hold."""
    ana, bob = make_staff("ana", "agent"), make_staff("bob", "agent")
    AgentProfile.objects.create(user=ana, capacity=2)
    AgentProfile.objects.create(user=bob, capacity=3)
    for n in range(12):
        escalated(name=f"customer {n}")  # both away: each escalation's own pass assigns nothing
    AgentProfile.objects.update(status="available")  # no pass queued: the workers below do it
    start, errors, assigned = threading.Barrier(4), [], []

    def worker():
        try:
            start.wait(timeout=30)
            for _ in range(3):
                assigned.extend(escalations_assign_waiting())
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    loads = {row.user.get_username(): row.load for row in team_load()}
    assert loads == {"ana": 2, "bob": 3}
    assert len(assigned) == 5 and len({step.conversation_id for step in assigned}) == 5
    assert Event.objects.filter(kind="assigned").count() == 5
    assert Escalation.objects.filter(status="open", conversation__assignee__isnull=True).count() == 7


def _someone_waits_on_a_lock() -> bool:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND datname = current_database()")
        return cursor.fetchone()[0] > 0


@pytest.mark.django_db(transaction=True)
def test_a_second_assigner_counts_the_loads_only_after_the_first_commits(make_staff, monkeypatch):
    """The first assigner has counted ana's load (0 of 1) and not yet assigned; a second one starts: it must
    wait for the first's commit on the agents' row locks, then count 1 of 1 and assign nothing."""
    from desk import capacity

    ana = make_staff("ana", "agent")
    AgentProfile.objects.create(user=ana, capacity=1)
    escalated(name="first"), escalated(name="second")
    AgentProfile.objects.update(status="available")
    counted, release, errors = threading.Event(), threading.Event(), []
    original = capacity._waiting_conversations

    def paused():
        if threading.current_thread().name == "first":
            counted.set()
            release.wait(timeout=30)
        return original()

    monkeypatch.setattr(capacity, "_waiting_conversations", paused)

    def run():
        try:
            escalations_assign_waiting()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    first, second = threading.Thread(target=run, name="first"), threading.Thread(target=run, name="second")
    first.start()
    assert counted.wait(timeout=30)
    second.start()
    while second.is_alive() and not _someone_waits_on_a_lock():
        pass  # until the second assigner blocks on the row locks (or, were there none, runs through)
    release.set()
    first.join(timeout=60)
    second.join(timeout=60)
    assert errors == []
    assert Conversation.objects.filter(assignee=ana).count() == 1
    assert Escalation.objects.filter(status="open", conversation__assignee__isnull=True).count() == 1


# Pages -------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_an_agent_sets_their_status_in_the_header(make_staff):
    ana = make_staff("ana", "agent")
    browser = Client()
    browser.force_login(ana)
    page = browser.get(reverse("desk:queue")).content.decode()
    assert 'id="agent-status"' in page and "Become available" in page
    answer = browser.post(reverse("desk:agent_status"), {"status": "available", "next": "/desk/"}, follow=True)
    assert "You are available." in answer.content.decode() and "Go away" in answer.content.decode()
    assert browser.post(reverse("desk:agent_status"), {"status": "napping"}).status_code == 302
    assert AgentProfile.objects.get(user=ana).status == "available"
    assert browser.post(reverse("desk:agent_status"), {"status": "away",
                                                       "next": "https://evil.example/"}).url == "/desk/"


@pytest.mark.django_db
def test_the_supervisor_sees_each_agents_load_and_reassigns(make_staff):
    ana, bob, sol = make_staff("ana", "agent"), make_staff("bob", "agent"), make_staff("sol", "supervisor")
    AgentProfile.objects.create(user=ana, status="available", capacity=2)
    held = escalated(name="Pedro")
    services.conversation_take_over(conversation_id=held.conversation_id, agent=ana)
    browser = Client()
    browser.force_login(sol)
    page = browser.get(reverse("desk:team")).content.decode()
    row = page.split(f'id="agent-{ana.pk}"')[1].split("</tr>")[0]
    assert "Available" in row and "1 of 2" in row
    assert "Away" in page.split(f'id="agent-{bob.pk}"')[1].split("</tr>")[0]
    browser.post(reverse("desk:team_reassign", args=[held.conversation_id]), {"assignee": bob.pk})
    assert Conversation.objects.get(pk=held.conversation_id).assignee == bob
    browser.post(reverse("desk:agent_capacity", args=[bob.pk]), {"capacity": "4"})
    assert AgentProfile.objects.get(user=bob).capacity == 4
    bad = browser.post(reverse("desk:agent_capacity", args=[bob.pk]), {"capacity": "9999"}, follow=True)
    assert "The capacity" in bad.content.decode() and AgentProfile.objects.get(user=bob).capacity == 4
    agent_browser = Client()
    agent_browser.force_login(ana)
    assert agent_browser.get(reverse("desk:team")).status_code == 403
    assert agent_browser.post(reverse("desk:agent_capacity", args=[ana.pk]), {"capacity": "9"}).status_code == 403


@pytest.mark.django_db
def test_the_inbox_says_assigned_to_me_and_who_else(make_staff):
    ana, bob = make_staff("ana", "agent"), make_staff("bob", "agent")
    mine, theirs = escalated(name="Mine"), escalated(name="Theirs")
    services.conversation_take_over(conversation_id=mine.conversation_id, agent=ana)
    services.conversation_take_over(conversation_id=theirs.conversation_id, agent=bob)
    browser = Client()
    browser.force_login(ana)
    page = browser.get(reverse("desk:queue")).content.decode()
    assert page.split(f'id="escalation-{mine.pk}"')[1].split("</tr>")[0].count("Assigned to me") == 1
    assert "Assigned to bob" in page.split(f'id="escalation-{theirs.pk}"')[1].split("</tr>")[0]
