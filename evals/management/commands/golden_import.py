"""Import a JSONL golden file into a named golden set (all or nothing); the set gets a new version."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evals.golden import GoldenFileError
from evals.services import GoldenSetError, golden_import


class Command(BaseCommand):
    help = "Replace the cases of golden set NAME with the rows of a JSONL FILE; prints the new version."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("file", type=Path)

    def handle(self, *args, name, file, **options):
        try:
            version = golden_import(name=name, path=file)
        except (GoldenFileError, GoldenSetError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"golden set {name}: {len(version.snapshot)} cases, version {version.number}")
