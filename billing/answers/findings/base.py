"""What every finding shares: the base classes, the figures an answer must state, and the machine notation of
derivations."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

HUNDRED = Decimal(100)
ONE_OFF_CHARGES = ("installation", "reconnection", "technical_visit", "credit")


def two_places(value: Decimal) -> str:
    """Return the machine form of an amount or a rate: `1624.00`, `-7.74`, `16.00`."""
    return f"{value:.2f}"


def minus_formula(left: Decimal, right: Decimal) -> str:
    """Return 'a - b' in machine form (the derivations' notation)."""
    return f"{two_places(left)} - {two_places(right)}"


@dataclass(frozen=True)
class Figure:
    """A figure an answer must state: what it is, its value, and the kind of fact that states it."""

    name: str
    value: Decimal | int | date
    kind: str


class Finding:
    """Base of every finding; one that answers a question about a change or a problem declares figures."""

    def figures(self) -> tuple[Figure, ...]:
        return ()


class Cause(Finding):
    """A finding that explains part of a bill change; its `effect` (a Decimal) is what it moves the bill by.

    `effect` is a field or a property of each cause, so it is not declared here: a property on the
    base would shadow a dataclass field of the same name.
    """

    effect: Decimal
