"""Load the bot's models once and fill their on-disk caches, so processes started after this load, not compute."""

from django.core.management.base import BaseCommand

from bot.warmup import warm


class Command(BaseCommand):
    help = ("Load the embedder, the router (its examples' vectors cached on disk), the search and the billing "
            "client once; print the seconds each took. `make serve` and `make worker` run it first.")

    def handle(self, *args, **options):
        timings = warm(report=self.stdout.write)
        self.stdout.write(f"warm: {sum(timings.values()):.2f} s in all")
