"""python manage.py eval_routing [--split dev] — the router's accuracy and confusion matrix on held-out labels."""

from django.conf import settings
from django.core.management.base import BaseCommand

from bot.routing.classifier import local_router
from evals.routing_eval import routing_report


class Command(BaseCommand):
    help = ("Route the labelled messages of a held-out split (dev: where rules and threshold are chosen; "
            "test: the final report only) and print accuracy, human recall and the confusion matrix.")

    def add_arguments(self, parser):
        parser.add_argument("--split", action="append", choices=["dev", "test"],
                            help="repeat for both; default dev")

    def handle(self, *args, **options):
        router = local_router(settings.BOT_ROUTER_CACHE_DIR)
        for split in options["split"] or ["dev"]:
            report = routing_report(router, split)
            self.stdout.write(f"{split}: accuracy {report.accuracy:.3f} ({report.correct}/{report.total}), "
                              f"human recall {report.recall('human'):.3f}, unsure {report.unsure} "
                              f"— router {router.version}")
            self.stdout.write(report.table() + "\n")
