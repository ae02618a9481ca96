"""Credit notes: an agent proposes, a supervisor approves, the in-process billing simulator gets one note."""

import re
import threading
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from billing.answers.money import money_text
from billing.api.client import billing_client
from desk import credit_notes as cn
from desk.models import CreditNoteRequest, Event
from tests.support.factories import conversation_start, escalated, events_of, in_thread

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def usd(amount) -> str:
    """An amount of dollars in the desk's one money notation for a Spanish-speaking contact: USD 23,20."""
    return money_text(Decimal(amount), "USD", "es")


def _invoices_of(customer_id):
    """Return the customer's two newest invoices in the simulator's dataset for the clock's date, oldest first."""
    from billing.simulator.mounted import shared_simulator

    invoices = sorted(shared_simulator().data.accounts[customer_id].invoices, key=lambda invoice: invoice.period)
    return invoices[-2], invoices[-1]


_PREVIOUS, _CURRENT = _invoices_of("C-1001")
INVOICE = _PREVIOUS.id  # the invoice before the current one (F-1001-202610 on 2026-11-20: USD 23,20)
TOTAL = f"{_PREVIOUS.total.amount:.2f}"
TOTAL_SHOWN = usd(_PREVIOUS.total.amount)  # as the desk writes it for the Spanish-speaking contact: USD 23,20
OVER_TOTAL = f"{_PREVIOUS.total.amount + Decimal('0.01'):.2f}"
CURRENT = _CURRENT.id


def billing_notes(simulator) -> int:
    """Return how many credit notes billing holds (each one created once, whatever the retries)."""
    return simulator.stats()["credit_notes"]


def propose(conversation, agent, **overrides):
    fields = {"invoice_id": INVOICE, "amount": "5.00", "currency": "USD",
              "reason": "Two days without service after the storm"} | overrides
    return cn.credit_note_propose(conversation=conversation, agent=agent, **fields)


@pytest.fixture
def people(make_staff):
    """An agent, two supervisors and an analyst."""
    return {"ana": make_staff("ana", "agent"), "sol": make_staff("sol", "supervisor"),
            "tom": make_staff("tom", "supervisor"), "ivy": make_staff("ivy", "analyst")}


def browser_for(user):
    browser = Client(enforce_csrf_checks=True)
    if user is not None:
        browser.force_login(user)
    return browser


def post(browser, path, data=None, **headers):
    """POST as a browser does: fetch a page for the CSRF cookie, then send the token."""
    browser.get(reverse("desk:chat"))
    return browser.post(path, data or {}, HTTP_X_CSRFTOKEN=browser.cookies["csrftoken"].value, **headers)


# Proposing -------------------------------------------------------------------------------------

def test_an_agent_proposes_a_credit_note_checked_against_billing(people, healthy_billing):
    conversation = escalated().conversation
    before = billing_notes(healthy_billing)
    request = propose(conversation, people["ana"])
    assert (request.status, request.customer_id, request.invoice_id, request.amount, request.currency) == (
        "pending", "C-1001", INVOICE, Decimal("5.00"), "USD")
    assert request.idempotency_key.startswith("tracedesk-cn-")
    assert events_of(conversation)[-1] == "credit_note_proposed"
    assert billing_notes(healthy_billing) == before  # proposing only reads billing


