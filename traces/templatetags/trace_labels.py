"""Template filters that show a trace's codes as the labels people read (traces/labels.py holds the tables)."""

from django import template

from traces import labels

register = template.Library()


@register.filter
def reason_label(code):
    return labels.label(labels.LABELS_BY_FILTER["escalation_reason"], code)


@register.filter
def route_label(code):
    return labels.label(labels.ROUTE_LABELS, code)


@register.filter
def channel_label(code):
    return labels.label(labels.CHANNEL_LABELS, code)


@register.filter
def language_label(code):
    return labels.label(labels.LANGUAGE_LABELS, code)


@register.filter
def verdict_label(code):
    return labels.label(labels.VERDICT_LABELS, code)


@register.filter
def stage_label(code):
    return labels.label(labels.STAGE_LABELS, code)


@register.filter
def capability_label(code):
    return labels.label(labels.CAPABILITY_LABELS, code)


@register.filter
def silenced_label(code):
    return labels.label(labels.SILENCED_AT_LABELS, code)


@register.filter
def class_event(event):
    """One line of a failure class's history from its event row."""
    return labels.class_event_sentence(event.kind, event.detail)


@register.filter
def words(code):
    """A snake_case code as words: 'discount_ended' reads 'discount ended'."""
    return str(code or "").replace("_", " ")


@register.filter
def outcome_label(code):
    return labels.label(labels.OUTCOME_LABELS, code)


@register.filter
def review_verdict_label(code):
    return labels.label(labels.REVIEW_VERDICT_LABELS, code)


@register.filter
def filters_sentence(filters):
    return labels.filters_sentence(filters)
