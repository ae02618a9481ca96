"""The release gate: thresholds on an eval report → go / iterate / block. Pure: no Django.

A gates file (JSON, YAML or TOML, chosen by its suffix) names the golden file and, per metric, the
thresholds. Higher-is-better metrics use `block_below` / `iterate_below`; lower-is-better metrics
(e.g. `must_pass_failures`) use `block_above` / `iterate_above`. A metric whose report value is a
list counts its items. A metric with an interval (`{"value", "lower", "upper"}`, as the corrected
pass rate has) is judged on the pessimistic end by default — the LOWER bound for `*_below`
thresholds, the upper bound for `*_above` — unless the gate says `"judge_on": "value"`.

    {"golden": "evals/fixtures/golden.jsonl", "k": 5,
     "metrics": {"recall@5": {"block_below": 0.80, "iterate_below": 0.90},
                 "must_pass_failures": {"block_above": 0},
                 "corrected_pass_rate": {"block_below": 0.70, "iterate_below": 0.85, "optional": true}}}

A metric missing from the report blocks (a gate that cannot measure says no), unless the gate is
`"optional": true`, in which case it is reported as skipped. The same holds for a calibrated rate that
cannot be computed because no human label exists yet; one that the labels refuse (a judge no better
than chance) blocks even when optional.

Beyond thresholds, a gates file may name a golden SET to run (`golden_set`, imported from `golden`
when it does not exist yet), whether the run is `retrieval_only`, case ids that `must_pass` (each
one that fails — or is missing from the run — blocks), and `no_new_failures`: a case that passed
in the baseline run and fails now blocks. Without a baseline that check is reported as skipped.

Two rules hold whatever the gates file says, because they are what a customer would notice:
a must-pass case of the set (the report's `must_pass_failures`) that fails blocks — also when it
failed in the baseline too — and a baseline that holds a failing must-pass case is refused (it
would make that failure look normal): the gate then blocks and says why.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from enum import Enum

import yaml

_THRESHOLDS = ("block_below", "iterate_below", "block_above", "iterate_above")
_GATE_KEYS = set(_THRESHOLDS) | {"judge_on", "optional"}
_FILE_KEYS = {"golden", "k", "metrics", "golden_set", "retrieval_only", "must_pass", "no_new_failures", "labels"}
# What an eval run or an eval_retrieval report holds, besides recall@k: a gates file may gate these.
ANSWER_METRICS = frozenset({"corrected_pass_rate", "answered", "clarified", "grounded"})
REPORT_METRICS = ("mrr", "must_pass_failures", "hard_negative_wins", "failing", "corrected_pass_rate", "answered",
                  "clarified", "grounded", "cases")
LISTED_MUST_PASS = "must_pass (listed)"
FLAGGED_MUST_PASS = "must_pass (set)"
REFUSED_BASELINE = "baseline"
NEWLY_FAILING = "newly_failing"


class Decision(Enum):
    """Ordered by severity; the overall decision is the worst metric's."""

    GO = "go"
    ITERATE = "iterate"
    BLOCK = "block"
    SKIPPED = "skipped"

    @property
    def exit_code(self) -> int:
        return {Decision.GO: 0, Decision.SKIPPED: 0, Decision.ITERATE: 2, Decision.BLOCK: 1}[self]

    @property
    def severity(self) -> int:
        return {Decision.SKIPPED: 0, Decision.GO: 0, Decision.ITERATE: 1, Decision.BLOCK: 2}[self]


