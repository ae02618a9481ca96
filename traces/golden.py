"""Read golden-set files (JSONL) into GoldenCase values, with errors that name the line."""

from __future__ import annotations

import json
from pathlib import Path

from traces.metrics import GoldenCase


class GoldenFileError(ValueError):
    """A golden file that cannot be read; the message names the file and line."""


def read_golden(path: Path) -> list[GoldenCase]:
    """Return the cases of a JSONL golden file (`id`, `query`, `hits`, `hard_negatives`, `must_pass`)."""
    if not path.exists():
        raise GoldenFileError(f"{path}: no such file")
    cases, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldenFileError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        missing = [key for key in ("id", "query", "hits") if not row.get(key)]
        if missing:
            raise GoldenFileError(f"{path}:{number}: missing {', '.join(missing)}")
        if row["id"] in seen:
            raise GoldenFileError(f"{path}:{number}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        cases.append(
            GoldenCase(
                id=str(row["id"]),
                query=str(row["query"]),
                hits=list(row["hits"]),
                hard_negatives=list(row.get("hard_negatives") or []),
                must_pass=bool(row.get("must_pass", False)),
            )
        )
    return cases
