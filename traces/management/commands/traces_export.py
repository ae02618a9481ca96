"""Write traces as JSON Lines: one object per trace, with every recorded field."""

import json
from datetime import datetime, time

from django.core.management.base import BaseCommand, CommandError
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from traces.models import Trace

FIELDS = [f.attname for f in Trace._meta.concrete_fields]


class Command(BaseCommand):
    help = "Export traces created since DATE as JSON Lines on stdout."

    def add_arguments(self, parser):
        parser.add_argument("--since", required=True, help="YYYY-MM-DD (in TIME_ZONE) or an ISO datetime.")
        parser.add_argument("--jsonl", action="store_true", help="JSON Lines (the only format for now).")

    def handle(self, *args, since, jsonl=True, **options):
        try:
            moment = datetime.fromisoformat(since)
        except ValueError as exc:
            raise CommandError(f"--since must be a date like 2026-11-01 (got {since!r})") from exc
        if len(since) == 10:
            moment = datetime.combine(moment.date(), time.min)
        if timezone.is_naive(moment):
            moment = timezone.make_aware(moment)
        rows = Trace.objects.filter(created_at__gte=moment).order_by("pk").values(*FIELDS).iterator(chunk_size=500)
        for row in rows:
            row["conversation"] = row.pop("conversation_id")
            row["message"] = row.pop("message_id")
            self.stdout.write(json.dumps(row, cls=DjangoJSONEncoder, ensure_ascii=False))
