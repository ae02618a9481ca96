"""Replay a traced turn: its message again, with the same history and customer, under the current configuration or
a recorded one — without sending anything or writing any conversation or message row.

The replay runs `bot.turn.answer_query`, the path the `answer` command takes (routing, billing, retrieval, writer,
verifier with rewrites, humanizer) from plain inputs. A recorded configuration (traces.Configuration) is rebuilt
part by part: the writer (the template, or a model through the configured server), the knowledge-base index as it
was at the recorded version (kb.search's `at_version`), and the tuning settings. A part this build cannot
reproduce — a prompt or router no longer in the code, an index version this database never had, a model with no
server — is named in `ReplaySetup.gaps`, and the page says so: the replay is then not that configuration.
"""

from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from bot.configuration import configuration_parts
from bot.escalation import customer_notice
from bot.outcomes import Answered, Clarify, Declined, Escalated, QueryAnswer, outcome_name
from bot.routing.classifier import get_router
from bot.turn import HISTORY_LIMIT, answer_query
from bot.writer import LLMWriter, TemplateWriter, get_writer
from core import clock
from core.tasks import task_queue
from desk.models import Message
from evals.human_labels import evidence_items, verified_figures
from evals.judgement import JudgeError
from evals.models import JudgeVerdict, ReplayExperiment
from evals.replay_compare import BETTER, SAME, UNKNOWN, WORSE, TurnView, compare, verdict_change, verdict_of
from kb.models import Chunk
from kb.search import current_index_version
from traces.fingerprint import ConfigurationParts, differences
from traces.models import Configuration, Trace

CURRENT = "current"
CHOICES_MAX = 30  # recorded configurations offered, newest first

# The tuning parts a replay sets for its own run (read by the turn at call time).
TUNING_SETTINGS = {"kb_prune_margin": "KB_PRUNE_MARGIN", "kb_context_min_score": "KB_CONTEXT_MIN_SCORE",
                   "bot_max_rewrites": "BOT_MAX_REWRITES"}


class ReplayError(ValueError):
    """A replay that cannot start (an unknown configuration, a trace without a message); the message says why."""


@dataclass
class ReplaySetup:
    key: str  # "current" or a configuration's fingerprint
    label: str
    target: ConfigurationParts | None  # the configuration asked for (None: the current one)
    writer: object
    index_version: int | None  # None: the live index
    overrides: dict = field(default_factory=dict)
    gaps: list[str] = field(default_factory=list)  # parts that could not be rebuilt, and what was used instead


def current_parts() -> ConfigurationParts:
    """Return the configuration a turn would run under now."""
    return configuration_parts(writer=get_writer(), router_version=get_router().version,
                               index_version=current_index_version())


def configuration_choices() -> list[tuple[str, str]]:
    """Return (key, label) of the configurations a replay may run under: the current one, then the recorded ones."""
    current = current_parts()
    choices = [(CURRENT, f"Current configuration ({current.fingerprint}: {current.model}, "
                         f"prompt {current.prompt_version}, index v{current.index_version})")]
    for config in Configuration.objects.order_by("-first_seen_at", "fingerprint")[:CHOICES_MAX]:
        if config.fingerprint == current.fingerprint:
            continue
        choices.append((config.fingerprint, f"{config.fingerprint}: {config.model or '—'}, prompt "
                                            f"{config.prompt_version or '—'}, index v{config.index_version}, first "
                                            f"seen {config.first_seen_at:%Y-%m-%d}"))
    return choices


def replay_setup(key: str) -> ReplaySetup:
    """Rebuild the configuration `key` names as far as this build and database can; name what cannot be."""
    if not key or key == CURRENT:
        return ReplaySetup(key=CURRENT, label="the current configuration", target=None, writer=get_writer(),
                           index_version=None)
    config = Configuration.objects.filter(pk=key).first()
    if config is None:
        raise ReplayError(f"No recorded configuration {key!r}: choose one of the list.")
    parts = config.parts()
    gaps: list[str] = []
    writer = _writer_for(parts, gaps)
    router = get_router()
    if parts.router_version and parts.router_version != router.version:
        gaps.append(f"Router {parts.router_version} is not in this build: the current router "
                    f"({router.version}) routed the replay.")
    index_version = _index_for(parts.index_version, gaps)
    current = current_parts()
    if parts.phrases_hash != current.phrases_hash:
        gaps.append("The forbidden and humanizer phrase lists have changed since: the current lists were used.")
    overrides = {setting: getattr(parts, name) for name, setting in TUNING_SETTINGS.items()}
    return ReplaySetup(key=key, label=f"configuration {key}", target=parts, writer=writer,
                       index_version=index_version, overrides=overrides, gaps=gaps)


