"""What a billing capability hands to the turn: facts with values, and a verdict on escalation.

Pure dataclasses. A `Fact` becomes one evidence item `E#` of the turn; its `value` is the
canonical machine form of the number or date it states (`"14.00"`, `"12"`, `"2026-10-10"`),
its `text` the customer-language sentence, and `derivation` the language-neutral formula for
computed facts (None for facts read straight from the system of record).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fact:
    text: str
    value: str
    currency: str | None
    kind: str
    derivation: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ToolError:
    code: str
    message: str
    infrastructure: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ToolResult:
    capability: str
    ok: bool
    evidence: list[Fact] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    error: ToolError | None = None
    should_escalate: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "capability": self.capability,
            "ok": self.ok,
            "should_escalate": self.should_escalate,
            "error": self.error.to_json() if self.error else None,
            "evidence": [fact.to_json() for fact in self.evidence],
            "data": self.data,
        }
