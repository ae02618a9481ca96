"""Query and form parameters as typed values: every reader returns a value or its default, never raises.

One layer for what a person (or a fuzzer) can type into an address or a form. Each reader takes the raw
string — `request.GET.get(name)`, None when absent — and returns `Parsed(value, error)`: the typed value,
or the default with a sentence saying what was wrong. The view decides what a bad value means: a filter
it ignores (the page says so), or a 400 page (`Parsed.or_bad_request()`).

The traps it closes, each met as a 500 before: `"²".isdigit()` is True but `int("²")` raises, and
`int("٣")` is 3; a date in year 9999 overflows when a day is added; PostgreSQL refuses NUL in text; a
Decimal of 1e26 cannot be quantized to cents; JSON nested thousands deep exhausts the stack.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Generic, TypeVar

from django.core.exceptions import BadRequest
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from core.keyset import cursor_decode

T = TypeVar("T")

MAX_ID = 2**63 - 1  # PostgreSQL bigint: an id above it is no row, not a database error
MAX_TEXT = 1_000  # a filter or a short field; callers storing longer text pass their own cap
MIN_YEAR, MAX_YEAR = 1900, 2100  # far enough for any filter, near enough that a day more never overflows
MAX_JSON_BYTES = 200_000
MAX_JSON_DEPTH = 20


@dataclass(frozen=True)
class Parsed(Generic[T]):
    """A parameter's value, or its default and what was wrong with what was sent."""

    value: T
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error

    def or_bad_request(self) -> T:
        """Return the value; raise BadRequest (a styled 400 page with the message) when the input was bad."""
        if self.error:
            raise BadRequest(self.error)
        return self.value


def _blank(raw: str | None) -> bool:
    return raw is None or not str(raw).strip()


def _printable(raw: str) -> str:
    """Return raw shortened for a message (a 60,000-character value is not echoed back)."""
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    return shown.replace("\x00", "\\0")


def integer(raw: str | None, *, label: str = "The value", default: int | None = None, low: int = 0,
            high: int = MAX_ID, clamp: bool = False) -> Parsed[int | None]:
    """Return raw as a whole number in [low, high]: ASCII digits with an optional minus sign only.

    clamp: bring a number outside the range to the nearest bound instead of refusing it.
    """
    if _blank(raw):
        return Parsed(default)
    text = str(raw).strip()
    digits = text[1:] if text[:1] == "-" else text
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 19:
        return Parsed(default, f"{label} must be a whole number, not “{_printable(text)}”.")
    number = int(text)
    if low <= number <= high:
        return Parsed(number)
    if clamp:
        return Parsed(min(max(number, low), high))
    return Parsed(default, f"{label} must be between {low} and {high}.")


def number(raw: str | None, *, label: str = "The value", default: float | None = None, low: float = 0.0,
           high: float = 1e12) -> Parsed[float | None]:
    """Return raw as a finite number in [low, high] ("NaN", "inf" and 1e400 are refused)."""
    if _blank(raw):
        return Parsed(default)
    text = str(raw).strip()
    try:
        value = float(text) if text.isascii() and len(text) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        return Parsed(default, f"{label} must be a number, not “{_printable(text)}”.")
    if not low <= value <= high:
        return Parsed(default, f"{label} must be between {low:g} and {high:g}.")
    return Parsed(value)


_NUMBER_WORDS = {0: "no", 1: "one", 2: "two", 3: "three", 4: "four"}


def decimal(raw: str | None, *, label: str = "The amount", default: Decimal | None = None, places: int = 2,
            max_digits: int = 12, low: Decimal | None = None, high: Decimal | None = None) -> Parsed[Decimal | None]:
    """Return raw as a Decimal with at most `places` decimals and `max_digits` digits; "5,00" is 5.00.

    The digits are counted before any arithmetic: 1e26 has more than the default context can quantize.
    """
    if _blank(raw):
        return Parsed(default)
    text = str(raw).strip().replace(",", ".")
    try:
        value = Decimal(text) if text.isascii() and len(text) <= 40 else None
    except InvalidOperation:
        value = None
    if value is None or not value.is_finite():
        return Parsed(default, f"{label} is not a number, e.g. 5.00.")
    if value and value.adjusted() >= max_digits - places:
        return Parsed(default, f"{label} has more than {max_digits - places} digits before the decimal point.")
    step = Decimal(1).scaleb(-places)
    if value != value.quantize(step):
        return Parsed(default, f"{label} has at most {_NUMBER_WORDS.get(places, places)} decimals.")
    if low is not None and value < low:
        return Parsed(default, f"{label} must be at least {low}.")
    if high is not None and value > high:
        return Parsed(default, f"{label} must be at most {high}.")
    return Parsed(value.quantize(step))


def day(raw: str | None, *, label: str = "The date", default: dt.date | None = None) -> Parsed[dt.date | None]:
    """Return raw (YYYY-MM-DD) as a date between MIN_YEAR and MAX_YEAR."""
    if _blank(raw):
        return Parsed(default)
    text = str(raw).strip()
    try:
        value = parse_date(text) if len(text) == 10 and text.isascii() else None
    except ValueError:  # well formed but impossible: 2026-13-45
        value = None
    if value is None:
        return Parsed(default, f"{label} must be a date such as 2026-03-31, not “{_printable(text)}”.")
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        return Parsed(default, f"{label} must be between {MIN_YEAR} and {MAX_YEAR}.")
    return Parsed(value)


