"""WhatsApp message templates: the supervisors' list and form (the admin edits the same rows)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from desk.access import may_supervise_desk
from desk.models import MessageTemplate
from desk.template_forms import VARIABLE_SLOTS, MessageTemplateForm
from desk.template_text import template_variables


def _require_supervisor(user) -> None:
    if not may_supervise_desk(user):
        raise PermissionDenied("Only supervisors edit the WhatsApp templates.")


@login_required
@require_http_methods(["GET"])
def template_list(request):
    """List the templates with their status; approved ones are what agents may send after the window."""
    _require_supervisor(request.user)
    templates = list(MessageTemplate.objects.order_by("status", "name", "language"))
    return render(request, "desk/templates.html", {
        "templates": [{"template": t, "variables": len(template_variables(t.body))} for t in templates]})


@login_required
@require_http_methods(["GET", "POST"])
def template_edit(request, template_id: int | None = None):
    """Create or edit a template: name, language, category, body with {{n}} variables, buttons, status."""
    _require_supervisor(request.user)
    template = get_object_or_404(MessageTemplate, pk=template_id) if template_id else None
    form = MessageTemplateForm(request.POST or None, instance=template)
    if request.method == "POST":
        # The form also checks the unique name and language ("… already exists").
        if form.is_valid():
            saved = form.save()
            messages.success(request, f"Saved “{saved.name}” ({saved.language}), {saved.get_status_display().lower()}.")
            return redirect(reverse("desk:templates"))
        status = 400
    else:
        status = 200
    sources = [form[f"source_{slot}"] for slot in range(1, VARIABLE_SLOTS + 1)]
    return render(request, "desk/template_form.html", {"form": form, "template": template, "sources": sources},
                  status=status)
