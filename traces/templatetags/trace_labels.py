"""Template filters that show a trace's codes as the labels people read (traces/display.py holds the tables)."""

from django import template

from traces import display

register = template.Library()


@register.filter
def reason_label(code):
    return display.label(display.LABELS_BY_FILTER["escalation_reason"], code)


@register.filter
def route_label(code):
    return display.label(display.ROUTE_LABELS, code)


@register.filter
def channel_label(code):
    return display.label(display.CHANNEL_LABELS, code)


@register.filter
def language_label(code):
    return display.label(display.LANGUAGE_LABELS, code)


@register.filter
def verdict_label(code):
    return display.label(display.VERDICT_LABELS, code)


@register.filter
def stage_label(code):
    return display.label(display.STAGE_LABELS, code)


@register.filter
def capability_label(code):
    return display.label(display.CAPABILITY_LABELS, code)


@register.filter
def silenced_label(code):
    return display.label(display.SILENCED_AT_LABELS, code)


@register.filter
def class_event(event):
    """One line of a failure class's history from its event row."""
    return display.class_event_sentence(event.kind, event.detail)


@register.filter
def words(code):
    """A snake_case code as words: 'discount_ended' reads 'discount ended'."""
    return str(code or "").replace("_", " ")


@register.filter
def outcome_label(code):
    return display.label(display.OUTCOME_LABELS, code)


@register.filter
def review_verdict_label(code):
    return display.label(display.REVIEW_VERDICT_LABELS, code)


@register.filter
def filters_sentence(filters):
    return display.filters_sentence(filters)


@register.filter
def get_name(definitions, key):
    """Return the name of the score `key` from a {key: definition} mapping ("" when unknown)."""
    definition = definitions.get(key) if hasattr(definitions, "get") else None
    return definition.name if definition is not None else ""
