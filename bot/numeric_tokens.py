"""The numeric tokens of a text and its sentences, as the grounding verifier reads them. Pure Python, no Django.

`scan()` returns a text's citation groups (`[E1]`, `[E1, E2]`), bare evidence ids and numeric tokens in order,
each with a kind and a comparison key: an amount-shaped token (thousands in groups of three, then a different
decimal separator and one or two digits) keyed by cents, an identifier of seven or more digits keyed by its
digits, a calendar date (ISO or day/month/year) keyed by the date, a percentage keyed by its value, any other
number keyed by its text. `sentence_spans()` cuts a text into sentences the way the verifier checks them:
not after an abbreviation ("Bs. 1.234,56"), with the citations that follow a sentence kept with it.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal

AMOUNT = "amount"
IDENTIFIER = "identifier"
NUMBER = "number"
PERCENT = "percent"
DATE = "date"
CITATION = "citation"
EVIDENCE_ID = "evidence_id"

_MIN_IDENTIFIER_DIGITS = 7
SPACES = " \u00a0\u202f\u2009"
CITATION_PATTERN = r"\[\s*E\d+(?:\s*[,;]\s*E\d+)*\s*\]"
# The leading lookahead lets the engine skip plain text fast. No alternative can start inside a digit
# run: every one that ends on a digit refuses a following digit, so no digit lookbehinds are needed.
_TOKEN_RE = re.compile(
    r"(?=[\[E\d])(?:"
    rf"(?P<{CITATION}>{CITATION_PATTERN})"
    # a bare evidence id (not glued to a word, not the start of a number such as E12.345)
    rf"|(?P<{EVIDENCE_ID}>E(?<![0-9A-Za-z_]E)(?P<eid_digits>\d+)(?![0-9A-Za-z_]|[.,\-]\d))"
    r"|(?P<iso>\d{4}-\d{2}-\d{2}(?!\d|[-./,]\d))"
    r"|(?P<dmy>\d{1,2}/\d{1,2}/\d{4}(?!\d|[-./,]\d))"
    rf"|(?P<pct>\d+(?:[.,]\d+)?[{SPACES}]?%)"
    # digit groups joined by . , - or by a space when three digits follow (1 234,56 · 0412 555 1234)
    rf"|(?P<num>\d+(?:(?:[.,\-]|[{SPACES}](?=\d{{3}}))\d+)*)"
    r")"
)
# Thousands groups of three with one separator, then a different decimal separator and 1-2 digits.
AMOUNT_RE = re.compile(
    rf"\d{{1,3}}(?P<sep>[.,{SPACES}])\d{{3}}(?:(?P=sep)\d{{3}})*(?!(?P=sep))[.,]\d{{1,2}}"
    r"|\d+[.,]\d{1,2}"
)
_SEPARATORS = str.maketrans("", "", f".,-{SPACES}")
CITED_ID_RE = re.compile(r"E\d+")
_SENTENCE_END_RE = re.compile(r"(?=[.!?。！？\n])(?:[.!?]+(?=\s|\[|$)|[。！？]+|\n+)")
_WORD_BEFORE_RE = re.compile(r"[^\W\d_]+\Z")
_TRAILING_CITATIONS_RE = re.compile(rf"(?:\s*{CITATION_PATTERN})+")
# A period after these words does not end a sentence ("Bs. 1.234,56").
_ABBREVIATIONS = frozenset({"bs", "sr", "sra", "srta", "dr", "dra", "nro", "núm", "num", "av", "ud", "uds",
                            "aprox", "approx", "ref", "tel", "mr", "mrs", "ms", "vs"})
class Token:
    __slots__ = ("kind", "text", "start", "end", "key")

    def __init__(self, kind: str, text: str, start: int, end: int, key: object) -> None:
        self.kind, self.text, self.start, self.end, self.key = kind, text, start, end, key


def _calendar(year: int, month: int, day: int, text: str) -> object:
    """Return the calendar date, or the text itself for an impossible date (so only R1 can match it)."""
    try:
        return date(year, month, day)
    except ValueError:
        return text


def _number_token(text: str, start: int, end: int) -> Token:
    """Classify a digit group: amount-shaped (key: cents), identifier of 7+ digits (key: digits) or number."""
    digits = text.translate(_SEPARATORS)
    if AMOUNT_RE.fullmatch(text):
        decimals = len(text) - max(text.rfind("."), text.rfind(",")) - 1
        return Token(AMOUNT, text, start, end, int(digits) * (10 if decimals == 1 else 1))
    if len(digits) >= _MIN_IDENTIFIER_DIGITS:
        return Token(IDENTIFIER, text, start, end, digits)
    return Token(NUMBER, text, start, end, text)


def scan(text: str, known_ids: set[str]) -> list[Token]:
    """Return the citations, bare evidence ids and numeric tokens of a text, in order."""
    tokens = []
    for match in _TOKEN_RE.finditer(text):
        kind = match.lastgroup
        token = match.group()
        start, end = match.span()
        if kind == "num":
            tokens.append(_number_token(token, start, end))
        elif kind == "iso":
            key = _calendar(int(token[:4]), int(token[5:7]), int(token[8:10]), token)
            tokens.append(Token(DATE, token, start, end, key))
        elif kind == "dmy":
            day, month, year = token.split("/")
            tokens.append(Token(DATE, token, start, end, _calendar(int(year), int(month), int(day), token)))
        elif kind == "pct":
            # Decimal() ignores the space before %
            tokens.append(Token(PERCENT, token, start, end, Decimal(token.rstrip("%").replace(",", "."))))
        elif kind == CITATION:
            tokens.append(Token(CITATION, token, start, end, CITED_ID_RE.findall(token)))
        elif token in known_ids:
            tokens.append(Token(EVIDENCE_ID, token, start, end, token))
        else:  # E12345678 that names no evidence: an invoice number, checked like any number
            tokens.append(_number_token(match.group("eid_digits"), start + 1, end))
    return tokens


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Split on . ! ? (not after abbreviations), 。！？ and newlines; trailing citations stay with their sentence."""
    spans = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        # 7 characters: longer than any abbreviation, so a cut-off longer word never passes for one
        word = _WORD_BEFORE_RE.search(text, max(0, match.start() - 7), match.start())
        if word and word.group().lower() in _ABBREVIATIONS:
            continue
        end = match.end()
        trailing = _TRAILING_CITATIONS_RE.match(text, end)
        if trailing:
            end = trailing.end()
        spans.append((start, end))
        start = end
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


