"""python manage.py eval_routing [--split dev] — the router's accuracy and confusion matrix on held-out labels."""

from django.conf import settings
from django.core.management.base import BaseCommand

from bot.routing.classifier import local_router
from evals.routing_eval import labelled_file, routing_report


class Command(BaseCommand):
    help = ("Route the labelled messages of a held-out split (dev: where rules and threshold are chosen; "
            "test: the final report only) and print accuracy, human recall and the confusion matrix.")

    def add_arguments(self, parser):
        parser.add_argument("--split", action="append", choices=["dev", "test"],
                            help="repeat for both; default dev")
        parser.add_argument("--labels", action="append", default=[], metavar="FILE",
                            help="a JSONL file of labelled messages written outside the team ({text, language, "
                                 "expected_route}); repeat for several")

    def handle(self, *args, **options):
        router = local_router(settings.BOT_ROUTER_CACHE_DIR)
        runs = [(split, None) for split in options["split"] or ([] if options["labels"] else ["dev"])]
        runs += [(path, labelled_file(path)) for path in options["labels"]]
        for name, messages in runs:
            report = routing_report(router, name, messages)
            self.stdout.write(f"{name}: accuracy {report.accuracy:.3f} ({report.correct}/{report.total}), "
                              f"human recall {report.recall('human'):.3f} precision {report.precision('human'):.3f}, "
                              f"unsure {report.unsure} — router {router.version}")
            self.stdout.write(report.table() + "\n")
