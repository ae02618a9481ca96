"""The team's score definitions: list them and define a new one (analysts and supervisors)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from core import params
from traces.access import require_trace_reviewer
from traces.models import ScoreDefinition
from traces.scores import score_definition_create, score_definitions
from traces.scoring import KINDS, ScoreError


@login_required
def score_list(request):
    """List the scores reviewers set on traces and golden answers; define a new one."""
    require_trace_reviewer(request.user)
    if request.method == "POST":
        return _score_create(request)
    return render(request, "traces/scores.html", {"definitions": score_definitions(), "kinds": KINDS.items()})


def _score_create(request):
    key = params.text(request.POST.get("key"), label="The key", max_length=40)
    name = params.text(request.POST.get("name"), label="The name",
                       max_length=ScoreDefinition._meta.get_field("name").max_length)
    description = params.text(request.POST.get("description"), label="The description", max_length=400)
    values = params.text(request.POST.get("values"), label="The values", max_length=1_000)
    low = params.number(request.POST.get("low"), label="The minimum")
    high = params.number(request.POST.get("high"), label="The maximum")
    try:
        problems = [p.error for p in (key, name, description, values, low, high) if p.error]
        if problems:
            raise ScoreError(" ".join(problems))
        definition, created = score_definition_create(
            key=key.value, name=name.value, description=description.value, kind=request.POST.get("kind", ""),
            values=values.value.splitlines(), low=low.value, high=high.value, actor=request.user)
    except ScoreError as error:
        messages.error(request, str(error))
        return render(request, "traces/scores.html", {"definitions": score_definitions(), "kinds": KINDS.items(),
                                                      "form": request.POST}, status=400)
    messages.success(request, f"Score “{definition.name}” {'defined' if created else 'was already defined'}.")
    return redirect("traces:scores")
