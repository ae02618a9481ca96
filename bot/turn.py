"""One bot turn, from a stored inbound message to a sent reply, an escalation or silence — always traced.

Every arrow that points away from "send" is a refusal path: a human holds the conversation,
the customer wants a person, the bot cannot do what is asked, the billing system is down,
nothing grounds an answer, the writer's figures do not check out, or the reply breaks the
channel's rules. Each ends in an Escalation with a reason and a summary for the agent.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from bot import grounding, humanizer
from bot.escalation import Reason, agent_summary, ask_for_identity, customer_notice
from bot.routing import Route, route_message
from bot.writer import TemplateWriter, WriterError, WriterRequest, get_writer
from desk.models import Contact, Conversation, Message
from desk.services import bot_reply_record, conversation_escalate
from traces.models import Trace

# A claim older than this without a trace is a crashed turn; a redelivered task may take it over.
STALE_CLAIM = timedelta(minutes=5)
_NATIONAL_ID = re.compile(r"\b([VEJGPvejgp])\s*[-.]?\s*(\d{1,3}(?:[.\s]?\d{3}){1,2}(?:\s*-?\s*\d)?)\b")
_LONG_NUMBER = re.compile(r"\d[\d\s.-]{5,}\d")


@dataclass
class Answered:
    text: str
    citations: list[str] = field(default_factory=list)
    asks_identity: bool = False  # the reply asks for an account number instead of answering


@dataclass
class Escalated:
    reason: Reason
    details: list[str] = field(default_factory=list)
    suggestion: str = ""


@dataclass
class Silenced:
    where: str


class TurnRecorder:
    """Collects what the trace needs while the turn runs, and times each stage."""

    def __init__(self, clock):
        self.clock = clock
        self.started = clock()
        self.latency: dict[str, float] = {}
        self.fields: dict = {"retrieval": [], "tool_calls": [], "evidence": [], "attempts": [], "humanizer": {},
                             "citations": [], "token_usage": {}}

    @contextmanager
    def stage(self, name: str):
        began = self.clock()
        try:
            yield
        finally:
            self.latency[name] = round((self.clock() - began) * 1000, 3)

    def total_ms(self) -> float:
        return round((self.clock() - self.started) * 1000, 3)


def _claim(message_id: int) -> bool:
    """Atomically claim an inbound message for one turn; False when another run has it or had it."""
    now = timezone.now()
    claimed = Message.objects.filter(pk=message_id, direction=Message.Direction.INBOUND,
                                     turn_claimed_at__isnull=True).update(turn_claimed_at=now)
    if claimed:
        return True
    # A crashed turn leaves a claim but no trace; after a while a redelivery may finish the job.
    return bool(
        Message.objects.filter(pk=message_id, turn_claimed_at__lt=now - STALE_CLAIM)
        .exclude(traces__isnull=False)
        .update(turn_claimed_at=now)
    )


def run_turn(*, message_id: int, writer=None, billing=None, clock=time.perf_counter) -> Trace | None:
    """Run the bot turn for one inbound message; return its trace (None when the message was already handled)."""
    if not _claim(message_id):
        return None
    message = Message.objects.select_related("conversation__contact").get(pk=message_id)
    conversation = message.conversation
    contact = conversation.contact
    recorder = TurnRecorder(clock)
    recorder.fields.update(query=message.text, language=contact.language)
    with recorder.stage("gate"):
        # Loaded with the message just now: a second query would read the same committed row.
        held = conversation.held_by_human
    if held:
        outcome = Silenced("gate")
    else:
        outcome = _decide(recorder, message, conversation, contact, writer=writer, billing=billing)
    return _finish(recorder, message, conversation, contact, outcome)


@dataclass
class QueryAnswer:
    """What the bot decided for one query, with everything a trace would record about it."""

    outcome: Answered | Escalated
    fields: dict
    latency_ms: dict
    total_ms: float


def answer_query(*, query: str, language: str = "es", customer_id: str = "", history=(), writer=None,
                 billing=None, clock=time.perf_counter) -> QueryAnswer:
    """Decide the reply to a query from plain inputs; write no row and send nothing.

    The same path as a live turn (routing, billing, retrieval, writer, verifier with rewrites,
    humanizer) for a customer who is either known (`customer_id`) or cannot be found by channel.
    `history` is the earlier (role, text) pairs of the conversation, oldest first.
    """
    recorder = TurnRecorder(clock)
    recorder.fields.update(query=query, language=language)
    routing = _route(recorder, query, kind="text", default_language=language)
    outcome = _refusal(routing, kind="text")
    if outcome is None:
        outcome = _answer(recorder, routing, query, customer_id=customer_id or "",
                          resolve_customer=lambda _query: None, history=lambda: list(history),
                          writer=writer, billing=billing or _billing())
    return QueryAnswer(outcome, recorder.fields, recorder.latency, recorder.total_ms())


def _route(recorder, text, *, kind, default_language):
    with recorder.stage("route"):
        routing = route_message(text, kind=kind, default_language=default_language)
    recorder.fields.update(route=routing.route.value, language=routing.language, routing_rule=routing.rule)
    return routing


def _refusal(routing, *, kind) -> Escalated | None:
    """Return the escalation for a message the bot must not answer at all, None otherwise."""
    if routing.route == Route.MEDIA:
        return Escalated(Reason.CAPABILITY_MISSING, [f"The customer sent a {kind} message the bot cannot read."])
    if routing.route == Route.HUMAN:
        return Escalated(Reason.USER_REQUEST)
    if routing.route == Route.UNSUPPORTED:
        return Escalated(Reason.CAPABILITY_MISSING, [f"Asked for an action ({routing.rule}); the bot only answers."])
    return None


def _decide(recorder, message, conversation, contact, *, writer, billing):
    fields = recorder.fields
    routing = _route(recorder, message.text, kind=message.kind, default_language=contact.language)
    if routing.language != contact.language and message.text.strip():
        Contact.objects.filter(pk=contact.pk).update(language=routing.language)
        contact.language = routing.language

    refusal = _refusal(routing, kind=message.kind)
    if refusal is not None:
        return refusal

    query = message.text
    billing = billing or _billing()

    # A reply to "send me your account number": link the customer, then answer the question they asked first.
    if conversation.pending_query and not contact.customer_id:
        linked = _identify_from_message(recorder, billing, message.text)
        if isinstance(linked, Escalated):
            return linked
        if linked:
            Contact.objects.filter(pk=contact.pk).update(customer_id=linked)
            contact.customer_id = linked
            query = conversation.pending_query
            original = route_message(query, default_language=contact.language)
            capability = original.capability or "account_summary"
            routing = replace(original, route=Route.ACCOUNT, capability=capability)
            fields.update(query=query, route=Route.ACCOUNT.value, routing_rule="identified; original question")
        Conversation.objects.filter(pk=conversation.pk).update(pending_query="")
        conversation.pending_query = ""

    def resolve_customer(asked):
        found = _identify_by_channel(recorder, billing, conversation, contact)
        if not found and not isinstance(found, Escalated):
            # Unknown: the bot asks who they are and keeps the question for when it knows.
            Conversation.objects.filter(pk=conversation.pk).update(pending_query=asked)
        return found

    return _answer(recorder, routing, query, customer_id=contact.customer_id, resolve_customer=resolve_customer,
                   history=lambda: _history(conversation, message), writer=writer, billing=billing)


def _answer(recorder, routing, query, *, customer_id, resolve_customer, history, writer, billing):
    """Answer a routed, answerable query: billing facts, retrieval, writer, verifier, humanizer.

    `resolve_customer(query)` finds an unknown customer for an account question: their id, None
    (then the bot asks for it) or an Escalated; `history()` returns the earlier turns for the writer.
    """
    fields = recorder.fields
    facts, capability = [], routing.capability
    if routing.route == Route.ACCOUNT:
        if not customer_id:
            found = resolve_customer(query)
            if isinstance(found, Escalated):
                return found
            if not found:
                return Answered(ask_for_identity(routing.language), asks_identity=True)
            customer_id = found
        with recorder.stage("billing"):
            result = getattr(billing, capability)(customer_id)
        fields["tool_calls"].append(result.to_json())
        if result.should_escalate:
            code = result.error.code if result.error else "unknown"
            return Escalated(Reason.TOOL_ERROR, [f"{capability} failed: {code}."])
        facts = list(result.evidence)
    fields["customer_id"] = customer_id

    with recorder.stage("retrieve"):
        from kb.models import EmbeddingSpace
        from kb.search import search

        space = EmbeddingSpace.objects.first()
        fields["index_version"] = space.index_version if space else None
        result = search(query, k=5)
    fields["retrieval"] = [
        {key: value for key, value in hit.as_dict().items() if key != "text"} for hit in result.fused
    ]
    # The search decides whether the turn has context (kb/context.py); it never drops a kept chunk.
    context = result.results if result.context.has_context else []
    if not context and not facts:
        return Escalated(Reason.NO_CONTEXT, [f"No context: {result.context.reason}."])

    evidence, sources = _evidence(context, facts)
    fields["evidence"] = [
        {"id": e.id, "text": e.text, "value": e.value, **sources[e.id]} for e in evidence
    ]
    writer = writer or get_writer()
    fields.update(prompt_version=writer.prompt_version, model=writer.name)
    request = WriterRequest(query=query, language=routing.language, evidence=evidence, sources=sources,
                            history=history())
    return _write_and_verify(recorder, writer, request, template=isinstance(writer, TemplateWriter))


def _billing():
    from billing.client import billing_client

    return billing_client()


def _identify_by_channel(recorder, billing, conversation, contact):
    """Find the customer behind a WhatsApp number; None when unknown (ask them), Escalated on an outage."""
    if conversation.channel != "whatsapp" or not contact.wa_id:
        return None
    with recorder.stage("identify"):
        result = billing.find_customer(whatsapp_id=contact.wa_id)
    recorder.fields["tool_calls"].append(result.to_json())
    if result.should_escalate:
        return Escalated(Reason.TOOL_ERROR, ["Customer lookup by WhatsApp number failed."])
    if not result.ok:
        return None
    customer_id = result.data["customer"]["id"]
    Contact.objects.filter(pk=contact.pk).update(customer_id=customer_id)
    contact.customer_id = customer_id
    return customer_id


def _identify_from_message(recorder, billing, text):
    """Look up the account number or national id the customer just sent; '' when there is none."""
    lookups = []
    for match in _NATIONAL_ID.finditer(text):
        lookups.append({"national_id": f"{match.group(1).upper()}-{re.sub(r'[^0-9]', '', match.group(2))}"})
    for match in _LONG_NUMBER.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if len(digits) >= 7:
            lookups.extend([{"account_number": digits}, {"national_id": f"V-{digits}"}])
    if not lookups:
        return ""
    with recorder.stage("identify"):
        for lookup in lookups:
            result = billing.find_customer(**lookup)
            recorder.fields["tool_calls"].append(result.to_json())
            if result.should_escalate:
                return Escalated(Reason.TOOL_ERROR, ["Customer lookup failed."])
            if result.ok:
                return result.data["customer"]["id"]
    return Escalated(Reason.CAPABILITY_MISSING,
                     ["The customer sent an identifier that matches no account; identify them by hand."])


def _evidence(chunks, facts):
    """Number the turn's evidence E1…En: retrieved chunks first, then billing facts."""
    sources = {}
    chunk_items = []
    for number, hit in enumerate(chunks, start=1):
        chunk_items.append(grounding.Evidence(id=f"E{number}", text=hit.text, value=None))
        sources[f"E{number}"] = {"kind": "chunk", "chunk_id": hit.chunk_id, "doc": hit.doc,
                                 "section": hit.section, "language": hit.language}
    fact_items = []
    for number, fact in enumerate(facts, start=len(chunk_items) + 1):
        fact_items.append(grounding.Evidence(id=f"E{number}", text=fact.text, value=fact.value))
        sources[f"E{number}"] = {"kind": "fact", "fact_kind": fact.kind, "currency": fact.currency,
                                 "derivation": fact.derivation}
    # Facts first for account questions: the template writer reads them before any chunk.
    return fact_items + chunk_items, sources


