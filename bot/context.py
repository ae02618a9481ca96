"""What a turn knows about the customer and the conversation, and what it decided to remember.

Read once when the turn starts — from the desk's rows for a live turn, from plain inputs for
`answer_query` (the `answer` command and the evals). The turn's parts read and change this object
instead of writing rows or calling back into the turn; the live turn's last transaction saves what
changed through the desk's services, with the reply and the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TurnContext:
    customer_id: str = ""  # the billing customer, once known
    language: str = "es"  # the language the customer writes in
    history: list[tuple[str, str]] = field(default_factory=list)  # earlier (role, text) pairs, oldest first
    channel: str = ""  # "whatsapp" lets the turn look the customer up by their number
    wa_id: str = ""
    pending_query: str = ""  # the question kept while the bot asks who the customer is
    pending_clarification: dict = field(default_factory=dict)  # the question kept while the bot asks which option
    index_version: int | None = None  # search the index as it was at this version (a replay); None: the live index
    # A live turn files the credit note a verified overcharge calls for (the desk records it with the reply);
    # `answer_query` writes no row, so its answers never say a request was filed.
    files_credit_notes: bool = False
    # The bot's previous reply, when this message is read as a follow-up of the question it answered: what the
    # customer asks next is not what they were just told.
    previous_reply: str = ""
    _loaded: dict = field(default_factory=dict, repr=False, compare=False)

    SAVED = ("customer_id", "language", "pending_query", "pending_clarification")

    def __post_init__(self):
        self._loaded = {name: getattr(self, name) for name in self.SAVED}

    def changes(self) -> dict:
        """Return the saved fields whose value differs from the one the turn started with."""
        return {name: getattr(self, name) for name in self.SAVED if getattr(self, name) != self._loaded[name]}

    def last_reply(self) -> str:
        """The bot's latest reply in the conversation ("" when it has said nothing yet)."""
        return next((said for role, said in reversed(self.history) if role == "assistant"), "")

    def remember_identity_question(self, query: str) -> None:
        """Keep the question the customer asked while the bot asks who they are."""
        self.pending_query = query

    def remember_clarification(self, pending: dict) -> None:
        """Keep the question and the options the bot offered while it asks which one applies."""
        self.pending_clarification = pending

