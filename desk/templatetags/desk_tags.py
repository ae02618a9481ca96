"""Template helpers of the desk: an escalation reason and a failed send as agents read them, billing's codes in
words, money."""

from decimal import Decimal, InvalidOperation

from django import template
from django.utils.html import format_html

from billing.answers.money import LANGUAGES, money_text
from desk.graph_errors import FailureExplained, failure_explained as explain
from desk.labels import code_label
from desk.reasons import reason_label

register = template.Library()


@register.simple_tag
def reason_badge(code: str):
    """A reason's badge: its label in its own colour, the code in the tooltip."""
    code = str(code or "")
    return format_html('<span class="badge reason reason-{}" title="{}">{}</span>',
                       code.lower().replace("_", "-"), code, reason_label(code))


@register.filter
def label(code) -> str:
    """Billing's or the desk's code in words: `international_card` → "International card"."""
    return code_label(code)


@register.simple_tag
def money(amount, currency, language="es") -> str:
    """An amount in billing's one money notation for the contact's language (`USD 324,80` / `USD 324.80`)."""
    try:
        value = amount if isinstance(amount, Decimal) else Decimal(str(amount))
    except (InvalidOperation, ValueError, TypeError):
        return f"{amount} {currency}".strip()
    return money_text(value, str(currency or ""), language if language in LANGUAGES else "es")


@register.simple_tag
def failure_explained(error: str) -> FailureExplained:
    """A failed send's Graph error code (read from the stored error) and the sentence an agent reads."""
    return explain(str(error or ""))