@pytest.mark.parametrize("overrides, message", [
    ({"invoice_id": "F-1002-202610"}, "Invoice F-1002-202610 is not one of C-1001's invoices."),
    ({"invoice_id": "F-1001-199901"}, "is not one of C-1001's invoices"),
    ({"amount": OVER_TOTAL}, f"its total is {TOTAL_SHOWN}"),
    ({"amount": "0"}, "above zero"),
    ({"amount": "-3"}, "above zero"),
    ({"amount": "1.005"}, "two decimals"),
    ({"amount": "cinco"}, "not a number"),
    ({"amount": "1e26"}, "more than 10 digits before the decimal point"),
    ({"amount": "NaN"}, "not a number"),
    ({"currency": "VES"}, f"Invoice {INVOICE} is in USD, not VES."),
    ({"reason": "  "}, "Say why"),
])
def test_a_proposal_that_billing_does_not_back_is_refused_and_nothing_is_saved(
        people, healthy_billing, overrides, message):
    conversation = escalated().conversation
    with pytest.raises(cn.CreditNoteError, match=message.replace("(", r"\(").replace(".", r"\.")):
        propose(conversation, people["ana"], **overrides)
    assert not CreditNoteRequest.objects.exists()
    assert "credit_note_proposed" not in events_of(conversation)


def test_the_whole_invoice_may_be_credited_but_not_twice(people, healthy_billing):
    conversation = escalated().conversation
    propose(conversation, people["ana"], amount=TOTAL)
    with pytest.raises(cn.CreditNoteError,
                       match=re.escape(f"{TOTAL_SHOWN} are already requested on it (USD 0,00 left)")):
        propose(conversation, people["ana"], amount="1.00", reason="another reason")
    assert CreditNoteRequest.objects.count() == 1


def test_the_same_proposal_submitted_twice_is_one_request(people, healthy_billing):
    conversation = escalated().conversation
    first, second = propose(conversation, people["ana"]), propose(conversation, people["ana"])
    assert first.pk == second.pk and CreditNoteRequest.objects.count() == 1


def test_no_credit_note_for_a_customer_not_identified(people, healthy_billing):
    conversation = conversation_start(customer_id="")
    served = healthy_billing.requests_served
    with pytest.raises(cn.CreditNoteError, match="not identified"):
        propose(conversation, people["ana"])
    assert not CreditNoteRequest.objects.exists() and healthy_billing.requests_served == served


@pytest.mark.parametrize("outage", ["503", "timeout", "open circuit"])
def test_billing_down_while_proposing_saves_nothing(people, healthy_billing, outage, settings):
    settings.BILLING_API_TIMEOUT_S = 0.2
    conversation = escalated().conversation
    if outage == "open circuit":
        healthy_billing.set_fault("503")
        for _ in range(settings.BILLING_BREAKER_FAILURES):
            billing_client().invoices("C-1001")
        healthy_billing.set_fault(None)
    else:
        healthy_billing.set_fault(outage)
    served = healthy_billing.requests_served
    with pytest.raises(cn.BillingUnavailable, match="Billing system unavailable"):
        propose(conversation, people["ana"])
    assert not CreditNoteRequest.objects.exists()
    assert "credit_note_proposed" not in events_of(conversation)
    if outage == "open circuit":
        assert healthy_billing.requests_served == served  # the breaker did not let the call through


def test_only_desk_staff_propose(people, healthy_billing):
    with pytest.raises(cn.PermissionDenied):
        propose(escalated().conversation, people["ivy"])
    assert not CreditNoteRequest.objects.exists()


# Approving, rejecting, sending -----------------------------------------------------------------

def test_approval_sends_one_credit_note_to_billing(people, healthy_billing,
                                                   django_capture_on_commit_callbacks):
    conversation = escalated().conversation
    request = propose(conversation, people["ana"])
    before, served = billing_notes(healthy_billing), healthy_billing.requests_served
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_approve(request=request, supervisor=people["sol"])
    request.refresh_from_db()
    assert request.status == "sent" and request.billing_credit_note_id.startswith("NC-")
    assert request.billing_status == "pending_review" and request.sent_at
    assert request.decided_by == people["sol"]
    assert billing_notes(healthy_billing) == before + 1 and healthy_billing.requests_served == served + 1
    assert events_of(conversation)[-3:] == ["credit_note_proposed", "credit_note_approved",
                                            "credit_note_sent"]
    sent = Event.objects.get(kind="credit_note_sent")
    assert sent.detail["billing_id"] == request.billing_credit_note_id and sent.actor == people["sol"]


