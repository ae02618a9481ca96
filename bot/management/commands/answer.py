"""python manage.py answer "QUERY" — the bot's decision for one message, through the live turn's path.

Nothing is written and nothing is sent: `bot.turn.answer_query` runs routing, small talk, billing,
retrieval, the writer, the verifier and the humanizer from plain inputs.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from bot.escalation import customer_notice
from bot.outcomes import Answered, Clarify, Declined, Escalated, QueryAnswer
from bot.turn import answer_query

RETRIEVED_KEYS = ("doc", "section", "vector_score", "matched_by_text", "kept")


def answer_json(result: QueryAnswer) -> dict:
    """Return the stable JSON shape of one decision (documented in the README's commands table).

    `outcome` is answered, escalated, clarify (a question that offers `options` before answering), declined
    (not about plans, bills or payments: the reply says what the bot helps with) or silenced; a reply that asks who
    the customer is is answered, with `asks_identity` true.
    """
    outcome, draft = result.outcome, result.draft
    options: list[str] = []
    if isinstance(outcome, Escalated):
        kind, reply = "escalated", customer_notice(draft.language)
    elif isinstance(outcome, Answered):
        kind, reply = "answered", outcome.text
    elif isinstance(outcome, Clarify):
        kind, reply = "clarify", outcome.text
        options = [option["label"] for option in outcome.pending.get("options", [])]
    elif isinstance(outcome, Declined):
        kind, reply = "declined", outcome.text
    else:
        kind, reply = "silenced", ""
    return {
        "outcome": kind,
        "route": draft.route,
        "reason": outcome.reason.value if isinstance(outcome, Escalated) else "",
        "reply": reply,
        "options": options,
        "asks_identity": isinstance(outcome, Answered) and outcome.asks_identity,
        "internal_note": draft.internal_note,
        "retrieved": [{key: hit.get(key) for key in RETRIEVED_KEYS} for hit in draft.retrieval],
        "evidence": [{"id": e["id"], "text": e["text"], "value": e.get("value")} for e in draft.evidence],
        "citations": list(getattr(outcome, "citations", [])),
    }


def _history_item(item: str) -> tuple[str, str]:
    role, sep, text = item.partition(":")
    if not sep or role.strip() not in ("user", "assistant") or not text.strip():
        raise CommandError(f"--history {item!r}: write it as 'user: TEXT' or 'assistant: TEXT'")
    return role.strip(), text.strip()


class Command(BaseCommand):
    help = (
        "Print what the bot would do with one message — answer, escalate, ask (clarify) or stay silent — "
        "without writing a row or sending anything. --json prints {outcome, route, reason, reply, options, "
        "asks_identity, internal_note, retrieved, evidence, citations}."
    )

    def add_arguments(self, parser):
        parser.add_argument("query", help="the customer's message")
        parser.add_argument("--customer", default="", help="a known customer id (e.g. C-1001)")
        parser.add_argument("--language", default="es", choices=["es", "en"],
                            help="the customer's language until the message says otherwise (default es)")
        parser.add_argument("--history", action="append", default=[], metavar="ROLE: TEXT",
                            help="an earlier message of the conversation, oldest first, as 'user: …' or "
                                 "'assistant: …' (repeat the option for each)")
        parser.add_argument("--json", action="store_true", help="print the decision as JSON")

    def handle(self, *args, **options):
        if not options["query"].strip():
            raise CommandError("the query is empty")
        decision = answer_json(answer_query(query=options["query"], language=options["language"],
                                            customer_id=options["customer"],
                                            history=[_history_item(item) for item in options["history"]]))
        if options["json"]:
            self.stdout.write(json.dumps(decision, ensure_ascii=False, default=str))
            return
        self.stdout.write(f"{decision['outcome']} · route {decision['route']}"
                          + (f" · {decision['reason']}" if decision["reason"] else ""))
        if decision["reply"]:
            self.stdout.write(decision["reply"])
        for hit in decision["retrieved"]:
            self.stdout.write(f"  {'kept  ' if hit['kept'] else 'pruned'} {hit['doc']} § {hit['section']} "
                              f"({hit['vector_score']})")
