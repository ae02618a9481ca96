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
from django.db.models import Q
from django.utils import timezone

from bot import grounding, humanizer
from bot.escalation import Reason, agent_summary, ask_for_identity, customer_notice
from bot.router import get_router
from bot.routing import Route, account_capability
from bot.smalltalk import small_talk_reply
from bot.writer import TemplateWriter, WriterError, WriterRequest, get_writer
from desk.models import Contact, Conversation, Message
from desk.services import bot_reply_record, conversation_escalate
from desk.whatsapp import UNREADABLE_KINDS
from kb.search import search
from traces.draft import TraceDraft
from traces.models import Trace

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
    """Fills the turn's TraceDraft while the turn runs, and times each stage into it."""

    def __init__(self, clock, *, on_stage=None):
        self.clock = clock
        self.started = clock()
        self.draft = TraceDraft()
        self.on_stage = on_stage  # called as each stage starts (the live turn renews its lease there)

    @contextmanager
    def stage(self, name: str):
        if self.on_stage is not None:
            self.on_stage()
        began = self.clock()
        try:
            yield
        finally:
            self.draft.latency_ms[name] = round((self.clock() - began) * 1000, 3)

    def finish(self) -> TraceDraft:
        self.draft.total_ms = round((self.clock() - self.started) * 1000, 3)
        return self.draft


class Lease:
    """A turn's claim on an inbound message: taken atomically, renewed while the turn runs, given up on a crash.

    Only one run holds a message at a time: a second delivery of the same task finds a live lease and does
    nothing. A run that dies (a killed worker) stops renewing; once its lease expires the requeue sweep
    queues the message again and the next run takes it over. The claim time is the holder's token.
    """

    def __init__(self, message_id: int, *, seconds: float | None = None):
        self.message_id = message_id
        self.length = timedelta(seconds=settings.BOT_TURN_LEASE_S if seconds is None else seconds)
        self.token = None

    def take(self) -> bool:
        """Claim the message unless a live lease holds it or a turn already answered it."""
        now = timezone.now()
        taken = (Message.objects.filter(pk=self.message_id, direction=Message.Direction.INBOUND)
                 .filter(Q(turn_claimed_at__isnull=True) | Q(turn_lease_until__lt=now))
                 .exclude(traces__isnull=False)
                 .update(turn_claimed_at=now, turn_lease_until=now + self.length))
        self.token = now if taken else None
        return bool(taken)

    def renew(self) -> None:
        """Push the lease forward (called as each stage starts, and before each model call)."""
        Message.objects.filter(pk=self.message_id, turn_claimed_at=self.token).update(
            turn_lease_until=timezone.now() + self.length)

    def held(self) -> bool:
        """Lock the message row until commit and say whether this run still holds it (call in a transaction)."""
        row = Message.objects.select_for_update().filter(pk=self.message_id).values("turn_claimed_at").first()
        return bool(row) and row["turn_claimed_at"] == self.token and not Trace.objects.filter(
            message_id=self.message_id).exists()

    def give_up(self) -> None:
        """Expire the lease now, so the next sweep queues the message again at once."""
        Message.objects.filter(pk=self.message_id, turn_claimed_at=self.token).update(
            turn_lease_until=timezone.now())


def run_turn(*, message_id: int, writer=None, billing=None, clock=time.perf_counter) -> Trace | None:
    """Run the bot turn for one inbound message; return its trace (None when the message was already handled)."""
    lease = Lease(message_id)
    if not lease.take():
        return None
    try:
        message = Message.objects.select_related("conversation__contact").get(pk=message_id)
        conversation = message.conversation
        contact = conversation.contact
        recorder = TurnRecorder(clock, on_stage=lease.renew)
        recorder.draft.query, recorder.draft.language = message.text, contact.language
        with recorder.stage("gate"):
            # Loaded with the message just now: a second query would read the same committed row.
            held = conversation.held_by_human
        if held:
            outcome = Silenced("gate")
        else:
            outcome = _decide(recorder, message, conversation, contact, writer=writer, billing=billing)
        return _finish(recorder, lease, message, conversation, contact, outcome)
    except BaseException:
        lease.give_up()  # nothing was recorded (one transaction): let the sweep answer it again soon
        raise


