"""Who may do what to a conversation, given who holds it. Pure: no Django.

A conversation is *held* while a person has it (the bot is silent and an agent is its assignee). While
agent A holds it, only A or a supervisor may reply, hand it back, resolve, reassign, reopen, link the
customer, propose a credit note on it or mark one of its bot answers verified wrong; anyone else who works
the desk may add a private note or ask A to give it to them. A supervisor may take it over from A, saying
why. Nobody replies to a conversation they have not taken over, and a resolved conversation is reopened
before anything but a note, a link, a credit note or a verified-wrong mark happens in it.

The services enforce these verdicts under the conversation's row lock; the pages ask the same function
which buttons to show, so a page never offers what the service would refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Action(StrEnum):
    REPLY = "reply"
    HAND_BACK = "hand_back"
    RESOLVE = "resolve"
    REASSIGN = "reassign"
    NOTE = "note"
    REQUEST = "request"  # ask the holder to take it
    TAKE_OVER = "take_over"
    REOPEN = "reopen"
    LINK = "link"  # link or unlink the billing customer
    CREDIT_NOTE = "credit_note"  # propose a credit note on the customer's invoice
    MARK_WRONG = "mark_wrong"  # mark one of the bot's answers in it verified wrong


class Outcome(StrEnum):
    DO = "do"  # allowed, and it changes something
    ALREADY = "already"  # allowed, but the conversation is already so (a double click): change nothing
    REFUSE = "refuse"


@dataclass(frozen=True)
class Actor:
    """The person acting: their user id and name, and whether they supervise the desk."""

    id: int
    name: str
    supervises: bool = False


@dataclass(frozen=True)
class State:
    """What the rules read of a conversation."""

    holder_id: int | None  # the person who holds it; None when nobody does
    holder_name: str = ""
    resolved: bool = False
    bot_answers: bool = False  # the bot handles it (nobody took it, or it was handed back)


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    message: str = ""  # why it is refused, or what "already" means; empty for a plain "do"

    @property
    def allowed(self) -> bool:
        return self.outcome != Outcome.REFUSE


DO = Verdict(Outcome.DO)


def _refuse(message: str) -> Verdict:
    return Verdict(Outcome.REFUSE, message)


def decide(action: Action, actor: Actor, state: State, *, reason: str | None = "", assignee_id: int | None = None,
           already_requested: bool = False) -> Verdict:
    """Return whether `actor` may do `action` on a conversation in `state`, and why not.

    `reason`: what a supervisor wrote to take over from someone else (None: not asked yet — a page deciding
    whether to offer the form, which asks for it). `assignee_id`: who a reassignment
    is for. `already_requested`: the actor asked the current holder before (a second ask changes nothing).
    """
    held = state.holder_id is not None
    mine = held and state.holder_id == actor.id
    others = held and not mine
    holder = state.holder_name or "another agent"
    only = f"{holder} has this conversation: only {holder} or a supervisor may do that. Ask to take it instead."

    if action == Action.NOTE:
        return DO
    if action in (Action.LINK, Action.CREDIT_NOTE, Action.MARK_WRONG):
        # Acts on the holder's customer or judges the answers the holder is dealing with: the holder's call.
        # Like a note, they may follow a resolve (a credit note or a wrong answer found afterwards).
        return _refuse(only) if others and not actor.supervises else DO
    if action == Action.REOPEN:
        if not state.resolved:
            return Verdict(Outcome.ALREADY, "This conversation is open.")
        if others and not actor.supervises:
            return _refuse(f"{holder} resolved this conversation with it in hand: only {holder} or a supervisor "
                           "may reopen it.")
        return DO

    resolved = "This conversation is resolved. Reopen it first."
    if action == Action.RESOLVE:
        if state.resolved:
            return Verdict(Outcome.ALREADY, "This conversation is already resolved.")
        return _refuse(only) if others and not actor.supervises else DO
    if state.resolved:
        return _refuse(resolved)

    if action == Action.REPLY:
        if mine or (others and actor.supervises):
            return DO
        if others:
            return _refuse(f"{holder} has this conversation: only {holder} or a supervisor may reply. "
                           "Ask to take it instead.")
        return _refuse("Take over the conversation before replying.")
    if action == Action.HAND_BACK:
        if state.bot_answers:
            return Verdict(Outcome.ALREADY, "The bot already answers this conversation.")
        return _refuse(only) if others and not actor.supervises else DO
    if action == Action.REASSIGN:
        if others and not actor.supervises:
            return _refuse(only)
        if held and assignee_id == state.holder_id:
            return Verdict(Outcome.ALREADY, f"{holder} already has this conversation.")
        return DO
    if action == Action.REQUEST:
        if mine:
            return _refuse("You already have this conversation.")
        if not held:
            return _refuse("Nobody has this conversation: take it over instead of asking.")
        if already_requested:
            return Verdict(Outcome.ALREADY, f"You already asked {holder} for this conversation.")
        return DO
    if action == Action.TAKE_OVER:
        if mine:
            return Verdict(Outcome.ALREADY, "You already have this conversation.")
        if others and not actor.supervises:
            return _refuse(f"{holder} has this conversation. Ask to take it, or ask a supervisor.")
        if others and reason is not None and not reason.strip():
            return _refuse(f"{holder} has this conversation. Say why you take it over from {holder}: "
                           f"the reason is recorded in the thread.")
        return DO
    raise ValueError(f"unknown action {action!r}")
