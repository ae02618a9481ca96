"""Queue again the turns of inbound messages that no turn answered (what Celery beat does every minute)."""

import datetime as dt

from django.conf import settings
from django.core.management.base import BaseCommand

from bot.requeue import unanswered_messages, unanswered_requeue
from bot.tasks import handle_inbound
from core import clock


class Command(BaseCommand):
    help = ("Queue the bot turn of every inbound message older than --min-age-s (and younger than --max-age-h) "
            "that no turn answered: stored while the broker was down, or whose turn crashed.")

    def add_arguments(self, parser):
        parser.add_argument("--min-age-s", type=int, default=settings.BOT_REQUEUE_AFTER_S)
        parser.add_argument("--max-age-h", type=int, default=settings.BOT_REQUEUE_MAX_AGE_H)
        parser.add_argument("--dry-run", action="store_true", help="list them; queue nothing")

    def handle(self, *args, min_age_s, max_age_h, dry_run=False, **options):
        ages = {"min_age": dt.timedelta(seconds=min_age_s), "max_age": dt.timedelta(hours=max_age_h)}
        if dry_run:
            ids = unanswered_messages(now=clock.now(), **ages)
            self.stdout.write(f"{len(ids)} unanswered inbound messages: {ids}")
            return
        ids = unanswered_requeue(queue=handle_inbound.delay, **ages)
        self.stdout.write(f"queued {len(ids)} turns: {ids}")
