"""Decide go / iterate / block from a gates file and an eval report or run: exit 0 go, 2 iterate, 1 block."""

import io
import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from core import clock
from evals.gate_baseline import BaselineFile, BaselineFileError, read_baseline_file
from evals.gate_rules import Decision, GatesFileError, evaluate, must_pass_failing, parse_gates
from evals.gates_for_set import set_gates
from evals.golden import GoldenFileError, read_golden_rows, stale_cases
from evals.human_labels import calibration_report, human_labels_import, judge_labelled
from evals.judge import get_judge
from evals.label_file import LabelFileError
from evals.management.commands.eval_run import golden_set_for_run
from evals.models import EvalRun, GoldenSet
from evals.runner import (
    EvalRunError,
    eval_run,
    run_baseline,
    run_cases_json,
    run_compare,
    run_compare_with_cases,
    run_gate_report,
    run_json,
    run_summary,
)
from evals.services import GoldenSetError, gate_decision_record, golden_export, golden_import
from kb.embeddings import embedder_fingerprint, get_embedder


@dataclass(frozen=True)
class Comparison:
    """What the run was compared with, and what the comparison found."""

    base: object = None  # an EvalRun, a BaselineFile, or None
    result: object = None  # answer_checks.RunComparison, or None
    other_vectors: bool = False
    base_must_pass: tuple[str, ...] = ()  # failing must-pass cases in a baseline file (refused)

    @property
    def newly_failing(self) -> list[str] | None:
        return self.result.newly_failing if self.result is not None else None


