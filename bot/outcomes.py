"""What a turn decides: answer, escalate, ask, decline, or stay silent — and the decision with its trace draft.

The live turn (bot/turn.py), the `answer` command and the evals read the same outcome types.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.escalation import Reason
from bot.proposal import CreditProposal
from traces.draft import TraceDraft


@dataclass
class Answered:
    text: str
    citations: list[str] = field(default_factory=list)
    asks_identity: bool = False  # the reply asks for an account number instead of answering
    note: str = ""  # the verified internal note for the agent (citations kept)
    # A credit note the answer's verified finding calls for; `text` ends with the sentence that says it is filed,
    # `text_without` is the reply without that sentence (sent when the desk files no proposal).
    proposal: CreditProposal | None = None
    text_without: str = ""


@dataclass
class Escalated:
    reason: Reason
    details: list[str] = field(default_factory=list)
    suggestion: str = ""
    note: str = ""  # what the agent should know; written from the draft when empty


@dataclass
class Declined:
    """The message is not about plans, bills or payments: a short reply says what the bot helps with, and how to
    reach a person. Not an escalation: no agent's time goes to "capital de Francia"."""

    text: str
    why: str = ""  # for the trace: what showed it is out of scope


@dataclass
class Silenced:
    where: str


@dataclass
class Clarify:
    """The bot asks one short question before answering; the original question waits on the conversation."""

    text: str
    pending: dict
    citations: list[str] = field(default_factory=list)  # when the question follows each option's cited answer


Outcome = Answered | Escalated | Clarify | Declined | Silenced


def outcome_name(outcome: Outcome) -> str:
    """Return the outcome's name as traces record it: answered, escalated, clarify, declined or silenced."""
    if isinstance(outcome, Answered):
        return "answered"
    if isinstance(outcome, Clarify):
        return "clarify"
    if isinstance(outcome, Escalated):
        return "escalated"
    if isinstance(outcome, Declined):
        return "declined"
    return "silenced"


@dataclass
class QueryAnswer:
    """What the bot decided for one query, with everything a trace would record about it."""

    outcome: Outcome
    draft: TraceDraft