def test_approving_twice_sends_once(people, healthy_billing, django_capture_on_commit_callbacks):
    request = propose(escalated().conversation, people["ana"])
    before = billing_notes(healthy_billing)
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_approve(request=request, supervisor=people["sol"])
    with pytest.raises(cn.CreditNoteError, match=r"already sent to billing \(sol\)"):
        with django_capture_on_commit_callbacks(execute=True):
            cn.credit_note_approve(request=request, supervisor=people["tom"])
    assert billing_notes(healthy_billing) == before + 1


def test_a_supervisor_does_not_approve_their_own_proposal(people, healthy_billing,
                                                           django_capture_on_commit_callbacks):
    request = propose(escalated().conversation, people["sol"])
    with pytest.raises(cn.CreditNoteError, match="another supervisor approves it"):
        cn.credit_note_approve(request=request, supervisor=people["sol"])
    request.refresh_from_db()
    assert request.status == "pending"
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_approve(request=request, supervisor=people["tom"])
    request.refresh_from_db()
    assert request.status == "sent"


def test_a_rejection_needs_a_note_and_never_reaches_billing(people, healthy_billing):
    conversation = escalated().conversation
    request = propose(conversation, people["ana"])
    served = healthy_billing.requests_served
    with pytest.raises(cn.CreditNoteError, match="Say why"):
        cn.credit_note_reject(request=request, supervisor=people["sol"], note="  ")
    assert CreditNoteRequest.objects.get().status == "pending"
    cn.credit_note_reject(request=request, supervisor=people["sol"], note="The outage was under 4 hours.")
    request.refresh_from_db()
    assert (request.status, request.decision_note, request.decided_by) == (
        "rejected", "The outage was under 4 hours.", people["sol"])
    assert healthy_billing.requests_served == served
    assert Event.objects.get(kind="credit_note_rejected").detail["note"] == "The outage was under 4 hours."
    with pytest.raises(cn.CreditNoteError, match="already rejected"):
        cn.credit_note_approve(request=request, supervisor=people["tom"])
    # A rejected amount no longer counts against the invoice.
    propose(conversation, people["ana"], amount=TOTAL)


def test_a_failed_send_then_a_retry_creates_one_credit_note(people, healthy_billing,
                                                            django_capture_on_commit_callbacks):
    conversation = escalated().conversation
    request = propose(conversation, people["ana"])
    before = billing_notes(healthy_billing)
    healthy_billing.set_fault("503")
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_approve(request=request, supervisor=people["sol"])
    request.refresh_from_db()
    assert request.status == "failed" and request.error.startswith("http_503")
    assert billing_notes(healthy_billing) == before
    healthy_billing.set_fault(None)
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_send_retry(request=request, supervisor=people["tom"])
    request.refresh_from_db()
    assert request.status == "sent" and request.error == ""
    assert billing_notes(healthy_billing) == before + 1
    with pytest.raises(cn.CreditNoteError, match="already sent"):
        cn.credit_note_send_retry(request=request, supervisor=people["tom"])
    assert events_of(conversation)[-4:] == ["credit_note_approved", "credit_note_failed",
                                            "credit_note_retried", "credit_note_sent"]


def test_a_retry_after_an_answer_lost_on_the_way_gets_the_same_credit_note(
        people, healthy_billing, django_capture_on_commit_callbacks):
    """Billing created the note but its answer never arrived: the retry's same key replays it."""
    request = propose(escalated().conversation, people["ana"])
    healthy_billing.set_fault("503")
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_approve(request=request, supervisor=people["sol"])
    healthy_billing.set_fault(None)
    request.refresh_from_db()
    lost = billing_client().request_credit_note(  # the attempt whose answer was lost, as billing saw it
        "C-1001", invoice_id=INVOICE, amount="5.00", currency="USD", reason=request.reason,
        idempotency_key=request.idempotency_key, requested_by="tracedesk:ana")
    assert lost.ok
    before = billing_notes(healthy_billing)
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_send_retry(request=request, supervisor=people["sol"])
    request.refresh_from_db()
    assert request.billing_credit_note_id == lost.data["credit_note"]["id"]
    assert billing_notes(healthy_billing) == before


