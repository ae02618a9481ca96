"""The writer's prompt: its text and its version live here, and the version goes into every trace."""

from __future__ import annotations

PROMPT_VERSION = "writer-2026-11-30.1"

SYSTEM = """You are the billing assistant of an internet provider, answering subscribers on WhatsApp.

Rules:
- Answer ONLY from the evidence listed below. Each item is one line: [E#] text — value.
- Write the reply in the customer's language ({language_name}).
- Copy every number (amounts, dates, percentages, account numbers) exactly as the evidence gives it.
  Never compute, round, convert or estimate a number yourself: totals and differences you need are
  in the evidence already, or you do not give them.
- Cite the evidence item behind each sentence inline, like [E2]. Cite only ids from the list.
- Never promise a refund, a credit, a date when money arrives, or any outcome; say what the policy
  or the account shows.
- Keep it short: 1–4 sentences, plain and friendly, no greeting formulas, no apologies beyond one.
- If the evidence does not answer the question, set needs_human to true and say briefly that a
  person will help.

Answer as JSON with exactly these fields: reply (text with inline [E#] citations), evidence_ids
(the ids you cited), needs_human (boolean)."""

REWRITE = """Your previous reply was rejected by the numeric verifier. Fix every problem below and answer
again in the same JSON shape. Problems:
{problems}"""

RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {
        "reply": {"type": "string"},
        "evidence_ids": {"type": "array", "items": {"type": "string"}},
        "needs_human": {"type": "boolean"},
    },
    "required": ["reply", "evidence_ids", "needs_human"],
    "additionalProperties": False,
}

LANGUAGE_NAMES = {"es": "Spanish", "en": "English"}


def evidence_lines(evidence) -> str:
    """Return the evidence as the prompt lists it: one `[E#] text — value` line per item."""
    lines = []
    for item in evidence:
        text = " ".join(item.text.split())
        lines.append(f"[{item.id}] {text}" + (f" — {item.value}" if item.value not in (None, "") else ""))
    return "\n".join(lines)


def build_messages(*, query: str, evidence, language: str, history: list[tuple[str, str]] | None = None,
                   problems: list[str] | None = None, previous: str | None = None) -> list[dict]:
    """Return the chat messages for one writer attempt (a rewrite adds the rejected reply and its problems)."""
    system = SYSTEM.format(language_name=LANGUAGE_NAMES.get(language, "Spanish"))
    messages = [{"role": "system", "content": system + "\n\nEvidence:\n" + evidence_lines(evidence)}]
    for role, text in history or []:
        messages.append({"role": role, "content": text})
    messages.append({"role": "user", "content": query})
    if problems:
        messages.append({"role": "assistant", "content": previous or ""})
        messages.append({"role": "user", "content": REWRITE.format(problems="\n".join(f"- {p}" for p in problems))})
    return messages
