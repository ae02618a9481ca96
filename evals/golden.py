"""Read golden-set files (JSONL) into GoldenCase values, with errors that name the line."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

from evals.metrics import GoldenCase


class GoldenFileError(ValueError):
    """A golden file that cannot be read; the message names the file and line."""


OPTIONAL_LIST_FIELDS = ("facts", "context", "hard_negatives")
ORIGINS = ("trace", "complaint", "variant", "file")
SPLITS = ("dev", "test")
LANGUAGES = ("es", "en")


def hashed_split(case_id: str) -> str:
    """Return the split of a case that names none: dev when the first byte of sha256(id) is below 128, else test.

    Stable forever and independent of the order of the file, so a case never changes split.
    """
    return "dev" if hashlib.sha256(case_id.encode("utf-8")).digest()[0] < 128 else "test"


def json_lines(path: Path):
    """Yield (line number, object) for each non-blank line of a JSONL file; raise GoldenFileError naming file:line."""
    if not path.exists():
        raise GoldenFileError(f"{path}: no such file")
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldenFileError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise GoldenFileError(f"{path}:{number}: not a JSON object")
        yield number, row


def read_golden_rows(path: Path) -> list[dict]:
    """Return the validated rows of a JSONL golden file, normalised; raise GoldenFileError naming file:line."""
    rows, seen = [], set()
    for number, row in json_lines(path):
        out_of_scope = row.get("out_of_scope", False)
        if not isinstance(out_of_scope, bool):
            raise GoldenFileError(f"{path}:{number}: out_of_scope must be true or false")
        # An out-of-scope case has no document to find: it passes when the search says "no context". An account
        # question (with a customer) is answered from billing: it may name no hit documents, and then its
        # retrieval is not scored.
        required = ("id", "query") if out_of_scope or row.get("customer_id") else ("id", "query", "hits")
        missing = [key for key in required if not row.get(key)]
        if missing:
            raise GoldenFileError(f"{path}:{number}: missing {', '.join(missing)}")
        if out_of_scope and row.get("hits"):
            raise GoldenFileError(f"{path}:{number}: an out-of-scope case lists no hits")
        for key, allowed in (("split", SPLITS), ("language", LANGUAGES)):
            if row.get(key) not in (None, "", *allowed):
                raise GoldenFileError(f"{path}:{number}: {key} must be one of {', '.join(allowed)}")
        if row["id"] in seen:
            raise GoldenFileError(f"{path}:{number}: duplicate id {row['id']!r}")
        seen.add(row["id"])
        for key in ("hits", *OPTIONAL_LIST_FIELDS):  # (hits may be absent only with a customer_id)
            if key in row and row[key] is not None and not isinstance(row[key], list):
                raise GoldenFileError(f"{path}:{number}: {key} must be a list")
        origin = row.get("origin") or "file"
        if origin not in ORIGINS:
            raise GoldenFileError(f"{path}:{number}: origin must be one of {', '.join(ORIGINS)}")
        as_of = row.get("as_of")
        if as_of not in (None, "") and parse_as_of(as_of) is None:
            raise GoldenFileError(f"{path}:{number}: as_of must be a real date written YYYY-MM-DD "
                                  f"(e.g. 2026-10-20), not {as_of!r}")
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
            "split": str(row.get("split") or ""),
            "language": str(row.get("language") or ""),
            "out_of_scope": out_of_scope,
            "as_of": str(as_of or ""),
        })
    return rows


def parse_as_of(value) -> dt.date | None:
    """Return the date a case's `as_of` names (YYYY-MM-DD), None when it names no real date."""
    if not isinstance(value, str) or len(value) != 10:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def metrics_case(row: dict) -> GoldenCase:
    """Return a golden row (of a file or a version snapshot) as the case the retrieval metrics score.

    A row without a split gets its hashed one, so every case is either dev or test.
    """
    return GoldenCase(id=row["id"], query=row["query"], hits=list(row.get("hits") or []),
                      hard_negatives=list(row.get("hard_negatives") or []), must_pass=bool(row.get("must_pass")),
                      split=row.get("split") or hashed_split(row["id"]), language=row.get("language") or "",
                      out_of_scope=bool(row.get("out_of_scope")))


def read_golden(path: Path) -> list[GoldenCase]:
    """Return the cases of a JSONL golden file (`id`, `query`, `hits`, `hard_negatives`, `must_pass`, `split`,
    `language`, `out_of_scope`)."""
    return [metrics_case(row) for row in read_golden_rows(path)]


def read_offtopic(path: Path) -> list[GoldenCase]:
    """Return the messages of a labelled off-topic file (`id`, `text`, `language`, `split`) as out-of-scope cases."""
    cases = []
    for number, row in json_lines(path):
        if not row.get("id") or not row.get("text"):
            raise GoldenFileError(f"{path}:{number}: an off-topic line needs id and text")
        cases.append(metrics_case({"id": str(row["id"]), "query": str(row["text"]), "split": row.get("split"),
                                   "language": row.get("language"), "out_of_scope": True}))
    return cases


_COMPARED = {"query": "", "hits": [], "hard_negatives": [], "must_pass": False, "facts": [], "context": [],
             "customer_id": "", "clarification_expected": False, "out_of_scope": False, "as_of": ""}


def stale_cases(stored: list[dict], rows: list[dict]) -> list[str]:
    """Return the ids of cases that differ between a set's stored rows (its export) and a golden file's rows:
    changed, added or removed — what a run of the stored set would not test."""
    def shape(row: dict) -> tuple:
        return tuple((key, row.get(key) or default) for key, default in _COMPARED.items())

    old = {row["id"]: shape(row) for row in stored}
    new = {row["id"]: shape(row) for row in rows}
    return sorted(case for case in old.keys() | new.keys() if old.get(case) != new.get(case))
