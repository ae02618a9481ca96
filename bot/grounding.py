"""Numeric grounding verifier: no number reaches a subscriber unless this turn's evidence holds it.

Pure Python, no Django. `verify()` takes the writer's answer (with inline `[E3]` citations) and
the turn's evidence and returns a `Verdict`: grounded or not, problems worded so the writer can
fix the answer from the message alone, warnings, derived numbers and one `TokenCheck` per token.

Rules, strictest first (docs/bot.md explains each with examples):
R1 literal whole token · R2 amount value · R3 identifier digits · R4 sum/difference of two
evidence amounts (derived) · R5 percent · R6 citations, one citation group per figure · R7
customer-view promises and jargon · R8 calendar date · R9 anything numeric left unsupported is a problem ·
R10 a figure held only by evidence written for another kind of customer is a problem · R11 a count of time keeps
its unit and its kind of day: "3 días" for the evidence's "3 días hábiles" (a weekend apart) or "48 días" for its
"48 horas" is a problem although the number is there.

R6 reads adjacent markers (`[E1][E2]`, `[E1, E2]`) as one citation group. A figure is checked against
the group that follows it in its sentence (the last group when none follows); a sentence with a single
group covers all its figures wherever they stand. A figure held only by another group of the same
sentence "cited the wrong item": swapped citations are as wrong as a made-up figure.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from functools import lru_cache

from bot.numeric_tokens import (
    AMOUNT,
    AMOUNT_RE,
    CITATION,
    CITATION_PATTERN,
    CITED_ID_RE,
    DATE,
    EVIDENCE_ID,
    IDENTIFIER,
    NUMBER,
    PERCENT,
    SPACES,
    Token,
    scan,
    sentence_spans,
)
from core.text import fold

# The minimum set; settings may extend it (GROUNDING_BANNED_PHRASES).
DEFAULT_BANNED_PHRASES: tuple[str, ...] = (
    "le garantizamos el reembolso",
    "ya fue reembolsado",
    "ya le devolvimos",
    "el dinero llegará hoy",
    "reembolso inmediato",
    "we guarantee a refund",
    "has been refunded",
    "you will get your money back today",
    "refund is guaranteed",
    "immediate refund",
)

_MAX_LISTED = 8

_NON_DIGIT_RE = re.compile(r"\D")
_CITATION_RE = re.compile(rf"[ \t]*{CITATION_PATTERN}")
_SNAKE_CASE_RE = re.compile(r"(?<![0-9A-Za-z_])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![0-9A-Za-z_])")
_PERCENT_WORD_RE = re.compile(r"%|percent|porcentaje|por ciento|百分", re.IGNORECASE)
_PLAIN_DECIMAL_RE = re.compile(r"\d+(?:[.,]\d+)?")
# R11: the unit of time a number counts, right after it, and whether it counts working days or hours ("3 días
# hábiles", "3 business days"); "calendar", "continuos" or nothing count every day.
_TIME_UNITS = (("day", r"d[ií]as?|days?"), ("hour", r"horas?|hours?"), ("week", r"semanas?|weeks?"),
               ("month", r"mes(?:es)?|months?"), ("minute", r"minutos?|minutes?"), ("year", r"a[ñn]os?|years?"))
_WORKING = r"h[aá]bil(?:es)?|laborables?|business|working"
_TIME_COUNT_RE = re.compile(
    rf"[ \t]*(?P<before>(?:{_WORKING})[ \t]+)?(?:{'|'.join(f'(?P<{unit}>{words})' for unit, words in _TIME_UNITS)})"
    rf"\b(?P<after>[ \t]+(?:{_WORKING})\b)?", re.IGNORECASE)
_KIND_NOUNS = {
    AMOUNT: ("figure", "figures"),
    NUMBER: ("figure", "figures"),
    IDENTIFIER: ("identifier", "identifiers"),
    DATE: ("date", "dates"),
    PERCENT: ("percentage", "percentages"),
}
_NUMERIC_KINDS = frozenset(_KIND_NOUNS)
# What to list as the figures a writer could have meant (a bare year points at the dates).
_NOUN_KINDS = {AMOUNT: (AMOUNT, NUMBER), NUMBER: (AMOUNT, NUMBER, DATE), IDENTIFIER: (IDENTIFIER,),
               DATE: (DATE,), PERCENT: (PERCENT,)}


@dataclass(frozen=True, slots=True)
class Evidence:
    """One evidence item of the turn: a retrieved chunk (text only) or a billing fact (with a value)."""

    id: str
    text: str
    value: str | None = None
    # Not for this customer: why ("for business customers; this customer's account is home"), else "".
    not_for: str = ""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something that makes the answer ungrounded, with a reason the writer can act on."""

    token: str
    sentence: str
    reason: str


