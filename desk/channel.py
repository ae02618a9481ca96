"""What every channel hands the desk: one inbound message, and which kinds of message get a bot turn.

The WhatsApp parser (desk.whatsapp) and the web chat (desk.chat) each build `InboundMessage`s; the desk's
one inbound path (desk.inbound) stores them, and the bot reads the kind sets to decide what it can read.
Pure: no Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# Kinds that never get a bot turn: a reaction is an acknowledgement; a system message comes from
# WhatsApp, not from the customer; `request_welcome` (a user opening the chat for the first time)
# and a call-permission reply carry no question; an edit or a deletion changes a message already
# stored (see desk.inbound); a tap on the satisfaction question's buttons is an answer the desk stores
# (desk.satisfaction), not a question.
SILENT_KINDS = frozenset({"reaction", "system", "request_welcome", "call_permission", "edit", "revoke",
                          "satisfaction"})
MEDIA_KINDS = ("image", "audio", "video", "document", "sticker")
# Kinds that carry something the bot cannot read: they get a turn even without a word, so that the
# bot escalates them to a person (CAPABILITY_MISSING) instead of leaving them unseen.
UNREADABLE_KINDS = frozenset({*MEDIA_KINDS, "location", "contacts", "order", "unsupported"})


def turn_wanted(kind: str, text: str) -> bool:
    """Return True when the bot must answer (or escalate) a stored message of this kind and text.

    Text, button and list replies and kinds Meta adds later get a turn only when they say
    something: an empty query has nothing to answer.
    """
    if kind in SILENT_KINDS:
        return False
    return kind in UNREADABLE_KINDS or bool(text.strip())


@dataclass(frozen=True)
class InboundMessage:
    wamid: str  # the channel's message id (WhatsApp's wamid, or the web chat's own)
    kind: str
    wa_id: str  # sender's WhatsApp id (phone digits); empty for a username-only user
    user_id: str  # business-scoped user id (BSUID), when Meta sends one
    name: str  # profile name from the contacts array
    timestamp: datetime
    text: str
    payload: dict
    phone_number_id: str  # the business number that received it
    reacted_message_id: str = ""
    emoji: str = ""
    system_type: str = ""
    new_wa_id: str = ""
    new_user_id: str = ""
    original_message_id: str = ""  # the message an edit or a deletion (revoke) is about

    @property
    def wants_turn(self) -> bool:
        """Return True when the bot must answer (or escalate) this message."""
        return turn_wanted(self.kind, self.text)
