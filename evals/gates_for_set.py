"""Which gates hold a golden set, and the gate decision of a run started from the evals pages.

Precedence, for the `gate` command and for runs from the set's page alike: a set's own gates (edited on its
page) win; otherwise the gates file — the one passed with `--gates`, or for a run from the page the
repository's evals/fixtures/gates.toml. `gate --file-gates` ignores a set's own gates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from evals.gate_rules import GatesConfig, default_set_gates, evaluate, parse_gates, with_set_gates
from evals.models import EvalRun, GateDecision, GoldenSet
from evals.runner import run_baseline, run_compare, run_gate_report
from evals.services import gate_decision_record

REPOSITORY_GATES = "evals/fixtures/gates.toml"


@dataclass(frozen=True)
class SetGates:
    """The gates that hold one set, where they come from (as a gate decision names them) and their text."""

    config: GatesConfig
    own: bool
    source: str
    text: str


def repository_gates() -> tuple[GatesConfig, str]:
    """Return the repository's gates file (evals/fixtures/gates.toml) parsed, and its text."""
    text = (Path(settings.BASE_DIR) / REPOSITORY_GATES).read_text(encoding="utf-8")
    return parse_gates(text, source=REPOSITORY_GATES), text


def own_gates_source(golden_set: GoldenSet) -> str:
    return f"golden set “{golden_set.name}”: its own gates"


def set_gates(golden_set: GoldenSet, *, file_config: GatesConfig | None = None, file_text: str = "") -> SetGates:
    """Return the gates that hold `golden_set`: its own when it has them, else the gates file given (the
    repository's when none is given, without the listed must-pass ids of another set)."""
    if golden_set.gates is not None:
        base = file_config or repository_gates()[0]
        source = own_gates_source(golden_set)
        return SetGates(config=with_set_gates(base, golden_set.gates, source=source), own=True, source=source,
                        text=json.dumps(golden_set.gates, sort_keys=True, ensure_ascii=False))
    if file_config is not None:
        return SetGates(config=file_config, own=False, source=file_config.source, text=file_text)
    config, text = repository_gates()
    defaults = with_set_gates(config, default_set_gates(config, set_name=golden_set.name), source=REPOSITORY_GATES)
    return SetGates(config=defaults, own=False, source=REPOSITORY_GATES, text=text)


def set_gates_defaults(golden_set: GoldenSet) -> dict:
    """Return the gates a set's page shows before anyone edited them (from the repository's gates file)."""
    config, _ = repository_gates()
    return default_set_gates(config, set_name=golden_set.name)


def run_gate(*, run: EvalRun) -> GateDecision:
    """Decide go / iterate / block for a finished run with its set's gates and store the decision.

    With no_new_failures, the baseline is the set's latest earlier finished run (none for a first run: that
    check is then reported as skipped).
    """
    gates = set_gates(run.golden_set)
    base = run_baseline(head=run) if gates.config.no_new_failures else None
    comparison = run_compare(base=base, head=run) if base is not None else None
    newly_failing = comparison.newly_failing if comparison is not None else None
    outcome = evaluate(gates.config, run_gate_report(run), newly_failing=newly_failing)
    return gate_decision_record(run=run, gates_file=gates.source,
                                gates_text=gates.text, baseline=f"run {base.pk}" if base is not None else "",
                                outcome=outcome, newly_failing=newly_failing or [])
