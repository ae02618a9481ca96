"""Why a conversation went to a person: the escalation reasons, with the labels agents read. Pure: no Django.

The bot decides the reason; the desk owns the list, so both rooms speak of the same reasons without the
desk importing the bot.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    NO_CONTEXT = "NO_CONTEXT"
    UNGROUNDED_OUTPUT = "UNGROUNDED_OUTPUT"
    USER_REQUEST = "USER_REQUEST"
    TOOL_ERROR = "TOOL_ERROR"
    CAPABILITY_MISSING = "CAPABILITY_MISSING"
    FORBIDDEN_PHRASE = "FORBIDDEN_PHRASE"
    MODEL_ERROR = "MODEL_ERROR"
    MODEL_DEFERRED = "MODEL_DEFERRED"
    MEDIA = "MEDIA"

    @property
    def label(self) -> str:
        return LABELS[self]


LABELS = {
    Reason.NO_CONTEXT: "Nothing relevant found",
    Reason.UNGROUNDED_OUTPUT: "Answer could not be verified",
    Reason.USER_REQUEST: "Customer asked for a person",
    Reason.TOOL_ERROR: "Billing system down",
    Reason.CAPABILITY_MISSING: "Bot cannot do this",
    Reason.FORBIDDEN_PHRASE: "Answer made a forbidden promise",
    Reason.MODEL_ERROR: "Model failed",
    Reason.MODEL_DEFERRED: "Model deferred to a person",
    Reason.MEDIA: "Customer sent a photo, voice note or file",
}


def reason_label(code: str) -> str:
    """Return the label agents read for a reason code; a code this list does not know reads as itself, in
    words ("SOME_NEW_REASON" → "Some new reason")."""
    try:
        return LABELS[Reason(code)]
    except ValueError:
        return code.replace("_", " ").strip().capitalize() or "Unknown reason"