class GatesFileError(ValueError):
    """A gates file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class Gate:
    metric: str
    block_below: float | None = None
    iterate_below: float | None = None
    block_above: float | None = None
    iterate_above: float | None = None
    judge_on: str = "bound"  # "bound": the pessimistic end of an interval, if any; "value": the point
    optional: bool = False

    @property
    def higher_is_better(self) -> bool:
        return self.block_below is not None or self.iterate_below is not None

    def describe(self) -> tuple[str, str]:
        """Return the (iterate, block) thresholds as text, e.g. ('< 0.90', '< 0.80')."""
        sign, block, iterate = ("<", self.block_below, self.iterate_below) if self.higher_is_better \
            else (">", self.block_above, self.iterate_above)
        return (f"{sign} {_number(iterate)}" if iterate is not None else "—",
                f"{sign} {_number(block)}" if block is not None else "—")


@dataclass(frozen=True)
class GatesConfig:
    source: str
    gates: list[Gate]
    golden: str | None = None
    k: int = 5
    golden_set: str | None = None
    retrieval_only: bool | None = None  # None: decided by whether a model is configured
    must_pass: tuple[str, ...] = ()
    no_new_failures: bool = False
    labels: str | None = None  # a human-labels file imported and judged before the run (calibration)


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    decision: Decision
    value: float | None  # the number compared with the thresholds
    judged_on: str  # "value", "lower bound", "upper bound", "count" or "missing"
    detail: str = ""  # e.g. the failing must-pass case ids


@dataclass(frozen=True)
class GateReport:
    results: list[GateResult]
    decision: Decision = field(init=False)

    def __post_init__(self):
        worst = max((r.decision for r in self.results), key=lambda d: d.severity, default=Decision.GO)
        object.__setattr__(self, "decision", Decision.GO if worst is Decision.SKIPPED else worst)


def parse_gates(text: str, *, source: str) -> GatesConfig:
    """Read a gates file's text; the format follows the suffix of `source` (.json, .yaml/.yml, .toml)."""
    suffix = source.rsplit(".", 1)[-1].lower() if "." in source else ""
    try:
        if suffix in ("yaml", "yml"):
            raw = yaml.safe_load(text)
        elif suffix == "toml":
            raw = tomllib.loads(text)
        else:
            raw = json.loads(text)
    except (json.JSONDecodeError, yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        kind = {"yaml": "YAML", "yml": "YAML", "toml": "TOML"}.get(suffix, "JSON")
        raise GatesFileError(f"{source}: not valid {kind} ({_first_line(exc)})") from exc
    config = gates_from_mapping(raw, source=source)
    known = (f"recall@{config.k}", *REPORT_METRICS)
    for gate in config.gates:
        if gate.metric not in known:
            near = difflib.get_close_matches(gate.metric, known, n=1)
            hint = f" — did you mean {near[0]!r}?" if near else ""
            raise GatesFileError(f"{source}:{_line_of(text, gate.metric)}: metric {gate.metric!r} is not in any "
                                 f"report{hint} (a run reports {', '.join(known)}; recall@k follows 'k')")
    return config


def _line_of(text: str, name: str) -> int:
    """Return the number of the first line that names `name` as a key (1 when no line does)."""
    pattern = re.compile(rf"(^|[^\w@-]){re.escape(name)}($|[^\w@-])")
    return next((number for number, line in enumerate(text.splitlines(), start=1) if pattern.search(line)), 1)


def gates_from_mapping(raw, *, source: str) -> GatesConfig:
    """Validate a parsed gates file and return its gates."""
    def fail(problem: str):
        raise GatesFileError(f"{source}: {problem}")

    if not isinstance(raw, dict):
        fail("the top level must be an object with a 'metrics' mapping")
    unknown = set(raw) - _FILE_KEYS
    if unknown:
        fail(f"unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
             f"allowed: {', '.join(sorted(_FILE_KEYS))}")
    metrics = raw.get("metrics")
    if not isinstance(metrics, dict) or not metrics:
        fail("'metrics' must be a non-empty mapping of metric name → thresholds")
    golden = raw.get("golden")
    if golden is not None and (not isinstance(golden, str) or not golden.strip()):
        fail("'golden' must be a file path")
    k = raw.get("k", 5)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        fail(f"'k' must be a positive integer, got {k!r}")
    golden_set = raw.get("golden_set")
    if golden_set is not None and (not isinstance(golden_set, str) or not golden_set.strip()):
        fail("'golden_set' must be the name of a golden set")
    for key in ("retrieval_only", "no_new_failures"):
        if key in raw and not isinstance(raw[key], bool):
            fail(f"'{key}' must be true or false, got {raw[key]!r}")
    must_pass = raw.get("must_pass", [])
    if not isinstance(must_pass, list) or not all(isinstance(c, str) and c for c in must_pass):
        fail("'must_pass' must be a list of case ids")
    labels = raw.get("labels")
    if labels is not None and (not isinstance(labels, str) or not labels.strip()):
        fail("'labels' must be the path of a human-labels file")
    return GatesConfig(source=source, gates=[_gate(name, spec, fail) for name, spec in metrics.items()],
                       golden=golden, k=k, golden_set=golden_set, retrieval_only=raw.get("retrieval_only"),
                       must_pass=tuple(dict.fromkeys(must_pass)),
                       no_new_failures=raw.get("no_new_failures", False), labels=labels)


def _gate(name, spec, fail) -> Gate:
    where = f"metric {name!r}"
    if not isinstance(spec, dict):
        fail(f"{where}: thresholds must be a mapping, e.g. {{\"block_below\": 0.8}}")
    unknown = set(spec) - _GATE_KEYS
    if unknown:
        fail(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
             f"allowed: {', '.join(sorted(_GATE_KEYS))}")
    for key in _THRESHOLDS:
        value = spec.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not math.isfinite(value)):
            fail(f"{where}: {key} must be a number, got {value!r}")
    below = [key for key in ("block_below", "iterate_below") if spec.get(key) is not None]
    above = [key for key in ("block_above", "iterate_above") if spec.get(key) is not None]
    if below and above:
        fail(f"{where}: mixes *_below and *_above thresholds; a metric is either higher- or lower-is-better")
    if not below and not above:
        fail(f"{where}: needs at least one of {', '.join(_THRESHOLDS)}")
    if len(below) == 2 and spec["iterate_below"] < spec["block_below"]:
        fail(f"{where}: iterate_below ({spec['iterate_below']}) must be ≥ "
             f"block_below ({spec['block_below']})")
    if len(above) == 2 and spec["iterate_above"] > spec["block_above"]:
        fail(f"{where}: iterate_above ({spec['iterate_above']}) must be ≤ "
             f"block_above ({spec['block_above']})")
    judge_on = spec.get("judge_on", "bound")
    if judge_on not in ("bound", "value"):
        fail(f"{where}: judge_on must be 'bound' or 'value', got {judge_on!r}")
    optional = spec.get("optional", False)
    if not isinstance(optional, bool):
        fail(f"{where}: optional must be true or false, got {optional!r}")
    return Gate(metric=str(name), judge_on=judge_on, optional=optional,
                **{key: float(spec[key]) for key in _THRESHOLDS if spec.get(key) is not None})


