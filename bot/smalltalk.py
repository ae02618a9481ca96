"""What the bot says to a greeting, thanks, acknowledgement or goodbye. Pure: no Django.

Small talk never escalates: a person is not needed to say hello back. A greeting also says what
the bot can help with. A bare acknowledgement ("ok", "vale", "👍") right after a bot answer gets no
reply at all — on WhatsApp answering "ok" with text invites another "ok"; the same word as the
first message of a conversation is answered like a greeting, since nothing was acknowledged.
"""

from __future__ import annotations

from bot.routing.types import Courtesy

REPLIES = {
    "es": {
        Courtesy.GREETING: "¡Hola! Te ayudo con tus planes, facturas y pagos. ¿Qué necesitas?",
        Courtesy.THANKS: "¡Con gusto! Si necesitas algo más sobre planes, facturas o pagos, aquí estoy.",
        Courtesy.FAREWELL: "¡Hasta luego! Aquí estoy cuando lo necesites.",
    },
    "en": {
        Courtesy.GREETING: "Hi! I can help with your plans, invoices and payments. What do you need?",
        Courtesy.THANKS: "You're welcome! If you need anything else about plans, invoices or payments, I'm here.",
        Courtesy.FAREWELL: "Bye! I'm here whenever you need me.",
    },
}


def small_talk_reply(courtesy: Courtesy | None, language: str, *, after_bot_answer: bool) -> str | None:
    """Return the reply to a small-talk message in the customer's language, or None to stay silent."""
    if courtesy == Courtesy.ACK and after_bot_answer:
        return None
    if courtesy == Courtesy.ACK:
        courtesy = Courtesy.GREETING  # nothing to acknowledge yet: say what the bot can do
    phrases = REPLIES.get(language, REPLIES["es"])
    return phrases[courtesy or Courtesy.THANKS]
