"""Print a golden set (its current or a given version) as JSONL on stdout."""

import json

from django.core.management.base import BaseCommand, CommandError

from evals.services import GoldenSetError, golden_export


class Command(BaseCommand):
    help = "Write golden set NAME as JSONL on stdout (current version, or --version N)."

    def create_parser(self, prog_name, subcommand, **kwargs):
        # `--version N` names a set version here, replacing Django's "show the program's version" flag.
        kwargs.setdefault("conflict_handler", "resolve")
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--version", dest="set_version", type=int, default=None)

    def handle(self, *args, name, set_version=None, **options):
        try:
            rows = golden_export(name=name, version=set_version)
        except GoldenSetError as exc:
            raise CommandError(str(exc)) from exc
        for row in rows:
            self.stdout.write(json.dumps(row, ensure_ascii=False))