def evaluate(config: GatesConfig, report: dict, *, newly_failing: list[str] | None = None,
             other_vectors: bool = False, baseline_must_pass: list[str] | None = None) -> GateReport:
    """Compare each gate with the report and return the per-metric and overall decisions.

    `newly_failing`: the case ids that passed in the baseline run and fail now (None: no baseline).
    `other_vectors`: the baseline's vectors were made by another build of the embedder (its fingerprint
    differs), so a case near a tie may flip without any change to the product: newly failing cases then
    iterate (reported, with why) instead of blocking. The thresholds and the must-pass cases still block.
    `baseline_must_pass`: the must-pass cases that fail in the baseline file; any refuses the baseline.
    """
    results = [_evaluate_gate(gate, report) for gate in config.gates]
    failing = report.get("must_pass_failures")
    gated = any(gate.metric == "must_pass_failures" and gate.block_above == 0 and not gate.optional
                for gate in config.gates)
    if isinstance(failing, list) and failing and not gated:
        results.append(_flagged_must_pass(failing))
    if config.must_pass:
        results.append(_listed_must_pass(config.must_pass, report))
    if baseline_must_pass:
        results.append(refused_baseline(baseline_must_pass))
    if newly_failing is not None or config.no_new_failures:
        results.append(_newly_failing(newly_failing, other_vectors=other_vectors))
    return GateReport(results)


