"""A conversation's turns together: each turn beside the one before it, and a reply that repeats the previous one
word for word flagged. Pure: no Django."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def same_words(reply: str, previous: str) -> bool:
    """Return whether a reply repeats the previous reply word for word (spacing aside); an empty reply never does."""
    words, earlier = reply.split(), previous.split()
    return bool(words) and words == earlier


@dataclass(frozen=True)
class TurnRow:
    """One turn of a conversation as the conversation view lists it."""

    trace_id: int
    number: int  # 1 for the conversation's first turn
    message: str
    reply: str
    route: str
    outcome: str
    escalation_reason: str
    repeats_previous: bool  # the reply is the previous turn's reply word for word


def turn_rows(turns: Sequence[tuple[int, str, str, str, str, str]]) -> list[TurnRow]:
    """Return the turns (trace id, message, reply, route, outcome, reason), oldest first, numbered and with each
    reply compared with the last reply before it."""
    rows, previous_reply = [], ""
    for number, (trace_id, message, reply, route, outcome, reason) in enumerate(turns, start=1):
        rows.append(TurnRow(trace_id=trace_id, number=number, message=message, reply=reply, route=route,
                            outcome=outcome, escalation_reason=reason,
                            repeats_previous=same_words(reply, previous_reply)))
        if reply.strip():
            previous_reply = reply
    return rows
