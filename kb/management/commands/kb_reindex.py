"""Re-embed every chunk with the configured embedder (after changing the embedding model)."""

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from kb.embeddings import EmbeddingError, get_embedder
from kb.models import Chunk
from kb.services import chunks_reembed


class Command(BaseCommand):
    help = "Re-embed all chunks with the configured model; records the model name and dimension."

    def add_arguments(self, parser):
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, no_progress=False, **options):
        embedder = get_embedder()
        total = Chunk.objects.count()
        with tqdm(total=total, unit="chunk", desc="re-embedding", disable=no_progress,
                  file=self.stderr._out) as bar:
            try:
                space = chunks_reembed(embedder=embedder, progress=bar.update)
            except EmbeddingError as exc:
                raise CommandError(f"{exc}; nothing was changed") from exc
        self.stdout.write(f"Re-embedded {total} chunks with {space}.")
