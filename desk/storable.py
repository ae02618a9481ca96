"""What a customer sends, made storable in PostgreSQL: pure, no Django.

Two things in a JSON string can never reach a row, whatever the channel:
- U+0000 (NUL): PostgreSQL `text` and `jsonb` refuse it ("text fields cannot contain NUL"). In the
  customer's words it carries nothing a person could read, so it is removed.
- a lone surrogate (U+D800–U+DFFF without its pair, which JSON's `\\ud800` escape can produce):
  it is not a character, UTF-8 cannot encode it, and the database driver raises
  UnicodeEncodeError. It becomes U+FFFD, the replacement character, so the reader sees that
  something was there.
Identifiers (message ids, phone numbers, business-scoped ids) are not cleaned here: the parser
refuses an item whose identifier carries either, because changing an id could make it another
message's id, and deduplication trusts ids.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

# WhatsApp's own limit for a text message; longer text is cut and flagged, never stored whole.
TEXT_MAX = 4096

_SURROGATE = re.compile("[\ud800-\udfff]")
# Control characters and surrogates: never part of an identifier Meta or the desk gives out.
_NOT_IN_IDS = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


def storable_text(value: str) -> str:
    """Return `value` without NUL and with each lone surrogate replaced by U+FFFD."""
    if "\x00" in value:
        value = value.replace("\x00", "")
    if _SURROGATE.search(value):
        value = _SURROGATE.sub("\ufffd", value)
    return value


def identifier_problem(value: str, *, max_length: int) -> str:
    """Return why `value` cannot be an identifier ('' when it can)."""
    if len(value) > max_length:
        return f"longer than {max_length} characters"
    if _NOT_IN_IDS.search(value):
        return "contains a control character or an unpaired surrogate"
    return ""


@dataclass(frozen=True)
class CappedText:
    text: str
    truncated: bool
    length: int  # of the text as received, before the cut


def text_capped(value: str, *, limit: int = TEXT_MAX) -> CappedText:
    """Return the storable text, cut to `limit` characters with a visible marker when longer."""
    text = storable_text(value)
    if len(text) <= limit:
        return CappedText(text, False, len(text))
    marker = f"\n[… cut: the message had {len(text):,} characters]"
    return CappedText(text[: limit - len(marker)] + marker, True, len(text))


def storable_json(value, *, max_depth: int, max_string: int = TEXT_MAX):
    """Return a copy of a parsed JSON value that `jsonb` accepts and that stays small.

    Strings (keys too) are cleaned as `storable_text` does and cut at `max_string`; numbers that
    JSON cannot carry (NaN, ±infinity, integers past 128 bits) become null; anything nested deeper
    than `max_depth` becomes null.
    """
    if isinstance(value, str):
        return storable_text(value[:max_string])
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 128 else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if max_depth <= 0:
        return None
    if isinstance(value, dict):
        return {storable_text(str(key)[:max_string]): storable_json(item, max_depth=max_depth - 1,
                                                                     max_string=max_string)
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable_json(item, max_depth=max_depth - 1, max_string=max_string) for item in value]
    return None
