"""Search messages and customers, and a contact's history."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from core import params
from desk.access import may_work_desk, require_conversation_reader
from desk.identifiers import identifier_lookups
from desk.identify import customer_search
from desk.models import Contact
from desk.selectors import contact_conversations, contacts_matching, message_search

SEARCH_MAX = 200


def _billing_customers(term: str) -> tuple[tuple[str, ...], str]:
    """Ask billing who an account number or cédula/RIF in `term` is (the Identify panel's lookups); a phone is
    matched on the contacts' WhatsApp numbers directly. Return the customer ids and what to say of billing."""
    if not any(kind != "phone" for kind, _ in identifier_lookups(term)):
        return (), ""
    found = customer_search(term)
    if found.state == "unavailable":
        return (), "Billing system unavailable: account numbers and cédulas cannot be looked up now."
    return tuple(match.id for match in found.matches), ""


@login_required
@require_GET
def search(request):
    """Search message text (full text, accents and es/en word forms folded) and customers (name, WhatsApp
    number in any form, billing id, account number, cédula/RIF); messages newest first, paged by keyset."""
    require_conversation_reader(request.user)
    query = params.text(request.GET.get("q"), label="The search", max_length=SEARCH_MAX)
    cursor = params.cursor(request.GET.get("after"))
    term = query.value.strip() if query.ok else ""
    after = request.GET.get("after", "") if cursor.ok else ""  # a malformed cursor: the first page
    hits, next_cursor, contacts = [], None, []
    billing_note = ""
    if term:
        hits, next_cursor = message_search(text=term, after=after)
        if not after:
            customer_ids, billing_note = _billing_customers(term)
            contacts = contacts_matching(term=term, customer_ids=customer_ids)
    more = None
    if next_cursor:
        more_query = request.GET.copy()
        more_query["after"] = next_cursor
        more = more_query.urlencode()
    problems = [p for p in (query.error, cursor.error) if p]
    return render(request, "desk/search.html", {
        "q": query.value if query.ok else "", "term": term, "hits": hits, "contacts": contacts,
        "more_query": more, "paged": bool(after), "problems": problems, "billing_note": billing_note,
    }, status=400 if query.error else 200)


@login_required
@require_GET
def contact(request, contact_id):
    """Everything of one contact: who they are and every conversation they had, newest first."""
    require_conversation_reader(request.user)
    person = get_object_or_404(Contact, pk=contact_id)
    return render(request, "desk/contact.html", {
        "contact": person, "conversations": contact_conversations(contact=person),
        "can_act": may_work_desk(request.user),
    })
