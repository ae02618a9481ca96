"""Forms of the agent desk: the queue's filters and the conversation's actions."""

from __future__ import annotations

from django import forms

from desk.models import Channel
from desk.reasons import Reason
from desk.selectors import QueueFilters, desk_agents
from desk.services import NOTE_MAX, REPLY_MAX

ASSIGNEE_CHOICES = [("anyone", "Anyone"), ("me", "Me"), ("unassigned", "Unassigned")]
LANGUAGE_CHOICES = [("", "Any language"), ("es", "Español"), ("en", "English")]
ORDER_CHOICES = [("newest", "Newest first"), ("oldest", "Longest waiting first")]


class QueueFilterForm(forms.Form):
    reason = forms.ChoiceField(required=False,
                               choices=[("", "Any reason")] + [(r.value, r.label) for r in Reason])
    assignee = forms.ChoiceField(required=False, choices=ASSIGNEE_CHOICES)
    channel = forms.ChoiceField(required=False, choices=[("", "Any channel"), *Channel.choices])
    language = forms.ChoiceField(required=False, choices=LANGUAGE_CHOICES)
    waiting = forms.IntegerField(required=False, min_value=0, max_value=100_000, label="Waiting over (min)")
    q = forms.CharField(required=False, max_length=100, label="Search",
                        widget=forms.TextInput(attrs={"type": "search",
                                                      "placeholder": "Name, WhatsApp number or customer id"}))
    order = forms.ChoiceField(required=False, choices=ORDER_CHOICES)

    def filters(self) -> QueueFilters:
        """Return the valid filters; an invalid field is ignored rather than emptying the queue."""
        self.is_valid()
        data = {name: self.cleaned_data.get(name) for name in self.fields if name not in self.errors}
        return QueueFilters(
            reason=data.get("reason") or "",
            assignee=data.get("assignee") or "anyone",
            channel=data.get("channel") or "",
            language=data.get("language") or "",
            waiting_over_minutes=data.get("waiting") or None,
            search=data.get("q") or "",
            oldest_first=data.get("order") == "oldest",
        )


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
