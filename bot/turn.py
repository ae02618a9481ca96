"""One bot turn, from a stored inbound message to a sent reply, an escalation or silence — always traced.

The outline: gate (a person holds the conversation → write nothing) → decide (what kind of message, who
the customer is, whether it answers a question the bot asked) → answer (bot/answering.py: billing facts,
retrieval, the writer's loop in bot/drafting.py) → finish (the reply, the trace, the escalation and what
the turn learnt, in one transaction). Every arrow that points away from "send" is a refusal path: a human
holds the conversation, the customer wants a person, the bot cannot do what is asked, the billing system
is down, nothing grounds an answer, the writer's figures do not check out, or the reply breaks the
channel's rules. Each ends in an Escalation with a reason and a summary for the agent.
"""

from __future__ import annotations

import time
from dataclasses import replace

from django.conf import settings
from django.db import transaction

from billing.api.client import billing_client
from bot import clarify, identify
from bot.answering import answer, needs_told
from bot.configuration import configuration_parts
from bot.context import TurnContext
from bot.escalation import Reason, agent_summary, customer_notice, decline_reply, situation_note
from bot.followups import leaves_referent_open, previous_question, with_previous
from bot.outcomes import Answered, Clarify, Declined, Escalated, QueryAnswer, Silenced, outcome_name
from bot.recorder import TurnRecorder
from bot.routing.capability import account_capability
from bot.routing.classifier import get_router
from bot.routing.decision import asks_what_would_follow, yield_to_published_number
from bot.routing.types import Route
from bot.smalltalk import small_talk_reply
from bot.writer import get_writer
from core.model_costs import model_call
from desk.channel import MEDIA_KINDS, UNREADABLE_KINDS
from desk.models import Message
from desk.credit_notes import BotCreditNote, bot_reply_with_credit_note
from desk.services import bot_reply_record, conversation_escalate
from desk.turns import TurnLease, turn_state_save
from kb.search import current_index_version
from kb.selectors import documents_publishing
from traces.draft import TraceDraft
from traces.fingerprint import ConfigurationParts
from traces.models import Trace
from traces.services import trace_record

HISTORY_LIMIT = 6  # earlier text messages the writer reads


def run_turn(*, message_id: int, writer=None, billing=None, clock=time.perf_counter) -> Trace | None:
    """Run the bot turn for one inbound message; return its trace (None when the message was already handled)."""
    lease = TurnLease(message_id)
    if not lease.take():
        return None
    try:
        message = Message.objects.select_related("conversation__contact").get(pk=message_id)
        conversation = message.conversation
        context = _context(conversation, message)
        recorder = TurnRecorder(clock, on_stage=lease.renew)
        recorder.draft.query, recorder.draft.language = message.text, context.language
        with recorder.stage("gate"):
            # Loaded with the message just now: a second query would read the same committed row.
            held = conversation.held_by_human
        writer = writer or get_writer()
        if held:
            outcome = Silenced("gate")
        else:
            outcome = _decide(recorder, message, context, writer=writer, billing=billing)
        return _finish(recorder, lease, message, conversation, context, outcome,
                       configuration=_configuration(recorder.draft, writer))
    except BaseException:
        lease.give_up()  # nothing was recorded (one transaction): let the sweep answer it again soon
        raise


def answer_query(*, query: str, language: str = "es", customer_id: str = "", history=(), writer=None,
                 billing=None, router=None, clock=time.perf_counter, at_index_version: int | None = None) -> QueryAnswer:
    """Decide the reply to a query from plain inputs; write no row and send nothing.

    The same path as a live turn (routing, small talk, billing, retrieval, writer, verifier with
    rewrites, humanizer) for a customer who is either known (`customer_id`) or cannot be found by
    channel. `history` is the earlier (role, text) pairs of the conversation, oldest first.
    `at_index_version` searches the knowledge base as it was at that index version (a replay).
    """
    recorder = TurnRecorder(clock)
    recorder.draft.query, recorder.draft.language = query, language
    context = TurnContext(customer_id=customer_id or "", language=language, history=list(history),
                          index_version=at_index_version)
    routing = _route(recorder, query, kind="text", default_language=language, router=router)
    said = query
    routing, query = _follow_up(recorder, routing, query, context, router=router)
    outcome = (_refusal(routing, kind="text") or _small_talk(routing, context.history)
               or _which_one(recorder, said, context))
    if outcome is None:
        outcome = _not_a_repeat(answer(recorder, routing, query, context=context, writer=writer or get_writer(),
                                       billing=billing or billing_client()), context, query)
    return QueryAnswer(outcome, recorder.finish())


