"""What the trace pages call the codes a trace stores: routes, channels, languages, stages. Pure: no Django.

A trace keeps codes (`document`, `NO_CONTEXT`, `write_2`); people read labels. One table per kind, one
function to look a code up (an unknown code is shown as it is, never hidden), and one function that turns
what someone typed into a filter — a code or a label, in any case — into the stored values it means.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from core.text import fold
from desk.reasons import LABELS as REASON_LABELS

ROUTE_LABELS = {
    "document": "Knowledge-base question",
    "account": "Account question",
    "human": "Asked for a person",
    "unsupported": "Action the bot cannot take",
    "media": "Attachment the bot cannot read",
    "smalltalk": "Small talk",
}
CHANNEL_LABELS = {"whatsapp": "WhatsApp", "webchat": "Web chat"}
LANGUAGE_LABELS = {"es": "Spanish", "en": "English"}
VERDICT_LABELS = {
    "grounded": "Grounded at once",
    "rewritten": "Grounded after a rewrite",
    "ungrounded": "Not grounded",
    "none": "No writer call",
}
SILENCED_AT_LABELS = {
    "gate": "a person holds the conversation",
    "send": "a person took over before sending",
    "ack": "a bare acknowledgement",
    "deleted": "the customer deleted the message",
}
CAPABILITY_LABELS = {
    "find_customer": "Customer lookup",
    "account_summary": "Account summary",
    "invoices": "Invoices",
    "payments": "Payments",
    "invoice_change": "Why the bill changed",
}
HUMANIZER_REASON_LABELS = {
    "": "No forbidden wording",
}
# The review stages (traces.models.STAGES): where a first upstream failure starts.
STAGE_LABELS = {
    "routing": "Routing",
    "retrieval": "Retrieval",
    "pruning": "Pruning",
    "billing": "Billing",
    "writing": "Writing",
    "verification": "Verification",
    "humanizing": "Humanizing",
    "channel": "Channel",
    "other": "Other",
}
# The turn's timed stages (bot/turn.py's recorder), in the order a turn runs them. JSONB does not keep the
# order in which keys were written (it sorts them by length), so the order is restated here.
TURN_STAGE_ORDER = ["gate", "route", "identify", "billing", "retrieve", "write", "verify", "fallback", "humanize",
                    "send"]
TURN_STAGE_LABELS = {
    "gate": "State gate",
    "route": "Routing",
    "identify": "Customer lookup",
    "billing": "Billing",
    "retrieve": "Retrieval",
    "write": "Writer",
    "verify": "Verifier",
    "fallback": "Verified-only fallback",
    "humanize": "Humanizer",
    "send": "Send",
}

LABELS_BY_FILTER: Mapping[str, Mapping[str, str]] = {
    "escalation_reason": {reason.value: label for reason, label in REASON_LABELS.items()},
    "route": ROUTE_LABELS,
    "language": LANGUAGE_LABELS,
    "channel": CHANNEL_LABELS,
}


def label(table: Mapping[str, str], code) -> str:
    """Return the label of a code, or the code itself when the table does not know it."""
    if code is None or code == "":
        return "—"
    return table.get(str(code), str(code))


@dataclass(frozen=True)
class Choice:
    """One option of a filter: the stored value and what people read."""

    value: str
    label: str

    @property
    def shows_code(self) -> bool:
        return self.label != self.value


def choices(values: Iterable, table: Mapping[str, str] | None = None) -> list[Choice]:
    """Return the options for stored values, labelled, ordered by label."""
    table = table or {}
    options = [Choice(str(v), label(table, v)) for v in values if v is not None and v != ""]
    return sorted(options, key=lambda c: (fold(c.label), c.value))


def matching_values(raw: str, values: Iterable, table: Mapping[str, str] | None = None) -> list[str]:
    """Return the stored values that `raw` names: the value or its label, case- and accent-insensitively."""
    wanted = fold(raw.strip(), spaces=True)
    if not wanted:
        return []
    table = table or {}
    return [str(v) for v in values
            if v not in (None, "") and wanted in (fold(str(v), spaces=True), fold(label(table, v), spaces=True))]


_NUMBERED = re.compile(r"^(?P<stage>[a-z]+)_(?P<number>\d+)$")


def turn_stage_label(name: str) -> str:
    """Return the label of a timed stage: 'write_2' is 'Writer (attempt 2)'."""
    numbered = _NUMBERED.match(name)
    if numbered and numbered["stage"] in TURN_STAGE_LABELS:
        return f"{TURN_STAGE_LABELS[numbered['stage']]} (attempt {numbered['number']})"
    return TURN_STAGE_LABELS.get(name, name)


@dataclass(frozen=True)
class StageTiming:
    """One bar of the latency waterfall: where the stage starts and how long it ran, in ms and in % of the turn."""

    name: str
    label: str
    ms: float
    start_ms: float
    offset_pct: float
    width_pct: float


def _stage_key(name: str, position: int) -> tuple:
    numbered = _NUMBERED.match(name)
    stage, number = (numbered["stage"], int(numbered["number"])) if numbered else (name, 0)
    if stage in ("write", "verify"):
        # Attempts alternate: write 1, verify 1, write 2, verify 2…
        return (TURN_STAGE_ORDER.index("write"), number, stage == "verify", position)
    if stage in TURN_STAGE_ORDER:
        return (TURN_STAGE_ORDER.index(stage), number, False, position)
    return (len(TURN_STAGE_ORDER), 0, False, position)  # unknown stages last, as recorded


def latency_waterfall(latency_ms: Mapping[str, float], total_ms: float = 0.0) -> list[StageTiming]:
    """Return the turn's stages in the order they ran, each starting where the previous one ended.

    The scale is the turn's total time (or the sum of the stages when that is larger or unknown), so the
    bars of one turn line up as a waterfall and the gap at the end is time outside any stage.
    """
    timed = []
    for position, (name, ms) in enumerate(latency_ms.items()):
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms >= 0:
            timed.append((_stage_key(name, position), name, float(ms)))
    timed.sort(key=lambda row: row[0])
    scale = max(float(total_ms or 0), sum(ms for _, _, ms in timed)) or 1.0
    bars, start = [], 0.0
    for _, name, ms in timed:
        bars.append(StageTiming(name=name, label=turn_stage_label(name), ms=ms, start_ms=start,
                                offset_pct=round(100 * start / scale, 2), width_pct=max(0.5, round(100 * ms / scale, 2))))
        start += ms
    return bars


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def class_event_sentence(kind: str, detail) -> str:
    """Return one line of a failure class's history, e.g. 'renamed from “a” to “b”' or '2 notes assigned'."""
    detail = detail if isinstance(detail, Mapping) else {}
    if kind == "created":
        stage = label(STAGE_LABELS, detail.get("stage"))
        definition = detail.get("definition") or ""
        return f"created (stage: {stage}){f' — {definition}' if definition else ''}"
    if kind == "assigned":
        notes = detail.get("notes") or []
        return f"{_count(len(notes), 'note')} assigned"
    if kind == "renamed":
        sentence = f"renamed from “{detail.get('from', '')}” to “{detail.get('to', '')}”"
        if detail.get("definition_from") != detail.get("definition_to"):
            sentence += f"; definition was “{detail.get('definition_from', '')}”"
        return sentence
    if kind == "merged":
        return f"absorbed “{detail.get('from_name', '')}” ({_count(len(detail.get('notes') or []), 'note')} moved)"
    if kind == "merged_into":
        return f"merged into “{detail.get('into_name', '')}”"
    return kind.replace("_", " ")


