"""Scores the team defines — yes/no, named values, a number in a range — read and written as text (pure: no Django).

A value is stored in one canonical spelling (`"yes"` / `"no"`, the category's own name, a number as `%g` writes it),
so the trace browser's filter, agreement and the dashboard compare strings.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

BOOLEAN, CATEGORICAL, NUMERIC = "boolean", "categorical", "numeric"
KINDS = {BOOLEAN: "Yes / no", CATEGORICAL: "Named values", NUMERIC: "A number in a range"}
YES = {"yes", "y", "true", "1", "sí", "si"}
NO = {"no", "n", "false", "0"}
KEY_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
VALUE_MAX = 60
VALUES_MAX = 12


class ScoreError(ValueError):
    """A score definition or value the rules refuse (the message says what to change)."""


@dataclass(frozen=True)
class ScoreSpec:
    """What a score is: its key, kind, named values (categorical) and range (numeric)."""

    key: str
    name: str
    kind: str
    values: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None

    def choices(self) -> list[str]:
        """Return the values a select offers: yes/no, the named values, or the whole numbers of a small range."""
        if self.kind == BOOLEAN:
            return ["yes", "no"]
        if self.kind == CATEGORICAL:
            return list(self.values)
        if self.low is not None and self.high is not None and self.high - self.low <= 10 \
                and float(self.low).is_integer() and float(self.high).is_integer():
            return [number_text(v) for v in range(int(self.low), int(self.high) + 1)]
        return []


def number_text(value: float) -> str:
    return f"{value:g}"


def spec_check(*, key: str, name: str, kind: str, values: list[str] | tuple[str, ...] = (),
               low: float | None = None, high: float | None = None) -> ScoreSpec:
    """Return a valid definition, or raise ScoreError saying what is wrong with it."""
    key, name = (key or "").strip().lower(), " ".join((name or "").split())
    if not KEY_RE.match(key):
        raise ScoreError("The key is a short lower-case word (letters, digits, _), starting with a letter.")
    if not name:
        raise ScoreError("Give the score a name people read.")
    if kind not in KINDS:
        raise ScoreError("Choose yes / no, named values or a number in a range.")
    cleaned: list[str] = []
    if kind == CATEGORICAL:
        for value in values:
            value = " ".join(str(value).split())
            if value and value.lower() not in (v.lower() for v in cleaned):
                cleaned.append(value)
        if len(cleaned) < 2:
            raise ScoreError("Named values need at least two different values, one per line.")
        if len(cleaned) > VALUES_MAX or any(len(v) > VALUE_MAX for v in cleaned):
            raise ScoreError(f"At most {VALUES_MAX} values of at most {VALUE_MAX} characters each.")
    if kind == NUMERIC:
        if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)) or low >= high:
            raise ScoreError("A number score needs a minimum below its maximum.")
    else:
        low = high = None
    return ScoreSpec(key=key, name=name, kind=kind, values=tuple(cleaned), low=low, high=high)


def value_parse(spec: ScoreSpec, raw: str | None) -> str | None:
    """Return the canonical value of a typed one ("" or None: not scored), or raise ScoreError."""
    raw = " ".join(str(raw or "").split())
    if not raw:
        return None
    if spec.kind == BOOLEAN:
        if raw.lower() in YES:
            return "yes"
        if raw.lower() in NO:
            return "no"
        raise ScoreError(f"{spec.name}: answer yes or no.")
    if spec.kind == CATEGORICAL:
        for value in spec.values:
            if value.lower() == raw.lower():
                return value
        raise ScoreError(f"{spec.name}: choose one of {', '.join(spec.values)}.")
    try:
        number = float(raw.replace(",", ".")) if re.fullmatch(r"[-+]?\d{1,9}([.,]\d{1,6})?", raw) else None
    except ValueError:  # pragma: no cover - the pattern admits only what float() reads
        number = None
    if number is None:
        raise ScoreError(f"{spec.name}: write a number.")
    if not spec.low <= number <= spec.high:
        raise ScoreError(f"{spec.name}: between {number_text(spec.low)} and {number_text(spec.high)}.")
    return number_text(number)


def value_number(spec: ScoreSpec, value: str) -> float | None:
    """Return the number a canonical value stands for (yes 1, no 0, numbers themselves); None for categories."""
    if spec.kind == BOOLEAN:
        return 1.0 if value == "yes" else 0.0
    if spec.kind == NUMERIC:
        return float(value)
    return None


def buckets(spec: ScoreSpec) -> list[str]:
    """Return the groups the dashboard stacks a score's values in: its choices, or five equal ranges."""
    if spec.choices():
        return spec.choices()
    step = (spec.high - spec.low) / 5
    return [f"{number_text(spec.low + i * step)}–{number_text(spec.low + (i + 1) * step)}" for i in range(5)]


def bucket_of(spec: ScoreSpec, value: str) -> str:
    """Return the dashboard group of a canonical value."""
    if spec.choices():
        return value
    step = (spec.high - spec.low) / 5
    index = min(4, int((float(value) - spec.low) // step))
    return buckets(spec)[index]
