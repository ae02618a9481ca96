"""What one golden case did in an eval run, and how two runs differ. Pure: no Django.

A case fails for short, stable reasons (the strings below); no reason means it passed. Two runs
are compared case by case on those reasons, so "newly failing" means: passed in the base run,
fails in the head run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.text import fold, number_key

# Reasons that come from retrieval alone; a retrieval-only run can only ever fail for these.
RETRIEVAL_FAILURES = ("no hit in top", "hard negative above hit", "must-pass: first hit at rank",
                      "context for an out-of-scope question")

NUMBER_WORDS = {  # numbers written in words, as the judges and the fact checks read them
    # Spanish
    "cero": 0, "uno": 1, "una": 1, "un": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
    "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15,
    "dieciseis": 16, "diecisiete": 17, "dieciocho": 18, "diecinueve": 19, "veinte": 20, "treinta": 30,
    "cuarenta": 40, "cincuenta": 50, "sesenta": 60, "noventa": 90, "cien": 100,
    # English
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "ninety": 90, "hundred": 100,
}
# A number: digits with optional thousands/decimal separators ("1.500,00", "1,500.00", "350", "0,5"); "%" and
# "$" are tokens of their own, read as "%" and "usd".
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+|[%$]", re.UNICODE)
_SYMBOLS = {"$": "usd"}
# Words that spell a symbol: "5 por ciento" and "5 percent" read as "5 %".
_SYMBOL_PHRASES = ((("por", "ciento"), "%"), (("per", "cent"), "%"), (("percent",), "%"))
# A fact may list ways of writing the same thing, separated by " | ": it is present when any of them is.
ALTERNATIVES = " | "


def fact_tokens(text: str) -> list[str]:
    """Return the comparable tokens of a text: lower case, no accents, punctuation dropped, numbers as digits,
    "%" / "por ciento" / "percent" as "%", "$" as "usd"."""
    tokens = []
    for token in _TOKEN.findall(fold(text, case="lower")):
        if token[0].isdigit():
            tokens.append(number_key(token))
        elif token in _SYMBOLS:
            tokens.append(_SYMBOLS[token])
        else:
            tokens.append(str(NUMBER_WORDS[token]) if token in NUMBER_WORDS else token)
    for words, symbol in _SYMBOL_PHRASES:
        n = len(words)
        i = 0
        while i + n <= len(tokens):
            if tuple(tokens[i:i + n]) == words:
                tokens[i:i + n] = [symbol]
            i += 1
    return tokens


def missing_facts(facts: list[str], answer: str) -> list[str]:
    """Return the expected facts that do not appear in the answer (case-, accent-, space-insensitive).

    A fact written "USD 23,20 | 23,20 dólares" is present when either alternative is.
    """
    haystack = f" {' '.join(fact_tokens(answer))} "
    missing = []
    for fact in facts:
        needles = [" ".join(fact_tokens(alternative)) for alternative in fact.split(ALTERNATIVES)]
        needles = [needle for needle in needles if needle]
        if needles and not any(f" {needle} " in haystack for needle in needles):
            missing.append(fact)
    return missing


@dataclass(frozen=True)
class CaseResult:
    """What one case did; `outcome` is "" for retrieval only, else answered / asked / clarify / escalated."""

    k: int
    first_hit_rank: int | None
    hard_negative_above: str | None
    must_pass: bool = False
    scored_retrieval: bool = True  # False when the case names no hit documents
    clarification_expected: bool = False
    outcome: str = ""
    escalation_reason: str = ""
    grounded: bool | None = None
    missing_facts: list[str] = field(default_factory=list)
    judge_label: str = ""
    out_of_scope: bool = False  # no document answers it: it passes when nothing is answered from the KB
    has_context: bool | None = None  # the search's decision for the question (None: not known)


def case_failures(result: CaseResult) -> list[str]:
    """Return why the case failed, in pipeline order; an empty list means it passed."""
    failures = []
    if result.out_of_scope:
        if result.has_context:
            failures.append("context for an out-of-scope question")
        if result.outcome == "answered":
            failures.append("answered an out-of-scope question")
        return failures  # an escalation or a question back is the right outcome
    if result.scored_retrieval:
        rank = result.first_hit_rank
        if rank is None or rank > result.k:
            failures.append(f"no hit in top {result.k}")
        elif result.must_pass and rank != 1:
            failures.append(f"must-pass: first hit at rank {rank}")
        if result.hard_negative_above:
            failures.append(f"hard negative above hit: {result.hard_negative_above}")
    if not result.outcome:
        return failures
    if result.clarification_expected:
        # Only a question passes: asking which case applies, or who the customer is.
        if result.outcome not in ("clarify", "asked"):
            failures.append(f"{result.outcome} where a clarification was expected")
        return failures
    if result.outcome == "clarify":
        failures.append("asked to clarify where no clarification was expected")
        return failures
    if result.outcome == "escalated":
        failures.append(f"escalated: {result.escalation_reason}")
    elif result.outcome == "declined":
        failures.append("declined a question about plans, bills or payments")
    elif result.outcome == "asked":
        failures.append("asked for identity instead of answering")
    if result.grounded is False:
        failures.append("ungrounded")
    if result.outcome == "answered":
        failures.extend(f"missing fact: {fact}" for fact in result.missing_facts)
    if result.judge_label in ("fail", "error"):
        failures.append(f"judge: {result.judge_label}")
    return failures


def retrieval_failures(failures: list[str]) -> list[str]:
    """Keep only the failures retrieval alone explains (to compare a retrieval-only run with a full one)."""
    return [f for f in failures if f.startswith(RETRIEVAL_FAILURES)]


@dataclass(frozen=True)
class RunComparison:
    """Case ids that changed between a base and a head run (sorted), then the numbers side by side."""

    newly_failing: list[str]
    newly_passing: list[str]
    still_failing: list[str]
    only_in_base: list[str]
    only_in_head: list[str]
    metrics: list[tuple[str, object, object]]  # (name, base value, head value)
    scope: str = "all"  # "retrieval" when one run is retrieval-only: only retrieval failures are compared


def compare_failures(base: dict[str, list[str]], head: dict[str, list[str]], *,
                     metrics: list[tuple[str, object, object]] = (), retrieval_only: bool = False) -> RunComparison:
    """Compare two runs given as {case_id: failures}."""
    if retrieval_only:
        base = {case: retrieval_failures(f) for case, f in base.items()}
        head = {case: retrieval_failures(f) for case, f in head.items()}
    both = base.keys() & head.keys()
    return RunComparison(
        newly_failing=sorted(c for c in both if head[c] and not base[c]),
        newly_passing=sorted(c for c in both if base[c] and not head[c]),
        still_failing=sorted(c for c in both if base[c] and head[c]),
        only_in_base=sorted(base.keys() - head.keys()),
        only_in_head=sorted(head.keys() - base.keys()),
        metrics=list(metrics),
        scope="retrieval" if retrieval_only else "all",
    )
