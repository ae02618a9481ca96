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

from billing.api.client import billing_client
from bot import clarify, grounding, humanizer
from bot.configuration import configuration_parts
from bot.escalation import Reason, agent_summary, ask_for_identity, customer_notice, situation_note
from bot.router import get_router
from bot.routing import CLASSIFIER_SOURCES, Route, account_capability, yield_to_published_number
from bot.smalltalk import small_talk_reply
from bot.writer import (
    TemplateWriter,
    WriterError,
    WriterRequest,
    fact_evidence,
    get_writer,
    turn_key_figures,
)
from core import clock
from desk.channel import UNREADABLE_KINDS
from desk.models import Contact, Conversation, Message
from desk.services import bot_reply_record, conversation_escalate
from kb.search import current_index_version, search
from kb.selectors import document_alternatives, documents_publishing
from traces.draft import TraceDraft
from traces.fingerprint import ConfigurationParts
from traces.models import Trace
from traces.services import configuration_record

_NATIONAL_ID = re.compile(r"\b([VEJGPvejgp])\s*[-.]?\s*(\d{1,3}(?:[.\s]?\d{3}){1,2}(?:\s*-?\s*\d)?)\b")
_LONG_NUMBER = re.compile(r"\d[\d\s.-]{5,}\d")


@dataclass
class Answered:
    text: str
    citations: list[str] = field(default_factory=list)
    asks_identity: bool = False  # the reply asks for an account number instead of answering
    note: str = ""  # the verified internal note for the agent (citations kept)


@dataclass
class Escalated:
    reason: Reason
    details: list[str] = field(default_factory=list)
    suggestion: str = ""
    note: str = ""  # what the agent should know; written from the draft when empty


@dataclass
class Silenced:
    where: str


@dataclass
class Clarify:
    """The bot asks one short question before answering; the original question waits on the conversation."""

    text: str
    pending: dict


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
        now = clock.now()
        taken = (Message.objects.filter(pk=self.message_id, direction=Message.Direction.INBOUND)
                 .filter(Q(turn_claimed_at__isnull=True) | Q(turn_lease_until__lt=now))
                 .exclude(traces__isnull=False)
                 .update(turn_claimed_at=now, turn_lease_until=now + self.length))
        self.token = now if taken else None
        return bool(taken)

    def renew(self) -> None:
        """Push the lease forward (called as each stage starts, and before each model call)."""
        Message.objects.filter(pk=self.message_id, turn_claimed_at=self.token).update(
            turn_lease_until=clock.now() + self.length)

    def held(self) -> bool:
        """Lock the message row until commit and say whether this run still holds it (call in a transaction)."""
        row = Message.objects.select_for_update().filter(pk=self.message_id).values("turn_claimed_at").first()
        return bool(row) and row["turn_claimed_at"] == self.token and not Trace.objects.filter(
            message_id=self.message_id).exists()

    def give_up(self) -> None:
        """Expire the lease now, so the next sweep queues the message again at once."""
        Message.objects.filter(pk=self.message_id, turn_claimed_at=self.token).update(
            turn_lease_until=clock.now())


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
        writer = writer or get_writer()
        if held:
            outcome = Silenced("gate")
        else:
            outcome = _decide(recorder, message, conversation, contact, writer=writer, billing=billing)
        return _finish(recorder, lease, message, conversation, contact, outcome,
                       configuration=_configuration(recorder.draft, writer))
    except BaseException:
        lease.give_up()  # nothing was recorded (one transaction): let the sweep answer it again soon
        raise


@dataclass
class QueryAnswer:
    """What the bot decided for one query, with everything a trace would record about it."""

    outcome: Answered | Escalated | Clarify | Silenced
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
                          writer=writer, billing=billing or billing_client(), ask=lambda _pending: None)
    return QueryAnswer(outcome, recorder.finish())


def _routed(text, *, kind="text", default_language, router=None):
    """Route a message: the router, then the knowledge base's published numbers over a classifier's guess."""
    routing = (router or get_router()).route(text, kind=kind, default_language=default_language)
    if kind == "text" and routing.rule in CLASSIFIER_SOURCES:
        routing = yield_to_published_number(routing, text, documents_publishing(text))
    return routing


