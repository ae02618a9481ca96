"""Queue a Celery task by its registered name, so a room can start another room's work without importing it.

Each app's `ready()` imports its own tasks module, so every name is registered in web and worker processes
alike. Going through the app's registry (not `send_task`) keeps eager mode: with no broker configured the
task runs in process instead of being published to a broker nobody reads.
"""

from collections.abc import Callable

from celery import current_app
from django.db import DatabaseError
from kombu.exceptions import ChannelError, OperationalError

from core import db_faults

# A sweep queues again only what is not waiting in the broker already. With more tasks than this waiting, a
# message nobody claimed yet is most likely one of them (the queue is first in, first out), so the sweeps leave
# such messages alone until the backlog falls under it: offered more than it can answer, the deployment works
# through its queue instead of filling it with copies (each costs a worker a task and a query).
SWEEP_BACKLOG_MAX = 20

# A task the database refused (a restart, a lost connection) is tried again after 1, 2, 4, 8, 15 and 15 s.
DATABASE_RETRIES = 6


def retrying_while_the_database_is_away(task, work: Callable[[], object]) -> None:
    """Run `work` inside a bound task (declared with max_retries=DATABASE_RETRIES); when the database is away,
    have Celery run the task again after 1, 2, 4, 8, 15 and 15 s instead of waiting for a sweep. Any other error
    is raised as it is."""
    try:
        work()
    except DatabaseError as exc:
        if not db_faults.is_passing(exc):
            raise
        raise task.retry(exc=exc, countdown=min(2 ** task.request.retries, 15)) from exc


def task_queue(name: str, *args) -> None:
    """Queue the task registered as `name` with these arguments (raises the broker's error if it is down)."""
    current_app.tasks[name].delay(*args)


def queue_backlog(queue: str | None = None) -> int | None:
    """Return how many tasks wait in the broker's queue (the default one); None when tasks run eagerly or the
    broker cannot be asked."""
    app = current_app
    if app.conf.task_always_eager:
        return None
    name = queue or app.conf.task_default_queue
    try:
        with app.connection_for_read() as connection:
            return connection.default_channel.queue_declare(queue=name, passive=True).message_count
    except ChannelError:
        return 0  # the queue does not exist (yet): nothing waits
    except (OperationalError, OSError):
        return None


def sweep_may_queue(backlog: int | None) -> bool:
    """Whether a sweep may queue again messages never picked up: not while a backlog may hold them."""
    return backlog is None or backlog <= SWEEP_BACKLOG_MAX
