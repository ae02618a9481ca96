"""How people read numbers: amounts, money and rates in the customer's language. Pure, no Django.

One money notation for every screen and message: the currency before the amount, `Bs.` for
bolívares and the ISO code otherwise, digits grouped the language's way —
`Bs. 1.624,00` / `USD 10,00` in Spanish, `Bs. 1,624.00` / `USD 10.00` in English.
Machine forms (`"1624.00"` in evidence values and derivations) are not notation: see findings/base.py.
"""

from __future__ import annotations

from decimal import Decimal

from billing.records import quantize

# language → (thousands separator, decimal separator, percentage pattern)
NOTATION = {
    "es": (".", ",", "{} %"),
    "en": (",", ".", "{}%"),
}
LANGUAGES = tuple(NOTATION)
CURRENCY_SIGNS = {"VES": "Bs.", "USD": "USD"}


def check_language(language: str) -> str:
    """Return the language, or raise ValueError for one billing cannot write."""
    if language not in NOTATION:
        raise ValueError(f"unsupported language {language!r}")
    return language


def _digits(text: str, language: str) -> str:
    """Rewrite Python's `1,234.56` with the language's separators."""
    thousands, decimal, _percent = NOTATION[check_language(language)]
    return text.replace(",", "\0").replace(".", decimal).replace("\0", thousands)


def amount_text(amount: Decimal, language: str) -> str:
    """Return an amount with two places and its sign: `-1.234,56` (es) or `-1,234.56` (en)."""
    return _digits(f"{quantize(amount):,.2f}", language)


def money_text(amount: Decimal, currency: str, language: str) -> str:
    """Return `Bs. 1.624,00`, `USD 10,00` (es) or `Bs. 1,624.00`, `USD 10.00` (en); a minus goes first."""
    sign = "-" if amount < 0 else ""
    return f"{sign}{CURRENCY_SIGNS.get(currency, currency)} {amount_text(abs(amount), language)}"


def rate_text(rate: Decimal, language: str) -> str:
    """Return a percentage the way the bills print it: `16 %` / `2,5 %` (es), `16%` (en)."""
    _thousands, _decimal, percent = NOTATION[check_language(language)]
    return percent.format(_digits(f"{rate.normalize():f}", language))
