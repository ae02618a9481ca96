"""Template helpers of the desk: an escalation reason as agents read it."""

from django import template
from django.utils.html import format_html

from desk.reasons import reason_label

register = template.Library()


@register.simple_tag
def reason_badge(code: str):
    """A reason's badge: its label in its own colour, the code in the tooltip."""
    code = str(code or "")
    return format_html('<span class="badge reason reason-{}" title="{}">{}</span>',
                       code.lower().replace("_", "-"), code, reason_label(code))