@dataclass
class QueryAnswer:
    """What the bot decided for one query, with everything a trace would record about it."""

    outcome: Answered | Escalated | Silenced
    draft: TraceDraft


def answer_query(*, query: str, language: str = "es", customer_id: str = "", history=(), writer=None,
                 billing=None, router=None, clock=time.perf_counter) -> QueryAnswer:
    """Decide the reply to a query from plain inputs; write no row and send nothing.

    The same path as a live turn (routing, small talk, billing, retrieval, writer, verifier with
    rewrites, humanizer) for a customer who is either known (`customer_id`) or cannot be found by
    channel. `history` is the earlier (role, text) pairs of the conversation, oldest first.
    """
    recorder = TurnRecorder(clock)
    recorder.draft.query, recorder.draft.language = query, language
    routing = _route(recorder, query, kind="text", default_language=language, router=router)
    outcome = _refusal(routing, kind="text") or _small_talk(routing, list(history))
    if outcome is None:
        outcome = _answer(recorder, routing, query, customer_id=customer_id or "",
                          resolve_customer=lambda _query: None, history=lambda: list(history),
                          writer=writer, billing=billing or _billing())
    return QueryAnswer(outcome, recorder.finish())


def _route(recorder, text, *, kind, default_language, router=None):
    with recorder.stage("route"):
        routing = (router or get_router()).route(text, kind=kind, default_language=default_language)
    draft = recorder.draft
    draft.route, draft.language, draft.routing_rule = routing.route.value, routing.language, routing.rule
    draft.route_confidence, draft.router_version = round(routing.confidence, 4), routing.version
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
        return Escalated(Reason.CAPABILITY_MISSING,
                         [f"The customer sent a {message.kind} message the bot cannot read."])
    return None


def _small_talk(routing, history) -> Answered | Silenced | None:
    """Answer a greeting, thanks or goodbye; stay silent on a bare acknowledgement of a bot answer."""
    if routing.route != Route.SMALLTALK:
        return None
    after_bot_answer = bool(history) and history[-1][0] == "assistant"
    reply = small_talk_reply(routing.courtesy, routing.language, after_bot_answer=after_bot_answer)
    return Answered(reply) if reply else Silenced("ack")


