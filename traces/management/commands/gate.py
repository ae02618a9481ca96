"""Decide go / iterate / block from a gates file and an eval report: exit 0 go, 2 iterate, 1 block."""

import io
import json
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from traces.gates import Decision, GatesFileError, evaluate, parse_gates


class Command(BaseCommand):
    help = (
        "Check an eval report against the thresholds of a gates file (JSON, YAML or TOML) and exit "
        "0 go, 2 iterate, 1 block. Without --report, runs eval_retrieval on the gates file's golden set."
    )

    def add_arguments(self, parser):
        parser.add_argument("--gates", type=Path, required=True, help="gates file (.json, .yaml/.yml, .toml)")
        parser.add_argument("--report", type=Path,
                            help="the JSON of `eval_retrieval --json` (optionally with corrected_pass_rate)")
        parser.add_argument("--calibration", type=Path,
                            help='JSON merged into the report, e.g. {"corrected_pass_rate": {...}}')

    def handle(self, *args, gates, report=None, calibration=None, **options):
        config = self._read_gates(gates)
        if report:
            payload, origin = _read_json(report, what="report"), str(report)
        else:
            payload, origin = self._run_eval(config), f"eval_retrieval on {config.golden}"
        if calibration:
            payload.update(_read_json(calibration, what="calibration"))

        outcome = evaluate(config, payload)
        self.stdout.write(f"gates {gates} · report: {origin}")
        self._write_table(outcome)
        self.stdout.write(f"decision: {outcome.decision.value} (exit {outcome.decision.exit_code})")
        if outcome.decision is not Decision.GO:
            raise SystemExit(outcome.decision.exit_code)

    def _read_gates(self, path: Path):
        if not path.is_file():
            raise CommandError(f"{path}: no such gates file")
        try:
            return parse_gates(path.read_text(encoding="utf-8"), source=str(path))
        except GatesFileError as exc:
            raise CommandError(str(exc)) from exc

    def _run_eval(self, config) -> dict:
        if not config.golden:
            raise CommandError(f"{config.source}: names no 'golden' file; add one or pass --report")
        golden = Path(config.golden)
        golden = golden if golden.is_absolute() else Path(settings.BASE_DIR) / golden
        out = io.StringIO()
        try:
            call_command("eval_retrieval", "--golden", str(golden), "--k", str(config.k), "--json",
                         stdout=out)
        except CommandError as exc:
            raise CommandError(f"{config.source}: golden file {config.golden}: {exc}") from exc
        return json.loads(out.getvalue())

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