_HTTP_CODE = re.compile(r"^http_(\d{3})$")


@dataclass(frozen=True)
class BillingCall:
    """One billing call of a turn as the trace pages show it."""

    capability: str
    label: str
    ok: bool
    escalated: bool
    http_status: int | None
    error_code: str
    error_message: str
    facts: int

    @property
    def status(self) -> str:
        if self.ok:
            return "answered"
        if self.http_status is not None:
            return f"failed: HTTP {self.http_status}"
        return f"failed: {self.error_code.replace('_', ' ')}" if self.error_code else "failed"


def billing_calls(tool_calls) -> list[BillingCall]:
    """Return the turn's billing calls with their status, HTTP status and error, from the stored JSON."""
    calls = []
    for call in tool_calls if isinstance(tool_calls, list) else []:
        if not isinstance(call, Mapping):
            continue
        error = call.get("error") if isinstance(call.get("error"), Mapping) else {}
        code = str(error.get("code") or "")
        http = _HTTP_CODE.match(code)
        capability = str(call.get("capability") or "")
        calls.append(BillingCall(
            capability=capability, label=label(CAPABILITY_LABELS, capability), ok=bool(call.get("ok")),
            escalated=bool(call.get("should_escalate")), http_status=int(http.group(1)) if http else None,
            error_code=code, error_message=str(error.get("message") or ""),
            facts=len(call.get("evidence") or []) if isinstance(call.get("evidence"), list) else 0))
    return calls


