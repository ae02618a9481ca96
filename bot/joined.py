"""A follow-up joined with the question it follows, and its own words back. Pure: no Django.

bot/followups.py reads a follow-up with the customer's previous question: "¿y el mes pasado? (¿cuánto es mi
factura este mes?)". What it asks about — a period, an amount, a kind of charge — is in its own words, not in the
earlier question's: "this month" in the earlier question does not make "and the month before?" about this month.
"""

from __future__ import annotations

import re

_FOLLOWED = re.compile(r"\s\([^()]*\)\s*$")  # the earlier question, after the follow-up's own words


def joined(text: str, previous: str) -> str:
    """Return a follow-up joined with the question it follows."""
    return f"{text.strip()} ({previous.strip()})"


def own_words(query: str) -> str:
    """Return a question's own words: a joined follow-up without the question it follows, anything else as it is."""
    return _FOLLOWED.sub("", query)