def _context(conversation, message) -> TurnContext:
    """Read what the turn starts from: the contact, the conversation's pending questions, the earlier messages."""
    contact = conversation.contact
    earlier = (conversation.messages.filter(pk__lt=message.pk, kind="text").exclude(text="")
               .order_by("-pk")[:HISTORY_LIMIT])
    history = [("user" if m.direction == Message.Direction.INBOUND else "assistant", m.text) for m in reversed(earlier)]
    return TurnContext(customer_id=contact.customer_id, language=contact.language, history=history,
                       channel=conversation.channel, wa_id=contact.wa_id, pending_query=conversation.pending_query,
                       pending_clarification=conversation.pending_clarification or {}, files_credit_notes=True)


def _routed(text, *, kind="text", default_language, router=None):
    """Route a message: the router, then the knowledge base's published numbers over a guess that a number is the
    customer's (yield_to_published_number says which decisions may yield)."""
    routing = (router or get_router()).route(text, kind=kind, default_language=default_language)
    if kind == "text" and routing.route in (Route.ACCOUNT, Route.UNSUPPORTED):
        routing = yield_to_published_number(routing, text, documents_publishing(text))
    return routing


def _record_route(draft: TraceDraft, routing) -> None:
    draft.route, draft.language, draft.routing_rule = routing.route.value, routing.language, routing.rule
    draft.route_confidence, draft.router_version = round(routing.confidence, 4), routing.version


def _route(recorder, text, *, kind, default_language, router=None):
    with recorder.stage("route"):
        routing = _routed(text, kind=kind, default_language=default_language, router=router)
    draft = recorder.draft
    _record_route(draft, routing)
    if routing.usage is not None:  # a model routed: its call is priced with the turn's others
        draft.record_call(model_call(role="router", model=routing.model, usage=routing.usage,
                                     prices=settings.MODEL_PRICES).as_json())
    return routing


def _refusal(routing, *, kind) -> Escalated | Declined | None:
    """Return what to do with a message the bot must not answer at all (escalate or decline), None otherwise."""
    if routing.out_of_scope:
        return Declined(decline_reply(routing.language), why=routing.rule)
    if routing.route == Route.MEDIA:
        return Escalated(_unreadable_reason(kind), [f"The customer sent a {kind} message the bot cannot read."])
    if routing.route == Route.HUMAN:
        return Escalated(Reason.USER_REQUEST)
    if routing.route == Route.UNSUPPORTED and not needs_told(routing):
        return Escalated(Reason.CAPABILITY_MISSING, [f"Asked for an action ({routing.rule}); the bot only answers."])
    return None


def _unanswerable(message) -> Silenced | Escalated | None:
    """Return what to do with a message the bot must not put through the answer path, None otherwise."""
    payload = message.payload if isinstance(message.payload, dict) else {}
    if payload.get("deleted"):
        return Silenced("deleted")  # the customer took it back before the turn ran
    if payload.get("truncated"):
        return Escalated(Reason.CAPABILITY_MISSING, [
            f"The message had {payload.get('text_length', 'over 4096')} characters and was cut; a person should read "
            "it whole."])
    if message.kind in UNREADABLE_KINDS:
        return Escalated(_unreadable_reason(message.kind),
                         [f"The customer sent a {message.kind} message the bot cannot read."])
    return None


def _unreadable_reason(kind: str) -> Reason:
    """A photo, voice note, video, document or sticker is MEDIA (the agent sees the file on the card); a
    location, shared contacts, an order or an unsupported message is something the bot cannot do."""
    return Reason.MEDIA if kind in MEDIA_KINDS else Reason.CAPABILITY_MISSING


def _small_talk(routing, history) -> Answered | Silenced | None:
    """Answer a greeting, thanks or goodbye; stay silent on a bare acknowledgement of a bot answer."""
    if routing.route != Route.SMALLTALK:
        return None
    after_bot_answer = bool(history) and history[-1][0] == "assistant"
    reply = small_talk_reply(routing.courtesy, routing.language, after_bot_answer=after_bot_answer)
    return Answered(reply) if reply else Silenced("ack")