def _history(conversation, message, limit: int = 6) -> list[tuple[str, str]]:
    earlier = (conversation.messages.filter(pk__lt=message.pk, kind="text").exclude(text="")
               .order_by("-pk")[:limit])
    return [("user" if m.direction == Message.Direction.INBOUND else "assistant", m.text) for m in reversed(earlier)]


def _write_once_with_retry(writer, request, problems, previous):
    errors = []
    for _ in range(2):  # a model error, timeout or unparseable output is retried once
        try:
            return writer.write(request, problems=problems, previous=previous), errors
        except WriterError as exc:
            errors.append({"error": str(exc), "raw": exc.raw[:2000]})
    return None, errors


def _write_and_verify(recorder, writer, request, *, template: bool):
    fields = recorder.fields
    problems = previous = None
    grounded_draft = None
    usage: dict = {}
    max_attempts = 1 + (settings.BOT_MAX_REWRITES if writer.can_rewrite else 0)
    for number in range(1, max_attempts + 1):
        with recorder.stage(f"write_{number}"):
            draft, errors = _write_once_with_retry(writer, request, problems, previous)
        for error in errors:
            fields["attempts"].append({"attempt": number, **error})
        if draft is None:
            return Escalated(Reason.MODEL_ERROR, [errors[-1]["error"]])
        for key, value in (draft.usage or {}).items():
            if isinstance(value, int):
                usage[key] = usage.get(key, 0) + value
        fields["token_usage"] = usage
        if draft.needs_human:
            fields["attempts"].append({"attempt": number, "raw": draft.raw, "reply": draft.reply,
                                       "needs_human": True})
            if template:
                return Escalated(Reason.NO_CONTEXT, ["No sentence of the retrieved chunks matches the question."])
            return Escalated(Reason.MODEL_DEFERRED, [draft.reply] if draft.reply else [])
        with recorder.stage(f"verify_{number}"):
            verdict = grounding.verify(draft.reply, request.evidence, customer_view=True,
                                       banned_phrases=settings.GROUNDING_BANNED_PHRASES)
        fields["attempts"].append({
            "attempt": number, "raw": draft.raw, "reply": draft.reply, "evidence_ids": draft.evidence_ids,
            "verdict": verdict.as_json(),
        })
        if verdict.grounded:
            grounded_draft = draft
            break
        problems = [f"{p.token}: {p.reason}" for p in verdict.problems] or ["the answer is not grounded"]
        previous = draft.raw or draft.reply
    if grounded_draft is None:
        return Escalated(Reason.UNGROUNDED_OUTPUT, [f"Verifier: {p}" for p in (problems or [])][:5])

    customer_text = grounding.strip_citations(grounded_draft.reply)
    with recorder.stage("humanize"):
        check = humanizer.check(customer_text, language=request.language,
                                banned_phrases=settings.GROUNDING_BANNED_PHRASES)
    fields["humanizer"] = {"ok": check.ok, "reason": check.reason, "phrase": check.phrase}
    if not check.ok:
        return Escalated(Reason.FORBIDDEN_PHRASE, [f"{check.reason}: “{check.phrase}”"], suggestion=customer_text)
    return Answered(customer_text, citations=sorted(set(re.findall(r"\[(E\d+)\]", grounded_draft.reply))))


