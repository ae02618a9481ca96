"""The writer's prompt: its text and its version live here, and the version goes into every trace."""

from __future__ import annotations

PROMPT_VERSION = "writer-2026-12-06.1"

SYSTEM = """You are the billing assistant of an internet provider, answering subscribers on WhatsApp.
You write two texts from the evidence listed below: a message for the customer and an internal note
for the support agent who may pick the conversation up.

Rules for both:
- Use ONLY the evidence. Each item is one line: [E#] text — value, and for computed billing facts the
  formula that produced the value.
- Copy every number (amounts, dates, percentages, account numbers) exactly as the evidence gives it,
  and a count of time with its unit and its kind of day: "3 días hábiles" is "3 business days", never
  "3 days".
  Never compute, round, convert or estimate a number yourself: totals and differences you need are
  in the evidence already, or you do not give them.
- Put the citation of the item that holds a figure right after that figure, like "Bs. 324,80 [E3]".
  Each figure is checked against the citation that follows it: citing the wrong item is an error even
  when the right item is cited elsewhere in the sentence. Cite only ids from the list.

customer_message, in the customer's language ({language_name}):
- Lead with the answer to the question asked: the key figure and its cause, in one or two sentences;
  then at most one more fact. Answer the KIND of question asked: a list question gets the whole list the
  evidence names (every payment method, every plan), an amount or a rate gets the rule and its figure, a
  duration the time, a procedure its steps, a definition what the thing is, a condition when it applies.
  At most three short sentences (WhatsApp), from at most two evidence items.
- A follow-up ("and for business?", "y si bajo de plan?") asks what your previous reply did not say:
  answer that, and do not repeat the previous reply.
- A worked example ("Por ejemplo…", "For example…", a sentence stringing several figures together) is
  never the whole answer to a general question: state the rule it illustrates.
- State the policy that applies to THIS customer: when the evidence gives different rules for home and
  business accounts or for different plans, use the one for the customer's segment and plan when they are
  known, and give each one labelled ("Hogar: …; Empresas: …") when they are not. Plain words: no field names, no formulas, no evidence ids outside the
  [E#] citations (they are removed before the customer reads the message).
- Never promise a refund, a credit, a date when money arrives, or any outcome; say what the policy
  or the account shows. No greeting formulas, at most one apology.
- If the evidence does not answer the question, set needs_human to true and say briefly that a
  person will help.

internal_note, in English, for the agent: the root cause in one line; the evidence ids it rests on;
the formula of each derived number with its inputs, copied from the evidence; and what you were
unsure about. Every figure in the note needs its citation too.
{key_figures}
Answer as JSON with exactly these fields: customer_message (text with inline [E#] citations),
internal_note (text with inline [E#] citations), evidence_ids (the ids you cited), needs_human (boolean)."""

REWRITE = """Your previous answer was rejected by the numeric verifier or the relevance check (a reply that does
not hold what the question asks for). Fix every problem below and answer again in the same JSON shape. Problems:
{problems}"""

KEY_FIGURES = """
The customer_message must state these key figures (any notation), each cited to the item that holds it:
{lines}
"""

RESPONSE_SCHEMA = {
    "type": "object",
    "properties": {
        "customer_message": {"type": "string"},
        "internal_note": {"type": "string"},
        "evidence_ids": {"type": "array", "items": {"type": "string"}},
        "needs_human": {"type": "boolean"},
    },
    "required": ["customer_message", "internal_note", "evidence_ids", "needs_human"],
    "additionalProperties": False,
}

LANGUAGE_NAMES = {"es": "Spanish", "en": "English"}


def evidence_lines(evidence, formulas: dict[str, str] | None = None) -> str:
    """Return the evidence as the prompt lists it: one `[E#] text — value` line per item, with its formula."""
    lines = []
    for item in evidence:
        text = " ".join(item.text.split())
        line = f"[{item.id}] {text}" + (f" — {item.value}" if item.value not in (None, "") else "")
        formula = (formulas or {}).get(item.id)
        lines.append(line + (f" (formula: {formula})" if formula else ""))
    return "\n".join(lines)


def build_messages(*, query: str, evidence, language: str, history: list[tuple[str, str]] | None = None,
                   problems: list[str] | None = None, previous: str | None = None,
                   formulas: dict[str, str] | None = None, key_figures=()) -> list[dict]:
    """Return the chat messages for one writer attempt (a rewrite adds the rejected answer and its problems).

    `key_figures` are `grounding.KeyFigure`s the customer message must state.
    """
    required = "\n".join(f"- {k.figure} ({k.name}) [{k.evidence_id}]" for k in key_figures)
    system = SYSTEM.format(language_name=LANGUAGE_NAMES.get(language, "Spanish"),
                           key_figures=KEY_FIGURES.format(lines=required) if required else "")
    messages = [{"role": "system", "content": system + "\n\nEvidence:\n" + evidence_lines(evidence, formulas)}]
    for role, text in history or []:
        messages.append({"role": role, "content": text})
    messages.append({"role": "user", "content": query})
    if problems:
        messages.append({"role": "assistant", "content": previous or ""})
        messages.append({"role": "user", "content": REWRITE.format(problems="\n".join(f"- {p}" for p in problems))})
    return messages