class Command(BaseCommand):
    help = (
        "Check an eval report or run against the thresholds of a gates file (JSON, YAML or TOML) and exit "
        "0 go, 2 iterate, 1 block. Without --report or --run: runs the gates file's golden_set through "
        "eval_run (or, for a gates file that names only a golden file, eval_retrieval), after importing and "
        "judging the human labels the file names (`labels`). A failing must-pass case always blocks. "
        "--baseline compares with an earlier run or a run file (the JSON of `eval_run --json`): a case that "
        "newly fails blocks, and a run file holding a failing must-pass case is refused (block). --save-run "
        "writes the gated run as a baseline file: exit 0 when written, 1 when refused (a failing must-pass "
        "case), whatever the decision. Every decision is stored (the run and set pages show the last one) and "
        "appended to GATE_RUN_LOG. A golden set with its own gates (edited on its page) is held to those, not "
        "to the file's thresholds, unless --file-gates is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("--gates", type=Path, required=True, help="gates file (.json, .yaml/.yml, .toml)")
        parser.add_argument("--report", type=Path,
                            help="the JSON of `eval_retrieval --json` (optionally with corrected_pass_rate)")
        parser.add_argument("--calibration", type=Path,
                            help='JSON merged into the report, e.g. {"corrected_pass_rate": {...}}')
        parser.add_argument("--run", type=int, metavar="RUN_ID", help="judge this finished eval run; run nothing")
        parser.add_argument("--save-run", type=Path, metavar="FILE",
                            help="write the gated run as a baseline file (the JSON of `eval_run --json`), "
                                 "unless a must-pass case fails in it")
        parser.add_argument("--baseline", metavar="RUN_ID|last|FILE",
                            help="compare with this run ('last': the latest earlier finished run of the set) or "
                                 "with a run file, the JSON that `eval_run --json` prints")
        parser.add_argument("--file-gates", action="store_true",
                            help="hold the run to the gates file's thresholds even when its golden set has its own")

    def handle(self, *args, gates, report=None, calibration=None, run=None, baseline=None, save_run=None,
               file_gates=False, **options):
        config, gates_text = self._read_gates(gates)
        if report and run:
            raise CommandError("give --report or --run, not both")
        if save_run is not None and (report or (run is None and not config.golden_set)):
            raise CommandError("--save-run writes a run: name a golden_set in the gates file or pass --run")
        if report and baseline:
            raise CommandError("--baseline compares runs; it cannot be used with --report")
        # A wrong id or an unreadable file is refused before anything runs.
        named_base = _named_baseline(baseline) if baseline and baseline != "last" else None
        head, payload, origin = self._report(config, report=report, run=run)
        if calibration:
            payload.update(_read_json(calibration, what="calibration"))
        config, gates_name, gates_text = self._chosen_gates(config, head=head, gates=gates, gates_text=gates_text,
                                                            file_gates=file_gates)
        comparison = self._compare(baseline, head=head, named_base=named_base, config=config) if baseline \
            else Comparison()
        outcome = evaluate(config, payload, newly_failing=comparison.newly_failing,
                           other_vectors=comparison.other_vectors, baseline_must_pass=list(comparison.base_must_pass))
        self._write_report(outcome, gates_name=gates_name, origin=origin, head=head, comparison=comparison)
        _append_run_log(gates=gates_name, config=config, payload=payload, head=head, comparison=comparison,
                        outcome=outcome)
        if head is not None:  # a saved report (--report) is recorded in the run log only
            gate_decision_record(run=head, gates_file=gates_name, gates_text=gates_text,
                                 baseline=_baseline_name(comparison.base) if comparison.base is not None else "",
                                 outcome=outcome, newly_failing=comparison.newly_failing or [])
        if save_run is not None:
            self._save_run(head, path=save_run, listed=config.must_pass)
            return
        if outcome.decision is not Decision.GO:
            raise SystemExit(outcome.decision.exit_code)

    def _read_gates(self, path: Path):
        """Return the gates file's config and its text (the text is hashed into the stored decision)."""
        if not path.is_file():
            raise CommandError(f"{path}: no such gates file")
        text = path.read_text(encoding="utf-8")
        try:
            return parse_gates(text, source=str(path)), text
        except GatesFileError as exc:
            raise CommandError(str(exc)) from exc

    def _report(self, config, *, report, run):
        """Return (the gated run or None, the report to gate, where the report comes from)."""
        if report:
            return None, _read_json(report, what="report"), str(report)
        if run is not None:
            head = _finished_run(run, what="--run")
            return head, run_gate_report(head), f"eval run {head.pk}"
        if config.golden_set:
            head = self._eval_run(config)
            return head, run_gate_report(head), f"eval run {head.pk} of {config.golden_set}"
        return None, self._run_eval(config), f"eval_retrieval on {config.golden}"

    def _chosen_gates(self, config, *, head, gates, gates_text, file_gates):
        """Return the gates that hold the run: its set's own when it has them (unless --file-gates), else the file's."""
        if head is None or file_gates:
            return config, str(gates), gates_text
        try:
            chosen = set_gates(head.golden_set, file_config=config, file_text=gates_text)
        except GatesFileError as exc:
            raise CommandError(f"{exc} — save the set's gates again on its page, or pass --file-gates") from exc
        if not chosen.own:
            return config, str(gates), gates_text
        edited = head.golden_set.gates_edited_at
        self.stdout.write(f"golden set {head.golden_set.name} has its own gates"
                          f"{f' (edited {edited:%Y-%m-%d %H:%M})' if edited else ''}: they replace the "
                          f"thresholds, must-pass ids and no_new_failures of {gates} (--file-gates to "
                          f"use the file's)")
        return chosen.config, chosen.source, chosen.text

    def _run_eval(self, config) -> dict:
        if not config.golden:
            raise CommandError(f"{config.source}: names no 'golden' file or 'golden_set'; add one or pass --report")
        golden = _repo_path(config.golden)
        out = io.StringIO()
        try:
            call_command("eval_retrieval", "--golden", str(golden), "--k", str(config.k), "--json",
                         stdout=out)
        except CommandError as exc:
            raise CommandError(f"{config.source}: golden file {config.golden}: {exc}") from exc
        return json.loads(out.getvalue())

    def _eval_run(self, config) -> EvalRun:
        """Run the gates file's golden set (imported from its golden file the first time), its labels judged."""
        if not GoldenSet.objects.filter(name=config.golden_set).exists():
            if not config.golden:
                raise CommandError(f"{config.source}: no golden set named {config.golden_set!r} and no "
                                   f"'golden' file to import it from")
            try:
                version = golden_import(name=config.golden_set, path=_repo_path(config.golden))
            except GoldenFileError as exc:
                raise CommandError(f"{config.source}: {exc}") from exc
            self.stdout.write(f"imported {config.golden} as golden set {config.golden_set} "
                              f"v{version.number} ({len(version.snapshot)} cases)")
        elif config.golden:
            self._warn_if_stale(config)
        golden_set = golden_set_for_run(config.golden_set)
        retrieval_only = config.retrieval_only
        if retrieval_only is None:
            retrieval_only = not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL)
        if config.labels and not retrieval_only:
            self._calibrate(config, golden_set=golden_set)
        try:
            return eval_run(golden_set=golden_set, retrieval_only=retrieval_only, k=config.k)
        except (EvalRunError, GoldenSetError) as exc:
            raise CommandError(str(exc)) from exc

    def _warn_if_stale(self, config) -> None:
        """Say so when the set in the database is not the golden file the gates name (it is run as it is)."""
        try:
            rows = read_golden_rows(_repo_path(config.golden))
        except GoldenFileError:
            return
        differing = stale_cases(golden_export(name=config.golden_set), rows)
        if differing:
            shown = ", ".join(differing[:8]) + (" …" if len(differing) > 8 else "")
            self.stdout.write(f"golden set {config.golden_set} differs from {config.golden} in {len(differing)} "
                              f"case(s) ({shown}): it runs as the database holds it; `manage.py golden_import "
                              f"{config.golden_set} {config.golden}` brings it in line")

    def _calibrate(self, config, *, golden_set: GoldenSet) -> None:
        """Import the human labels the gates file names (once) and judge them with the run's judge."""
        try:
            imported = human_labels_import(path=_repo_path(config.labels), golden_set=golden_set,
                                           shown=config.labels)
        except LabelFileError as exc:
            raise CommandError(f"{config.source}: {exc}") from exc
        judge = get_judge()
        judged = judge_labelled(judge=judge, limit=10_000)
        self.stdout.write(f"human labels {config.labels}: {imported.summary}; {judged} judged by {judge.version}")
        figures = []
        for split in ("dev", "test"):
            report = calibration_report(judge_version=judge.version, split=split, purpose=f"gate, {config.source}")
            figures.append(f"{split} " + (f"TPR {report['tpr']:.3f} ({report['true_passes']}/{report['human_passes']}) "
                                          f"TNR {report['tnr']:.3f} ({report['true_fails']}/{report['human_fails']})"
                                          if report["tpr"] is not None else report.get("error", "not computable")))
        read = report.get("test_read")
        if read:
            figures.append("the test split's first read for this version (final)" if read["final"] else
                           f"test read {read['reads']} for this version, not final (first: {read['first_at']}, "
                           f"{read['first_purpose']}: TPR {read['first_tpr']}, TNR {read['first_tnr']})")
        self.stdout.write(f"judge {judge.version} against the labels: {' · '.join(figures)}")

    def _compare(self, baseline: str, *, head, named_base, config) -> Comparison:
        """Compare the run with its baseline: a run ('last' or an id) or a run file (refused when it holds a
        failing must-pass case)."""
        if head is None:
            raise CommandError("--baseline needs a run: name a golden_set in the gates file or pass --run")
        if baseline == "last":
            base = run_baseline(head=head)
            if base is None:
                self.stdout.write(f"no earlier finished run of {head.golden_set.name}; nothing to compare with")
                return Comparison()
            return Comparison(base=base, result=run_compare(base=base, head=head))
        if not isinstance(named_base, BaselineFile):
            if named_base.pk == head.pk:
                raise CommandError(f"--baseline {named_base.pk} is the run being gated")
            if named_base.golden_set_id != head.golden_set_id:
                raise CommandError(f"baseline run {named_base.pk} is of golden set {named_base.golden_set.name!r}, "
                                   f"not {head.golden_set.name!r}")
            return Comparison(base=named_base, result=run_compare(base=named_base, head=head))
        if named_base.golden_set and named_base.golden_set != head.golden_set.name:
            raise CommandError(f"baseline file {named_base.path} is a run of golden set {named_base.golden_set!r}, "
                               f"not {head.golden_set.name!r}")
        result = run_compare_with_cases(base=named_base.failures, base_retrieval_only=named_base.retrieval_only,
                                        head=head)
        here = embedder_fingerprint(get_embedder())
        other_vectors = bool(named_base.embedder_fingerprint) and named_base.embedder_fingerprint != here
        if other_vectors:
            self.stdout.write(f"baseline {named_base.path} was made by another build of the embedder (fingerprint "
                              f"{named_base.embedder_fingerprint}, here {here}): cases that flip are reported, not "
                              "blocking; the thresholds and must-pass cases still hold")
        return Comparison(base=named_base, result=result, other_vectors=other_vectors,
                          base_must_pass=tuple(named_base.must_pass_failing(listed=config.must_pass)))

    def _write_report(self, outcome, *, gates_name, origin, head, comparison) -> None:
        self.stdout.write(f"gates {gates_name} · report: {origin}")
        if head is not None:
            self.stdout.write(run_summary(head))
        rows = [("metric", "value", "judged on", "iterate if", "block if", "verdict")]
        for result in outcome.results:
            iterate, block = result.gate.describe()
            value = "—" if result.value is None else f"{result.value:.4g}"
            rows.append((result.gate.metric, value, result.judged_on, iterate, block, result.decision.value))
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        for result in outcome.results:
            if result.detail:
                self.stdout.write(f"  {result.gate.metric}: {result.detail}")
        if comparison.result is not None:
            scope = " (retrieval failures only: one run is retrieval-only)" \
                if comparison.result.scope == "retrieval" else ""
            self.stdout.write(f"baseline {_baseline_name(comparison.base)}{scope}: newly failing "
                              f"{', '.join(comparison.result.newly_failing) or 'none'} · newly passing "
                              f"{', '.join(comparison.result.newly_passing) or 'none'}")
        self.stdout.write(f"decision: {outcome.decision.value} (exit {outcome.decision.exit_code})")

    def _save_run(self, head: EvalRun, *, path: Path, listed: tuple[str, ...]) -> None:
        """Write the run as a baseline file, unless a must-pass case fails in it (a CommandError then)."""
        failing = must_pass_failing(cases=run_cases_json(head), listed=listed)
        if failing:
            raise CommandError(f"{path} not written: must-pass case(s) {', '.join(failing)} fail in run {head.pk}, "
                               f"and a baseline may not hold a failing must-pass case — make them pass first")
        located = _repo_path(str(path))
        located.write_text(json.dumps(run_json(head), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        self.stdout.write(f"wrote run {head.pk} to {path}")


def _named_baseline(baseline: str):
    """Return the run or run file --baseline names; a CommandError before anything runs otherwise."""
    if baseline.isdigit():
        return _finished_run(int(baseline), what="--baseline")
    try:
        return read_baseline_file(_repo_path(baseline), shown=Path(baseline))
    except BaselineFileError as exc:
        raise CommandError(str(exc)) from exc


def _baseline_name(base) -> str:
    return f"file {base.path}" if isinstance(base, BaselineFile) else f"run {base.pk}"


def _repo_path(name: str) -> Path:
    path = Path(name)
    return path if path.is_absolute() else Path(settings.BASE_DIR) / path


def _finished_run(run_id: int, *, what: str) -> EvalRun:
    run = EvalRun.objects.select_related("golden_set").filter(pk=run_id).first()
    if run is None:
        raise CommandError(f"{what}: no eval run {run_id}")
    if run.status != EvalRun.Status.DONE:
        raise CommandError(f"{what}: eval run {run_id} is {run.status}, not done")
    return run


def _append_run_log(*, gates, config, payload, head, comparison, outcome) -> None:
    """Append one JSON line describing this gate decision to settings.GATE_RUN_LOG."""
    k = head.k if head is not None else payload.get("k", config.k)
    corrected = payload.get("corrected_pass_rate")
    base = comparison.base
    line = {
        "timestamp": clock.now().isoformat(timespec="seconds"),
        "gates": str(gates),
        "decision": outcome.decision.value,
        "exit_code": outcome.decision.exit_code,
        "run": head.pk if head is not None else None,
        "baseline": (str(base.path) if isinstance(base, BaselineFile) else base.pk) if base is not None else None,
        "dataset": {"golden_set": head.golden_set.name, "version": head.golden_version}
        if head is not None else {"golden": payload.get("golden") or config.golden,
                                  "version": payload.get("golden_version")},
        "retrieval_only": head.retrieval_only if head is not None else None,
        "prompt": {"version": head.prompt_version, "model": head.model} if head is not None else None,
        "index": {"version": head.index_version, "embedding_model": head.embedding_model} if head is not None
        else None,
        "judge": {"version": head.judge_version, "model": head.judge_model}
        if head is not None and head.judge_version else None,
        f"recall@{k}": payload.get(f"recall@{k}"),
        "mrr": payload.get("mrr"),
        "corrected_pass_rate": ({key: corrected.get(key) for key in ("value", "lower", "upper", "observed", "error")
                                 if key in corrected} if isinstance(corrected, dict) else corrected),
        "must_pass_failures": payload.get("must_pass_failures"),
        "newly_failing": comparison.newly_failing,
        "gates_failed": [r.gate.metric for r in outcome.results if r.decision in (Decision.BLOCK, Decision.ITERATE)],
    }
    path = Path(settings.GATE_RUN_LOG)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as log:
        log.write(json.dumps(line, ensure_ascii=False) + "\n")


def _read_json(path: Path, *, what: str) -> dict:
    if not path.is_file():
        raise CommandError(f"{path}: no such {what} file")
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path}: the {what} is not valid JSON ({exc.msg}, line {exc.lineno})") from exc
    if not isinstance(payload, dict):
        raise CommandError(f"{path}: the {what} must be a JSON object")
    return payload
