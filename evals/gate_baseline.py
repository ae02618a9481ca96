"""A baseline run file (the JSON that `eval_run --json` prints): which cases failed, which are must-pass. Pure.

The release gate compares a run with one. A baseline is the state the product is held to, so it may not hold
a failing must-pass case: that failure would look normal to every later gate. `make gate-baseline` refuses to
write such a file and the gate refuses to compare with one (gate_rules.refused_baseline).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evals.gate_rules import must_pass_failing


class BaselineFileError(ValueError):
    """A baseline file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class BaselineFile:
    """A run saved as the JSON of `eval_run --json`: which cases failed, and how."""

    path: Path
    golden_set: str
    retrieval_only: bool
    failures: dict[str, list[str]]
    must_pass: frozenset[str] = frozenset()  # the cases flagged must-pass in the run
    embedder_fingerprint: str = ""  # empty: written before runs recorded it (compared as if alike)

    def must_pass_failing(self, *, listed: tuple[str, ...] = ()) -> list[str]:
        """Return its failing must-pass cases: flagged in the run, or listed in the gates file."""
        rows = [{"id": case, "failures": failures, "must_pass": case in self.must_pass}
                for case, failures in self.failures.items()]
        return must_pass_failing(cases=rows, listed=listed)


def read_baseline_file(path: Path, *, shown: Path | None = None) -> BaselineFile:
    """Read a run file for --baseline; raise BaselineFileError saying what is wrong with it otherwise.

    `shown` is the path as the person gave it (the messages and the stored decision name it).
    """
    shown = shown or path
    if not path.is_file():
        raise BaselineFileError(f"--baseline must be a run id, 'last' or a run file; {shown} is none of them")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BaselineFileError(f"{shown}: the baseline run is not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(payload, dict):
        raise BaselineFileError(f"{shown}: the baseline run must be a JSON object")
    cases = payload.get("per_case")
    if not isinstance(cases, list) or not all(
            isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("failures"), list)
            for row in cases):
        raise BaselineFileError(f"{shown}: a baseline run file needs 'per_case', a list of {{\"id\", \"failures\"}} "
                                f"rows — write it with `manage.py eval_run --golden NAME --json > {shown}`")
    retrieval_only = payload.get("retrieval_only", False)
    if not isinstance(retrieval_only, bool):
        raise BaselineFileError(f"{shown}: 'retrieval_only' must be true or false")
    return BaselineFile(path=shown, golden_set=str(payload.get("golden_set") or ""), retrieval_only=retrieval_only,
                        failures={row["id"]: [str(f) for f in row["failures"]] for row in cases},
                        must_pass=frozenset(row["id"] for row in cases if row.get("must_pass") is True),
                        embedder_fingerprint=str(payload.get("embedder_fingerprint") or ""))