@dataclass(frozen=True, slots=True)
class Derived:
    """An amount the answer computed from two evidence amounts (R4), for a human to check."""

    token: str
    value: str
    expression: str
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TokenCheck:
    """How one token of the answer was judged: the rule that supported it or why it failed."""

    token: str
    start: int
    end: int
    kind: str
    rule: str | None
    evidence: tuple[str, ...] = ()
    reason: str = ""
    cited: tuple[str, ...] = ()  # the citation group the figure was checked against (R6)

    @property
    def ok(self) -> bool:
        return self.rule is not None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The verifier's answer: grounded only when there is no problem."""

    grounded: bool
    problems: list[Problem]
    warnings: list[str]
    derived: list[Derived]
    tokens: list[TokenCheck]

    def as_json(self) -> dict:
        """Return the verdict in the verify_answer JSON shape."""
        return {
            "grounded": self.grounded,
            "problems": [asdict(p) for p in self.problems],
            "warnings": list(self.warnings),
            "derived": [{**asdict(d), "evidence": list(d.evidence)} for d in self.derived],
        }


def evidence_from_data(data: object) -> list[Evidence]:
    """Return the evidence list from decoded JSON; raise ValueError naming the first malformed item."""
    if not isinstance(data, list):
        raise ValueError('evidence must be a list of {"id", "text", "value"}')
    evidence = []
    for position, raw in enumerate(data):
        where = f"evidence[{position}]"
        if not isinstance(raw, dict):
            raise ValueError(f'{where} must be an object with "id", "text" and "value"')
        evidence_id, text, value = raw.get("id"), raw.get("text", ""), raw.get("value")
        if not isinstance(evidence_id, str) or not CITED_ID_RE.fullmatch(evidence_id):
            raise ValueError(f'{where}.id must be a string such as "E1" (E and a number), not {evidence_id!r}')
        if not isinstance(text, str):
            raise ValueError(f"{where}.text must be a string")
        if isinstance(value, bool) or not isinstance(value, (str, int, float, Decimal, type(None))):
            raise ValueError(f"{where}.value must be a string, a number or null")
        evidence.append(Evidence(evidence_id, text, None if value is None else str(value)))
    return evidence


@dataclass(frozen=True, slots=True)
class KeyFigure:
    """A figure the answer must state, and where the evidence holds it (for the writer's fix)."""

    figure: str  # machine or customer notation: "324.80", "2026-10-04", "11"
    evidence_id: str = ""
    name: str = ""  # what it is: delta, late_fee, payment_date…


class _Group:
    """Adjacent citation markers of one sentence ([E1][E2], [E1, E2]): one citation."""

    __slots__ = ("start", "end", "ids")

    def __init__(self, start: int, end: int, ids: list[str]) -> None:
        self.start, self.end, self.ids = start, end, ids

    @property
    def cited(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.ids))


