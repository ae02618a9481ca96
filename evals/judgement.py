"""What a judge returns: a verdict with its reason, or an error that is never a pass. Pure: no Django."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol


class EvidenceItem(Protocol):
    id: str
    text: str


@dataclass(frozen=True)
class JudgeEvidence:
    """One evidence item of a turn as a judge reads it: a chunk's text, or a billing finding's text, value and
    kind (e.g. "invoice_delta", "late_fee")."""

    id: str
    text: str
    value: str | None = None
    fact_kind: str = ""


@dataclass(frozen=True)
class Judgement:
    verdict: Literal["pass", "fail"]
    reason: str
    judge_version: str
    model: str
    attempts: int
    raw: str
    usage: tuple[tuple[str, int], ...] = ()  # the token usage of every attempt, summed (prompt/completion tokens)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


class JudgeError(Exception):
    """The judge gave no usable verdict after its retry: record it as a judge error, never as a pass."""

    def __init__(self, message: str, *, raw: str = "", attempts: int = 0, usage: dict | None = None):
        super().__init__(message)
        self.raw = raw
        self.attempts = attempts
        self.usage = dict(usage or {})  # tokens the failed attempts still used