def _flagged_must_pass(failing: list) -> GateResult:
    """Block on the failing must-pass cases of the set, whether or not they failed in the baseline too."""
    gate = Gate(metric=FLAGGED_MUST_PASS, block_above=0)
    case_ids = sorted(map(str, failing))
    return GateResult(gate, Decision.BLOCK, float(len(case_ids)), "count",
                      f"{', '.join(case_ids)} (a failing must-pass case always blocks, whatever the gates file or "
                      f"the baseline says)")


def refused_baseline(case_ids: list[str]) -> GateResult:
    """Block on a baseline that holds failing must-pass cases, naming them and what to do."""
    gate = Gate(metric=REFUSED_BASELINE, block_above=0)
    return GateResult(gate, Decision.BLOCK, float(len(case_ids)), "count",
                      f"refused: it holds failing must-pass case(s) {', '.join(case_ids)}, and a baseline may "
                      f"not (a must-pass failure is never the normal state); make them pass, then refresh it "
                      f"with make gate-baseline")


def must_pass_failing(*, cases: list[dict], listed: tuple[str, ...] = ()) -> list[str]:
    """Return the must-pass cases (flagged on the case or listed in the gates file) that fail among per-case
    rows ({"id", "failures", "must_pass"}), as a baseline file or a run holds them."""
    return sorted({str(row.get("id")) for row in cases
                   if row.get("failures") and (row.get("must_pass") or str(row.get("id")) in listed)})


def _listed_must_pass(case_ids: tuple[str, ...], report: dict) -> GateResult:
    gate = Gate(metric=LISTED_MUST_PASS, block_above=0)
    per_case = report.get("per_case") if isinstance(report.get("per_case"), list) else None
    failing = report.get("failing")
    if failing is None and per_case is not None:
        # An eval_retrieval report: a case fails when no hit document is in its top k.
        failing = [row.get("id") for row in per_case if row.get("failures") or row.get("first_hit_rank") is None]
    if not isinstance(failing, list):
        return GateResult(gate, Decision.BLOCK, None, "missing", "the report has no per-case results")
    present = report.get("case_ids")
    if present is None and per_case is not None:
        present = [row.get("id") for row in per_case]
    failing, present = set(failing), (set(present) if isinstance(present, list) else None)
    blocking = [f"{case} (not in the run)" if present is not None and case not in present else case
                for case in case_ids if case in failing or (present is not None and case not in present)]
    return GateResult(gate, Decision.BLOCK if blocking else Decision.GO, float(len(blocking)), "count",
                      ", ".join(blocking))


OTHER_VECTORS = ("the baseline's vectors come from another build of the embedder, so near-ties may flip: "
                 "reported, not blocking — refresh the baseline where the gate runs (make gate-baseline)")


def _newly_failing(case_ids: list[str] | None, *, other_vectors: bool = False) -> GateResult:
    gate = Gate(metric=NEWLY_FAILING, block_above=0)
    if case_ids is None:
        return GateResult(gate, Decision.SKIPPED, None, "missing", "no baseline run to compare with")
    if case_ids and other_vectors:
        return GateResult(gate, Decision.ITERATE, float(len(case_ids)), "count",
                          f"{', '.join(case_ids)} ({OTHER_VECTORS})")
    return GateResult(gate, Decision.BLOCK if case_ids else Decision.GO, float(len(case_ids)), "count",
                      ", ".join(case_ids))


def _evaluate_gate(gate: Gate, report: dict) -> GateResult:
    if report.get("retrieval_only") is True and gate.metric in ANSWER_METRICS:
        return GateResult(gate, Decision.SKIPPED, None, "missing",
                          "a retrieval-only run gives no answers to judge or count")
    if report.get(gate.metric) is None:
        decision = Decision.SKIPPED if gate.optional else Decision.BLOCK
        return GateResult(gate, decision, None, "missing", "not in the report")
    reported = report[gate.metric]
    if _uncalibrated(reported):
        # Nobody has labelled any answer yet: the rate is unknown, not refused. A judge that the labels show
        # to be no better than chance still blocks (it has labels).
        decision = Decision.SKIPPED if gate.optional else Decision.BLOCK
        return GateResult(gate, decision, None, "missing", f"not calibrated yet: {reported['error']}")
    value, judged_on, detail = _measure(gate, reported)
    if value is None:
        return GateResult(gate, Decision.BLOCK, None, "missing", detail)
    if gate.higher_is_better:
        decision = (Decision.BLOCK if gate.block_below is not None and value < gate.block_below
                    else Decision.ITERATE if gate.iterate_below is not None and value < gate.iterate_below
                    else Decision.GO)
    else:
        decision = (Decision.BLOCK if gate.block_above is not None and value > gate.block_above
                    else Decision.ITERATE if gate.iterate_above is not None and value > gate.iterate_above
                    else Decision.GO)
    return GateResult(gate, decision, value, judged_on, detail)