def _decide(recorder, message, context: TurnContext, *, writer, billing):
    """Decide what the message is (a refusal, small talk, the answer to a question the bot asked) and answer it."""
    draft = recorder.draft
    unanswerable = _unanswerable(message)
    if unanswerable is not None:
        if message.kind in UNREADABLE_KINDS:
            draft.route, draft.routing_rule = "media", f"kind: {message.kind}"
        return unanswerable
    routing = _route(recorder, message.text, kind=message.kind, default_language=context.language)
    if routing.language != context.language and message.text.strip():
        context.language = routing.language
    if not context.pending_query and not context.pending_clarification:
        routing, followed = _follow_up(recorder, routing, message.text, context)
    else:
        followed = message.text

    awaiting_identity = bool(context.pending_query and not context.customer_id)
    # A reply to a clarifying question ("el anual") is read as the choice, whatever it reads like on its own.
    chosen = (clarify.choose(message.text, clarify.pending_options(context.pending_clarification))
              if context.pending_clarification else None)
    if awaiting_identity and routing.route not in (Route.HUMAN, Route.MEDIA) and identify.holds_identifier(
            message.text):
        refusal = None  # the answer to "send me your account number", whatever it reads like on its own
    elif chosen is not None and routing.route not in (Route.HUMAN, Route.MEDIA):
        refusal = None
    else:
        refusal = _refusal(routing, kind=message.kind) or _small_talk(routing, context.history[-1:])
    if refusal is not None:
        return refusal
    if not context.pending_query and not context.pending_clarification:
        which_one = _which_one(recorder, message.text, context)
        if which_one is not None:
            return which_one

    query = followed
    billing = billing or billing_client()

    # A reply to "send me your account number": link the customer, then answer the question they asked first.
    if context.pending_query and not context.customer_id:
        linked = identify.from_message(recorder, billing, message.text)
        if isinstance(linked, Escalated):
            return linked
        if linked:
            context.customer_id = linked
            query = context.pending_query
            routing = replace(routing, route=Route.ACCOUNT, capability=account_capability(query),
                              account_evidence=False)
            draft.query, draft.route = query, Route.ACCOUNT.value
            draft.routing_rule = "identified; original question"
        context.pending_query = ""

    # A reply to a clarifying question: answer the question asked before with the option picked.
    if context.pending_clarification:
        stored = context.pending_clarification
        if chosen is not None:
            query = stored["query"]
            routing = _routed(query, default_language=context.language)
            draft.query, draft.route = query, routing.route.value
            draft.routing_rule = f"clarified: {chosen.label}; original question"[:100]
        context.pending_clarification = {}

    return _not_a_repeat(answer(recorder, routing, query, context=context, writer=writer, billing=billing,
                                chosen=chosen), context, query)


def _follow_up(recorder, routing, text, context: TurnContext, *, router=None):
    """Read a follow-up ("¿y el mes pasado?", "and for a business?") with the customer's previous question: route and
    answer the two together. A request for a person, courtesy and media are the message's own."""
    if routing.route in (Route.HUMAN, Route.SMALLTALK, Route.MEDIA):
        return routing, text
    joined = with_previous(text, context.history)
    if joined == text:
        return routing, text
    own = routing
    routing = _route(recorder, joined, kind="text", default_language=context.language, router=router)
    context.previous_reply = context.last_reply()
    if own.route == Route.DOCUMENT and routing.route == Route.ACCOUNT and asks_what_would_follow(text):
        # "y si la pagamos tarde, ¿cuánto es el recargo?" after "¿de cuánto es la factura este mes?" asks the rule
        # that would apply, not the bill again: the previous question's records do not make it a records question.
        _record_route(recorder.draft, own)
        recorder.draft.routing_rule = f"{own.rule}; follow-up asking what would follow"[:100]
        return own, text
    recorder.draft.routing_rule = f"{recorder.draft.routing_rule}; follow-up of the previous question"[:100]
    return routing, joined


def _which_one(recorder, text: str, context: TurnContext) -> Clarify | None:
    """A follow-up that points at "the other one" or "mine" and names nothing else ("¿y el otro?" after one plan's
    price): ask which the customer means rather than guess. Nothing is kept waiting: the reply that names it is a
    follow-up of the question before ("el de 600" is read with "¿cuánto cuesta el plan Fibra 300?")."""
    before = previous_question(context.history) if leaves_referent_open(text) else ""
    if not before:
        return None
    recorder.draft.routing_rule = f"{recorder.draft.routing_rule}; asked which one"[:100]
    return Clarify(clarify.question("which_one", (), context.language),
                   clarify.pending("which_one", before, (), context.language))