def _decide(recorder, message, conversation, contact, *, writer, billing):
    draft = recorder.draft
    unanswerable = _unanswerable(message)
    if unanswerable is not None:
        if message.kind in UNREADABLE_KINDS:
            draft.route, draft.routing_rule = "media", f"kind: {message.kind}"
        return unanswerable
    routing = _route(recorder, message.text, kind=message.kind, default_language=contact.language)
    if routing.language != contact.language and message.text.strip():
        Contact.objects.filter(pk=contact.pk).update(language=routing.language)
        contact.language = routing.language

    awaiting_identity = bool(conversation.pending_query and not contact.customer_id)
    if awaiting_identity and routing.route not in (Route.HUMAN, Route.MEDIA) and _holds_identifier(message.text):
        refusal = None  # the answer to "send me your account number", whatever it reads like on its own
    else:
        refusal = _refusal(routing, kind=message.kind) or _small_talk(routing, _history(conversation, message, 1))
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
            routing = replace(routing, route=Route.ACCOUNT, capability=account_capability(query),
                              account_evidence=False)
            draft.query, draft.route = query, Route.ACCOUNT.value
            draft.routing_rule = "identified; original question"
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
    A document question about the customer's own bill also gets their billing facts when they are
    known and a model writes (the template writer copies facts instead of the chunk that explains).
    An unsure account question from an unknown customer is answered from the knowledge base instead
    of asking who they are: it may well be the policy question it resembles.
    """
    draft = recorder.draft
    facts, capability = [], routing.capability
    writer = writer or get_writer()
    if routing.route == Route.ACCOUNT and (customer_id or not routing.unsure):
        if not customer_id:
            found = resolve_customer(query)
            if isinstance(found, Escalated):
                return found
            if not found:
                return Answered(ask_for_identity(routing.language), asks_identity=True)
            customer_id = found
        with recorder.stage("billing"):
            result = getattr(billing, capability)(customer_id)
        draft.tool_calls.append(result.to_json())
        if result.should_escalate:
            code = result.error.code if result.error else "unknown"
            return Escalated(Reason.TOOL_ERROR, [f"{capability} failed: {code}."])
        facts = list(result.evidence)
    elif routing.account_evidence and customer_id and not isinstance(writer, TemplateWriter):
        facts = _account_evidence(recorder, billing, capability, customer_id)
    draft.customer_id = customer_id

    with recorder.stage("retrieve"):
        result = search(query, k=settings.BOT_RETRIEVAL_K)
    draft.index_version = result.index_version
    draft.retrieval = [
        {key: value for key, value in hit.as_dict().items() if key != "text"} for hit in result.fused
    ]
    minimum = settings.KB_MIN_CONTEXT_SCORE
    context = [h for h in result.results
               if h.matched_by_identifier or (h.vector_score is not None and h.vector_score >= minimum)]
    if not context and not facts:
        best = result.results[0] if result.results else None
        detail = (f"Best chunk {best.doc} § {best.section} scored {best.vector_score} (< {minimum})."
                  if best else "The knowledge base returned nothing.")
        return Escalated(Reason.NO_CONTEXT, [detail])

    evidence, sources = _evidence(context, facts)
    draft.evidence = [
        {"id": e.id, "text": e.text, "value": e.value, **sources[e.id]} for e in evidence
    ]
    draft.prompt_version, draft.model = writer.prompt_version, writer.name
    request = WriterRequest(query=query, language=routing.language, evidence=evidence, sources=sources,
                            history=history())
    return _write_and_verify(recorder, writer, request, template=isinstance(writer, TemplateWriter))


def _account_evidence(recorder, billing, capability, customer_id) -> list:
    """Return the customer's billing facts for a document question; none when billing fails (the KB still answers)."""
    with recorder.stage("billing"):
        result = getattr(billing, capability)(customer_id)
    recorder.draft.tool_calls.append(result.to_json())
    return list(result.evidence) if result.ok else []


def _billing():
    from billing.client import billing_client

    return billing_client()


def _identify_by_channel(recorder, billing, conversation, contact):
    """Find the customer behind a WhatsApp number; None when unknown (ask them), Escalated on an outage."""
    if conversation.channel != "whatsapp" or not contact.wa_id:
        return None
    with recorder.stage("identify"):
        result = billing.find_customer(whatsapp_id=contact.wa_id)
    recorder.draft.tool_calls.append(result.to_json())
    if result.should_escalate:
        return Escalated(Reason.TOOL_ERROR, ["Customer lookup by WhatsApp number failed."])
    if not result.ok:
        return None
    customer_id = result.data["customer"]["id"]
    Contact.objects.filter(pk=contact.pk).update(customer_id=customer_id)
    contact.customer_id = customer_id
    return customer_id


def _holds_identifier(text: str) -> bool:
    """Whether a message holds a national id or a number long enough to be an account number."""
    return bool(_NATIONAL_ID.search(text)) or any(
        len(re.sub(r"\D", "", m.group(0))) >= 7 for m in _LONG_NUMBER.finditer(text))


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
            recorder.draft.tool_calls.append(result.to_json())
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


def _write_once_with_retry(writer, request, problems, previous, *, heartbeat):
    errors = []
    for _ in range(2):  # a model error, timeout or unparseable output is retried once
        heartbeat()  # a model call may take its whole timeout: keep the turn's lease ahead of it
        try:
            return writer.write(request, problems=problems, previous=previous), errors
        except WriterError as exc:
            errors.append({"error": str(exc), "raw": exc.raw[:2000]})
    return None, errors