def _finish(recorder, message, conversation, contact, outcome) -> Trace:
    fields = recorder.fields
    sent = None
    if isinstance(outcome, Answered):
        with recorder.stage("send"):
            sent = bot_reply_record(conversation_id=conversation.pk, text=outcome.text)
        if sent is None:
            outcome = Silenced("send")
        else:
            fields.update(final_text=outcome.text, citations=outcome.citations)
    with transaction.atomic():
        trace = Trace.objects.create(
            conversation=conversation,
            message=message,
            reply=sent,
            provider_message_id=message.provider_message_id or "",
            channel=conversation.channel,
            customer_id=contact.customer_id or fields.get("customer_id", ""),
            outcome=(Trace.Outcome.ANSWERED if isinstance(outcome, Answered)
                     else Trace.Outcome.SILENCED if isinstance(outcome, Silenced) else Trace.Outcome.ESCALATED),
            escalation_reason=outcome.reason.value if isinstance(outcome, Escalated) else "",
            silenced_at=outcome.where if isinstance(outcome, Silenced) else "",
            latency_ms=recorder.latency,
            total_ms=recorder.total_ms(),
            **{k: v for k, v in fields.items() if k in _TRACE_FIELDS},
        )
        if isinstance(outcome, Escalated):
            note = agent_summary(outcome.reason, query=message.text or f"[{message.kind}]", details=outcome.details)
            trace.escalation = conversation_escalate(
                conversation_id=conversation.pk, reason=outcome.reason.value, summary=note.summary,
                detail=note.detail, suggested_reply=outcome.suggestion,
                notice=customer_notice(contact.language),
            )
            trace.save(update_fields=["escalation"])
    return trace


_TRACE_FIELDS = {
    "language", "route", "routing_rule", "query", "retrieval", "tool_calls", "evidence", "prompt_version", "model",
    "attempts", "humanizer", "final_text", "citations", "index_version", "token_usage",
}
