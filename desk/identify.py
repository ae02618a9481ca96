"""Find the billing customer behind a contact from what an agent types: account number, cédula/RIF or phone.

Billing offers exact lookups (`/lookup/account/…`, `/lookup/national-id/…`, `/lookup/phone/…`, see
billing/openapi.yaml), not a free-text search, so a query becomes the lookups it could be — eight digits
may be an account number or a cédula typed without its letter — and the matches are the union. Each
lookup goes through billing's client and its circuit breaker; an outage says so instead of "no match".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from billing.api.client import billing_client

# The contract's patterns (billing/openapi.yaml): a lookup that cannot match is never sent.
_NATIONAL_ID = re.compile(r"^[VEJPG]-?[0-9]{5,9}(-?[0-9])?$")
_PHONE = re.compile(r"^\+?[0-9]{7,15}$")
_ACCOUNT = re.compile(r"^[0-9]{8}$")
_SEPARATORS = re.compile(r"[\s.()\-]")
QUERY_MAX = 40
MATCHED_BY_LABELS = {"account_number": "account number", "national_id": "cédula/RIF", "phone": "phone"}
HOW_TO = "Type an account number (8 digits), a cédula or RIF (V-12345678, J-12345678-9) or a phone number."


def customer_lookups(query: str) -> list[tuple[str, str]]:
    """Return the (identifier, value) lookups a typed query could be, most specific first; [] when none."""
    typed = (query or "").strip().upper()
    compact = re.sub(r"[\s.]", "", typed)
    if _NATIONAL_ID.match(compact):
        return [("national_id", compact)]
    digits = _SEPARATORS.sub("", typed)
    if not _PHONE.match(digits):
        return []
    lookups = []
    bare = not digits.startswith("+")
    if bare and _ACCOUNT.match(digits):
        lookups.append(("account_number", digits))
    if bare and 5 <= len(digits) <= 9:
        lookups.append(("national_id", f"V-{digits}"))  # a Venezuelan cédula typed without its letter
    lookups.append(("phone", digits))
    return lookups


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
            matches.setdefault(customer["id"], CustomerMatch(
                id=customer["id"], name=customer.get("name", ""), account_number=customer.get("account_number", ""),
                national_id=customer.get("national_id", ""), phone=customer.get("phone", ""),
                status=customer.get("status", ""), matched_by=key))
    message = "" if matches else f"No billing customer matches “{query}”."
    return CustomerSearch(query=query, state="ok", matches=tuple(matches.values()), message=message)
