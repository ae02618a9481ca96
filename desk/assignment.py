"""Who gets the next escalation: the available agent with the most free capacity. Pure: no Django.

Each agent has a status (available or away), a capacity (how many open conversations they hold at once)
and a load (how many they hold now). A waiting escalation goes to the available agent with the most room
left; of two with the same room, to the one who has waited longest since their last assignment (one never
assigned first). With nobody free it waits, and escalations are handed out oldest first as room frees.

The services (desk/routing.py) feed this the agents' rows read under their row locks and apply the plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime


@dataclass(frozen=True)
class AgentLoad:
    """One agent as the assigner sees them."""

    agent_id: int
    available: bool
    capacity: int
    load: int  # open conversations they hold now
    last_assigned_at: datetime | None = None

    @property
    def free(self) -> int:
        return max(0, self.capacity - self.load)


@dataclass(frozen=True)
class Assignment:
    """One escalated conversation handed to one agent."""

    conversation_id: int
    agent_id: int


def _waited_key(agent: AgentLoad) -> tuple:
    # Never assigned sorts before any time; then the earliest last assignment; the id keeps it deterministic.
    return (agent.last_assigned_at is not None, agent.last_assigned_at or datetime.min, agent.agent_id)


def choose_agent(agents: Iterable[AgentLoad]) -> AgentLoad | None:
    """Return the available agent with the most free capacity (ties: longest since their last assignment)."""
    free = [agent for agent in agents if agent.available and agent.free > 0]
    if not free:
        return None
    most = max(agent.free for agent in free)
    return min((agent for agent in free if agent.free == most), key=_waited_key)


def plan_assignments(agents: Sequence[AgentLoad], waiting: Sequence[int], *, now: datetime) -> list[Assignment]:
    """Hand out the waiting conversations (oldest first) while someone has room; the rest keep waiting."""
    team = {agent.agent_id: agent for agent in agents}
    plan = []
    for conversation_id in waiting:
        chosen = choose_agent(team.values())
        if chosen is None:
            break
        team[chosen.agent_id] = replace(chosen, load=chosen.load + 1, last_assigned_at=now)
        plan.append(Assignment(conversation_id=conversation_id, agent_id=chosen.agent_id))
    return plan
