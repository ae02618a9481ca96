"""Run every simulator customer through every billing capability and collect what the bot would see.

Shared by the characterisation test (`test_evidence_snapshot.py`) and its regeneration:
`DJANGO_DEBUG=1 .venv/bin/python -m billing.tests.evidence_snapshot` rewrites the snapshot file.
Regenerate only when a test proves an evidence text wrong, and say which one in the commit.

Each customer runs twice: in the language the simulator gives it, and flipped (es ↔ en), so every
phrase of both languages meets every scenario (business late fees, for instance, are only Spanish
customers in the seeded data). The clock is pinned: the simulator's `as_of` and the client's `today`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from billing.answers.evidence import ToolResult
from tests.support.billing_sim import AS_OF, EXTRA_TODAYS, FLIP, capability_results, client_for, simulator_for

__all__ = ["AS_OF", "EXTRA_TODAYS", "FLIP", "capability_results", "client_for", "collect", "read",
           "simulator_for", "write"]

SNAPSHOT_PATH = Path(__file__).resolve().parent / "snapshots" / "evidence.json"


def _outcome(result: ToolResult) -> dict:
    if not result.ok:
        return {"error": result.error.code if result.error else None}
    return {
        "facts": [
            [fact.kind, fact.currency, fact.value, fact.text, fact.derivation] for fact in result.evidence
        ]
    }


def collect() -> dict[str, dict]:
    """Return {key: outcome} for both language modes."""
    return {key: _outcome(result) for flipped in (False, True) for key, result in capability_results(flipped)}


def write(snapshot: dict[str, dict]) -> None:
    """Store each distinct fact once (capabilities repeat the same payment lines), then the outcomes by index."""
    facts: dict[tuple, int] = {}
    results = {}
    for key, outcome in sorted(snapshot.items()):
        if "facts" in outcome:
            outcome = {"facts": [facts.setdefault(tuple(fact), len(facts)) for fact in outcome["facts"]]}
        results[key] = outcome
    body = {"facts": [list(fact) for fact in facts], "results": results}
    SNAPSHOT_PATH.parent.mkdir(exist_ok=True)
    SNAPSHOT_PATH.write_text(json.dumps(body, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


def read() -> dict[str, dict]:
    body = json.loads(SNAPSHOT_PATH.read_text(encoding="utf-8"))
    facts = body["facts"]
    return {
        key: {"facts": [facts[index] for index in outcome["facts"]]} if "facts" in outcome else outcome
        for key, outcome in body["results"].items()
    }


if __name__ == "__main__":  # pragma: no cover - a maintenance entry point
    write(collect())
    sys.stdout.write(f"wrote {SNAPSHOT_PATH}\n")