class _Item:
    """One evidence item, indexed at most once per call and only when a rule needs it."""

    __slots__ = ("id", "evidence", "known_ids", "tokens", "literals", "amounts", "identifiers", "dates",
                 "percents", "text")

    def __init__(self, evidence: Evidence, known_ids: set[str]) -> None:
        self.id = evidence.id
        self.evidence = evidence
        self.known_ids = known_ids
        self.tokens: list[Token] | None = None

    def index(self) -> None:
        evidence = self.evidence
        self.text = f"{evidence.text}\n{evidence.value or ''}"
        self.tokens = [t for t in scan(self.text, self.known_ids) if t.kind in _NUMERIC_KINDS]
        self.literals: set[str] = set()
        self.amounts: dict[int, str] = {}
        self.identifiers: dict[str, str] = {}
        self.dates: dict[object, str] = {}
        self.percents: dict[Decimal, str] = {}
        by_kind = {AMOUNT: self.amounts, IDENTIFIER: self.identifiers, DATE: self.dates,
                   PERCENT: self.percents, NUMBER: {}}
        for token in self.tokens:
            if token.kind != PERCENT:
                self.literals.add(token.text)
            by_kind[token.kind].setdefault(token.key, token.text)

    def time_counts(self, key: object) -> list[tuple[str, bool, str]]:
        """R11: each count of time this item states with the number `key` (unit, working time, its words)."""
        counts = (_time_count(self.text, token) for token in self.tokens if token.kind == NUMBER and token.key == key)
        return [count for count in counts if count is not None]

    def supports_percent(self, percent: Decimal) -> bool:
        """R5: the text holds this percentage, or the value is it as a fraction, or as a number named percent."""
        if percent in self.percents:
            return True
        value = (self.evidence.value or "").strip()
        if not _PLAIN_DECIMAL_RE.fullmatch(value):
            return False
        number = Decimal(value.replace(",", "."))
        return number * 100 == percent or (number == percent and bool(_PERCENT_WORD_RE.search(self.evidence.text)))


def _indexed(items: list[_Item]) -> list[_Item]:
    """Return the items, indexing those no rule has needed yet (most answers cite a few of ten)."""
    for item in items:
        if item.tokens is None:
            item.index()
    return items


def _fold(text: str) -> str:
    """Return text case-folded, without accents and with single spaces, for phrase matching."""
    return fold(text, spaces=True)


@lru_cache(maxsize=32)
def _banned(extra: tuple[str, ...]) -> tuple[re.Pattern, dict[str, str]]:
    """Return one pattern for the banned phrases (folded, longest first) and each folded phrase's listed form."""
    listed = {_fold(p): p.strip() for p in reversed(DEFAULT_BANNED_PHRASES + extra) if p.strip()}
    pattern = "|".join(re.escape(p) for p in sorted(listed, key=len, reverse=True))
    return re.compile(pattern), listed


def citation_ids(answer: str) -> list[str]:
    """Return the evidence ids an answer cites, grouped markers included ([E1][E2], [E1, E2]), sorted."""
    cited = {eid for marker in _CITATION_RE.findall(answer) for eid in CITED_ID_RE.findall(marker)}
    return sorted(cited, key=lambda eid: int(eid[1:]))


def strip_citations(text: str) -> str:
    """Return the customer's text: the answer without `[E3]` markers."""
    return _CITATION_RE.sub("", text).strip()


def _items_of(ids, by_id: dict[str, list[_Item]]) -> list[_Item]:
    """Return the evidence items the ids name (unknown ids are reported elsewhere), each once."""
    return [item for evidence_id in dict.fromkeys(ids) for item in by_id.get(evidence_id, ())]


def _group_of(token: Token, groups: list[_Group]) -> _Group | None:
    """Return the citation group a figure answers to: the only one, the next one, or the last one before it."""
    if len(groups) == 1:
        return groups[0]
    return next((group for group in groups if group.start >= token.end), groups[-1] if groups else None)


