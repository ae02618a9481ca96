"""Decide go / iterate / block from a gates file and an eval report or run: exit 0 go, 2 iterate, 1 block."""

import datetime as dt
import io
import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from evals.gate_rules import Decision, GatesFileError, evaluate, parse_gates
from evals.gates_for_set import set_gates
from evals.runner import run_gate_report
from evals.services import GoldenSetError


class Command(BaseCommand):
    help = (
        "Check an eval report or run against the thresholds of a gates file (JSON, YAML or TOML) and exit "
        "0 go, 2 iterate, 1 block. Without --report or --run: runs the gates file's golden_set through "
        "eval_run (or, for a gates file that names only a golden file, eval_retrieval). --baseline compares "
        "with an earlier run or a run file (the JSON of `eval_run --json`): a case that newly fails blocks. "
        "Every decision is stored (the run and set pages show the last one) and appended to GATE_RUN_LOG. "
        "A golden set with its own gates (edited on its page) is held to those, not to the file's thresholds, "
        "unless --file-gates is given."
    )

    def add_arguments(self, parser):
        parser.add_argument("--gates", type=Path, required=True, help="gates file (.json, .yaml/.yml, .toml)")
        parser.add_argument("--report", type=Path,
                            help="the JSON of `eval_retrieval --json` (optionally with corrected_pass_rate)")
        parser.add_argument("--calibration", type=Path,
                            help='JSON merged into the report, e.g. {"corrected_pass_rate": {...}}')
        parser.add_argument("--run", type=int, metavar="RUN_ID", help="judge this finished eval run; run nothing")
        parser.add_argument("--save-run", type=Path, metavar="FILE",
                            help="also write the gated run as a baseline file (the JSON of `eval_run --json`)")
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
        head = named_base = None
        if baseline and baseline != "last":
            # A wrong id or an unreadable file is refused before anything runs.
            named_base = (_finished_run(int(baseline), what="--baseline") if baseline.isdigit()
                          else _baseline_file(Path(baseline)))
        if report:
            if baseline:
                raise CommandError("--baseline compares runs; it cannot be used with --report")
            payload, origin = _read_json(report, what="report"), str(report)
        elif run is not None:
            head = _finished_run(run, what="--run")
            payload, origin = run_gate_report(head), f"eval run {head.pk}"
        elif config.golden_set:
            head = self._eval_run(config)
            payload, origin = run_gate_report(head), f"eval run {head.pk} of {config.golden_set}"
        else:
            payload, origin = self._run_eval(config), f"eval_retrieval on {config.golden}"
        if calibration:
            payload.update(_read_json(calibration, what="calibration"))
        gates_name = str(gates)
        if head is not None and not file_gates:
            try:
                chosen = set_gates(head.golden_set, file_config=config, file_text=gates_text)
            except GatesFileError as exc:
                raise CommandError(f"{exc} — save the set's gates again on its page, or pass --file-gates") from exc
            if chosen.own:
                config, gates_name, gates_text = chosen.config, chosen.source, chosen.text
                edited = head.golden_set.gates_edited_at
                self.stdout.write(f"golden set {head.golden_set.name} has its own gates"
                                  f"{f' (edited {edited:%Y-%m-%d %H:%M})' if edited else ''}: they replace the "
                                  f"thresholds, must-pass ids and no_new_failures of {gates} (--file-gates to "
                                  f"use the file's)")

        base = self._baseline(baseline, head, named_base) if baseline else None
        comparison, other_vectors = None, False
        if isinstance(base, BaselineFile):
            from evals.runner import run_compare_with_cases
            from kb.embeddings import embedder_fingerprint, get_embedder

            comparison = run_compare_with_cases(base=base.failures, base_retrieval_only=base.retrieval_only,
                                                head=head)
            here = embedder_fingerprint(get_embedder())
            other_vectors = bool(base.embedder_fingerprint) and base.embedder_fingerprint != here
            if other_vectors:
                self.stdout.write(f"baseline {base.path} was made by another build of the embedder (fingerprint "
                                  f"{base.embedder_fingerprint}, here {here}): cases that flip are reported, not "
                                  "blocking; the thresholds and must-pass cases still hold")
        elif base is not None:
            from evals.runner import run_compare

            comparison = run_compare(base=base, head=head)
        outcome = evaluate(config, payload, newly_failing=comparison.newly_failing if comparison else None,
                           other_vectors=other_vectors)

        self.stdout.write(f"gates {gates_name} · report: {origin}")
        if head is not None:
            from evals.runner import run_summary

            self.stdout.write(run_summary(head))
        self._write_table(outcome)
        if comparison is not None:
            scope = " (retrieval failures only: one run is retrieval-only)" if comparison.scope == "retrieval" else ""
            self.stdout.write(f"baseline {_baseline_name(base)}{scope}: newly failing "
                              f"{', '.join(comparison.newly_failing) or 'none'} · newly passing "
                              f"{', '.join(comparison.newly_passing) or 'none'}")
        self.stdout.write(f"decision: {outcome.decision.value} (exit {outcome.decision.exit_code})")
        _append_run_log(gates=gates_name, config=config, payload=payload, head=head, base=base, comparison=comparison,
                        outcome=outcome)
        if save_run is not None:
            from evals.runner import run_json

            path = _repo_path(str(save_run))
            path.write_text(json.dumps(run_json(head), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
            self.stdout.write(f"wrote run {head.pk} to {save_run}")
        from evals.services import gate_decision_record

        if head is not None:  # a saved report (--report) is recorded in the run log only
            gate_decision_record(run=head, gates_file=gates_name,
                                 gates_text=gates_text,
                                 baseline=_baseline_name(base) if base is not None else "",
                                 outcome=outcome, newly_failing=comparison.newly_failing if comparison else [])
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

    def _eval_run(self, config):
        """Run the gates file's golden set (imported from its golden file the first time)."""
        from evals.golden import GoldenFileError
        from evals.models import GoldenSet
        from evals.runner import EvalRunError, eval_run
        from evals.services import golden_import

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
        from evals.management.commands.eval_run import golden_set_for_run

        golden_set = golden_set_for_run(config.golden_set)
        retrieval_only = config.retrieval_only
        if retrieval_only is None:
            retrieval_only = not (settings.OPENAI_API_KEY or settings.OPENAI_BASE_URL)
        try:
            return eval_run(golden_set=golden_set, retrieval_only=retrieval_only, k=config.k)
        except (EvalRunError, GoldenSetError) as exc:
            raise CommandError(str(exc)) from exc

    def _baseline(self, baseline: str, head, named_base):
        from evals.runner import run_baseline

        if head is None:
            raise CommandError("--baseline needs a run: name a golden_set in the gates file or pass --run")
        if baseline == "last":
            base = run_baseline(head=head)
            if base is None:
                self.stdout.write(f"no earlier finished run of {head.golden_set.name}; nothing to compare with")
            return base
        base = named_base
        if isinstance(base, BaselineFile):
            if base.golden_set and base.golden_set != head.golden_set.name:
                raise CommandError(f"baseline file {base.path} is a run of golden set {base.golden_set!r}, "
                                   f"not {head.golden_set.name!r}")
            return base
        if base.pk == head.pk:
            raise CommandError(f"--baseline {base.pk} is the run being gated")
        if base.golden_set_id != head.golden_set_id:
            raise CommandError(f"baseline run {base.pk} is of golden set {base.golden_set.name!r}, "
                               f"not {head.golden_set.name!r}")
        return base

    def _write_table(self, outcome) -> None:
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


@dataclass(frozen=True)
class BaselineFile:
    """A run saved as the JSON of `eval_run --json`: which cases failed, and how."""

    path: Path
    golden_set: str
    retrieval_only: bool
    failures: dict[str, list[str]]
    embedder_fingerprint: str = ""  # empty: written before runs recorded it (compared as if alike)


def _baseline_file(path: Path) -> BaselineFile:
    """Read a run file for --baseline; a CommandError that says what is wrong with it otherwise."""
    located = _repo_path(str(path))
    if not located.is_file():
        raise CommandError(f"--baseline must be a run id, 'last' or a run file; {path} is none of them")
    payload = _read_json(located, what="baseline run")
    cases = payload.get("per_case")
    if not isinstance(cases, list) or not all(
            isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("failures"), list)
            for row in cases):
        raise CommandError(f"{path}: a baseline run file needs 'per_case', a list of {{\"id\", \"failures\"}} "
                           f"rows — write it with `manage.py eval_run --golden NAME --json > {path}`")
    retrieval_only = payload.get("retrieval_only", False)
    if not isinstance(retrieval_only, bool):
        raise CommandError(f"{path}: 'retrieval_only' must be true or false")
    return BaselineFile(path=path, golden_set=str(payload.get("golden_set") or ""), retrieval_only=retrieval_only,
                        failures={row["id"]: [str(f) for f in row["failures"]] for row in cases},
                        embedder_fingerprint=str(payload.get("embedder_fingerprint") or ""))


def _baseline_name(base) -> str:
    return f"file {base.path}" if isinstance(base, BaselineFile) else f"run {base.pk}"


def _repo_path(name: str) -> Path:
    path = Path(name)
    return path if path.is_absolute() else Path(settings.BASE_DIR) / path


def _finished_run(run_id: int, *, what: str):
    from evals.models import EvalRun

    run = EvalRun.objects.select_related("golden_set").filter(pk=run_id).first()
    if run is None:
        raise CommandError(f"{what}: no eval run {run_id}")
    if run.status != EvalRun.Status.DONE:
        raise CommandError(f"{what}: eval run {run_id} is {run.status}, not done")
    return run


def _append_run_log(*, gates, config, payload, head, base, comparison, outcome) -> None:
    """Append one JSON line describing this gate decision to settings.GATE_RUN_LOG."""
    k = head.k if head is not None else payload.get("k", config.k)
    corrected = payload.get("corrected_pass_rate")
    line = {
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
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
        "newly_failing": comparison.newly_failing if comparison is not None else None,
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
