"""Text utilities every room shares: accent folding and number normalising. Pure: no Django.

One fold with named options, because callers need slightly different things: routing keeps the ñ (its
rules tell "año" from "ano"), the humanizer maps curly quotes, phrase matching collapses spaces.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

_COMBINING_RE = re.compile(r"[\u0300-\u036f]")
_TILDE = "\u0303"
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
# A decimal number as people write it: 1.234,56 / 1,234.56 / 350,00 / 0.5 (one or two decimals).
_DECIMAL_RE = re.compile(r"\d{1,3}(?:([.,])\d{3})*(?!\1)[.,]\d{1,2}|\d+[.,]\d{1,2}")


def fold(text: str, *, case: str | None = "casefold", keep_enye: bool = False, quotes: bool = False,
         spaces: bool = False) -> str:
    """Return text without accents.

    case: "casefold" (default), "lower", or None to keep the case.
    keep_enye: keep the tilde of ñ (so "año" stays apart from "ano").
    quotes: map curly quotes to straight ones.
    spaces: collapse runs of white space to one space and trim.
    """
    if case == "casefold":
        text = text.casefold()
    elif case == "lower":
        text = text.lower()
    if quotes:
        text = text.translate(_QUOTES)
    decomposed = unicodedata.normalize("NFKD", text)
    if keep_enye:
        folded = "".join(ch for ch in decomposed if not _COMBINING_RE.match(ch) or ch == _TILDE)
    else:
        folded = _COMBINING_RE.sub("", decomposed)
    return " ".join(folded.split()) if spaces else folded


def number_key(token: str) -> str:
    """Return a number's value as text, whatever the notation.

    "350,00", "350.00" and "350" are one number ("350"); "1.234,56" and "1,234.56" are 1234.56; a token
    whose separators are not a decimal mark ("1.500", "1.234.567") is read as its digits.
    """
    if _DECIMAL_RE.fullmatch(token):
        cut = max(token.rfind("."), token.rfind(","))
        whole = re.sub(r"\D", "", token[:cut]) or "0"
        return format(Decimal(f"{whole}.{token[cut + 1:]}").normalize(), "f")
    digits = re.sub(r"\D", "", token)
    return digits.lstrip("0") or "0"