def _not_a_repeat(outcome, context: TurnContext, query: str):
    """Never send the same reply twice in a row to two different questions: a person reads the second."""
    if not isinstance(outcome, Answered) or not context.history:
        return outcome
    last_reply = context.last_reply()
    last_question = next((said for role, said in reversed(context.history) if role == "user"), "")
    if last_reply.strip() == outcome.text.strip() and last_question.strip() != query.strip():
        return Escalated(Reason.NO_CONTEXT, ["The reply would repeat the previous one word for word; the customer "
                                             "asked something else."])
    return outcome


def _configuration(draft: TraceDraft, writer) -> ConfigurationParts:
    """Return the configuration the turn ran under: the router and index it used, or the ones in force.

    A turn that stopped before routing or retrieval (a held conversation, a refusal) still ran under
    the configured router and the current index, so every trace, refusals included, carries one.
    """
    return configuration_parts(
        writer=writer,
        router_version=draft.router_version or get_router().version,
        index_version=draft.index_version if draft.index_version is not None else current_index_version(),
    )


def _finish(recorder, lease, message, conversation, context: TurnContext, outcome, *,
            configuration: ConfigurationParts) -> Trace | None:
    """Record the reply, the trace, the escalation and what the turn learnt in one transaction: all or none.

    The reply's delivery is queued on commit, so a turn whose trace cannot be written sends nothing, and
    its retry (the sweep, once the lease is given up) sends the one reply. Returns None when another run
    took the message over meanwhile (this one's lease expired).
    """
    with transaction.atomic():
        if not lease.held():
            return None
        turn_state_save(contact_id=conversation.contact_id, conversation_id=conversation.pk, **context.changes())
        sent = None
        if isinstance(outcome, (Answered, Clarify, Declined)):
            with recorder.stage("send"):
                sent, outcome = _reply_record(conversation, outcome)
            if sent is None:
                outcome = Silenced("send")
            else:
                recorder.draft.final_text = outcome.text
                recorder.draft.citations = getattr(outcome, "citations", [])
        escalation = None
        if isinstance(outcome, Answered):
            recorder.draft.internal_note = outcome.note
        if isinstance(outcome, Escalated):
            summary = agent_summary(outcome.reason, query=message.text or f"[{message.kind}]",
                                    details=outcome.details)
            recorder.draft.internal_note = outcome.note or _situation(recorder.draft, context)
            escalation = conversation_escalate(
                conversation_id=conversation.pk, reason=outcome.reason.value, summary=summary.summary,
                detail=summary.detail, suggested_reply=outcome.suggestion,
                notice=customer_notice(context.language), internal_note=recorder.draft.internal_note,
            )
        draft = recorder.finish()
        draft.customer_id = context.customer_id or draft.customer_id
        return trace_record(
            draft=draft, configuration=configuration, conversation=conversation, message=message, reply=sent,
            escalation=escalation, outcome=outcome_name(outcome),
            escalation_reason=outcome.reason.value if isinstance(outcome, Escalated) else "",
            silenced_at=outcome.where if isinstance(outcome, Silenced) else "",
        )


def _reply_record(conversation, outcome):
    """Record the reply; an answer that drafted a credit note files it with the reply (desk.credit_notes), and is
    sent without the sentence that announces it when the desk files none. Return the reply and the outcome sent."""
    proposal = getattr(outcome, "proposal", None)
    if proposal is None:
        return bot_reply_record(conversation_id=conversation.pk, text=outcome.text), outcome
    sent, filed = bot_reply_with_credit_note(
        conversation_id=conversation.pk, text=outcome.text,
        credit_note=BotCreditNote(invoice_id=proposal.invoice_id, amount=proposal.amount, currency=proposal.currency,
                                  reason=proposal.reason, invoice_total=proposal.invoice_total,
                                  context=proposal.context, text_without=outcome.text_without))
    if filed is None:
        outcome = replace(outcome, text=outcome.text_without, proposal=None)
    return sent, outcome


def _situation(draft, context: TurnContext) -> str:
    """Return what the bot already knew when it escalated without a writer's note."""
    return situation_note(
        customer_id=context.customer_id or draft.customer_id,
        tool_calls=draft.tool_calls,
        retrieval=draft.retrieval,
        route=draft.route,
    )