def _writer_for(parts: ConfigurationParts, gaps: list[str]):
    if parts.model == TemplateWriter.name:
        if parts.prompt_version != TemplateWriter.prompt_version:
            gaps.append(f"Template writer {parts.prompt_version} is not in this build: the current one "
                        f"({TemplateWriter.prompt_version}) wrote the reply.")
        return TemplateWriter()
    if not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL):
        gaps.append(f"The writer model {parts.model} needs a model server (OPENAI_BASE_URL or OPENAI_API_KEY), "
                    "and none is configured: the template writer wrote the reply.")
        return TemplateWriter()
    writer = LLMWriter(api_key=settings.OPENAI_API_KEY, base_url=settings.OPENAI_BASE_URL, model=parts.model,
                       timeout=settings.OPENAI_TIMEOUT_S)
    if parts.prompt_version != writer.prompt_version:
        gaps.append(f"Writer prompt {parts.prompt_version} is not in this build: the current prompt "
                    f"({writer.prompt_version}) was used.")
    return writer


def _index_for(version: int | None, gaps: list[str]) -> int | None:
    current = current_index_version()
    if version is None or version == current:
        if version is None:
            gaps.append("The configuration recorded no index version: the live index was searched.")
        return None
    if current is not None and version < current and Chunk.objects.at_version(version).exists():
        return version
    gaps.append(f"Index version v{version} is not in this database (its index is at v{current}): the live index "
                "was searched instead.")
    return None


