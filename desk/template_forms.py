"""The form supervisors (and the admin) edit a WhatsApp message template with."""

from __future__ import annotations

from django import forms

from desk.models import MessageTemplate
from desk.template_text import (
    BUTTON_TEXT_MAX,
    NAME_PATTERN,
    body_problem,
    buttons_problem,
    template_variables,
)

VARIABLE_SLOTS = 6  # pre-fill choices offered for {{1}} … {{6}}; a longer template's others are typed


class MessageTemplateForm(forms.ModelForm):
    buttons_text = forms.CharField(
        required=False, label="Quick-reply buttons", max_length=400,
        help_text=f"One button per line, at most {BUTTON_TEXT_MAX} characters each (leave empty for none).",
        widget=forms.Textarea(attrs={"rows": 3}))

    class Meta:
        model = MessageTemplate
        fields = ["name", "language", "category", "body", "status"]
        labels = {"language": "Language code", "status": "Approval status in WhatsApp"}
        widgets = {"body": forms.Textarea(attrs={"rows": 5, "maxlength": 1024})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"].max_length = 512
        self.fields["name"].widget.attrs.update(maxlength=512, pattern="[a-z0-9_]+")
        self.fields["name"].help_text = "As in WhatsApp Manager: lowercase letters, digits and underscores."
        self.fields["body"].help_text = "Variables are written {{1}}, {{2}}… in order."
        sources = list(self.instance.variable_sources or []) if self.instance else []
        for slot, source in enumerate(sources[:VARIABLE_SLOTS], start=1):
            self.fields[f"source_{slot}"].initial = source
        if self.instance and self.instance.pk:
            self.fields["buttons_text"].initial = "\n".join(self.instance.buttons or [])

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if not NAME_PATTERN.match(name):
            raise forms.ValidationError("Use lowercase letters, digits and underscores only, as WhatsApp does.")
        return name

    def clean_language(self):
        code = self.cleaned_data["language"].strip()
        if not code or not all(part.isascii() and part.isalpha() for part in code.split("_")) or len(code) > 15:
            raise forms.ValidationError("Write Meta's language code, e.g. es, en or en_US.")
        parts = code.split("_")
        return "_".join([parts[0].lower(), *[p.upper() for p in parts[1:]]])

    def clean_body(self):
        body = self.cleaned_data["body"].strip()
        problem = body_problem(body)
        if problem:
            raise forms.ValidationError(problem)
        return body

    def clean_buttons_text(self):
        buttons = [line.strip() for line in self.cleaned_data.get("buttons_text", "").splitlines() if line.strip()]
        problem = buttons_problem(buttons)
        if problem:
            raise forms.ValidationError(problem)
        return buttons

    def save(self, commit=True):
        template = super().save(commit=False)
        template.buttons = self.cleaned_data.get("buttons_text") or []
        count = len(template_variables(template.body))
        template.variable_sources = [self.cleaned_data.get(f"source_{slot}") or ""
                                     for slot in range(1, min(count, VARIABLE_SLOTS) + 1)]
        if commit:
            template.save()
        return template


# Declared on the class (not in __init__), so the admin, which lists a form's declared fields, shows them too.
for _slot in range(1, VARIABLE_SLOTS + 1):
    MessageTemplateForm.base_fields[f"source_{_slot}"] = MessageTemplateForm.declared_fields[f"source_{_slot}"] = \
        forms.ChoiceField(required=False, choices=MessageTemplate.Source.choices, label=f"{{{{{_slot}}}}} is filled with")
