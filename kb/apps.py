from django.apps import AppConfig


class KbConfig(AppConfig):
    name = "kb"
    verbose_name = "Knowledge base"

    def ready(self):
        # Register this room's tasks by name (others queue them through core.tasks.task_queue).
        from kb import tasks  # noqa: F401
