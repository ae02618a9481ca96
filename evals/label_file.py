"""A file of human labels on answers (JSONL), read and checked before anything is written. Pure: no Django.

One line per labelled answer, the answer as the judge reads it (with its [E#] markers) and the evidence of its
turn:

    {"id": "g060", "case": "g060", "question": "…", "answer": "… [E8] …", "evidence": [{"id": "E8", …}],
     "verified": ["Bs. 324,80"], "label": "pass", "note": "…", "origin": "answer"}
    {"id": "g060~cause", "case": "g060", "evidence_of": "g060", "answer": "…", "label": "fail",
     "note": "…", "origin": "variant", "variant": "wrong cause"}

`case` is a case of the golden set the labels belong to; `evidence_of` reuses the evidence of an earlier line
(a variant of the same turn); `verified` lists the figures the grounding verifier accepted as derived from the
evidence; `origin` says whether the answer came from the answer path ("answer"), is a deliberately wrong variant of
one made by a program ("variant"), or was written by a person the way a model writer might answer, right or wrong
("written"; `variant` says what the writer tried).
An unknown case id, a repeated id, the same answer labelled twice, a label that is not pass or fail: each is an
error naming the line, and nothing of the file is used.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

LABELS = ("pass", "fail")
ORIGINS = ("answer", "variant", "written")
_KEYS = {"id", "case", "question", "answer", "evidence", "evidence_of", "verified", "label", "note", "origin",
         "variant"}
MAX_ID = 34  # the item key "label:<id>" fits the 40 characters of HumanLabel.item_key
TRAIN_BELOW, DEV_BELOW = 20, 60  # hash buckets 0..99: <20 train, <60 dev, the rest test


class LabelFileError(ValueError):
    """A labels file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class LabelRow:
    """One labelled answer of a labels file."""

    line: int
    id: str
    case: str
    question: str
    answer: str
    evidence: list[dict]
    label: str
    note: str = ""
    origin: str = "answer"
    variant: str = ""
    verified: list[str] = field(default_factory=list)

    @property
    def item_key(self) -> str:
        """The key the split is hashed from: stable across databases, unlike a row id."""
        return label_key(self.id)


def label_key(label_id: str) -> str:
    """Return the item key of a labels-file answer ('label:<id>')."""
    return f"label:{label_id}"


def split_for(item_key: str) -> str:
    """Return a labelled item's split from the sha256 of its key: bucket 0..99, <20 train, <60 dev, else test.

    Stable forever and the same in every database: iterate on dev, read test once per judge version, and take a
    judge prompt's examples from train only.
    """
    bucket = int.from_bytes(hashlib.sha256(item_key.encode("utf-8")).digest()[:8], "big") % 100
    if bucket < TRAIN_BELOW:
        return "train"
    return "dev" if bucket < DEV_BELOW else "test"


def label_ids(path: Path) -> set[str]:
    """Return the ids of a labels file's lines (unchecked: for telling which labels exist)."""
    ids = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("id"), str):
            ids.add(row["id"])
    return ids


def read_label_file(path: Path, *, case_ids: set[str], shown: str | None = None) -> list[LabelRow]:
    """Return the rows of a labels file; raise LabelFileError naming file:line on the first problem.

    `case_ids` are the cases of the golden set the labels are for: a label of any other case is refused.
    """
    shown = shown or str(path)
    if not path.is_file():
        raise LabelFileError(f"{shown}: no such labels file")
    rows: list[LabelRow] = []
    by_id: dict[str, LabelRow] = {}
    answers: dict[tuple[str, str], int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = _label_row(line, number=number, case_ids=case_ids, by_id=by_id, where=f"{shown}:{number}")
        first = answers.get((row.case, row.answer))
        if first is not None:
            raise LabelFileError(f"{shown}:{number}: this answer to {row.case} is already labelled on line {first} "
                                 f"(one label per answer)")
        answers[(row.case, row.answer)] = number
        by_id[row.id] = row
        rows.append(row)
    if not rows:
        raise LabelFileError(f"{shown}: no labels in the file")
    return rows


def _label_row(line: str, *, number: int, case_ids: set[str], by_id: dict[str, LabelRow], where: str) -> LabelRow:
    def fail(problem: str):
        raise LabelFileError(f"{where}: {problem}")

    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        fail(f"not JSON ({exc.msg})")
    if not isinstance(raw, dict):
        fail("not a JSON object")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        fail(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS))}")
    label_id, case = raw.get("id"), raw.get("case")
    if not isinstance(label_id, str) or not label_id.strip() or len(label_id) > MAX_ID:
        fail(f"'id' must be a text of 1 to {MAX_ID} characters")
    if label_id in by_id:
        fail(f"duplicate label id {label_id!r} (first on line {by_id[label_id].line})")
    if not isinstance(case, str) or case not in case_ids:
        fail(f"unknown case id {case!r}: not a case of the golden set these labels are for")
    label = raw.get("label")
    if label not in LABELS:
        fail(f"'label' must be pass or fail, got {label!r}")
    answer = raw.get("answer")
    if not isinstance(answer, str) or not answer.strip():
        fail("'answer' must be the labelled answer's text")
    origin = raw.get("origin", "answer")
    if origin not in ORIGINS:
        fail(f"'origin' must be one of {', '.join(ORIGINS)}, got {origin!r}")
    if origin in ("variant", "written") and not str(raw.get("variant") or "").strip():
        fail("a variant or a written answer says what was tried in it ('variant')")
    evidence = _evidence(raw, by_id=by_id, case=case, fail=fail)
    verified = raw.get("verified", [])
    if not isinstance(verified, list) or not all(isinstance(figure, str) for figure in verified):
        fail("'verified' must be a list of figures")
    for key in ("question", "note", "variant"):
        if not isinstance(raw.get(key, ""), str):
            fail(f"'{key}' must be text")
    question = raw.get("question") or (by_id[raw["evidence_of"]].question if raw.get("evidence_of") else "")
    return LabelRow(line=number, id=label_id, case=case, question=question, answer=answer, evidence=evidence,
                    label=label, note=raw.get("note", "").strip(), origin=origin, variant=raw.get("variant", ""),
                    verified=list(verified))


def _evidence(raw: dict, *, by_id: dict[str, LabelRow], case: str, fail) -> list[dict]:
    """Return the line's evidence: its own list, or that of the earlier line `evidence_of` names."""
    if "evidence_of" in raw:
        if "evidence" in raw:
            fail("give 'evidence' or 'evidence_of', not both")
        source = by_id.get(raw["evidence_of"])
        if source is None:
            fail(f"'evidence_of' names {raw['evidence_of']!r}, which no earlier line has as its id")
        if source.case != case:
            fail(f"'evidence_of' names {source.id!r}, an answer to {source.case}, not to {case}")
        return source.evidence
    evidence = raw.get("evidence")
    if not isinstance(evidence, list) or not all(
            isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("text"), str)
            for item in evidence):
        fail("'evidence' must be a list of {\"id\", \"text\", …} items (or name 'evidence_of')")
    return evidence
