"""Scores on a golden case's expected answer (loaded into the golden case page; a page of its own without JS)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from core import params
from evals.access import access_golden_case
from evals.golden_scores import golden_case_scores, golden_case_scores_set
from traces.scores import score_definitions
from traces.scoring import ScoreError


@login_required
def golden_case_scores_page(request, case_id):
    """Show and set the team's scores on a golden case."""
    case = access_golden_case(request.user, case_id)
    error = ""
    if request.method == "POST":
        values = {}
        try:
            for definition in score_definitions():
                name = f"score_{definition.key}"
                if name in request.POST:
                    values[definition.key] = params.text(request.POST.get(name), label=definition.name,
                                                         max_length=60).value
            golden_case_scores_set(case=case, author=request.user, values=values)
        except ScoreError as failure:
            error = str(failure)
        else:
            messages.success(request, "Scores saved.")
            return redirect("evals:golden_case", case_id=case.pk)
    current = golden_case_scores(case=case)
    fields = [{"definition": d, "name": f"score_{d.key}", "choices": d.spec().choices(),
               "value": request.POST.get(f"score_{d.key}", "") if error else current.get(d.key, "")}
              for d in score_definitions()]
    return render(request, "evals/_golden_case_scores.html", {"case": case, "score_fields": fields, "error": error},
                  status=400 if error else 200)
