"""python manage.py verify_answer < turn.json — the grounding verdict of one answer as JSON."""

import json
import sys
from decimal import Decimal

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bot.grounding import evidence_from_data, verify
from core.params import json_depth

MAX_DEPTH = 20  # an object holding a list of evidence objects is 3


def parse_turn(raw: str) -> dict:
    """Return verify()'s arguments from the stdin JSON; raise ValueError naming what is malformed."""
    if json_depth(raw) > MAX_DEPTH:  # json.loads would exhaust the stack first
        raise ValueError(f"stdin nests deeper than {MAX_DEPTH} levels")
    try:
        # Decimal keeps a value as the system of record wrote it: 45.00 stays "45.00", not "45.0".
        turn = json.loads(raw, parse_float=Decimal)
    except json.JSONDecodeError as error:
        raise ValueError(f"stdin is not JSON ({error})") from None
    if not isinstance(turn, dict):
        raise ValueError('expected an object {"answer", "evidence", "customer_view"}')
    answer, customer_view = turn.get("answer"), turn.get("customer_view", True)
    key_figures = turn.get("key_figures", [])
    if not isinstance(answer, str):
        raise ValueError('"answer" must be a string')
    if not isinstance(customer_view, bool):
        raise ValueError('"customer_view" must be true or false')
    if not isinstance(key_figures, list) or not all(isinstance(k, str) for k in key_figures):
        raise ValueError('"key_figures" must be a list of strings')
    return {
        "answer": answer,
        "evidence": evidence_from_data(turn.get("evidence")),
        "customer_view": customer_view,
        "key_figures": key_figures,
    }


class Command(BaseCommand):
    help = (
        'Read {"answer", "evidence": [{"id", "text", "value"}], "customer_view"} as JSON on stdin and print '
        '{"grounded", "problems", "warnings", "derived"}. "customer_view" defaults to true (the stricter '
        'check); optional "key_figures" lists figures the answer must state. Exit 0 whether or not the '
        "answer is grounded; exit 1 with a one-line message for malformed input. Extra banned phrases come "
        "from the GROUNDING_BANNED_PHRASES setting."
    )

    def handle(self, *args, **options):
        try:
            turn = parse_turn(sys.stdin.read())
            verdict = verify(**turn, banned_phrases=list(getattr(settings, "GROUNDING_BANNED_PHRASES", [])))
        except ValueError as error:  # also a key figure that holds no number
            raise CommandError(f"malformed input: {error}") from None
        self.stdout.write(json.dumps(verdict.as_json(), ensure_ascii=False))
