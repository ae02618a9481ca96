from django.apps import AppConfig


class DeskConfig(AppConfig):
    name = "desk"
    verbose_name = "Agent desk"

    def ready(self):
        # Register this room's tasks by name (others queue them through core.tasks.task_queue).
        from desk import tasks  # noqa: F401