def _route(recorder, text, *, kind, default_language, router=None):
    with recorder.stage("route"):
        routing = _routed(text, kind=kind, default_language=default_language, router=router)
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
    # A reply to a clarifying question ("el anual") is read as the choice, whatever it reads like on its own.
    chosen = (clarify.choose(message.text, clarify.pending_options(conversation.pending_clarification))
              if conversation.pending_clarification else None)
    if awaiting_identity and routing.route not in (Route.HUMAN, Route.MEDIA) and _holds_identifier(message.text):
        refusal = None  # the answer to "send me your account number", whatever it reads like on its own
    elif chosen is not None and routing.route not in (Route.HUMAN, Route.MEDIA):
        refusal = None
    else:
        refusal = _refusal(routing, kind=message.kind) or _small_talk(routing, _history(conversation, message, 1))
    if refusal is not None:
        return refusal

    query = message.text
    billing = billing or billing_client()

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

    # A reply to a clarifying question: answer the question asked before with the option picked.
    if conversation.pending_clarification:
        stored = conversation.pending_clarification
        if chosen is not None:
            query = stored["query"]
            routing = _routed(query, default_language=contact.language)
            draft.query, draft.route = query, routing.route.value
            draft.routing_rule = f"clarified: {chosen.label}; original question"[:100]
        Conversation.objects.filter(pk=conversation.pk).update(pending_clarification={})
        conversation.pending_clarification = {}

    def resolve_customer(asked):
        found = _identify_by_channel(recorder, billing, conversation, contact)
        if not found and not isinstance(found, Escalated):
            # Unknown: the bot asks who they are and keeps the question for when it knows.
            Conversation.objects.filter(pk=conversation.pk).update(pending_query=asked)
        return found

    def ask(pending):
        Conversation.objects.filter(pk=conversation.pk).update(pending_clarification=pending)

    return _answer(recorder, routing, query, customer_id=contact.customer_id, resolve_customer=resolve_customer,
                   history=lambda: _history(conversation, message), writer=writer, billing=billing, ask=ask,
                   chosen=chosen)


def _answer(recorder, routing, query, *, customer_id, resolve_customer, history, writer, billing, ask,
            chosen=None):
    """Answer a routed, answerable query: billing facts, retrieval, writer, verifier, humanizer.

    `resolve_customer(query)` finds an unknown customer for an account question: their id, None
    (then the bot asks for it) or an Escalated; `history()` returns the earlier turns for the writer;
    `ask(pending)` keeps a clarifying question's state; `chosen` is the option the customer picked
    in reply to one (the query is then the original question).
    A document question about the customer's own bill also gets their billing facts when they are
    known and a model writes (the template writer copies facts instead of the chunk that explains).
    An unsure account question from an unknown customer is answered from the knowledge base instead
    of asking who they are: it may well be the policy question it resembles.
    """
    draft = recorder.draft
    facts, key_figures, capability = [], [], routing.capability
    writer = writer or get_writer()
    if routing.route == Route.ACCOUNT and (customer_id or not routing.unsure):
        if not customer_id:
            found = resolve_customer(query)
            if isinstance(found, Escalated):
                return found
            if not found:
                return Answered(ask_for_identity(routing.language), asks_identity=True)
            customer_id = found
        period = chosen.period if chosen is not None else ""
        with recorder.stage("billing"):
            result = (billing.invoice_change(customer_id, period=period) if period
                      else getattr(billing, capability)(customer_id))
        draft.tool_calls.append(result.to_json())
        if result.should_escalate:
            return _tool_error(capability, result)
        if capability == "invoice_change" and result.ok and not period:
            invoices = [result.data["current_invoice"], result.data.get("previous_invoice")]
            decision = clarify.period_decision(query, [i for i in invoices if i], language=routing.language)
            if decision.options:
                return _ask(recorder, ask, "period", query, decision.options, routing.language)
            if decision.chosen is not None and decision.chosen.period != invoices[0]["period"]:
                with recorder.stage("billing"):
                    result = billing.invoice_change(customer_id, period=decision.chosen.period)
                draft.tool_calls.append(result.to_json())
                if result.should_escalate:
                    return _tool_error(capability, result)
        facts = list(result.evidence)
        key_figures = list(result.key_figures)
    elif routing.account_evidence and customer_id and not isinstance(writer, TemplateWriter):
        facts = _account_evidence(recorder, billing, capability, customer_id)
    draft.customer_id = customer_id

    # After a clarifying question, the picked label helps retrieval find the sibling it names.
    searched = f"{query} ({chosen.label})" if chosen is not None and chosen.doc else query
    with recorder.stage("retrieve"):
        result = search(searched, k=settings.BOT_RETRIEVAL_K)
    draft.index_version = result.index_version
    draft.retrieval = [
        {key: value for key, value in hit.as_dict().items() if key != "text"} for hit in result.fused
    ]
    # The search decides whether the turn has context (kb/context.py); it never drops a kept chunk.
    context = result.results if result.context.has_context else []
    if not context and not facts:
        return Escalated(Reason.NO_CONTEXT, [f"No context: {result.context.reason}."])
    if context and (routing.route != Route.ACCOUNT or not key_figures and not facts):
        siblings = {slug: clarify.Sibling(slug, row["label"], row["language"], tuple(row["alternatives"]))
                    for slug, row in document_alternatives(slugs=[h.doc for h in context]).items()}
        decision = clarify.document_decision(query, [h.doc for h in context], siblings, language=routing.language)
        if decision.options and chosen is None:
            return _ask(recorder, ask, "document", query, decision.options, routing.language)
        picked = chosen if chosen is not None and chosen.doc else decision.chosen
        if picked is not None and siblings:
            # The customer named one case: its siblings' chunks would only answer another case.
            others = {doc for row in siblings.values() for doc in row.alternatives} | set(siblings)
            context = [h for h in context if h.doc == picked.doc or h.doc not in others] or context

    evidence, sources = _evidence(context, facts)
    draft.evidence = [
        {"id": e.id, "text": e.text, "value": e.value, **sources[e.id]} for e in evidence
    ]
    figures = turn_key_figures(key_figures, first=len(context) + 1)
    draft.key_figures = [figure.to_json() for figure in figures]
    draft.prompt_version, draft.model = writer.prompt_version, writer.name
    request = WriterRequest(query=query, language=routing.language, evidence=evidence, sources=sources,
                            history=history(), capability=capability if facts else "", key_figures=figures)
    return _write_and_verify(recorder, writer, request, template=isinstance(writer, TemplateWriter))


