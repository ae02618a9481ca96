"""Why a turn went to a person, what the agent reads, and what the customer is told. Pure: no Django."""

from __future__ import annotations

from dataclasses import dataclass, field

from desk.reasons import Reason

SUMMARIES = {
    Reason.NO_CONTEXT: "The customer asked something that is not in the knowledge base.",
    Reason.UNGROUNDED_OUTPUT: "The bot was about to give an unsupported figure; it was stopped for safety.",
    Reason.USER_REQUEST: "The customer asked to speak to a person.",
    Reason.TOOL_ERROR: "Could not query the billing system (possible outage).",
    Reason.CAPABILITY_MISSING: "The customer wants something the bot cannot do or read yet.",
    Reason.FORBIDDEN_PHRASE: "The reply used a phrase the channel forbids (a promise or a robotic line); "
                             "it was not sent.",
    Reason.MODEL_ERROR: "The language model failed or returned an unreadable answer twice; nothing was sent.",
    Reason.MODEL_DEFERRED: "The model judged the evidence insufficient and asked for a person.",
    Reason.MEDIA: "The customer sent a photo, voice note, video or file: look at it below (the bot cannot).",
}

CUSTOMER_NOTICE = {
    "es": "Gracias por escribirnos. Te paso con una persona de nuestro equipo, que te responderá por aquí en breve.",
    "en": "Thanks for your message. I'm passing you to a person on our team, who will reply here shortly.",
}

# A message about something other than plans, bills and payments: what the bot does help with, and how to reach a
# person — short, in the customer's language, never a help-center sentence about something else.
DECLINE = {
    "es": "Eso no es algo con lo que pueda ayudarte por aquí. Puedo ayudarte con tus planes, facturas y pagos; si "
          "prefieres hablar con una persona, escríbeme «quiero hablar con una persona».",
    "en": "That's not something I can help with here. I can help with your plans, invoices and payments; if you'd "
          "rather talk to a person, just write \"I want to talk to a person\".",
}
# After an answer from the help center to someone billing could not identify: their own bill may say more.
# No figure in it, so the verifier has nothing to check and the customer nothing to misread.
OFFER_TO_CHECK_ACCOUNT = {
    "es": "Si quieres que lo revise con los datos de tu cuenta, envíame tu número de cuenta o tu cédula.",
    "en": "If you'd like me to check it against your own account, send me your account number or national id.",
}
# After what the help center says about something the bot cannot do itself: a person can.
OFFER_A_PERSON = {
    "es": "Si quieres que una persona de nuestro equipo lo gestione, escríbeme «quiero hablar con una persona».",
    "en": "If you'd like someone from our team to take care of it, write \"I want to talk to a person\".",
}
ASK_FOR_IDENTITY = {
    "es": "Para revisar tu cuenta necesito identificarte: envíame tu número de cuenta o tu cédula "
          "(por ejemplo V-12345678).",
    "en": "To look at your account I need to identify you: please send your account number or your "
          "national id (for example V-12345678).",
}


@dataclass(frozen=True)
class EscalationNote:
    reason: Reason
    summary: str
    detail: str = ""
    facts: list[str] = field(default_factory=list)


def agent_summary(reason: Reason, *, query: str = "", details: list[str] | None = None) -> EscalationNote:
    """Return the reason's summary for the agent, with the specifics of this turn underneath."""
    lines = [f"Customer wrote: “{query.strip()}”"] if query.strip() else []
    lines.extend(d for d in (details or []) if d)
    return EscalationNote(reason=reason, summary=SUMMARIES[reason], detail="\n".join(lines), facts=list(details or []))


def situation_note(*, customer_id: str, tool_calls: list[dict], retrieval: list[dict], route: str = "",
                   shown: int = 5) -> str:
    """Return the internal note of an escalation no writer wrote: what the bot already knew.

    Whether the customer is identified, each billing call and how it ended (the capability that failed
    and its error), and the documents retrieval looked at — so the agent does not ask or search again.
    """
    lines = [f"Customer: identified as {customer_id}." if customer_id
             else "Customer: not identified (no account is linked to this conversation)."]
    if route:
        lines.append(f"Route: {route}.")
    for call in tool_calls:
        capability = call.get("capability", "?")
        error = call.get("error") or {}
        if call.get("ok"):
            lines.append(f"Billing: {capability} answered ({len(call.get('evidence') or [])} facts).")
        else:
            lines.append(f"Billing: {capability} failed — {error.get('code', 'unknown')}: "
                         f"{error.get('message', 'no message')}.")
    if retrieval:
        looked = [f"{hit.get('doc')} § {hit.get('section')} ({'kept' if hit.get('kept') else 'pruned'}, "
                  f"vector {hit.get('vector_score')})" for hit in retrieval[:shown]]
        more = f" and {len(retrieval) - shown} more" if len(retrieval) > shown else ""
        lines.append("Documents looked at: " + "; ".join(looked) + more + ".")
    else:
        lines.append("Documents looked at: none (the turn stopped before searching the knowledge base).")
    lines.append("The bot wrote no reply.")
    return "\n".join(lines)


def customer_notice(language: str) -> str:
    """Return the one message the customer gets when a person takes over, in their language."""
    return CUSTOMER_NOTICE.get(language, CUSTOMER_NOTICE["es"])


def ask_for_identity(language: str) -> str:
    """Return the request for an account number or national id, in the customer's language."""
    return ASK_FOR_IDENTITY.get(language, ASK_FOR_IDENTITY["es"])


def offer_to_check_account(language: str) -> str:
    """Return the offer to look at the customer's own account, in their language."""
    return OFFER_TO_CHECK_ACCOUNT.get(language, OFFER_TO_CHECK_ACCOUNT["es"])


def decline_reply(language: str) -> str:
    """Return the reply to a message outside plans, bills and payments, in the customer's language."""
    return DECLINE.get(language, DECLINE["es"])


def offer_a_person(language: str) -> str:
    """Return the offer of a person to do what the bot cannot, in the customer's language."""
    return OFFER_A_PERSON.get(language, OFFER_A_PERSON["es"])
