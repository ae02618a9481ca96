"""The team: an agent's own status and the supervisor's load page (status, capacity, load, reassign)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from core import params
from desk import services
from desk.access import access_conversation, may_supervise_desk, require_desk_worker
from desk.capacity import (
    CAPACITY_MAX,
    CapacityError,
    agent_capacity_set,
    agent_status_set,
    conversations_held,
    team_load,
    unassigned_waiting_count,
)
from desk.selectors import desk_agents


def _back(request, fallback: str):
    """Go back to the page the form was on (a path of this site only); anything else goes to `fallback`."""
    target = request.POST.get("next") or ""
    if (target.startswith("/") and target.isascii() and target.isprintable() and " " not in target
            and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure())):
        return HttpResponseRedirect(target)
    return redirect(fallback)


def require_supervisor(user) -> None:
    if not may_supervise_desk(user):
        raise PermissionDenied("Only supervisors see the team's load.")


@login_required
@require_POST
def agent_status(request):
    """Set your own status: available (automatic assignment may give you escalations) or away."""
    require_desk_worker(request.user)
    try:
        profile = agent_status_set(agent=request.user, status=request.POST.get("status", ""))
    except CapacityError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, f"You are {profile.get_status_display().lower()}."
                      + (" Waiting escalations come to you as you have room." if profile.status == "available"
                         else " No escalation is assigned to you automatically."))
    return _back(request, "desk:queue")


@login_required
@require_GET
def team(request):
    """Each agent's status, capacity and load, and the conversations they hold, with a way to reassign."""
    require_supervisor(request.user)
    rows = team_load()
    held = list(conversations_held())
    return render(request, "desk/team.html", {
        "rows": rows, "held": held, "agents": list(desk_agents()), "waiting": unassigned_waiting_count(),
        "capacity_max": CAPACITY_MAX,
    })


@login_required
@require_POST
def agent_capacity(request, user_id):
    """Set an agent's capacity (empty: the default)."""
    require_supervisor(request.user)
    agent = get_object_or_404(desk_agents(), pk=user_id)
    raw = (request.POST.get("capacity") or "").strip()
    capacity = params.integer(raw, label="The capacity", low=0, high=CAPACITY_MAX) if raw else None
    if capacity is not None and (capacity.error or capacity.value is None):
        messages.error(request, capacity.error or "The capacity is a whole number.")
        return redirect("desk:team")
    try:
        agent_capacity_set(supervisor=request.user, agent=agent, capacity=capacity.value if capacity else None)
    except CapacityError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{agent.get_username()} holds at most "
                                  f"{capacity.value if capacity else 'the default number of'} open conversations.")
    return redirect("desk:team")


@login_required
@require_POST
def team_reassign(request, conversation_id):
    """Reassign a conversation from the load page (the conversation page's reassign, answered here)."""
    require_supervisor(request.user)
    access_conversation(request.user, conversation_id, write=True)
    assignee = get_object_or_404(desk_agents(), pk=params.integer(request.POST.get("assignee"),
                                                                    label="The agent").value or 0)
    try:
        services.conversation_assign(conversation_id=conversation_id, actor=request.user, assignee=assignee)
    except services.Unchanged as exc:
        messages.info(request, str(exc))
    except services.DeskActionError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Conversation {conversation_id} is {assignee.get_username()}'s now.")
    return redirect("desk:team")

