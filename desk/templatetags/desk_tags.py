"""Template helpers of the desk: an escalation reason and a failed send as agents read them."""

from django import template
from django.utils.html import format_html

from desk.graph_errors import FailureExplained, failure_explained as explain
from desk.reasons import reason_label

register = template.Library()


@register.simple_tag
def reason_badge(code: str):
    """A reason's badge: its label in its own colour, the code in the tooltip."""
    code = str(code or "")
    return format_html('<span class="badge reason reason-{}" title="{}">{}</span>',
                       code.lower().replace("_", "-"), code, reason_label(code))


@register.simple_tag
def failure_explained(error: str) -> FailureExplained:
    """A failed send's Graph error code (read from the stored error) and the sentence an agent reads."""
    return explain(str(error or ""))
