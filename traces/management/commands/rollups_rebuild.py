"""Rebuild the dashboard's rollups for a range of hours, and the daily rows summed from them (idempotent)."""

import datetime as dt

from django.core.management.base import BaseCommand, CommandError

from core import clock, params
from traces.rollups import rollups_rebuild


class Command(BaseCommand):
    help = ("Rebuild the hourly rollups the dashboard reads, and the daily rows summed from them, from "
            "--since to --until (dates in TIME_ZONE, --until included; ISO datetimes also accepted). Safe to "
            "run while the beat task runs.")

    def add_arguments(self, parser):
        parser.add_argument("--since", required=True, help="First day, e.g. 2026-11-01 (or an ISO datetime).")
        parser.add_argument("--until", help="Last day, included (default: now; the current hour is never rolled).")

    def handle(self, *args, since, until=None, **options):
        start = params.moment(since, label="--since")
        end = params.moment(until, label="--until", end=True)
        for parsed in (start, end):
            if parsed.error:
                raise CommandError(parsed.error)
        now = clock.now()
        end_at = end.value or now
        if end_at <= start.value:
            raise CommandError("--until must come after --since.")
        began = clock.now()
        report = rollups_rebuild(start=start.value, end=end_at, now=now)
        seconds = (clock.now() - began) / dt.timedelta(seconds=1)
        self.stdout.write(f"Rolled {report.hours} hours into {report.rows} rollup rows in {seconds:.1f} s.")
