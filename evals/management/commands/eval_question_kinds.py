"""python manage.py eval_question_kinds [FILE…] — how often the template writer reads a question's kind as labelled."""

from collections import Counter
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bot.document_answers import question_kind
from evals.golden import GoldenFileError, json_lines

DEFAULT_FILES = ("evals/fixtures/answers.jsonl", "evals/fixtures/answers_more.jsonl")


class Command(BaseCommand):
    help = ("Read the kind of every labelled question (rows with a `kind`: list, amount, duration, procedure, "
            "definition, condition) as the template writer reads it, and print per file and split how many match "
            "the label and which kinds were taken for which.")

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="*", metavar="FILE",
                            help=f"JSONL files of labelled questions; default {', '.join(DEFAULT_FILES)}")

    def handle(self, *args, files, **options):
        for name in files or [str(Path(settings.BASE_DIR) / f) for f in DEFAULT_FILES]:
            try:
                rows = [row for _number, row in json_lines(Path(name))]
            except (OSError, UnicodeDecodeError, GoldenFileError) as exc:
                raise CommandError(f"{name}: cannot read it as JSONL ({exc})") from exc
            labelled = [row for row in rows if row.get("kind") and row.get("query")]
            if not labelled:
                raise CommandError(f"{name}: no row with a query and a kind")
            for split in sorted({row.get("split", "") for row in labelled}):
                rows_of_split = [row for row in labelled if row.get("split", "") == split]
                misread = Counter((row["kind"], question_kind(row["query"])) for row in rows_of_split)
                right = sum(count for (label, read), count in misread.items() if label == read)
                wrong = ", ".join(f"{label} read as {read} {count}" for (label, read), count in misread.most_common()
                                  if label != read)
                where = f"{Path(name).name} {split or '(no split)'}"
                self.stdout.write(f"{where}: {right}/{len(rows_of_split)} kinds read as labelled"
                                  + (f"; {wrong}" if wrong else ""))
