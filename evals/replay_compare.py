"""Two runs of one turn side by side — what changed, and whether it got better or worse. Pure: no Django.

A turn is read as a `TurnView` (from a stored trace or from a replay's decision); `compare` lists each aspect a
reader compares — route, retrieved chunks, evidence, reply, verifier and judge verdicts, latency, cost — with
whether it changed, and `verdict_change` says better, worse or same by faithfulness and outcome.
"""

from __future__ import annotations

from dataclasses import dataclass

BETTER, WORSE, SAME, UNKNOWN = "better", "worse", "same", "unknown"


@dataclass(frozen=True)
class TurnView:
    outcome: str  # answered, escalated, clarify, declined, silenced
    route: str
    reason: str = ""  # the escalation reason, if it escalated
    chunks: tuple[str, ...] = ()  # "doc § section" of the kept chunks, in rank order
    evidence: tuple[str, ...] = ()  # "E1 text…" per evidence item
    reply: str = ""
    verifier: str = "none"  # grounded, rewritten, ungrounded, none
    judge: str | None = None  # pass, fail, error, or None (not judged: nothing was answered)
    judge_reason: str = ""
    latency_ms: float = 0.0
    cost: float = 0.0
    tokens: int = 0


@dataclass(frozen=True)
class Aspect:
    name: str
    before: object
    after: object
    changed: bool


def verdict_of(attempts) -> str:
    """Return the verifier verdict of a turn from its writer attempts, as the Trace's generated column does."""
    attempts = [a for a in attempts or [] if isinstance(a, dict)]
    if not attempts:
        return "none"
    last = attempts[-1].get("verdict") if isinstance(attempts[-1].get("verdict"), dict) else None
    if last is not None and last.get("grounded") is True:
        return "grounded" if len(attempts) == 1 else "rewritten"
    if any(isinstance(a.get("verdict"), dict) for a in attempts):
        return "ungrounded"
    return "none"


def compare(before: TurnView, after: TurnView) -> list[Aspect]:
    """Return each aspect of the two turns in reading order, with whether it changed."""
    rows = [
        ("Outcome", before.outcome, after.outcome),
        ("Escalation reason", before.reason, after.reason),
        ("Route", before.route, after.route),
        ("Retrieved chunks (kept)", before.chunks, after.chunks),
        ("Evidence", before.evidence, after.evidence),
        ("Reply", before.reply, after.reply),
        ("Verifier", before.verifier, after.verifier),
        ("Judge (faithfulness)", before.judge, after.judge),
    ]
    aspects = [Aspect(name, b, a, b != a) for name, b, a in rows]
    # Latency and cost always differ a little: a change is worth a highlight past 20 % (and 50 ms) or any cost.
    latency_changed = abs(after.latency_ms - before.latency_ms) > max(50.0, 0.2 * before.latency_ms)
    aspects.append(Aspect("Latency (ms)", round(before.latency_ms, 1), round(after.latency_ms, 1), latency_changed))
    aspects.append(Aspect("Cost (USD)", before.cost, after.cost, round(before.cost, 6) != round(after.cost, 6)))
    return aspects


def _score(turn: TurnView) -> int | None:
    """2: answered and judged faithful; 1: did not answer (a person or a question instead); 0: answered and judged
    unfaithful — a wrong answer is the worst outcome. None: answered and the judge could not say."""
    if turn.outcome != "answered":
        return 1
    if turn.judge == "pass":
        return 2
    if turn.judge == "fail":
        return 0
    return None


def verdict_change(before: TurnView, after: TurnView) -> str:
    """Return better, worse or same by faithfulness and outcome (unknown when the judge gave no verdict)."""
    old, new = _score(before), _score(after)
    if old is None or new is None:
        return UNKNOWN
    if new > old:
        return BETTER
    if new < old:
        return WORSE
    return SAME
