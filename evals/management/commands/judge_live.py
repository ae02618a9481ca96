"""python manage.py judge_live — the judge on live traffic for one day, as the hourly beat task runs it."""

from django.core.management.base import BaseCommand, CommandError

from core import clock, params
from evals.judge import JudgePromptError, get_judge
from evals.online_judge import judge_live_day


class Command(BaseCommand):
    help = ("Judge the sample of a day's answered turns (default: today, by the product's clock) that the current "
            "judge version has not judged yet; a rerun judges nothing twice. --rate and --cap override "
            "JUDGE_LIVE_RATE and JUDGE_LIVE_DAILY_CAP for this run.")

    def add_arguments(self, parser):
        parser.add_argument("--day", default="", help="the day, YYYY-MM-DD (default: today)")
        parser.add_argument("--rate", type=float, default=None, help="share of the answered turns, 0 to 1")
        parser.add_argument("--cap", type=int, default=None, help="at most this many verdicts for the day")

    def handle(self, *args, **options):
        day = params.day(options["day"], label="--day", default=clock.today())
        if day.error:
            raise CommandError(day.error)
        rate, cap = options["rate"], options["cap"]
        if rate is not None and not 0 <= rate <= 1:
            raise CommandError("--rate is a share between 0 and 1 (e.g. 0.1 for one turn in ten)")
        if cap is not None and cap < 0:
            raise CommandError("--cap is 0 or more")
        try:
            judge = get_judge()
        except JudgePromptError as error:
            raise CommandError(str(error)) from error
        report = judge_live_day(day=day.value, judge=judge, rate=rate, cap=cap)
        self.stdout.write(
            f"{report.day}: {report.answered} answered turns, {report.in_sample} in the sample; judged "
            f"{report.judged_now} now with {report.judge_version} ({report.errors} judge errors), "
            f"{report.already} judged before{' — the daily cap stopped it' if report.capped else ''}.")