def moment(raw: str | None, *, label: str = "The date", end: bool = False) -> Parsed[dt.datetime | None]:
    """Return raw — a date or a date and time — as an aware datetime between MIN_YEAR and MAX_YEAR.

    end: a bare date ends a range, so it stands for the start of the next day (the whole day is included).
    """
    if _blank(raw):
        return Parsed(None)
    text = str(raw).strip()
    if len(text) == 10:
        parsed_day = day(text, label=label)
        if parsed_day.error:
            return Parsed(None, parsed_day.error)
        start = parsed_day.value + dt.timedelta(days=1) if end else parsed_day.value
        return Parsed(timezone.make_aware(dt.datetime.combine(start, dt.time.min)))
    try:
        value = parse_datetime(text) if text.isascii() and len(text) <= 40 else None
    except ValueError:
        value = None
    if value is None:
        return Parsed(None, f"{label} must be a date such as 2026-03-31 or 2026-03-31T14:30, "
                            f"not “{_printable(text)}”.")
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        return Parsed(None, f"{label} must be between {MIN_YEAR} and {MAX_YEAR}.")
    return Parsed(timezone.make_aware(value) if timezone.is_naive(value) else value)


def choice(raw: str | None, choices, *, label: str = "The value", default: str = "") -> Parsed[str]:
    """Return raw when it is one of `choices` (values, or (value, label) pairs)."""
    if _blank(raw):
        return Parsed(default)
    allowed = [c[0] if isinstance(c, tuple | list) else c for c in choices]
    text = str(raw).strip()
    if text in allowed:
        return Parsed(text)
    return Parsed(default, f"{label} must be one of {', '.join(str(a) for a in allowed if a != '')}.")


YES = {"yes", "1", "true", "on"}
NO = {"no", "0", "false", "off"}


def boolean(raw: str | None, *, label: str = "The value", default: bool | None = None) -> Parsed[bool | None]:
    """Return yes/no (also 1/0, true/false, on/off) as a bool."""
    if _blank(raw):
        return Parsed(default)
    text = str(raw).strip().lower()
    if text in YES:
        return Parsed(True)
    if text in NO:
        return Parsed(False)
    return Parsed(default, f"{label} must be yes or no.")


def text(raw: str | None, *, label: str = "The text", default: str = "", max_length: int = MAX_TEXT,
         strip: bool = True) -> Parsed[str]:
    """Return raw as text of at most max_length characters; a NUL character (PostgreSQL refuses it) is refused."""
    if raw is None:
        return Parsed(default)
    value = str(raw).strip() if strip else str(raw)
    if "\x00" in value:
        return Parsed(default, f"{label} contains a NUL character; remove it.")
    if len(value) > max_length:
        return Parsed(default, f"{label} is longer than {max_length:,} characters.")
    return Parsed(value)


def name(raw: str | None, *, label: str = "The name", max_length: int, empty: str) -> Parsed[str]:
    """Return a name someone gave a thing: text with its runs of spaces made one, not empty (`empty` says what
    to do), printable (no control characters)."""
    parsed = text(raw, label=label, max_length=max_length)
    if parsed.error:
        return parsed
    value = " ".join(parsed.value.split())
    if not value:
        return Parsed("", empty)
    if not value.isprintable():
        return Parsed("", f"{label} cannot contain control characters.")
    return Parsed(value)


def cursor(raw: str | None) -> Parsed[tuple[dt.datetime, int] | None]:
    """Return a keyset cursor (core/keyset.py); a malformed one means the first page."""
    if _blank(raw):
        return Parsed(None)
    decoded = cursor_decode(str(raw))
    return Parsed(decoded) if decoded else Parsed(None, "That page link is out of date; showing the first page.")


def json_depth(raw: str) -> int:
    """Return how deeply raw JSON nests arrays and objects, without parsing it (strings are skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in raw:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def json_document(raw: str | None, *, label: str = "The JSON", max_bytes: int = MAX_JSON_BYTES,
                  max_depth: int = MAX_JSON_DEPTH, parse_float=Decimal) -> Parsed[Any]:
    """Return raw parsed as JSON, refusing it before parsing when it is too long or nests too deep."""
    if _blank(raw):
        return Parsed(None, f"{label} is empty.")
    if len(raw) > max_bytes:
        return Parsed(None, f"{label} is longer than {max_bytes:,} characters.")
    if json_depth(raw) > max_depth:
        return Parsed(None, f"{label} nests deeper than {max_depth} levels.")
    try:
        value = json.loads(raw, parse_float=parse_float, parse_constant=_refuse_constant)
    except ValueError as error:  # JSONDecodeError, or NaN/Infinity
        return Parsed(None, f"{label} is not valid JSON ({error}).")
    if _has_nul(value):
        return Parsed(None, f"{label} contains a NUL character (\\u0000); remove it.")
    return Parsed(value)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False