def _ask(recorder, ask, kind, query, options, language) -> Clarify:
    """Keep the original question and ask which option applies."""
    pending = clarify.pending(kind, query, options, language)
    ask(pending)
    labels = " / ".join(option.label for option in options)
    recorder.draft.routing_rule = f"{recorder.draft.routing_rule}; asked: {labels}"[:100]
    return Clarify(clarify.question(kind, options, language), pending)


def _tool_error(capability, result) -> Escalated:
    """Return the escalation for a billing call that failed on the system's side (an outage, not an answer)."""
    code = result.error.code if result.error else "unknown"
    return Escalated(Reason.TOOL_ERROR, [f"{capability} failed: {code}."])


def _account_evidence(recorder, billing, capability, customer_id) -> list:
    """Return the customer's billing facts for a document question; none when billing fails (the KB still answers)."""
    with recorder.stage("billing"):
        result = getattr(billing, capability)(customer_id)
    recorder.draft.tool_calls.append(result.to_json())
    return list(result.evidence) if result.ok else []


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
    fact_items, fact_sources = fact_evidence(facts, first=len(chunk_items) + 1)
    sources.update(fact_sources)
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


def _verdicts(draft, request):
    """Return the verifier's verdicts on the customer message (key figures included) and on the internal note."""
    reply = grounding.verify(draft.reply, request.evidence, customer_view=True,
                             banned_phrases=settings.GROUNDING_BANNED_PHRASES, key_figures=request.required)
    note = grounding.verify(draft.note, request.note_evidence(), customer_view=False, require_citations=True)
    return reply, note


def _problems(reply_verdict, note_verdict, note: str) -> list[str]:
    """Return the problems of both texts, worded for a rewrite; an empty note is a problem too."""
    problems = [f"{p.token}: {p.reason}" for p in reply_verdict.problems]
    problems += [f"internal_note — {p.token}: {p.reason}" for p in note_verdict.problems]
    if not note.strip():
        problems.append("internal_note is empty: write the root cause, the evidence ids, the formulas of derived "
                        "numbers and what you were unsure about.")
    return problems


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
                                       "note": draft.note, "needs_human": True})
            if template:
                return Escalated(Reason.NO_CONTEXT, ["No sentence of the retrieved chunks matches the question."])
            return Escalated(Reason.MODEL_DEFERRED, [draft.reply] if draft.reply else [], note=draft.note)
        with recorder.stage(f"verify_{number}"):
            verdict, note_verdict = _verdicts(draft, request)
        attempt_problems = _problems(verdict, note_verdict, draft.note)
        draft_row.attempts.append({
            "attempt": number, "raw": draft.raw, "reply": draft.reply, "note": draft.note,
            "evidence_ids": draft.evidence_ids,
            # `grounded` is the verdict on everything that must hold before sending: both texts.
            "verdict": {**verdict.as_json(), "grounded": not attempt_problems},
            "note_verdict": note_verdict.as_json(),
        })
        if not attempt_problems:
            grounded_draft = draft
            break
        problems = attempt_problems
        previous = draft.raw or draft.reply
    if grounded_draft is None:
        with recorder.stage("fallback"):
            return _verified_fallback(recorder, request, problems or [], template=template, last=draft)
    return _humanized(recorder, request, grounded_draft)


