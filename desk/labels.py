"""What agents read for billing's codes (payment methods, statuses, line types). Pure: no Django.

Billing speaks in codes (`international_card`, `pending_review`); the desk shows words. A code this table
does not know reads as itself in words ("new_method" → "New method"), never as the raw code.
"""

from __future__ import annotations

LABELS = {
    # payment methods
    "pago_movil": "Pago Móvil",
    "bank_transfer": "Bank transfer",
    "direct_debit": "Direct debit",
    "card": "Card",
    "international_card": "International card",
    "zelle": "Zelle",
    "cash_usd": "Cash in dollars",
    "cash_ves": "Cash in bolívares",
    # payment, invoice, customer and credit-note statuses
    "succeeded": "Succeeded",
    "failed": "Failed",
    "open": "Open",
    "paid": "Paid",
    "overdue": "Overdue",
    "active": "Active",
    "suspended": "Suspended",
    "pending_review": "Pending review",
    # invoice line types
    "recurring": "Monthly plan",
    "proration": "Proration",
    "discount": "Discount",
    "credit": "Credit",
    "installation": "Installation",
    "technical_visit": "Technical visit",
    "reconnection": "Reconnection",
    "late_fee": "Late fee",
    "tax": "Tax",
    # agent statuses
    "available": "Available",
    "away": "Away",
}


def code_label(code: object) -> str:
    """Return the words for a billing or desk code; an unknown code humanised; an empty one as "—"."""
    text = str(code or "").strip()
    if not text:
        return "—"
    if text in LABELS:
        return LABELS[text]
    words = text.replace("_", " ").replace("-", " ").split()
    return " ".join(words).capitalize() if words else "—"
