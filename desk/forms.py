"""Forms of the agent desk: the queue's filters and the conversation's actions."""

from __future__ import annotations

from django import forms

from desk.models import Channel
from desk.reasons import Reason
from desk.selectors import VIEWS, QueueFilters, desk_agents
from desk.services import NOTE_MAX, REPLY_MAX

LANGUAGE_CHOICES = [("", "Any language"), ("es", "Español"), ("en", "English")]
ORDER_CHOICES = [("oldest", "Longest waiting first"), ("newest", "Newest first")]
DATE = forms.DateInput(attrs={"type": "date"})


class QueueFilterForm(forms.Form):
    view = forms.ChoiceField(required=False, choices=list(VIEWS.items()), widget=forms.HiddenInput)
    reason = forms.ChoiceField(required=False,
                               choices=[("", "Any reason")] + [(r.value, r.label) for r in Reason])
    channel = forms.ChoiceField(required=False, choices=[("", "Any channel"), *Channel.choices])
    language = forms.ChoiceField(required=False, choices=LANGUAGE_CHOICES)
    waiting = forms.IntegerField(required=False, min_value=0, max_value=100_000, label="Waiting over (min)")
    q = forms.CharField(required=False, max_length=100, label="Search",
                        widget=forms.TextInput(attrs={"type": "search",
                                                      "placeholder": "Name, WhatsApp number or customer id"}))
    order = forms.ChoiceField(required=False, choices=ORDER_CHOICES)
    resolved_from = forms.DateField(required=False, label="Resolved from", widget=DATE)
    resolved_to = forms.DateField(required=False, label="Resolved to", widget=DATE)

    def clean(self):
        data = super().clean()
        since, until = data.get("resolved_from"), data.get("resolved_to")
        if since and until and since > until:
            self.add_error("resolved_to", "The end date is before the start date.")
        return data

    def filters(self) -> QueueFilters:
        """Return the valid filters; an invalid field is ignored (and said, see `problems`) rather than
        emptying the queue."""
        self.is_valid()
        data = {name: self.cleaned_data.get(name) for name in self.fields if name not in self.errors}
        return QueueFilters(
            view=data.get("view") or "open",
            reason=data.get("reason") or "",
            channel=data.get("channel") or "",
            language=data.get("language") or "",
            waiting_over_minutes=data.get("waiting") or None,
            search=data.get("q") or "",
            oldest_first=data.get("order") != "newest",
            resolved_since=data.get("resolved_from"),
            resolved_until=data.get("resolved_to"),
        )

    def problems(self) -> list[str]:
        """Return, in words, each filter that was ignored because its value is not valid."""
        if not self.is_bound:
            return []
        self.is_valid()
        return [f"{self.fields[name].label or name.capitalize()}: {' '.join(errors)}"
                for name, errors in self.errors.items() if name in self.fields]


# The rendered form's key: a double-clicked button posts it twice, and the service acts once.
FORM_KEY = {"required": False, "max_length": 64}


class ReplyForm(forms.Form):
    # Django strips the text, so a reply of spaces only is "required" — nothing to send.
    text = forms.CharField(max_length=REPLY_MAX, widget=forms.Textarea(attrs={"rows": 3, "id": "composer-text"}),
                           error_messages={
                               "required": "Write something to send.",
                               "max_length": "A reply has at most %(limit_value)d characters; this one has "
                                             "%(show_value)d."})
    form_key = forms.CharField(**FORM_KEY)


class NoteForm(forms.Form):
    text = forms.CharField(max_length=NOTE_MAX, widget=forms.Textarea(attrs={"rows": 2}),
                           error_messages={
                               "required": "Write something in the note.",
                               "max_length": "A note has at most %(limit_value)d characters; this one has "
                                             "%(show_value)d."})
    form_key = forms.CharField(**FORM_KEY)


class AssignForm(forms.Form):
    assignee = forms.ModelChoiceField(queryset=None, empty_label=None)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assignee"].queryset = desk_agents()


class MarkWrongForm(forms.Form):
    reason = forms.CharField(max_length=300)
