"""Queue a Celery task by its registered name, so a room can start another room's work without importing it.

Each app's `ready()` imports its own tasks module, so every name is registered in web and worker processes
alike. Going through the app's registry (not `send_task`) keeps eager mode: with no broker configured the
task runs in process instead of being published to a broker nobody reads.
"""

from celery import current_app


def task_queue(name: str, *args) -> None:
    """Queue the task registered as `name` with these arguments (raises the broker's error if it is down)."""
    current_app.tasks[name].delay(*args)
