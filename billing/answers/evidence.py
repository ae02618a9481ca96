"""What a billing capability hands to the turn: facts with values, key figures, and a verdict on escalation.

Pure dataclasses. A `Fact` becomes one evidence item `E#` of the turn; its `value` is the
canonical machine form of the number or date it states (`"14.00"`, `"12"`, `"2026-10-10"`),
its `text` the customer-language sentence, and `derivation` the language-neutral formula for
computed facts (None for facts read straight from the system of record).

A `KeyFigure` is a figure an answer to the capability's question must state (the bill change and
its largest cause, a payment's amount and date…), pointing at the fact that states it by its place
in the result: `F1` is `evidence[0]`. The turn numbers evidence its own way (`E#`, after the
retrieved chunks), so it maps `F#` through `KeyFigure.index`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

PRIMARY = "primary"
SECONDARY = "secondary"


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
class KeyFigure:
    evidence_id: str  # F1…Fn: the fact of this result that states the figure
    value: Decimal | int | date
    role: str  # PRIMARY: an answer must state it; SECONDARY: it explains the rest
    name: str  # what the figure is: delta, late_fee_basis, payment_date…

    @property
    def index(self) -> int:
        """Return the position of the stating fact in `ToolResult.evidence`."""
        return int(self.evidence_id[1:]) - 1

    @property
    def figure(self) -> str:
        """Return the figure in machine form, as a fact's value writes it (`1624.00`, `11`, `2026-10-10`)."""
        if isinstance(self.value, Decimal):
            return f"{self.value:.2f}"
        if isinstance(self.value, date):
            return self.value.isoformat()
        return str(self.value)

    def to_json(self) -> dict[str, Any]:
        return {"evidence_id": self.evidence_id, "value": self.figure, "role": self.role, "name": self.name}


@dataclass(frozen=True)
class FactSheet:
    """The facts a capability states, in order, and the key figures among them."""

    facts: list[Fact] = field(default_factory=list)
    key_figures: list[KeyFigure] = field(default_factory=list)


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
    key_figures: list[KeyFigure] = field(default_factory=list)

    def fact(self, figure: KeyFigure) -> Fact:
        """Return the fact that states a key figure."""
        return self.evidence[figure.index]

    def to_json(self) -> dict[str, Any]:
        return {
            "capability": self.capability,
            "ok": self.ok,
            "should_escalate": self.should_escalate,
            "error": self.error.to_json() if self.error else None,
            "evidence": [fact.to_json() for fact in self.evidence],
            "key_figures": [figure.to_json() for figure in self.key_figures],
            "data": self.data,
        }
