"""Assignment by capacity: each agent's status and load, and handing waiting escalations to those with room.

The choice itself is desk/assignment.py (pure); this module reads the agents and the waiting escalations
under row locks, applies the plan and writes the events. It runs after every change that can free or add
room — an escalation opened, a conversation resolved, handed back or reassigned, an agent becoming available
or given more capacity — queued on commit as the task `desk.assign_waiting`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from kombu.exceptions import OperationalError as BrokerError

from core import clock
from core.tasks import task_queue
from desk.access import may_supervise_desk, require_desk_worker
from desk.assignment import AgentLoad, Assignment, plan_assignments
from desk.models import AgentProfile, Conversation, Escalation, Event
from desk.selectors import desk_agents

logger = logging.getLogger(__name__)
CAPACITY_MAX = 50


class CapacityError(Exception):
    """A status or capacity change that cannot be made; the message says why."""


def agent_profile(user) -> AgentProfile:
    """Return the agent's profile, made on first use (away, the default capacity)."""
    profile, _ = AgentProfile.objects.get_or_create(user=user)
    return profile


def _open_loads(agent_ids) -> dict[int, int]:
    """Return, per agent, the open conversations a person holds (assigned to them, bot silent)."""
    rows = (Conversation.objects.filter(assignee_id__in=list(agent_ids), status=Conversation.Status.OPEN,
                                        handler=Conversation.Handler.HUMAN)
            .values("assignee_id").annotate(n=Count("pk")))
    return {row["assignee_id"]: row["n"] for row in rows}


def _waiting_conversations() -> list[int]:
    """Return the conversations with an escalation nobody holds, oldest escalation first (each once)."""
    rows = (Escalation.objects.filter(status=Escalation.Status.OPEN, conversation__assignee__isnull=True,
                                      conversation__status=Conversation.Status.OPEN,
                                      conversation__handler=Conversation.Handler.HUMAN)
            .order_by("created_at", "pk").values_list("conversation_id", flat=True))
    seen: dict[int, None] = {}
    for conversation_id in rows:
        seen.setdefault(conversation_id, None)
    return list(seen)


@transaction.atomic
def escalations_assign_waiting() -> list[Assignment]:
    """Hand the waiting escalations, oldest first, to available agents with room; return what was assigned.

    Locks the available agents' profiles (SELECT … FOR UPDATE, in id order) before counting their loads, so
    two assigners run one after the other and the second counts what the first assigned: nobody is given
    more than their capacity. Each conversation is locked too (skip_locked: one an agent is taking over
    right now is left to them) and re-checked as still waiting before it is assigned.
    """
    agents = desk_agents().values("pk")
    profiles = list(AgentProfile.objects.select_for_update(of=("self",)).filter(
        status=AgentProfile.Status.AVAILABLE, user__in=agents).select_related("user").order_by("pk"))
    if not profiles:
        return []
    loads = _open_loads(p.user_id for p in profiles)
    team = [AgentLoad(agent_id=p.user_id, available=True, capacity=p.effective_capacity,
                      load=loads.get(p.user_id, 0), last_assigned_at=p.last_assigned_at) for p in profiles]
    now = clock.now()
    plan = plan_assignments(team, _waiting_conversations(), now=now)
    by_user = {p.user_id: p for p in profiles}
    done = []
    for step in plan:
        conversation = (Conversation.objects.select_for_update(skip_locked=True)
                        .filter(pk=step.conversation_id, assignee__isnull=True, status=Conversation.Status.OPEN,
                                handler=Conversation.Handler.HUMAN).first())
        if conversation is None:
            continue  # taken meanwhile by someone, or being taken right now
        profile = by_user[step.agent_id]
        conversation.assignee = profile.user
        conversation.save(update_fields=["assignee", "updated_at"])
        conversation.escalations.filter(status=Escalation.Status.OPEN).update(status=Escalation.Status.TAKEN)
        Event.objects.create(conversation=conversation, kind="assigned",
                             detail={"assignee": profile.user.get_username(), "automatic": True})
        profile.last_assigned_at = now
        profile.save(update_fields=["last_assigned_at"])
        done.append(step)
    return done


def assignment_queue_on_commit() -> None:
    """After the current transaction commits, queue a pass of automatic assignment."""
    transaction.on_commit(_assignment_queue)


def _assignment_queue() -> None:
    try:
        task_queue("desk.assign_waiting")
    except BrokerError:
        logger.exception("Could not queue automatic assignment: the broker is unreachable; the next change "
                         "that frees room queues it again")


@transaction.atomic
def agent_status_set(*, agent, status: str) -> AgentProfile:
    """Set the agent's own status; becoming available queues assignment (a second click changes nothing)."""
    require_desk_worker(agent)
    if status not in AgentProfile.Status.values:
        raise CapacityError("Pick available or away.")
    profile = AgentProfile.objects.select_for_update().get(pk=agent_profile(agent).pk)
    if profile.status != status:
        profile.status = status
        profile.status_changed_at = clock.now()
        profile.save(update_fields=["status", "status_changed_at"])
    if status == AgentProfile.Status.AVAILABLE:
        assignment_queue_on_commit()
    return profile


@transaction.atomic
def agent_capacity_set(*, supervisor, agent, capacity: int | None) -> AgentProfile:
    """Set an agent's capacity (None: the default, DESK_AGENT_CAPACITY); more room queues assignment."""
    if not may_supervise_desk(supervisor):
        raise CapacityError("Only supervisors set an agent's capacity.")
    if capacity is not None and not 0 <= capacity <= CAPACITY_MAX:
        raise CapacityError(f"A capacity is a whole number from 0 to {CAPACITY_MAX}.")
    profile = AgentProfile.objects.select_for_update().get(pk=agent_profile(agent).pk)
    profile.capacity = capacity
    profile.save(update_fields=["capacity"])
    assignment_queue_on_commit()
    return profile


@dataclass(frozen=True)
class AgentRow:
    """One line of the supervisor's load page."""

    user: object
    status: str
    capacity: int
    custom_capacity: bool
    load: int
    last_assigned_at: object

    @property
    def status_label(self) -> str:
        return AgentProfile.Status(self.status).label

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.load)


def team_load() -> list[AgentRow]:
    """Return every desk agent with their status, capacity and open conversations (three queries)."""
    users = list(desk_agents())
    profiles = {p.user_id: p for p in AgentProfile.objects.filter(user__in=[u.pk for u in users])}
    loads = _open_loads(u.pk for u in users)
    rows = []
    for user in users:
        profile = profiles.get(user.pk)
        rows.append(AgentRow(
            user=user, status=profile.status if profile else AgentProfile.Status.AWAY,
            capacity=profile.effective_capacity if profile else settings.DESK_AGENT_CAPACITY,
            custom_capacity=bool(profile and profile.capacity is not None), load=loads.get(user.pk, 0),
            last_assigned_at=profile.last_assigned_at if profile else None))
    return rows


def conversations_held(*, agent_ids=None):
    """Return the open conversations people hold, with their contact and latest escalation reason, by holder."""
    held = (Conversation.objects.filter(status=Conversation.Status.OPEN, handler=Conversation.Handler.HUMAN,
                                        assignee__isnull=False)
            .select_related("contact", "assignee").order_by("assignee__username", "pk"))
    if agent_ids is not None:
        held = held.filter(assignee_id__in=agent_ids)
    return held


def unassigned_waiting_count() -> int:
    return Escalation.objects.filter(Q(status=Escalation.Status.OPEN),
                                     conversation__assignee__isnull=True).count()