@contextmanager
def _tuning(overrides: dict):
    """Set the recorded tuning settings for the replay's own run and put the configured ones back after.

    The turn reads them at call time. A process replays one turn at a time (a web request or a task), so no
    other turn of the process reads them meanwhile.
    """
    saved = {name: getattr(settings, name) for name in overrides}
    try:
        for name, value in overrides.items():
            setattr(settings, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(settings, name, value)


def trace_history(trace: Trace) -> list[tuple[str, str]]:
    """Return the conversation's text messages before the traced one, oldest first, as the live turn read them."""
    if trace.message_id is None:
        earlier = Message.objects.filter(conversation_id=trace.conversation_id, created_at__lt=trace.created_at)
    else:
        earlier = Message.objects.filter(conversation_id=trace.conversation_id, pk__lt=trace.message_id)
    earlier = earlier.filter(kind="text").exclude(text="").order_by("-pk")[:HISTORY_LIMIT]
    return [("user" if m.direction == Message.Direction.INBOUND else "assistant", m.text) for m in reversed(earlier)]


@dataclass
class ReplayResult:
    trace: Trace
    setup: ReplaySetup
    before: TurnView
    after: TurnView
    aspects: list
    change: str  # better / worse / same / unknown
    replayed_fingerprint: str
    not_as_chosen: list[str]  # parts in which the replay's own configuration differs from the one chosen
    history: list[tuple[str, str]]


def _message_text(trace: Trace) -> str:
    if trace.message_id and trace.message and trace.message.text:
        return trace.message.text
    return trace.query


def replay_trace(*, trace: Trace, setup: ReplaySetup, judge) -> ReplayResult:
    """Run the trace's message again under `setup`, judge both turns and compare them. Writes no row."""
    query = _message_text(trace)
    if not query.strip():
        raise ReplayError(f"Trace {trace.pk} has no text message to replay (the customer sent a "
                          f"{trace.message.kind if trace.message_id and trace.message else 'non-text'} message).")
    history = trace_history(trace)
    language = trace.language or (trace.conversation.contact.language if trace.conversation_id else "es") or "es"
    with _tuning(setup.overrides):
        decided = answer_query(query=query, language=language, customer_id=trace.customer_id or "",
                               history=history, writer=setup.writer, at_index_version=setup.index_version)
        replayed = configuration_parts(writer=setup.writer, router_version=decided.draft.router_version
                                       or get_router().version,
                                       index_version=decided.draft.index_version
                                       if decided.draft.index_version is not None else current_index_version())
    target = setup.target or current_parts()
    before = trace_view(trace, judge=judge)
    after = decision_view(decided, judge=judge)
    return ReplayResult(trace=trace, setup=setup, before=before, after=after, aspects=compare(before, after),
                        change=verdict_change(before, after), replayed_fingerprint=replayed.fingerprint,
                        not_as_chosen=[f"{d.part.label}: {d.after} instead of {d.before}"
                                       for d in differences(target, replayed)],
                        history=history)


def _chunks(retrieval) -> tuple[str, ...]:
    return tuple(f"{row.get('doc')} § {row.get('section')}" for row in retrieval or []
                 if isinstance(row, dict) and row.get("kept"))


def _evidence(rows) -> tuple[str, ...]:
    return tuple(f"{row.get('id')} {' '.join(str(row.get('text', '')).split())[:160]}" for row in rows or []
                 if isinstance(row, dict))


def _tokens(model_calls) -> int:
    return sum(int(c.get("tokens_in") or 0) + int(c.get("tokens_out") or 0) for c in model_calls or []
               if isinstance(c, dict))


def trace_view(trace: Trace, *, judge) -> TurnView:
    """Return the stored turn as compared: its judge verdict is the stored one of this judge version, or judged now
    (not stored)."""
    judged, reason = None, ""
    if trace.outcome == Trace.Outcome.ANSWERED and trace.final_text:
        stored = JudgeVerdict.objects.filter(trace=trace, judge_version=judge.version).first()
        if stored is not None:
            judged, reason = stored.label, stored.reason
        else:
            judged, reason = _judge(judge, question=trace.query, answer=trace.final_text, evidence=trace.evidence,
                                    attempts=trace.attempts)
    reply = trace.final_text or (customer_notice(trace.language or "es")
                                 if trace.outcome == Trace.Outcome.ESCALATED else "")
    return TurnView(outcome=trace.outcome, route=trace.route, reason=trace.escalation_reason,
                    chunks=_chunks(trace.retrieval), evidence=_evidence(trace.evidence), reply=reply,
                    verifier=trace.verdict or "none", judge=judged, judge_reason=reason,
                    latency_ms=float(trace.total_ms or 0), cost=float(trace.cost or 0),
                    tokens=_tokens(trace.model_calls))


def decision_view(decided: QueryAnswer, *, judge) -> TurnView:
    """Return a replay's decision as compared, judged by `judge` when it answered."""
    outcome, draft = decided.outcome, decided.draft
    if isinstance(outcome, (Answered, Clarify, Declined)):
        reply = outcome.text
    elif isinstance(outcome, Escalated):
        reply = customer_notice(draft.language or "es")
    else:
        reply = ""
    judged, reason = None, ""
    if isinstance(outcome, Answered) and reply:
        judged, reason = _judge(judge, question=draft.query, answer=reply, evidence=draft.evidence,
                                attempts=draft.attempts)
    return TurnView(outcome=outcome_name(outcome), route=draft.route,
                    reason=outcome.reason.value if isinstance(outcome, Escalated) else "",
                    chunks=_chunks(draft.retrieval), evidence=_evidence(draft.evidence), reply=reply,
                    verifier=verdict_of(draft.attempts), judge=judged, judge_reason=reason,
                    latency_ms=float(draft.total_ms or 0), cost=float(draft.cost or 0),
                    tokens=_tokens(draft.model_calls))


def _judge(judge, *, question, answer, evidence, attempts) -> tuple[str, str]:
    try:
        judgement = judge.judge(question=question, answer=answer, evidence=evidence_items(evidence),
                                verified=verified_figures(attempts))
    except JudgeError as exc:
        return "error", str(exc)
    return judgement.verdict, judgement.reason


# --- A set of traces replayed as one experiment -----------------------------------------------------------------

DOUBLE_SUBMIT_WINDOW_S = 60  # the same traces under the same configuration by the same person within this: one


def replay_experiment_create(*, trace_ids: list[int], key: str, user) -> tuple[ReplayExperiment, bool]:
    """Record an experiment of these traces (at most REPLAY_MAX_TRACES) under `key` and queue it on commit; return
    it and whether it is new (a double-clicked submit finds the first one and queues nothing)."""
    cap = settings.REPLAY_MAX_TRACES
    ids = list(dict.fromkeys(int(tid) for tid in trace_ids))
    if not ids:
        raise ReplayError("Tick at least one trace to replay.")
    if len(ids) > cap:
        raise ReplayError(f"Replay at most {cap} traces at a time ({len(ids)} ticked): narrow the filter.")
    setup = replay_setup(key)  # an unknown configuration is refused before anything is written
    with transaction.atomic():
        recent = (ReplayExperiment.objects.select_for_update()
                  .filter(created_by=user if getattr(user, "pk", None) else None, configuration_key=setup.key,
                          trace_ids=ids, started_at__gte=clock.now() - dt.timedelta(seconds=DOUBLE_SUBMIT_WINDOW_S))
                  .first())
        if recent is not None:
            return recent, False
        experiment = ReplayExperiment.objects.create(
            configuration_key=setup.key, configuration_label=setup.label[:300], trace_ids=ids,
            gaps=setup.gaps, created_by=user if getattr(user, "pk", None) else None)
        transaction.on_commit(lambda: task_queue("evals.replay_experiment", experiment.pk))
    return experiment, True


def _turn_json(view: TurnView) -> dict:
    return {"outcome": view.outcome, "reason": view.reason, "route": view.route, "judge": view.judge,
            "verifier": view.verifier, "reply": view.reply[:500], "cost": view.cost, "latency_ms": view.latency_ms}


def replay_experiment_run(*, experiment: ReplayExperiment, judge) -> ReplayExperiment:
    """Replay every trace of the experiment and store each before/after with the counts. Sends nothing."""
    try:
        setup = replay_setup(experiment.configuration_key)
    except ReplayError as error:
        experiment.status, experiment.error, experiment.finished_at = ReplayExperiment.Status.FAILED, str(error), \
            clock.now()
        experiment.save(update_fields=["status", "error", "finished_at"])
        return experiment
    traces = {t.pk: t for t in Trace.objects.filter(pk__in=experiment.trace_ids)
              .select_related("message", "conversation__contact")}
    results, counts = [], {BETTER: 0, WORSE: 0, SAME: 0, UNKNOWN: 0}
    failed, cost_before, cost_after = 0, 0.0, 0.0
    for trace_id in experiment.trace_ids:
        trace = traces.get(trace_id)
        if trace is None:
            results.append({"trace_id": trace_id, "error": "the trace no longer exists"})
            failed += 1
            continue
        try:
            result = replay_trace(trace=trace, setup=setup, judge=judge)
        except ReplayError as error:
            results.append({"trace_id": trace_id, "query": trace.query[:300], "error": str(error)})
            failed += 1
            continue
        counts[result.change] += 1
        cost_before += result.before.cost
        cost_after += result.after.cost
        results.append({"trace_id": trace_id, "query": trace.query[:300], "before": _turn_json(result.before),
                        "after": _turn_json(result.after), "change": result.change,
                        "changed": [a.name for a in result.aspects if a.changed]})
    experiment.results, experiment.failed = results, failed
    experiment.better, experiment.worse, experiment.same, experiment.unknown = (
        counts[BETTER], counts[WORSE], counts[SAME], counts[UNKNOWN])
    experiment.cost_before, experiment.cost_after = round(cost_before, 6), round(cost_after, 6)
    experiment.judge_version, experiment.gaps = judge.version, setup.gaps
    experiment.status, experiment.finished_at = ReplayExperiment.Status.DONE, clock.now()
    experiment.save()
    return experiment
