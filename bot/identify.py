"""Who the customer is: looked up by the WhatsApp number, or from the account number or national id they send.

A customer found is remembered on the turn's context (the desk saves it with the turn); a billing outage
during the lookup is an escalation, never a guess.
"""

from __future__ import annotations

import re

from bot.context import TurnContext
from bot.escalation import Reason
from bot.outcomes import Escalated
from desk.identifiers import national_id

_NATIONAL_ID = re.compile(r"\b([VEJGPvejgp])\s*[-.]?\s*(\d{1,3}(?:[.\s]?\d{3}){1,2}(?:\s*-?\s*\d)?)\b")
_LONG_NUMBER = re.compile(r"\d[\d\s.-]{5,}\d")


def by_channel(recorder, billing, context: TurnContext) -> str | None | Escalated:
    """Find the customer behind a WhatsApp number; None when unknown (ask them), Escalated on an outage."""
    if context.channel != "whatsapp" or not context.wa_id:
        return None
    with recorder.stage("identify"):
        result = billing.find_customer(whatsapp_id=context.wa_id)
    recorder.draft.tool_calls.append(result.to_json())
    if result.should_escalate:
        return Escalated(Reason.TOOL_ERROR, ["Customer lookup by WhatsApp number failed."])
    if not result.ok:
        return None
    context.customer_id = result.data["customer"]["id"]
    return context.customer_id


def holds_identifier(text: str) -> bool:
    """Whether a message holds a national id or a number long enough to be an account number."""
    return bool(_NATIONAL_ID.search(text)) or any(
        len(re.sub(r"\D", "", m.group(0))) >= 7 for m in _LONG_NUMBER.finditer(text))


def from_message(recorder, billing, text: str) -> str | Escalated:
    """Look up the account number or national id the customer just sent; '' when there is none."""
    lookups = []
    for match in _NATIONAL_ID.finditer(text):
        # In billing's form, read as the desk reads what an agent types: "J-34472459-7", "j 34.472.459-7".
        found = national_id(match.group(0)) or f"{match.group(1).upper()}-{re.sub(r'[^0-9]', '', match.group(2))}"
        lookups.append({"national_id": found})
    for match in _LONG_NUMBER.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if len(digits) >= 7:
            lookups.extend([{"account_number": digits}, {"national_id": f"V-{digits}"}])
    if not lookups:
        return ""
    with recorder.stage("identify"):
        for lookup in lookups:
            result = billing.find_customer(**lookup)
            recorder.draft.tool_calls.append(result.to_json())
            if result.should_escalate:
                return Escalated(Reason.TOOL_ERROR, ["Customer lookup failed."])
            if result.ok:
                return result.data["customer"]["id"]
    return Escalated(Reason.CAPABILITY_MISSING,
                     ["The customer sent an identifier that matches no account; identify them by hand."])
