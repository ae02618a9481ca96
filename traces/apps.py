from django.apps import AppConfig


class TracesConfig(AppConfig):
    name = "traces"
    verbose_name = "Traces and evals"

    def ready(self):
        # Register the rollup task by name in every process, so beat's schedule finds it.
        from traces import tasks  # noqa: F401