def _humanized(recorder, request, draft, *, details: list[str] | None = None):
    """Send a verified draft unless the humanizer forbids its wording (then the agent gets it as a suggestion)."""
    customer_text = grounding.strip_citations(draft.reply)
    with recorder.stage("humanize"):
        check = humanizer.check(customer_text, language=request.language,
                                banned_phrases=settings.GROUNDING_BANNED_PHRASES)
    recorder.draft.humanizer = {"ok": check.ok, "reason": check.reason, "phrase": check.phrase}
    if not check.ok:
        return Escalated(Reason.FORBIDDEN_PHRASE, [*(details or []), f"{check.reason}: “{check.phrase}”"],
                         suggestion=customer_text, note=draft.note)
    return Answered(customer_text, citations=grounding.citation_ids(draft.reply), note=draft.note)


FALLBACK_REASON = ("every draft the writer was allowed failed the verifier (their problems are in the trace); "
                   "this is the verified-only answer, built from the evidence alone.")


def _verified_fallback(recorder, request, problems: list[str], *, template: bool, last):
    """After the last rewrite failed: send the answer built only from verified facts, or hand the agent a draft.

    The template answer (composed from billing facts, or the kept chunk's sentence that answers a
    document question) is sent when it passes the verifier with every key figure. Otherwise the turn
    escalates UNGROUNDED_OUTPUT, and a template draft whose figures all check out becomes the
    agent's suggested reply.
    """
    draft_row = recorder.draft
    details = [f"Verifier: {p}" for p in problems][:5]
    if template:  # the template already was the writer: nothing else is verified-only
        candidate = last
    else:
        candidate = TemplateWriter(fallback_reason=FALLBACK_REASON).write(request)
    path = "template" if any(request.sources.get(e.id, {}).get("kind") == "fact" for e in request.evidence) \
        else "quote"
    if candidate.needs_human:
        draft_row.fallback = "escalated"
        return Escalated(Reason.UNGROUNDED_OUTPUT, details)
    verdict, note_verdict = _verdicts(candidate, request)
    sendable = not _problems(verdict, note_verdict, candidate.note)
    draft_row.fallback_draft = {"reply": candidate.reply, "note": candidate.note,
                                "verdict": verdict.as_json(), "note_verdict": note_verdict.as_json()}
    if sendable and not template:
        draft_row.fallback = path
        return _humanized(recorder, request, candidate, details=details)
    # Figures that check out but not the whole answer (a key figure missing): the agent decides.
    figures_hold = not [p for p in verdict.problems if p.sentence]
    draft_row.fallback = "escalated"
    suggestion = grounding.strip_citations(candidate.reply) if figures_hold else ""
    return Escalated(Reason.UNGROUNDED_OUTPUT, details, suggestion=suggestion,
                     note=candidate.note if not note_verdict.problems else "")


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


def _finish(recorder, lease, message, conversation, contact, outcome, *,
            configuration: ConfigurationParts) -> Trace | None:
    """Record the reply, the trace and the escalation in one transaction: all of them or none.

    The reply's delivery is queued on commit, so a turn whose trace cannot be written sends nothing, and
    its retry (the sweep, once the lease is given up) sends the one reply. Returns None when another run
    took the message over meanwhile (this one's lease expired).
    """
    with transaction.atomic():
        if not lease.held():
            return None
        sent = None
        if isinstance(outcome, (Answered, Clarify)):
            with recorder.stage("send"):
                sent = bot_reply_record(conversation_id=conversation.pk, text=outcome.text)
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
            recorder.draft.internal_note = outcome.note or _situation(recorder.draft, contact)
            escalation = conversation_escalate(
                conversation_id=conversation.pk, reason=outcome.reason.value, summary=summary.summary,
                detail=summary.detail, suggested_reply=outcome.suggestion,
                notice=customer_notice(contact.language), internal_note=recorder.draft.internal_note,
            )
        draft = recorder.finish()
        draft.customer_id = contact.customer_id or draft.customer_id
        return Trace.objects.create(
            configuration_id=configuration_record(parts=configuration),
            conversation=conversation,
            message=message,
            reply=sent,
            escalation=escalation,
            provider_message_id=message.provider_message_id or "",
            channel=conversation.channel,
            outcome=(Trace.Outcome.ANSWERED if isinstance(outcome, Answered)
                     else Trace.Outcome.CLARIFY if isinstance(outcome, Clarify)
                     else Trace.Outcome.SILENCED if isinstance(outcome, Silenced) else Trace.Outcome.ESCALATED),
            escalation_reason=outcome.reason.value if isinstance(outcome, Escalated) else "",
            silenced_at=outcome.where if isinstance(outcome, Silenced) else "",
            **draft.row(),
        )


def _situation(draft, contact) -> str:
    """Return what the bot already knew when it escalated without a writer's note."""
    return situation_note(
        customer_id=contact.customer_id or draft.customer_id,
        tool_calls=draft.tool_calls,
        retrieval=draft.retrieval,
        route=draft.route,
    )
