"""The routes a message can take and the routing decision the turn records. Pure: no Django."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Route(StrEnum):
    DOCUMENT = "document"
    ACCOUNT = "account"
    HUMAN = "human"
    UNSUPPORTED = "unsupported"
    MEDIA = "media"
    SMALLTALK = "smalltalk"


class Courtesy(StrEnum):
    """What kind of small talk a message is; the reply (or silence) depends on it."""

    GREETING = "greeting"
    THANKS = "thanks"
    ACK = "ack"
    FAREWELL = "farewell"


@dataclass(frozen=True)
class Routing:
    route: Route
    language: str
    capability: str = ""  # billing capability for account questions (and account evidence on the document path)
    rule: str = ""  # the rule that decided, or the classifier that did, for the trace
    confidence: float = 1.0  # the classifier's probability for the route; 1.0 when a rule decided
    unsure: bool = False  # confidence below the threshold
    account_evidence: bool = False  # a document question about the customer's own bill: add their facts if known
    courtesy: Courtesy | None = None  # for small talk: greeting, thanks, acknowledgement or farewell
    out_of_scope: bool = False  # about something other than plans, bills and payments: the bot declines it
    # The answer is in the customer's records (what they owe, their payments, a numbered bill): an unknown customer
    # is asked who they are first. Otherwise the help center may answer before anyone is identified.
    records_required: bool = False
    version: str = ""  # the router that decided (set by the caller, who knows the examples and the model)
    model: str = ""  # the model asked, when a model routed (its call is priced on the trace)
    usage: dict | None = None  # that call's token usage as the server reported it
