"""Find identifiers (account numbers, phones, tax ids) in text, normalized to their digits.

Pure: no Django. The same function reads documents at import and queries at search time,
so "J-40123456-7", "j40123456 7" and "401234567" all meet as "401234567".
"""

import re

MIN_DIGITS = 7
# Digit groups joined by single separators; a space may separate groups too.
_NUMBER = re.compile(r"(?<![\d,])\d+(?:[.\- ]\d+)*(?![\d]|,\d)")
# An amount: the last separator is followed by exactly 1–2 digits (1.234,56 · 45.00 · 1 234,56).
_AMOUNT_TAIL = re.compile(r"[.,]\d{1,2}$")


def find_identifiers(text: str) -> list[str]:
    """Return the distinct digit strings of 7+ digits in text, in order of appearance.

    A run like "0414 5550123 2" may join separate numbers on spaces, so every run of
    consecutive space-separated groups is offered as a candidate as well.
    """
    found: dict[str, None] = {}
    for match in _NUMBER.finditer(text):
        token = match.group(0)
        groups = token.split(" ")
        for start in range(len(groups)):
            for end in range(start + 1, len(groups) + 1):
                part = " ".join(groups[start:end])
                if _AMOUNT_TAIL.search(part) and "-" not in part:
                    continue
                digits = re.sub(r"\D", "", part)
                if len(digits) >= MIN_DIGITS:
                    found.setdefault(digits, None)
    return list(found)
