"""Find the billing customer behind a contact from what an agent types: account number, cédula/RIF or phone.

Billing offers exact lookups (`/lookup/account/…`, `/lookup/national-id/…`, `/lookup/phone/…`, see
billing/openapi.yaml), not a free-text search, so a query becomes the lookups it could be — eight digits
may be an account number or a cédula typed without its letter — and the matches are the union. Each
lookup goes through billing's client and its circuit breaker; an outage says so instead of "no match".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from billing.api.client import billing_client
from desk.identifiers import identifier_lookups, whatsapp_digits

logger = logging.getLogger(__name__)
QUERY_MAX = 40
MATCHED_BY_LABELS = {"account_number": "account number", "national_id": "cédula/RIF", "phone": "phone",
                     "whatsapp": "this conversation's WhatsApp number"}
HOW_TO = "Type an account number (8 digits), a cédula or RIF (V-12345678, J-12345678-9) or a phone number."


def customer_lookups(query: str) -> list[tuple[str, str]]:
    """Return the (identifier, value) lookups a typed query could be, most specific first; [] when none."""
    return identifier_lookups(query)


@dataclass(frozen=True)
class CustomerMatch:
    """A billing customer an agent may link, with what tells them apart."""

    id: str
    name: str
    account_number: str
    national_id: str
    phone: str
    status: str
    matched_by: str  # account_number | national_id | phone

    @property
    def matched_by_label(self) -> str:
        return MATCHED_BY_LABELS.get(self.matched_by, self.matched_by)


@dataclass(frozen=True)
class CustomerSearch:
    """The answer to a search: `state` is ok, invalid (nothing to look up) or unavailable (billing down)."""

    query: str
    state: str
    matches: tuple[CustomerMatch, ...] = ()
    message: str = ""

    def match(self, customer_id: str) -> CustomerMatch | None:
        return next((m for m in self.matches if m.id == customer_id), None)


def _match(customer: dict, matched_by: str) -> CustomerMatch:
    return CustomerMatch(id=customer["id"], name=customer.get("name", ""),
                         account_number=customer.get("account_number", ""),
                         national_id=customer.get("national_id", ""), phone=customer.get("phone", ""),
                         status=customer.get("status", ""), matched_by=matched_by)


UNAVAILABLE = ("Billing system unavailable: the customer cannot be looked up now. Try again in a minute; "
               "nothing was linked.")


def customer_search(query: str, *, billing=None) -> CustomerSearch:
    """Look the query up in billing; return every customer it matches (none is a valid answer)."""
    query = (query or "").strip()[:QUERY_MAX]
    lookups = customer_lookups(query)
    if not lookups:
        return CustomerSearch(query=query, state="invalid", message=HOW_TO)
    billing = billing or billing_client()
    matches: dict[str, CustomerMatch] = {}
    for key, value in lookups:
        result = billing.find_customer(**{key: value})
        if result.should_escalate:
            return CustomerSearch(query=query, state="unavailable", message=UNAVAILABLE)
        if result.ok:
            customer = result.data["customer"]
            matches.setdefault(customer["id"], _match(customer, key))
    message = "" if matches else f"No billing customer matches “{query}”."
    return CustomerSearch(query=query, state="ok", matches=tuple(matches.values()), message=message)


def customer_search_whatsapp(wa_id: str, *, billing=None) -> CustomerSearch:
    """Ask billing which customer has this WhatsApp number (the conversation's own); none is a valid answer."""
    digits = whatsapp_digits(wa_id or "") or "".join(ch for ch in (wa_id or "") if ch.isdigit())
    if not digits:
        return CustomerSearch(query="", state="invalid", message="This conversation has no WhatsApp number.")
    billing = billing or billing_client()
    try:
        result = billing.find_customer(whatsapp_id=digits)
    except Exception:  # an offer on the page: its failure must not cost the page
        logger.exception("whatsapp lookup of %s failed", digits)
        return CustomerSearch(query=digits, state="unavailable", message=UNAVAILABLE)
    if result.should_escalate:
        return CustomerSearch(query=digits, state="unavailable", message=UNAVAILABLE)
    if not result.ok:
        return CustomerSearch(query=digits, state="ok", message="Billing has no customer for this number.")
    return CustomerSearch(query=digits, state="ok", matches=(_match(result.data["customer"], "whatsapp"),))


def whatsapp_offer(contact) -> CustomerMatch | None:
    """Return the customer billing has for the contact's WhatsApp number when it is not the one linked yet."""
    if contact.channel != "whatsapp" or not contact.wa_id:
        return None
    found = customer_search_whatsapp(contact.wa_id)
    match = found.matches[0] if found.matches else None
    return match if match and match.id != contact.customer_id else None
