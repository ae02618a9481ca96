"""The writer's loop: write, verify, rewrite with the verifier's problems, then a verified-only fallback.

Every draft — a model's or the template writer's — goes through the grounding verifier (each figure
against its own evidence, the key figures present, the internal note cited). Problems go back to the writer
(at most BOT_MAX_REWRITES times); after the last failed rewrite the verified-only answer is sent if it
checks out, or the agent gets the turn with a suggestion. The humanizer has the last word on wording.
"""

from __future__ import annotations

from django.conf import settings

from bot import grounding, humanizer
from bot.escalation import Reason, decline_reply
from bot.outcomes import Answered, Declined, Escalated
from bot.relevance import relevance
from bot.routing.scope import in_domain
from bot.routing.text import read_as_meant
from bot.writer import TemplateWriter, WriterError
from core.model_costs import model_call


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


def write_and_verify(recorder, writer, request, *, template: bool):
    draft_row = recorder.draft
    problems = previous = None
    grounded_draft = None
    usage: dict = {}
    max_attempts = 1 + (settings.BOT_MAX_REWRITES if writer.can_rewrite else 0)
    for number in range(1, max_attempts + 1):
        with recorder.stage(f"write_{number}"):
            draft, errors = _write_once_with_retry(writer, request, problems, previous,
                                                   heartbeat=recorder.heartbeat)
        for error in errors:
            draft_row.attempts.append({"attempt": number, **error})
        if draft is None:
            return Escalated(Reason.MODEL_ERROR, [errors[-1]["error"]])
        for key, value in (draft.usage or {}).items():
            if isinstance(value, int):
                usage[key] = usage.get(key, 0) + value
        draft_row.token_usage = usage
        if draft.usage:  # a model wrote it (the template writer calls none and costs nothing)
            draft_row.record_call(model_call(role="writer", model=writer.name, usage=draft.usage,
                                             prices=settings.MODEL_PRICES).as_json())
        if draft.needs_human:
            draft_row.attempts.append({"attempt": number, "raw": draft.raw, "reply": draft.reply,
                                       "note": draft.note, "needs_human": True})
            if template:
                return Escalated(Reason.NO_CONTEXT, ["No sentence of the retrieved chunks matches the question."])
            return Escalated(Reason.MODEL_DEFERRED, [draft.reply] if draft.reply else [], note=draft.note)
        with recorder.stage(f"verify_{number}"):
            verdict, note_verdict = _verdicts(draft, request)
        attempt_problems = _problems(verdict, note_verdict, draft.note)
        grounded = not attempt_problems
        answers = _relevance(request, draft)
        if answers is not None and not answers.ok:
            attempt_problems.append(f"relevance: {answers.reason}")
        draft_row.attempts.append({
            "attempt": number, "raw": draft.raw, "reply": draft.reply, "note": draft.note,
            "evidence_ids": draft.evidence_ids,
            # `grounded` is the verdict on everything the verifier checks before sending: both texts.
            "verdict": {**verdict.as_json(), "grounded": grounded},
            "note_verdict": note_verdict.as_json(),
            **({"relevance": {"ok": answers.ok, "topic_share": round(answers.topic_share, 3), "kind": answers.kind,
                              "reason": answers.reason}} if answers is not None else {}),
        })
        if not attempt_problems:
            grounded_draft = draft
            break
        problems = attempt_problems
        previous = draft.raw or draft.reply
    if grounded_draft is None and problems and all(p.startswith("relevance: ") for p in problems):
        # Every figure checks out, but the reply does not answer what was asked: never send a true sentence that
        # does not answer. Not about plans, bills or payments at all: decline; otherwise a person answers.
        if not in_domain(read_as_meant(request.query)):  # no word of plans, bills, payments or the service
            return Declined(decline_reply(request.language), why=problems[0])
        details = [problems[0][len("relevance: "):]]
        if draft is not None and draft.reply:
            details.append(f"Closest draft, not sent: “{grounding.strip_citations(draft.reply)}”")
        return Escalated(Reason.NO_CONTEXT, details)
    if grounded_draft is None:
        with recorder.stage("fallback"):
            return _verified_fallback(recorder, request, problems or [], template=template, last=draft)
    return _humanized(recorder, request, grounded_draft)


def _relevance(request, draft):
    """Return whether a knowledge-base answer addresses the question (None for answers built on billing facts)."""
    if request.capability:  # composed from the customer's billing facts for the capability they asked about
        return None
    cited = set(grounding.citation_ids(draft.reply))
    return relevance(request.query, grounding.strip_citations(draft.reply),
                     cited=[e.text for e in request.evidence if e.id in cited])


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