def _uncalibrated(reported) -> bool:
    """True for a calibrated metric that could not be computed because no human label exists yet."""
    return (isinstance(reported, dict) and bool(reported.get("error"))
            and reported.get("human_passes") == 0 and reported.get("human_fails") == 0)


def _measure(gate: Gate, reported) -> tuple[float | None, str, str]:
    """Return the number a gate compares, what it is, and a detail line."""
    if isinstance(reported, list):
        return float(len(reported)), "count", ", ".join(map(str, reported))
    if isinstance(reported, bool):
        return None, "missing", f"not a number: {reported!r}"
    if isinstance(reported, int | float):
        return float(reported), "value", ""
    if isinstance(reported, dict) and isinstance(reported.get("value"), int | float):
        bound = "lower" if gate.higher_is_better else "upper"
        point = float(reported["value"])
        if gate.judge_on == "bound" and isinstance(reported.get(bound), int | float):
            return float(reported[bound]), f"{bound} bound", f"point {_number(point)}, " \
                f"interval [{_number(reported.get('lower'))}, {_number(reported.get('upper'))}]"
        return point, "value", ""
    if isinstance(reported, dict) and reported.get("error"):
        return None, "missing", str(reported["error"])
    return None, "missing", f"not a number: {reported!r}"


def _number(value) -> str:
    return f"{value:.4g}" if isinstance(value, int | float) else str(value)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# --- a golden set's own gates -------------------------------------------------------------------------------------
# A set may carry its own gates, edited on its page and stored as a mapping of the gates-file keys that are about
# thresholds ({"k", "metrics", "must_pass", "no_new_failures"}). Until edited, a set is held to the repository's
# gates file; that file's listed must-pass ids are case ids of the set it names, so another set starts without them.

COUNT_METRICS = frozenset({"must_pass_failures", "hard_negative_wins", "failing"})
SET_GATE_KEYS = ("k", "metrics", "must_pass", "no_new_failures")
METRIC_LABELS = {"mrr": "MRR", "must_pass_failures": "Must-pass failures", "hard_negative_wins": "Hard-negative wins",
                 "failing": "Failing cases", "corrected_pass_rate": "Corrected pass rate", "answered": "Answered",
                 "clarified": "Asked to clarify", "grounded": "Grounded"}


def metric_label(metric: str) -> str:
    """Return a metric's name for people ('recall@5' → 'Recall@5', 'mrr' → 'MRR')."""
    return METRIC_LABELS.get(metric) or (metric[:1].upper() + metric[1:]).replace("_", " ")


@dataclass(frozen=True)
class ThresholdRow:
    """One metric's gate as the set's page edits it: iterate and block thresholds in the metric's direction."""

    metric: str
    higher_is_better: bool
    iterate: float | None = None
    block: float | None = None
    optional: bool = False
    judge_on: str = "bound"

    @property
    def label(self) -> str:
        return metric_label(self.metric)

    @property
    def is_count(self) -> bool:
        return self.metric in COUNT_METRICS

    @property
    def direction(self) -> str:
        return "below" if self.higher_is_better else "above"

    @property
    def iterate_text(self) -> str:
        return "" if self.iterate is None else f"{self.iterate:g}"

    @property
    def block_text(self) -> str:
        return "" if self.block is None else f"{self.block:g}"


