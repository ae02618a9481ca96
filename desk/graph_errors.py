"""What a WhatsApp Cloud API error code means, said to an agent. Pure: no Django.

Meta's statuses and send answers carry a numeric code; the desk keeps the text Meta sent and shows this
sentence beside it. Codes not in the table read as Meta's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SENTENCES: dict[int, str] = {
    131047: "More than 24 hours since the customer last wrote — send a template.",
    470: "More than 24 hours since the customer last wrote — send a template.",
    131026: "WhatsApp could not deliver to this number: it may not use WhatsApp, or has an old app version.",
    131049: "WhatsApp held back this marketing template to keep the customer from receiving too many; "
            "try later or send a utility template.",
    131050: "The customer stopped marketing messages from this business.",
    131051: "WhatsApp does not support this kind of message.",
    131052: "WhatsApp could not download the customer's file; ask them to send it again.",
    131053: "WhatsApp could not take the file we sent: check its type and size.",
    131056: "Too many messages to this customer in a short time; wait a moment and send again.",
    131021: "The recipient is the business's own number.",
    131031: "The WhatsApp Business account is locked; an administrator must check Meta's Business Manager.",
    131042: "There is a payment problem on the WhatsApp Business account.",
    131048: "Sending is limited because many recent messages were reported as spam.",
    131000: "WhatsApp failed for a reason it did not say; send again in a moment.",
    132000: "The number of values does not match the template's variables.",
    132001: "The template does not exist in this language (or is not approved yet).",
    132005: "The template's text is too long once the values are filled in.",
    132007: "The template breaks a WhatsApp policy with the values filled in.",
    132012: "A value does not have the format the template expects.",
    132015: "The template is paused by WhatsApp because of low quality; use another.",
    132016: "The template is disabled by WhatsApp; use another.",
    132018: "A value has new lines, tabs or too many spaces, which WhatsApp refuses.",
    130429: "Too many messages per second from this number; WhatsApp asks to slow down.",
    130472: "The customer is part of a WhatsApp experiment and this marketing message was not delivered.",
    368: "The business number is temporarily blocked for policy violations.",
    190: "The WhatsApp access token has expired or is wrong (WHATSAPP_ACCESS_TOKEN).",
    100: "WhatsApp refused a parameter of the message (see Meta's words).",
}

_CODE = re.compile(r"\(code (\d{1,12})\)|\(#(\d{1,12})\)")


@dataclass(frozen=True)
class FailureExplained:
    code: int | None
    sentence: str  # '' when the code is unknown: Meta's own words are all there is


def error_sentence(code: int | None) -> str:
    """Return the agent's sentence for a Graph API error code ('' when the table does not know it)."""
    return SENTENCES.get(code, "") if code is not None else ""


def failure_explained(error: str, code: int | None = None) -> FailureExplained:
    """Return the code found in a stored error text (`… (code 131047): …`) and its sentence."""
    if code is None:
        match = _CODE.search(error or "")
        if match:
            code = int(match.group(1) or match.group(2))
    return FailureExplained(code=code, sentence=error_sentence(code))