def _wrong_item(token: Token, group: _Group, holders: tuple[str, ...], scope: list[_Item]) -> str:
    """Word a swapped citation: the figure is real, but the citation after it names another item."""
    citations = " ".join(f"[{evidence_id}]" for evidence_id in group.cited)
    reason = (f"{token.text} cited the wrong item: the citation after it ({citations}) does not hold it; it is "
              f"in {', '.join(holders)}, which this sentence cites for another figure")
    reason += _listing(token.kind, scope, "the evidence cited after it")
    return reason + f" — put [{holders[0]}] right after {token.text} and each citation after the figure it holds."


def _cents_text(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"


def _derive(cents: int, scope: list[_Item]) -> tuple[str, tuple[str, str]] | None:
    """Return how two different evidence amounts give `cents` by sum or absolute difference."""
    occurrences = [(value, item.id, text) for item in scope for value, text in item.amounts.items()]
    for i, (a, a_id, a_text) in enumerate(occurrences):
        for b, b_id, b_text in occurrences[i + 1:]:
            if a + b == cents:
                return f"{a_text} ({a_id}) + {b_text} ({b_id})", (a_id, b_id)
            if abs(a - b) == cents:
                if a < b:
                    a, a_id, a_text, b, b_id, b_text = b, b_id, b_text, a, a_id, a_text
                return f"{a_text} ({a_id}) − {b_text} ({b_id})", (a_id, b_id)
    return None


def _support(token: Token, scope: list[_Item]) -> tuple[str, tuple[str, ...], str]:
    """Return (rule, evidence ids, derivation) for the first rule that supports the token, or ("", (), "")."""
    key = token.key
    if token.kind == PERCENT:
        ids = tuple(item.id for item in scope if item.supports_percent(key))
        return ("R5", ids, "") if ids else ("", (), "")
    ids = tuple(item.id for item in scope if token.text in item.literals)
    if ids:
        return "R1", ids, ""
    if token.kind == AMOUNT:
        ids = tuple(item.id for item in scope if key in item.amounts)
        if ids:
            return "R2", ids, ""
        derivation = _derive(key, scope)
        if derivation:
            return "R4", derivation[1], derivation[0]
    elif token.kind == IDENTIFIER:
        ids = tuple(item.id for item in scope if key in item.identifiers)
        if ids:
            return "R3", ids, ""
    elif token.kind == DATE:
        ids = tuple(item.id for item in scope if key in item.dates)
        if ids:
            return "R8", ids, ""
    return "", (), ""


def _time_count(text: str, token: Token) -> tuple[str, bool, str] | None:
    """Return the unit of time a number counts, whether in working time, and the words ("3 días hábiles"); None
    when no unit of time follows it."""
    match = _TIME_COUNT_RE.match(text, token.end)
    if match is None:
        return None
    unit = next(unit for unit, _words in _TIME_UNITS if match.group(unit))
    return unit, bool(match.group("before") or match.group("after")), text[token.start:match.end()].strip()


def _time_mismatch(token: Token, answer: str, holders: list[_Item]) -> str:
    """R11: why a count of time in the answer is not the one the evidence holding its number states ("" if it is,
    or if the evidence gives that number no unit of time)."""
    said = _time_count(answer, token)
    if said is None:
        return ""
    unit, working, words = said
    counted = [(item.id, *count) for item in holders for count in item.time_counts(token.key)]
    same_unit = [count for count in counted if count[1] == unit]
    if not counted or any(count[2] == working for count in same_unit):
        return ""
    stated = ", ".join(f"“{count[3]}” ({count[0]})" for count in (same_unit or counted))
    if not same_unit:
        return (f"“{words}” changes the unit: the evidence counts {token.text} as {stated} — copy the figure with "
                "the unit the evidence gives it.")
    kind = "working" if same_unit[0][2] else "calendar"
    return (f"“{words}” changes what is counted: the evidence says {stated}, {kind} {unit}s — keep the kind of "
            f"{unit} the evidence states (working {unit}s leave out weekends and holidays).")


def _near_miss(token: Token, items: list[_Item]) -> str:
    """Name an evidence figure this token looks like a mangled copy of (moved separator, rounding)."""
    if token.kind not in (AMOUNT, NUMBER):
        return ""
    digits = _NON_DIGIT_RE.sub("", token.text)
    whole = token.key // 100 if token.kind == AMOUNT else int(digits)
    for item in items:
        for cents, text in item.amounts.items():
            if _NON_DIGIT_RE.sub("", text) == digits:
                return f"; it has the digits of {text} ({item.id}) with the separator moved, which changes the value"
            if whole in (cents // 100, (cents + 50) // 100):
                return f"; it looks like {text} ({item.id}) rounded — write the exact figure"
    return ""


def _listing(kind: str, scope: list[_Item], where: str) -> str:
    singular, plural = _KIND_NOUNS[kind]
    kinds = _NOUN_KINDS[kind]
    found = []
    for item in scope:
        for token in item.tokens:
            entry = f"{token.text} ({item.id})"
            if token.kind in kinds and entry not in found:
                found.append(entry)
    if not found:
        return f"; {where} holds no {singular}"
    shown = ", ".join(found[:_MAX_LISTED]) + (", …" if len(found) > _MAX_LISTED else "")
    return f"; the {singular if len(found) == 1 else plural} in {where}: {shown}"


def _explain(token: Token, scope: list[_Item], citations: str, items: list[_Item], *, grouped: bool = False) -> str:
    """Word the failure so the writer can fix the answer from this message alone."""
    noun = _KIND_NOUNS[token.kind][0]
    if citations:
        where_cited = "cited after it" if grouped else "cited in this sentence"
        reason = f"{token.text} is not in the evidence {where_cited} ({citations})"
        rule, ids, derivation = _support(token, _indexed([item for item in items if item not in scope]))
        where = "the cited evidence"
    else:
        reason = f"{token.text} is not in the evidence of this turn"
        if token.kind == AMOUNT:
            reason += " and is not the sum or difference of two evidence amounts"
        rule, ids, derivation = "", (), ""
        where = "the evidence"
    if derivation:
        reason += f"; it is {derivation}, which this sentence does not cite"
    elif rule:
        reason += f"; it is in {', '.join(ids)}, which this sentence does not cite"
    else:
        reason += _near_miss(token, _indexed(items))
    reason += _listing(token.kind, scope, where)
    return reason + f" — copy the {noun} from the evidence that holds it and cite that item."


@dataclass
class _Checks:
    """What the verifier has found so far, filled sentence by sentence."""

    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    derived: list[Derived] = field(default_factory=list)
    checks: list[TokenCheck] = field(default_factory=list)
    answer_keys: set[tuple[str, object]] = field(default_factory=set)
    sentences: list[str] = field(default_factory=list)

    def problem(self, token: Token, sentence: str, reason: str, kind: str, cited: tuple[str, ...] = ()) -> None:
        self.problems.append(Problem(token.text, sentence, reason))
        self.checks.append(TokenCheck(token.text, token.start, token.end, kind, None, (), reason, cited))


def verify(
    answer: str,
    evidence: list[Evidence],
    *,
    customer_view: bool,
    banned_phrases: list[str] | None = None,
    key_figures: list[str | KeyFigure] | None = None,
    require_citations: bool = False,
) -> Verdict:
    """Return the verdict on every number, citation and (for the customer view) phrase of the answer.

    `key_figures` are figures the answer must state (a string, or a `KeyFigure` naming the evidence item
    that holds it); `require_citations` makes a sentence with figures and no citation a problem instead
    of a warning (the agent's internal note must cite everything it says). A figure held only by evidence
    that is not for this customer (`Evidence.not_for`) is a problem too.
    """
    known_ids = {e.id for e in evidence}
    items = [_Item(e, known_ids) for e in evidence]
    by_id: dict[str, list[_Item]] = {}
    for item in items:
        by_id.setdefault(item.id, []).append(item)
    # One search over the whole answer: no promise slips through because a line break split it.
    banned, listed = _banned(tuple(banned_phrases or ()))
    promised = banned.findall(_fold(answer)) if customer_view else []
    found = _Checks()
    tokens = scan(answer, known_ids)
    position = 0
    for start, end in sentence_spans(answer):
        sentence = answer[start:end].strip()
        found.sentences.append(sentence)
        sentence_tokens = []
        while position < len(tokens) and tokens[position].start < end:
            sentence_tokens.append(tokens[position])
            position += 1
        _check_sentence(answer, sentence, sentence_tokens, items, by_id, found, customer_view=customer_view,
                        require_citations=require_citations)
    _check_promises(promised, listed, found, answer)
    _check_key_figures(key_figures or (), found)
    found.checks.sort(key=lambda check: check.start)
    return Verdict(not found.problems, found.problems, found.warnings, found.derived, found.checks)


def _check_sentence(answer: str, sentence: str, sentence_tokens: list[Token], items: list[_Item],
                    by_id: dict[str, list[_Item]], found: _Checks, *, customer_view: bool,
                    require_citations: bool) -> None:
    """Check one sentence: its citations and evidence ids, each figure against its citation, its field names."""
    cited, groups, numbers = _citations(answer, sentence, sentence_tokens, by_id, found,
                                        customer_view=customer_view)
    hints = [_check_number(answer, token, sentence, groups, cited, items, by_id, found) for token in numbers]
    hints = [hint for hint in hints if hint]
    if numbers and not cited:
        figures = ", ".join(hints) or "none of them is in the evidence"
        if require_citations:
            found.problems.append(Problem(sentence, sentence, (
                f"this sentence states figures without a citation; cite the evidence item right after each "
                f"figure ({figures}).")))
        else:
            found.warnings.append(f'"{sentence}" states figures without a citation; cite the evidence item that '
                                  f"holds each figure ({figures}).")
    if customer_view and "_" in sentence:
        for match in _SNAKE_CASE_RE.finditer(sentence):
            found.problems.append(Problem(match.group(), sentence, (
                f"{match.group()} is an internal field name; say it in plain words the customer understands.")))


def _citations(answer: str, sentence: str, sentence_tokens: list[Token], by_id: dict[str, list[_Item]],
               found: _Checks, *, customer_view: bool) -> tuple[list[str], list[_Group], list[Token]]:
    """Return a sentence's cited ids, its citation groups and its figures; check the citations as they come."""
    cited: list[str] = []
    groups: list[_Group] = []
    numbers: list[Token] = []
    for token in sentence_tokens:
        if token.kind == CITATION:
            if groups and not answer[groups[-1].end:token.start].strip():
                groups[-1].end = token.end
                groups[-1].ids.extend(token.key)
            else:
                groups.append(_Group(token.start, token.end, list(token.key)))
            for evidence_id in token.key:
                cited.append(evidence_id)
                if evidence_id not in by_id:
                    found.problem(token, sentence, (
                        f"{evidence_id} is not evidence of this turn (the evidence is "
                        f"{', '.join(by_id) or 'empty'}); cite one of those ids or remove the claim."), CITATION)
        elif token.kind == EVIDENCE_ID:
            if customer_view:
                found.problem(token, sentence, (
                    f"{token.text} is an internal evidence id outside brackets; the customer must not see it — "
                    f"write the citation as [{token.text}] or leave it out."), EVIDENCE_ID)
            else:
                found.warnings.append(f"{token.text} is written without brackets; cite it as [{token.text}].")
        else:
            numbers.append(token)
            found.answer_keys.add((token.kind, token.key))
    return cited, groups, numbers


def _check_number(answer: str, token: Token, sentence: str, groups: list[_Group], cited: list[str],
                  items: list[_Item], by_id: dict[str, list[_Item]], found: _Checks) -> str:
    """Check one figure against the citation that follows it; return the hint that names its evidence ("" if none)."""
    cited_items = _items_of(cited, by_id)
    group = _group_of(token, groups)
    scope = _indexed(_items_of(group.ids, by_id) if group else items)
    rule, ids, derivation = _support(token, scope)
    if not rule and len(groups) > 1:
        # Held by another group of this sentence: the citations are swapped, not the figure made up.
        others = _indexed([item for item in cited_items if item.id not in group.ids])
        rule, ids, derivation = _support(token, others)
        if rule and not derivation:
            found.problem(token, sentence, _wrong_item(token, group, ids, scope), token.kind, group.cited)
            return ""
        # A sum or difference keeps R4: its operands may be cited anywhere in the sentence.
        derivation = _derive(token.key, _indexed(cited_items)) if token.kind == AMOUNT else None
        rule, ids, derivation = ("R4", derivation[1], derivation[0]) if derivation else ("", (), "")
    cited_group = group.cited if group else ()
    if not rule:
        citations = " ".join(f"[{evidence_id}]" for evidence_id in cited_group)
        found.problem(token, sentence, _explain(token, scope, citations, items, grouped=len(groups) > 1), token.kind,
                      cited_group)
        return ""
    other_customer = _for_another_customer(ids, by_id)
    if other_customer:
        found.problem(token, sentence, (
            f"{token.text} comes from {', '.join(ids)}, which is {other_customer}: state the policy that applies to "
            "this customer instead, from the evidence written for them."), token.kind, cited_group)
        return ""
    miscounted = _time_mismatch(token, answer, _items_of(ids, by_id)) if token.kind == NUMBER else ""
    if miscounted:
        found.problem(token, sentence, miscounted, token.kind, cited_group)
        return ""
    found.checks.append(TokenCheck(token.text, token.start, token.end, token.kind, rule, ids, "", cited_group))
    if derivation:
        found.derived.append(Derived(token.text, _cents_text(token.key), derivation, ids))
        return f"{token.text} → [{ids[0]}][{ids[1]}]"
    return f"{token.text} → [{ids[0]}]"


def _for_another_customer(ids: tuple[str, ...], by_id: dict[str, list[_Item]]) -> str:
    """Return why the items holding a figure are not for this customer, "" when one of them is."""
    reasons = [by_id[evidence_id][0].evidence.not_for for evidence_id in ids if evidence_id in by_id]
    return reasons[0] if reasons and all(reasons) else ""


def _check_promises(promised: list[str], listed: dict[str, str], found: _Checks, answer: str) -> None:
    for folded in dict.fromkeys(promised):
        sentence = next((s for s in found.sentences if folded in _fold(s)), answer.strip())
        found.problems.append(Problem(listed[folded], sentence, (
            f'"{listed[folded]}" promises a refund, a date or an outcome nobody has confirmed; remove it and say '
            "what the evidence shows and that an agent will confirm the rest.")))


def _check_key_figures(key_figures, found: _Checks) -> None:
    for required in key_figures:
        required = required if isinstance(required, KeyFigure) else KeyFigure(required)
        figure = required.figure
        figure_tokens = [t for t in scan(figure, set()) if t.kind in _NUMERIC_KINDS]
        if not figure_tokens:
            raise ValueError(f"key figure {figure!r} holds no number")
        if (figure_tokens[0].kind, figure_tokens[0].key) not in found.answer_keys:
            what = f" ({required.name})" if required.name else ""
            where = f" ({required.evidence_id} holds it)" if required.evidence_id else ""
            found.problems.append(Problem(figure, "", (
                f"The answer must state {figure}{what}, the key figure of this finding{where}; include it exactly "
                "as the evidence writes it, with its citation.")))