def threshold_rows(config: GatesConfig) -> list[ThresholdRow]:
    """Return a gates config's metrics as editable rows."""
    rows = []
    for gate in config.gates:
        higher = gate.higher_is_better
        rows.append(ThresholdRow(metric=gate.metric, higher_is_better=higher,
                                 iterate=gate.iterate_below if higher else gate.iterate_above,
                                 block=gate.block_below if higher else gate.block_above,
                                 optional=gate.optional, judge_on=gate.judge_on))
    return rows


def set_gates_problems(*, rows: list[ThresholdRow], must_pass: list[str], case_ids: set[str]) -> list[str]:
    """Return what is wrong with a set's edited gates, one sentence each (empty: they can be saved).

    Rates (recall, MRR, the corrected pass rate…) take thresholds between 0 and 1, counts 0 or more; the
    iterate threshold is the milder one; at least one metric keeps a threshold; every must-pass id is a case
    of the set.
    """
    problems = []
    for row in rows:
        for kind, value in (("iterate", row.iterate), ("block", row.block)):
            if value is None:
                continue
            if not math.isfinite(value) or value < 0 or (not row.is_count and value > 1):
                scale = "counts of 0 or more" if row.is_count else "rates between 0 and 1"
                problems.append(f"{row.label}: thresholds are {scale}; the {kind} threshold {_number(value)} is not.")
        if row.iterate is not None and row.block is not None and math.isfinite(row.iterate) \
                and math.isfinite(row.block):
            if row.higher_is_better and row.iterate < row.block:
                problems.append(f"{row.label}: iterate below {_number(row.iterate)} must not be lower than block "
                                f"below {_number(row.block)} (iterate is the milder threshold).")
            if not row.higher_is_better and row.iterate > row.block:
                problems.append(f"{row.label}: iterate above {_number(row.iterate)} must not be higher than block "
                                f"above {_number(row.block)} (iterate is the milder threshold).")
    if not any(row.iterate is not None or row.block is not None for row in rows):
        problems.append("Keep at least one threshold: a gate without any would always say go.")
    unknown = [case for case in dict.fromkeys(must_pass) if case not in case_ids]
    if unknown:
        problems.append(f"Must-pass ids must be cases of this set; not in it: {', '.join(unknown)}.")
    return problems


def set_gates_mapping(*, rows: list[ThresholdRow], must_pass: list[str], no_new_failures: bool, k: int) -> dict:
    """Return the stored form of a set's gates: the metrics that keep a threshold, the must-pass ids, the flags."""
    metrics = {}
    for row in rows:
        if row.iterate is None and row.block is None:
            continue
        spec = {}
        if row.block is not None:
            spec[f"block_{row.direction}"] = row.block
        if row.iterate is not None:
            spec[f"iterate_{row.direction}"] = row.iterate
        if row.optional:
            spec["optional"] = True
        if row.judge_on != "bound":
            spec["judge_on"] = row.judge_on
        metrics[row.metric] = spec
    return {"k": k, "metrics": metrics, "must_pass": list(dict.fromkeys(must_pass)),
            "no_new_failures": no_new_failures}


def default_set_gates(config: GatesConfig, *, set_name: str) -> dict:
    """Return the gates a set is held to before anyone edits them: the file's thresholds and flags, and its
    listed must-pass ids only for the set the file names."""
    return set_gates_mapping(rows=threshold_rows(config),
                             must_pass=list(config.must_pass) if config.golden_set == set_name else [],
                             no_new_failures=config.no_new_failures, k=config.k)


def with_set_gates(config: GatesConfig, set_gates: dict, *, source: str) -> GatesConfig:
    """Return `config` (which set to run and how) held to a set's own gates instead of its own thresholds."""
    own = gates_from_mapping({key: set_gates[key] for key in SET_GATE_KEYS if key in set_gates}, source=source)
    return GatesConfig(source=source, gates=own.gates, golden=config.golden, k=config.k,
                       golden_set=config.golden_set, retrieval_only=config.retrieval_only,
                       must_pass=own.must_pass, no_new_failures=own.no_new_failures, labels=config.labels)
