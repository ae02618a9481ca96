"""The bot drafts the credit note its verified duplicate-charge answer finds; a supervisor decides, as for an agent."""

import uuid
from decimal import Decimal

import pytest

from bot.turn import run_turn
from bot.writer import TemplateWriter
from core import clock
from desk import credit_notes as cn
from desk.models import CreditNoteRequest, Message, Notification
from desk.notifications import notifications_open
from desk.services import conversation_take_over
from tests.support.billing_sim import AS_OF, client_for, simulator_for
from tests.support.factories import conversation_start, events_of

pytestmark = pytest.mark.django_db
QUESTION = {"es": "¿Por qué mi factura llegó más alta este mes?", "en": "Why is my bill higher this month?"}


@pytest.fixture(autouse=True)
def _kb(sample_kb):
    return sample_kb


@pytest.fixture(scope="module")
def _billing_as_of():
    simulator = simulator_for(flipped=False)
    with client_for(simulator, AS_OF) as client:
        yield simulator, client


@pytest.fixture
def pinned(_billing_as_of):
    with clock.pinned(AS_OF):
        yield _billing_as_of


def duplicate_customer(pinned, variant):
    return pinned[0].data.scenarios["duplicate_charge"][variant]


def say(conversation, text, billing):
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="text",
                                     text=text, provider_message_id=f"wamid.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk, writer=TemplateWriter(), billing=billing)


def start(customer_id, language="es"):
    return conversation_start(name="Test", customer_id=customer_id, language=language, inbound_at=None)


def test_a_verified_duplicate_charge_drafts_the_credit_note_and_says_it_is_reviewed(pinned, healthy_billing):
    customer_id = duplicate_customer(pinned, 5)
    conversation = start(customer_id)
    trace = say(conversation, QUESTION["es"], pinned[1])
    assert trace.outcome == "answered"
    [request] = CreditNoteRequest.objects.filter(conversation=conversation)
    assert (request.status, request.amount, request.currency, request.drafted_by_bot, request.proposed_by) == (
        "pending", Decimal("162.40"), "USD", True, None)
    assert request.invoice_id == trace.tool_calls[0]["data"]["current_invoice"]["id"]
    assert request.reply.text == trace.final_text
    assert trace.final_text.endswith("Registré la solicitud de corrección por 162,40 USD; un supervisor la revisa y "
                                     "te aviso por aquí.")
    # the verifier checked the sentence's figure against the fact that states the overcharge
    check = trace.attempts[-1]["proposal"]
    assert check["verdict"]["grounded"] and check["amount"] == "162.40"
    assert [f["name"] for f in request.context["figures"]] == ["overcharge"] or "overcharge" in [
        f["name"] for f in request.context["figures"]]
    assert events_of(conversation)[-1] == "credit_note_proposed"


def test_the_same_finding_asked_again_is_one_proposal(pinned, healthy_billing):
    first = say(start(duplicate_customer(pinned, 5)), QUESTION["es"], pinned[1])
    # The customer asks the same again (a new conversation: the earlier one's reply would be a word-for-word repeat).
    again = say(start(duplicate_customer(pinned, 5)), QUESTION["es"], pinned[1])
    [request] = CreditNoteRequest.objects.filter(drafted_by_bot=True)
    assert request.reply.text == first.final_text
    assert again.outcome == "answered" and "Registré la solicitud de corrección por 162,40 USD" in again.final_text


def test_an_english_customer_is_told_in_english(pinned, healthy_billing):
    conversation = start(duplicate_customer(pinned, 1), language="en")
    trace = say(conversation, QUESTION["en"], pinned[1])
    [request] = CreditNoteRequest.objects.filter(conversation=conversation)
    assert "I have filed a correction request for" in trace.final_text
    assert f"{request.amount:.2f}" in trace.final_text


def test_no_proposal_for_a_rejected_finding_nor_when_a_person_holds_it(pinned, healthy_billing, make_staff):
    sol = make_staff("sol", "supervisor")
    conversation = start(duplicate_customer(pinned, 5))
    say(conversation, QUESTION["es"], pinned[1])
    request = CreditNoteRequest.objects.get(conversation=conversation)
    cn.credit_note_reject(request=request, supervisor=sol, note="Already refunded by phone")
    again = say(conversation, QUESTION["es"], pinned[1])
    assert "Registré la solicitud" not in again.final_text
    assert CreditNoteRequest.objects.filter(conversation=conversation).count() == 1
    held = start(duplicate_customer(pinned, 5))
    conversation_take_over(conversation_id=held.pk, agent=make_staff("ana", "agent"))
    assert say(held, QUESTION["es"], pinned[1]).outcome == "silenced"
    assert not CreditNoteRequest.objects.filter(conversation=held).exists()


def test_an_unidentified_customer_gets_no_proposal(pinned, healthy_billing):
    conversation = start("")
    say(conversation, QUESTION["es"], pinned[1])
    assert not CreditNoteRequest.objects.exists()


def test_approval_notifies_the_desk_and_adds_the_line(pinned, healthy_billing, make_staff):
    sol, ana = make_staff("sol", "supervisor"), make_staff("ana", "agent")
    conversation = start(duplicate_customer(pinned, 5))
    say(conversation, QUESTION["es"], pinned[1])
    request = CreditNoteRequest.objects.get(conversation=conversation)
    cn.credit_note_approve(request=request, supervisor=sol)
    [note] = notifications_open(user=ana)  # nobody holds the conversation: the whole desk is told
    assert note.recipient is None and "Supervisor sol approved the bot's credit note for USD 162,40" in note.text
    assert note.url.endswith(f"?tell={request.pk}#composer")
    from desk.selectors import conversation_thread
    lines = [entry.event_label for entry in conversation_thread(conversation=conversation) if entry.event]
    assert any(line.startswith("Supervisor sol approved the bot's credit note for USD 162,40") for line in lines)


def test_approval_of_a_held_conversation_notifies_its_holder_only(pinned, healthy_billing, make_staff):
    sol, ana, bob = make_staff("sol", "supervisor"), make_staff("ana", "agent"), make_staff("bob", "agent")
    conversation = start(duplicate_customer(pinned, 5))
    say(conversation, QUESTION["es"], pinned[1])
    conversation_take_over(conversation_id=conversation.pk, agent=ana)
    cn.credit_note_approve(request=CreditNoteRequest.objects.get(conversation=conversation), supervisor=sol)
    assert [n.recipient for n in Notification.objects.all()] == [ana]
    assert not list(notifications_open(user=bob))