def test_a_retry_while_the_breaker_is_open_fails_without_calling_billing(
        people, healthy_billing, settings, django_capture_on_commit_callbacks):
    request = propose(escalated().conversation, people["ana"])
    healthy_billing.set_fault("503")
    for _ in range(settings.BILLING_BREAKER_FAILURES):
        billing_client().invoices("C-1001")
    served = healthy_billing.requests_served
    with django_capture_on_commit_callbacks(execute=True):
        cn.credit_note_approve(request=request, supervisor=people["sol"])
    request.refresh_from_db()
    assert request.status == "failed" and request.error.startswith("circuit_open")
    assert healthy_billing.requests_served == served


@pytest.mark.parametrize("action", ["approve", "reject", "retry"])
@pytest.mark.parametrize("who", ["ana", "ivy"])
def test_only_supervisors_decide(people, healthy_billing, action, who):
    request = propose(escalated().conversation, people["ana"])
    call = {"approve": lambda u: cn.credit_note_approve(request=request, supervisor=u),
            "reject": lambda u: cn.credit_note_reject(request=request, supervisor=u, note="no"),
            "retry": lambda u: cn.credit_note_send_retry(request=request, supervisor=u)}[action]
    with pytest.raises(cn.PermissionDenied):
        call(people[who])
    assert CreditNoteRequest.objects.get().status == "pending"


