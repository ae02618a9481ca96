"""Import Markdown/HTML knowledge-base files; re-embed only what changed."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from kb.embeddings import get_embedder
from kb.services import KnowledgeBaseError, documents_import


class Command(BaseCommand):
    help = "Import a Markdown/HTML file or folder into the knowledge base (slug: front matter or file stem)."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--no-progress", action="store_true", help="Do not draw a progress bar.")

    def handle(self, *args, paths, no_progress=False, **options):
        bar = None

        def on_planned(total):
            nonlocal bar
            bar = tqdm(total=total, unit="chunk", desc="embedding", disable=no_progress or total < 20,
                       file=self.stderr._out)

        try:
            report = documents_import(
                paths=paths, embedder=get_embedder(), on_planned=on_planned,
                progress=lambda n: bar.update(n) if bar else None,
            )
        except KnowledgeBaseError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            if bar:
                bar.close()
        self.stdout.write(
            f"Imported: {len(report.created)} new, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged documents; {report.chunks_embedded} chunks embedded, "
            f"{report.chunks_reused} reused; index version {report.index_version}."
        )
