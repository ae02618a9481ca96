from django.apps import AppConfig


class EvalsConfig(AppConfig):
    name = "evals"
    verbose_name = "Evals (golden sets, runs, judge, calibration, gate)"

    def ready(self):
        from evals import tasks  # noqa: F401  (registers the eval-run task by name)
        from evals.human_labels import review_note_label
        from traces.signals import review_note_saved

        review_note_saved.connect(review_note_label, dispatch_uid="evals.review_note_label")
