"""Humanizer: reject customer messages that sound like a robot or promise what nobody confirmed.

Pure Python, no Django. The phrase lists are data (bot/data/humanizer_phrases.json), loaded once
on first use. `check()` returns the first finding, most serious first: the assistant calling itself
an AI, a banned promise, a refund promise (a date or an outcome), a robotic opener, more than one
apology.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path

from bot.grounding import DEFAULT_BANNED_PHRASES
from core.text import fold

PHRASES_PATH = Path(__file__).resolve().parent / "data" / "humanizer_phrases.json"


def _folded(text: str) -> str:
    return fold(text, quotes=True, spaces=True)


@dataclass(frozen=True, slots=True)
class HumanizerVerdict:
    ok: bool
    reason: str = ""
    phrase: str = ""


@dataclass(frozen=True, slots=True)
class _Lists:
    ai_self_reference: re.Pattern
    refund_promises: re.Pattern
    refund_promise_patterns: tuple[re.Pattern, ...]
    openers: re.Pattern
    apologies: re.Pattern


def _phrases_re(phrases: list[str] | tuple[str, ...], *, at_start: bool = False) -> re.Pattern:
    """Compile whole-word phrases, longest first so a long phrase is not counted as its short part."""
    folded = sorted({_folded(p) for p in phrases if p.strip()}, key=len, reverse=True)
    alternatives = "|".join(re.escape(p) for p in folded) or r"(?!x)x"
    if at_start:
        return re.compile(rf"^\W*?(?P<phrase>{alternatives})(?!\w)")
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


@cache
def _data() -> tuple[int, dict[str, _Lists], str]:
    """Load and compile the phrase lists once; the third item is their content, canonical (for the fingerprint)."""
    raw = json.loads(PHRASES_PATH.read_text(encoding="utf-8"))
    languages = {
        language: _Lists(
            ai_self_reference=_phrases_re(lists["ai_self_reference"]),
            refund_promises=_phrases_re(lists["refund_promises"]),
            refund_promise_patterns=tuple(re.compile(p) for p in lists["refund_promise_patterns"]),
            openers=_phrases_re(lists["openers"], at_start=True),
            apologies=_phrases_re(lists["apologies"]),
        )
        for language, lists in raw["languages"].items()
    }
    return raw["max_apologies"], languages, json.dumps(raw, sort_keys=True, ensure_ascii=False)


def phrase_lists() -> str:
    """Return the phrase lists in force, as canonical JSON: a change of any phrase changes this text."""
    return _data()[2]


@lru_cache(maxsize=32)
def _banned_re(extra: tuple[str, ...]) -> re.Pattern:
    return _phrases_re(DEFAULT_BANNED_PHRASES + extra)


def check(text: str, *, language: str, banned_phrases: list[str] | None = None) -> HumanizerVerdict:
    """Return the first forbidden phrase in a customer message, with a reason the writer can act on.

    `language` is "es" or "en" (a region such as "es-VE" is ignored); any other language is checked
    against every list, so a mixed or unexpected language is never checked less.
    """
    max_apologies, languages, _ = _data()
    code = language.lower().split("-")[0]
    selected = [languages[code]] if code in languages else list(languages.values())
    folded = _folded(text)

    for lists in selected:
        match = lists.ai_self_reference.search(folded)
        if match:
            return HumanizerVerdict(False, (
                f'the message talks about itself as an AI ("{match.group()}"); answer as the provider\'s '
                "assistant without describing what you are."), match.group())
    match = _banned_re(tuple(banned_phrases or ())).search(folded)
    if match:
        return HumanizerVerdict(False, (
            f'the message makes a banned promise ("{match.group()}"); remove it and say that an agent '
            "will confirm."), match.group())
    for lists in selected:
        match = lists.refund_promises.search(folded)
        for pattern in lists.refund_promise_patterns:
            match = match or pattern.search(folded)
        if match:
            return HumanizerVerdict(False, (
                f'the message promises a refund, its date or its outcome ("{match.group()}"); say what the '
                "evidence shows and that an agent will confirm the rest."), match.group())
    for lists in selected:
        match = lists.openers.search(folded)
        if match:
            opener = match.group("phrase")
            return HumanizerVerdict(False, (
                f'the message opens with a robotic formula ("{opener}"); start with the answer itself.'), opener)
    apologies = [m.group() for lists in selected for m in lists.apologies.finditer(folded)]
    if len(apologies) > max_apologies:
        quoted = ", ".join(f'"{a}"' for a in apologies)
        return HumanizerVerdict(False, (
            f"the message has too many apologies ({quoted}): at most {max_apologies} per message."),
            apologies[max_apologies])
    return HumanizerVerdict(True)
