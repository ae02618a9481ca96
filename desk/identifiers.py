"""Read what an agent types as a customer identifier: account number, cédula/RIF, phone. Pure: no Django.

The one normaliser of the desk: the Identify panel, the customer search and the inbox's search all read
typed identifiers through `identifier_lookups`, so "J344724597", "J-34472459-7" and "j 34.472.459-7" are
one RIF, and "0416-8386115", "04168386115", "+58 416 838 6115" and "584168386115" one phone.

Canonical forms are billing's (billing/openapi.yaml): a cédula `V-12345678`, a RIF `J-34472459-7`
(letter, eight digits, check digit), a phone in E.164 `+584168386115`. A Venezuelan number is what a bare
national or local number means; anything else needs its `+`.
"""

from __future__ import annotations

import re

COUNTRY = "58"  # Venezuela: a number typed without a country code is a Venezuelan one
_SEPARATORS = re.compile(r"[\s.()\-/]")
_NATIONAL_ID = re.compile(r"^([VEJPG])-?([0-9]{5,9})(?:-([0-9]))?$")
_ACCOUNT = re.compile(r"^[0-9]{8}$")
_DIGITS = re.compile(r"^\+?[0-9]+$")


def national_id(text: str) -> str | None:
    """Return the cédula or RIF in billing's form (`V-12345678`, `J-34472459-7`), or None if it is not one.

    Dots, spaces and dashes are optional; nine digits after the letter are eight and a check digit.
    """
    compact = re.sub(r"[\s.]", "", (text or "").strip().upper())
    match = _NATIONAL_ID.match(compact)
    if not match:
        return None
    letter, body, check = match.groups()
    if check is None and len(body) == 9:
        body, check = body[:8], body[8]
    if check is not None and len(body) > 8:
        return None
    return f"{letter}-{body}-{check}" if check is not None else f"{letter}-{body}"


def phone_e164(text: str) -> str | None:
    """Return the phone in E.164 (`+584168386115`), or None when the text is not a phone number.

    Local `0416-8386115`, national `04168386115` or `4168386115`, international `+58 416 838 6115`,
    `584168386115` or `0058…`: separators (spaces, dots, dashes, parentheses) are ignored.
    """
    compact = _SEPARATORS.sub("", (text or "").strip())
    if not _DIGITS.match(compact):
        return None
    digits = compact.lstrip("+")
    if compact.startswith("+"):
        international = digits
    elif digits.startswith("00"):
        international = digits[2:]
    elif digits.startswith("0") and len(digits) == 11:  # 0 + area or mobile code + 7 digits
        international = COUNTRY + digits[1:]
    elif digits.startswith(COUNTRY) and len(digits) == 12:
        international = digits
    elif len(digits) == 10 and digits[0] in "24":  # a national number without its leading 0
        international = COUNTRY + digits
    else:
        return None
    return "+" + international if 8 <= len(international) <= 15 else None


def whatsapp_digits(text: str) -> str | None:
    """Return the phone as WhatsApp ids write it (E.164 without the `+`: `584168386115`), or None."""
    phone = phone_e164(text)
    return phone[1:] if phone else None


def identifier_lookups(text: str) -> list[tuple[str, str]]:
    """Return the (identifier, canonical value) lookups a typed text could be, most specific first; [] if none.

    Eight bare digits may be an account number or a cédula typed without its letter; a number that reads as
    a phone is also looked up as one.
    """
    typed = (text or "").strip()
    found = national_id(typed)
    if found:
        return [("national_id", found)]
    compact = _SEPARATORS.sub("", typed)
    if not _DIGITS.match(compact):
        return []
    lookups = []
    bare = not compact.startswith("+")
    if bare and _ACCOUNT.match(compact):
        lookups.append(("account_number", compact))
    if bare and 5 <= len(compact) <= 8:
        lookups.append(("national_id", f"V-{compact}"))  # a Venezuelan cédula typed without its letter
    phone = phone_e164(compact)
    if phone:
        lookups.append(("phone", phone))
    return lookups
