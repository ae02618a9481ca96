"""Read golden-set files (JSONL) into GoldenCase values, with errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

from evals.metrics import GoldenCase


class GoldenFileError(ValueError):
    """A golden file that cannot be read; the message names the file and line."""


OPTIONAL_LIST_FIELDS = ("facts", "context", "hard_negatives")
ORIGINS = ("trace", "complaint", "variant", "file")


def read_golden_rows(path: Path) -> list[dict]:
    """Return the validated rows of a JSONL golden file, normalised; raise GoldenFileError naming file:line."""
    if not path.exists():
        raise GoldenFileError(f"{path}: no such file")
    rows, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldenFileError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise GoldenFileError(f"{path}:{number}: not a JSON object")
        # An account question (with a customer) is answered from billing: it may name no hit documents,
        # and then its retrieval is not scored.
        required = ("id", "query") if row.get("customer_id") else ("id", "query", "hits")
        missing = [key for key in required if not row.get(key)]
        if missing:
            raise GoldenFileError(f"{path}:{number}: missing {', '.join(missing)}")
        if row["id"] in seen:
            raise GoldenFileError(f"{path}:{number}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        for key in ("hits", *OPTIONAL_LIST_FIELDS):  # (hits may be absent only with a customer_id)
            if key in row and row[key] is not None and not isinstance(row[key], list):
                raise GoldenFileError(f"{path}:{number}: {key} must be a list")
        origin = row.get("origin") or "file"
        if origin not in ORIGINS:
            raise GoldenFileError(f"{path}:{number}: origin must be one of {', '.join(ORIGINS)}")
        rows.append({
            "id": str(row["id"]),
            "query": str(row["query"]),
            "hits": [str(h) for h in row.get("hits") or []],
            "hard_negatives": [str(h) for h in row.get("hard_negatives") or []],
            "must_pass": bool(row.get("must_pass", False)),
            "facts": [str(f) for f in row.get("facts") or []],
            "context": list(row.get("context") or []),
            "customer_id": str(row.get("customer_id") or ""),
            "clarification_expected": bool(row.get("clarification_expected", False)),
            "synthetic": bool(row.get("synthetic", False)),
            "origin": origin,
        })
    return rows


def metrics_case(row: dict) -> GoldenCase:
    """Return a golden row (of a file or a version snapshot) as the case the retrieval metrics score."""
    return GoldenCase(id=row["id"], query=row["query"], hits=list(row.get("hits") or []),
                      hard_negatives=list(row.get("hard_negatives") or []), must_pass=bool(row.get("must_pass")))


def read_golden(path: Path) -> list[GoldenCase]:
    """Return the cases of a JSONL golden file (`id`, `query`, `hits`, `hard_negatives`, `must_pass`)."""
    return [metrics_case(row) for row in read_golden_rows(path)]