def humanizer_sentence(humanizer) -> str:
    """Return what the humanizer decided, in words ('' when it did not run)."""
    if not isinstance(humanizer, Mapping) or not humanizer:
        return ""
    if humanizer.get("ok"):
        return "passed: no forbidden wording"
    reason = str(humanizer.get("reason") or "forbidden wording")
    phrase = humanizer.get("phrase")
    return f"refused — {reason}{f': “{phrase}”' if phrase else ''}"


TOKEN_LABELS = {"prompt_tokens": "prompt", "completion_tokens": "completion", "total_tokens": "total",
                "input_tokens": "input", "output_tokens": "output"}


def token_usage(usage) -> list[tuple[str, int]]:
    """Return the token counts as (label, number) pairs, known kinds first."""
    if not isinstance(usage, Mapping):
        return []
    numbers = [(k, v) for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)]
    order = list(TOKEN_LABELS)
    numbers.sort(key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0]))
    return [(TOKEN_LABELS.get(k, k.replace("_", " ")), v) for k, v in numbers]


OUTCOME_LABELS = {
    "answered": "Answered",
    "escalated": "Escalated",
    "silenced": "Silenced",
    "clarify": "Asked to clarify",
    "declined": "Declined (not plans or billing)",
    "asked": "Asked who they are",  # an eval run's case: the bot asked for the account number
}
REVIEW_VERDICT_LABELS = {"pass": "Pass", "fail": "Fail", "defer": "Deferred"}
FILTER_NAMES = {
    "since": "from", "until": "to", "outcome": "outcome", "escalation_reason": "escalation reason", "route": "route",
    "language": "language", "channel": "channel", "verdict": "verdict", "derived": "derived numbers",
    "prompt_version": "prompt", "index_version": "index", "model": "model", "has_note": "has note",
    "failure_class": "failure class", "complaint_sourced": "complaint-sourced", "verified_wrong": "verified wrong",
    "latency_above": "latency above (ms)", "text": "search", "suspected_complaint": "suspected complaint",
    "fallback": "fallback", "score": "score",
}
FALLBACK_FILTER_LABELS = {"yes": "answered by the verified-only fallback", "no": "not answered by the fallback",
                          "template": "the verified template answer", "quote": "a quote of the knowledge base",
                          "escalated": "escalated with the verified draft"}
FILTER_VALUE_LABELS: Mapping[str, Mapping[str, str]] = {
    **LABELS_BY_FILTER, "outcome": OUTCOME_LABELS, "verdict": VERDICT_LABELS, "fallback": FALLBACK_FILTER_LABELS,
}


def filters_sentence(filters) -> str:
    """Return a session's stored filters as words ('none' when it has none): 'route: Account question · …'."""
    if not isinstance(filters, Mapping) or not filters:
        return "none"
    parts = []
    for name, value in filters.items():
        shown = label(FILTER_VALUE_LABELS.get(name, {}), value)
        parts.append(f"{FILTER_NAMES.get(name, name.replace('_', ' '))}: {shown}")
    return " · ".join(parts)