def _write_and_verify(recorder, writer, request, *, template: bool):
    draft_row = recorder.draft
    problems = previous = None
    grounded_draft = None
    usage: dict = {}
    max_attempts = 1 + (settings.BOT_MAX_REWRITES if writer.can_rewrite else 0)
    for number in range(1, max_attempts + 1):
        with recorder.stage(f"write_{number}"):
            draft, errors = _write_once_with_retry(writer, request, problems, previous,
                                                   heartbeat=recorder.on_stage or (lambda: None))
        for error in errors:
            draft_row.attempts.append({"attempt": number, **error})
        if draft is None:
            return Escalated(Reason.MODEL_ERROR, [errors[-1]["error"]])
        for key, value in (draft.usage or {}).items():
            if isinstance(value, int):
                usage[key] = usage.get(key, 0) + value
        draft_row.token_usage = usage
        if draft.needs_human:
            draft_row.attempts.append({"attempt": number, "raw": draft.raw, "reply": draft.reply,
                                       "needs_human": True})
            if template:
                return Escalated(Reason.NO_CONTEXT, ["No sentence of the retrieved chunks matches the question."])
            return Escalated(Reason.MODEL_DEFERRED, [draft.reply] if draft.reply else [])
        with recorder.stage(f"verify_{number}"):
            verdict = grounding.verify(draft.reply, request.evidence, customer_view=True,
                                       banned_phrases=settings.GROUNDING_BANNED_PHRASES)
        draft_row.attempts.append({
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
    draft_row.humanizer = {"ok": check.ok, "reason": check.reason, "phrase": check.phrase}
    if not check.ok:
        return Escalated(Reason.FORBIDDEN_PHRASE, [f"{check.reason}: “{check.phrase}”"], suggestion=customer_text)
    return Answered(customer_text, citations=grounding.citation_ids(grounded_draft.reply))


def _finish(recorder, lease, message, conversation, contact, outcome) -> Trace | None:
    """Record the reply, the trace and the escalation in one transaction: all of them or none.

    The reply's delivery is queued on commit, so a turn whose trace cannot be written sends nothing, and
    its retry (the sweep, once the lease is given up) sends the one reply. Returns None when another run
    took the message over meanwhile (this one's lease expired).
    """
    with transaction.atomic():
        if not lease.held():
            return None
        sent = None
        if isinstance(outcome, Answered):
            with recorder.stage("send"):
                sent = bot_reply_record(conversation_id=conversation.pk, text=outcome.text)
            if sent is None:
                outcome = Silenced("send")
            else:
                recorder.draft.final_text, recorder.draft.citations = outcome.text, outcome.citations
        escalation = None
        if isinstance(outcome, Escalated):
            note = agent_summary(outcome.reason, query=message.text or f"[{message.kind}]", details=outcome.details)
            escalation = conversation_escalate(
                conversation_id=conversation.pk, reason=outcome.reason.value, summary=note.summary,
                detail=note.detail, suggested_reply=outcome.suggestion,
                notice=customer_notice(contact.language),
            )
        draft = recorder.finish()
        draft.customer_id = contact.customer_id or draft.customer_id
        return Trace.objects.create(
            conversation=conversation,
            message=message,
            reply=sent,
            escalation=escalation,
            provider_message_id=message.provider_message_id or "",
            channel=conversation.channel,
            outcome=(Trace.Outcome.ANSWERED if isinstance(outcome, Answered)
                     else Trace.Outcome.SILENCED if isinstance(outcome, Silenced) else Trace.Outcome.ESCALATED),
            escalation_reason=outcome.reason.value if isinstance(outcome, Escalated) else "",
            silenced_at=outcome.where if isinstance(outcome, Silenced) else "",
            **draft.row(),
        )