# Concurrency against the real database ---------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_two_supervisors_approving_at_once_send_one_credit_note(make_staff, healthy_billing):
    ana = make_staff("ana", "agent")
    sol, tom = make_staff("sol", "supervisor"), make_staff("tom", "supervisor")
    request = propose(escalated().conversation, ana)
    before, served = billing_notes(healthy_billing), healthy_billing.requests_served
    together, outcomes, errors = threading.Barrier(2), {}, []

    def approve(supervisor):
        together.wait(timeout=30)
        try:
            cn.credit_note_approve(request=request, supervisor=supervisor)
            outcomes[supervisor.username] = "approved"
        except cn.CreditNoteError as exc:
            outcomes[supervisor.username] = str(exc)

    threads = [in_thread(lambda s=s: approve(s), errors) for s in (sol, tom)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    request.refresh_from_db()
    winner = request.decided_by.username
    loser = ({"sol", "tom"} - {winner}).pop()
    assert outcomes[winner] == "approved" and "already" in outcomes[loser]
    assert request.status == "sent"
    assert billing_notes(healthy_billing) == before + 1 and healthy_billing.requests_served == served + 1
    assert Event.objects.filter(kind="credit_note_approved").count() == 1


# Over HTTP: the panel on a conversation, the approvers' page, the role matrix ------------------

def test_the_conversation_page_offers_the_customers_invoices_and_lists_the_requests(people, healthy_billing):
    conversation = escalated().conversation
    propose(conversation, people["ana"], amount="3.50", reason="Late technician visit")
    path = reverse("desk:conversation", args=[conversation.pk])
    page = browser_for(people["ana"]).get(path).content.decode()
    panel = page.split('id="credit-notes"')[1].split("</section>")[0]
    assert "Propose a credit note" in panel
    assert f'<option value="{CURRENT}">{_CURRENT.period} · {CURRENT} · {usd(_CURRENT.total.amount)}' in panel
    assert TOTAL_SHOWN in panel  # the contact's notation
    assert "Pending approval" in panel and "USD 3,50" in panel and "Late technician visit" in panel


def test_analysts_do_not_see_the_credit_note_panel(people, healthy_billing):
    conversation = escalated().conversation
    page = browser_for(people["ivy"]).get(reverse("desk:conversation", args=[conversation.pk]))
    assert page.status_code == 200 and 'id="credit-notes"' not in page.content.decode()


def test_proposing_over_http_without_javascript(people, healthy_billing):
    conversation = escalated().conversation
    browser = browser_for(people["ana"])
    response = post(browser, reverse("desk:credit_note_propose", args=[conversation.pk]),
                    {"invoice": INVOICE, "amount": "5.00", "currency": "USD", "reason": "Outage"})
    assert response.status_code == 302 and response.url.endswith("#credit-notes")
    assert CreditNoteRequest.objects.get().proposed_by == people["ana"]
    page = browser.get(response.url).content.decode()
    assert f"Credit note of USD 5,00 on {INVOICE} proposed" in page


def test_a_refused_proposal_keeps_the_input_and_says_why(people, healthy_billing):
    conversation = escalated().conversation
    response = post(browser_for(people["ana"]), reverse("desk:credit_note_propose", args=[conversation.pk]),
                    {"invoice": INVOICE, "amount": "99.00", "currency": "USD", "reason": "Outage <b>x</b>"})
    page = response.content.decode()
    assert response.status_code == 400
    assert f"its total is {TOTAL_SHOWN}" in page
    assert 'value="99.00"' in page and "Outage &lt;b&gt;x&lt;/b&gt;</textarea>" in page
    assert f'<option value="{INVOICE}" selected>' in page
    assert not CreditNoteRequest.objects.exists()


def test_an_amount_of_1e26_is_refused_with_a_message_not_a_500(people, healthy_billing):
    conversation = escalated().conversation
    response = post(browser_for(people["ana"]), reverse("desk:credit_note_propose", args=[conversation.pk]),
                    {"invoice": INVOICE, "amount": "1e26", "currency": "USD", "reason": "Outage"})
    assert response.status_code == 400
    assert "The amount has more than 10 digits before the decimal point." in response.content.decode()
    assert 'value="1e26"' in response.content.decode() and not CreditNoteRequest.objects.exists()


def test_billing_down_while_proposing_over_http_keeps_the_input(people, healthy_billing):
    conversation = escalated().conversation
    healthy_billing.set_fault("503")
    browser = browser_for(people["ana"])
    page = browser.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert "the invoices cannot be listed" in page and "Propose for approval" not in page
    response = post(browser, reverse("desk:credit_note_propose", args=[conversation.pk]),
                    {"invoice": INVOICE, "amount": "5.00", "currency": "USD", "reason": "Outage"})
    page = response.content.decode()
    assert response.status_code == 503
    assert "Billing system unavailable: the invoice cannot be checked, so nothing was saved" in page
    assert f'<option value="{INVOICE}" selected>{INVOICE}</option>' in page and 'value="5.00"' in page
    assert not CreditNoteRequest.objects.exists()


def test_proposing_with_htmx_answers_the_panel(people, healthy_billing):
    conversation = escalated().conversation
    response = post(browser_for(people["ana"]), reverse("desk:credit_note_propose", args=[conversation.pk]),
                    {"invoice": INVOICE, "amount": "5.00", "currency": "VES", "reason": "Outage"}, **HTMX)
    page = response.content.decode()
    assert response.status_code == 200 and page.lstrip().startswith('<section class="card credit-panel"')
    assert "is in USD, not VES" in page and "<html" not in page


def test_the_approvers_page_lists_pending_oldest_first_with_what_a_supervisor_needs(people, healthy_billing):
    first = escalated(name="Marisol Rojas").conversation
    second = escalated(name="John Perez").conversation
    propose(first, people["ana"], reason="Storm outage")
    propose(second, people["ana"], amount="2.00", reason="Duplicate charge")
    page = browser_for(people["sol"]).get(reverse("desk:credit_notes")).content.decode()
    pending = page.split("Waiting for approval")[1].split("Recently decided")[0]
    assert pending.index("Storm outage") < pending.index("Duplicate charge")
    for text in ("Marisol Rojas", "C-1001", INVOICE, "5.00 USD", "ana", "Approve and send", "Reject",
                 reverse("desk:conversation", args=[first.pk])):
        assert text in pending
    assert 'href="/desk/credit-notes/"' in page  # the navigation link for approvers


def test_approve_over_http_twice_sends_once_and_shows_the_billing_id(people, healthy_billing,
                                                                     django_capture_on_commit_callbacks):
    request = propose(escalated().conversation, people["ana"])
    browser = browser_for(people["sol"])
    before = billing_notes(healthy_billing)
    path = reverse("desk:credit_note_approve", args=[request.pk])
    with django_capture_on_commit_callbacks(execute=True):
        first = post(browser, path)
    with django_capture_on_commit_callbacks(execute=True):
        second = post(browser, path)
    assert first.status_code == 302 and first.url == reverse("desk:credit_notes")
    assert second.status_code == 409 and "already sent to billing (sol)" in second.content.decode()
    assert billing_notes(healthy_billing) == before + 1
    request.refresh_from_db()
    decided = browser.get(reverse("desk:credit_notes")).content.decode().split("Recently decided")[1]
    assert request.billing_credit_note_id in decided and "Sent to billing" in decided


@pytest.mark.django_db(transaction=True)  # as in production: the approval commits, then billing is called
def test_approve_with_htmx_answers_the_lists_with_the_outcome(people, healthy_billing):
    request = propose(escalated().conversation, people["ana"])
    response = post(browser_for(people["sol"]), reverse("desk:credit_note_approve", args=[request.pk]),
                    **HTMX)
    page = response.content.decode()
    request.refresh_from_db()
    assert response.status_code == 200 and '<div id="credit-lists">' in page and "<html" not in page
    assert f"Credit note {request.billing_credit_note_id} of 5.00 USD on {INVOICE} sent to billing" in page


def test_the_proposer_supervisor_sees_no_approve_button_on_their_own(people, healthy_billing):
    propose(escalated().conversation, people["sol"])
    page = browser_for(people["sol"]).get(reverse("desk:credit_notes")).content.decode()
    assert "another supervisor approves it" in page and "Approve and send" not in page
    assert "Approve and send" in browser_for(people["tom"]).get(reverse("desk:credit_notes")).content.decode()


def test_reject_over_http_needs_a_note(people, healthy_billing):
    request = propose(escalated().conversation, people["ana"])
    browser = browser_for(people["sol"])
    path = reverse("desk:credit_note_reject", args=[request.pk])
    refused = post(browser, path, {"note": ""})
    assert refused.status_code == 409 and "Say why the credit note is rejected" in refused.content.decode()
    assert post(browser, path, {"note": "Under four hours"}).status_code == 302
    request.refresh_from_db()
    assert request.status == "rejected"
    conversation_page = browser.get(reverse("desk:conversation", args=[request.conversation_id]))
    assert "Rejected: Under four hours" in conversation_page.content.decode()


def test_a_failed_send_shows_the_error_and_a_retry_button_that_sends_it(people, healthy_billing,
                                                                        django_capture_on_commit_callbacks):
    request = propose(escalated().conversation, people["ana"])
    browser = browser_for(people["sol"])
    healthy_billing.set_fault("503")
    with django_capture_on_commit_callbacks(execute=True):
        post(browser, reverse("desk:credit_note_approve", args=[request.pk]))
    healthy_billing.set_fault(None)
    decided = browser.get(reverse("desk:credit_notes")).content.decode().split("Recently decided")[1]
    assert "Sending failed" in decided and "http_503" in decided
    assert reverse("desk:credit_note_retry", args=[request.pk]) in decided
    before = billing_notes(healthy_billing)
    with django_capture_on_commit_callbacks(execute=True):
        assert post(browser, reverse("desk:credit_note_retry", args=[request.pk])).status_code == 302
    request.refresh_from_db()
    assert request.status == "sent" and billing_notes(healthy_billing) == before + 1


ROLES = {"agent": ("agent",), "supervisor": ("supervisor",), "analyst": ("analyst",),
         "kb_editor": ("kb_editor",), "anonymous": None}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("target", ["page", "approve", "reject", "retry", "propose"])
def test_role_matrix(make_staff, people, healthy_billing, role, target):
    conversation = escalated().conversation
    request = propose(conversation, people["ana"])
    if target == "retry":
        CreditNoteRequest.objects.filter(pk=request.pk).update(status="failed", error="http_503: down")
    user = make_staff("someone", *ROLES[role]) if ROLES[role] else None
    browser = browser_for(user)
    before, served = billing_notes(healthy_billing), healthy_billing.requests_served
    if target == "page":
        response = browser.get(reverse("desk:credit_notes"))
    elif target == "propose":
        response = post(browser, reverse("desk:credit_note_propose", args=[conversation.pk]),
                        {"invoice": INVOICE, "amount": "1.00", "currency": "USD", "reason": "Goodwill"})
    else:
        response = post(browser, reverse(f"desk:credit_note_{target}", args=[request.pk]), {"note": "no"})
    allowed = {"page": {"agent", "supervisor"}, "approve": {"supervisor"}, "reject": {"supervisor"},
               "retry": {"supervisor"}, "propose": {"agent", "supervisor"}}[target]
    if role == "anonymous":
        assert response.status_code == 302 and response.url.startswith(reverse("login"))
    elif role in allowed:
        assert response.status_code == (200 if target == "page" else 302)
    else:
        assert response.status_code == 403
        assert CreditNoteRequest.objects.get(pk=request.pk).status == ("failed" if target == "retry"
                                                                       else "pending")
        assert CreditNoteRequest.objects.count() == 1
        assert billing_notes(healthy_billing) == before and healthy_billing.requests_served == served


def test_the_navigation_shows_credit_notes_to_agents_and_supervisors(people):
    link = 'href="/desk/credit-notes/"'
    assert link in browser_for(people["sol"]).get(reverse("desk:queue")).content.decode()
    assert link in browser_for(people["ana"]).get(reverse("desk:queue")).content.decode()
    assert link not in browser_for(people["ivy"]).get(reverse("traces:list")).content.decode()


# Deciding with the invoice's context, and the proposer told -----------------------------------------

DUPLICATE_CUSTOMER = "C-1012"  # the simulator's duplicate-charge customer: its latest invoice bills a line twice


def test_a_proposal_keeps_the_invoice_context_the_approver_decides_with(people, healthy_billing):
    conversation = escalated(customer_id=DUPLICATE_CUSTOMER).conversation
    invoices = cn.customer_invoices(customer_id=DUPLICATE_CUSTOMER).invoices
    latest = invoices[0]
    request = cn.credit_note_propose(conversation=conversation, agent=people["ana"], invoice_id=latest["id"],
                                     amount="1.00", currency="", reason="Charged twice for the plan")
    total = latest["total"]
    assert request.currency == total["currency"]  # no currency given: the invoice's
    context = request.context
    assert (context["total"], context["currency"]) == (total["amount"], total["currency"])
    assert Decimal(context["paid"]) >= 0
    duplicate = next(f for f in context["figures"] if f["name"] == "overcharge")
    assert Decimal(duplicate["amount"]) > 0 and duplicate["label"] == "Charged twice (duplicate)"
    page = browser_for(people["sol"]).get(reverse("desk:credit_notes")).content.decode()
    row = page.split(f'id="credit-note-{request.pk}"')[1].split("</tr>")[0]
    assert f"Total <strong>{total['amount']} {total['currency']}</strong>" in row
    assert f"paid <strong>{context['paid']} {total['currency']}</strong>" in row
    assert f"Charged twice (duplicate): <strong>{duplicate['amount']} {total['currency']}</strong>" in row
    assert "Charged twice for the plan" in row and f'href="/desk/conversations/{conversation.pk}/"' in row


def test_the_proposer_sees_the_decision_in_the_thread_and_in_my_proposals(people, healthy_billing,
                                                                          django_capture_on_commit_callbacks):
    conversation = escalated().conversation
    approved = propose(conversation, people["ana"])
    rejected = propose(conversation, people["ana"], amount="2.00", reason="Goodwill")
    with django_capture_on_commit_callbacks(execute=True):  # billing is told once the approval commits
        cn.credit_note_approve(request=approved, supervisor=people["sol"])
    cn.credit_note_reject(request=rejected, supervisor=people["tom"], note="Not covered by the policy")
    ana = browser_for(people["ana"])
    thread = ana.get(reverse("desk:conversation", args=[conversation.pk])).content.decode()
    assert f"Supervisor sol approved the credit note for USD 5,00 on invoice {INVOICE}" in thread
    assert (f"Supervisor tom rejected the credit note for USD 2,00 on invoice {INVOICE}: Not covered by the policy"
            in thread)
    assert f"credit note of USD 5,00 on invoice {INVOICE} sent to billing, which filed it as" in thread
    mine = ana.get(reverse("desk:credit_notes")).content.decode()
    assert "Waiting for approval" not in mine  # an agent sees only their own proposals
    row = mine.split(f'id="my-credit-note-{rejected.pk}"')[1].split("</tr>")[0]
    assert "Rejected" in row and "by tom" in row and "Not covered by the policy" in row
    row = mine.split(f'id="my-credit-note-{approved.pk}"')[1].split("</tr>")[0]
    assert "Sent to billing" in row and "by sol" in row
    assert f'id="my-credit-note-{approved.pk}"' not in browser_for(people["tom"]).get(
        reverse("desk:credit_notes")).content.decode()


def test_the_admin_lists_credit_note_requests_read_only(admin_client, people, healthy_billing):
    propose(escalated().conversation, people["ana"])
    page = admin_client.get("/admin/desk/creditnoterequest/")
    assert page.status_code == 200 and INVOICE in page.content.decode()
    assert admin_client.get("/admin/desk/creditnoterequest/add/").status_code == 403


# The proposer hears the decision ---------------------------------------------------------------

@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_the_proposer_is_told_the_decision_in_the_desk_header(people, healthy_billing, decision,
                                                              django_capture_on_commit_callbacks):
    from desk.models import Notification

    conversation = escalated().conversation
    request = propose(conversation, people["ana"], amount="3.50")
    with django_capture_on_commit_callbacks(execute=True):
        if decision == "approve":
            cn.credit_note_approve(request=request, supervisor=people["sol"])
        else:
            cn.credit_note_reject(request=request, supervisor=people["sol"], note="Not covered by the policy")
    told = Notification.objects.get(recipient=people["ana"])
    verb = "approved" if decision == "approve" else "rejected"
    # one notation: the amount as the thread and the account panel write it for the (Spanish-speaking) contact
    assert told.text.startswith(f"Supervisor sol {verb} the credit note for USD 3,50 on invoice {INVOICE}")
    assert not Notification.objects.filter(recipient=people["sol"]).exists()
    ana = browser_for(people["ana"])
    header = ana.get(reverse("desk:queue")).content.decode().split('id="notifications"')[1].split("</header>")[0]
    assert told.text in header
    thread = ana.get(told.url).content.decode().split('id="thread"')[1]
    assert f"Supervisor sol {verb} the credit note for USD 3,50 on invoice {INVOICE}" in thread
    dismissed = post(ana, reverse("desk:notification_dismiss", args=[told.pk]))
    assert dismissed.status_code == 302
    told.refresh_from_db()
    assert told.dismissed_at is not None and told.dismissed_by == people["ana"]
    assert told.text not in ana.get(reverse("desk:queue")).content.decode()
    assert post(browser_for(people["tom"]), reverse("desk:notification_dismiss", args=[told.pk])).status_code == 404
