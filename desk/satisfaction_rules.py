"""Whether a resolved conversation's customer is asked how it went, and how the question and its answers read.
Pure: no Django.

Asked once per conversation, on WhatsApp only (the question is an interactive message with reply buttons), when:
- the setting is on (DESK_CSAT_ENABLED);
- a person handled the conversation: someone took it over or replied in it — after a conversation only the bot
  handled, only when DESK_CSAT_AFTER_BOT is on (and then the customer must have written at all);
- the customer was not silent: they wrote at least once after a person took over (or, when nobody took over, after
  the first reply a person sent). A customer who never wrote after the person stepped in did not talk to them:
  asking would rate the bot's part, or nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

ANSWERS = ("good", "okay", "bad")  # WhatsApp reply buttons: at most three per message
BUTTON_PREFIX = "csat"

QUESTION = {
    "es": "¿Cómo te atendimos en esta conversación? Elige una opción.",
    "en": "How did we do in this conversation? Pick one.",
}
TITLES = {  # a reply button's title has at most 20 characters
    "es": {"good": "Bien", "okay": "Regular", "bad": "Mal"},
    "en": {"good": "Good", "okay": "Okay", "bad": "Bad"},
}


@dataclass(frozen=True)
class Facts:
    enabled: bool
    after_bot: bool
    channel: str
    already_asked: bool
    handled_by_person: bool
    customer_wrote: bool  # at all, in this conversation
    customer_wrote_after_person: bool


@dataclass(frozen=True)
class Decision:
    ask: bool
    why: str


def decide(facts: Facts) -> Decision:
    """Return whether to ask the satisfaction question now, and why (or why not)."""
    if not facts.enabled:
        return Decision(False, "the satisfaction question is turned off")
    if facts.already_asked:
        return Decision(False, "already asked in this conversation")
    if facts.channel != "whatsapp":
        return Decision(False, "only WhatsApp conversations are asked")
    if not facts.handled_by_person:
        if not facts.after_bot:
            return Decision(False, "only the bot handled it")
        return Decision(facts.customer_wrote, "the bot handled it" if facts.customer_wrote else
                        "the customer never wrote")
    if not facts.customer_wrote_after_person:
        return Decision(False, "the customer was silent after a person took over")
    return Decision(True, "a person handled it and the customer spoke with them")


def interactive(satisfaction_id: int, language: str) -> dict:
    """Return the WhatsApp interactive `button` object that asks (the Cloud API's shape)."""
    language = language if language in QUESTION else "es"
    return {
        "type": "button",
        "body": {"text": QUESTION[language]},
        "action": {"buttons": [{"type": "reply", "reply": {"id": f"{BUTTON_PREFIX}:{satisfaction_id}:{answer}",
                                                             "title": TITLES[language][answer]}}
                               for answer in ANSWERS]},
    }


@dataclass(frozen=True)
class ButtonReply:
    satisfaction_id: int
    answer: str


def read_button(reply_id: str) -> ButtonReply | None:
    """Return the satisfaction answer a button reply's id carries ("csat:12:good"), None when it carries none."""
    parts = (reply_id or "").split(":")
    if len(parts) != 3 or parts[0] != BUTTON_PREFIX or not parts[1].isdigit() or parts[2] not in ANSWERS:
        return None
    if len(parts[1]) > 18:
        return None
    return ButtonReply(int(parts[1]), parts[2])


def is_satisfaction_button(reply_id: str) -> bool:
    """Whether a button reply answers a satisfaction question (well formed or not): it never goes to the bot."""
    return (reply_id or "").startswith(f"{BUTTON_PREFIX}:")
