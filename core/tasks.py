"""Queue a Celery task by its registered name, so a room can start another room's work without importing it.

Each app's `ready()` imports its own tasks module, so every name is registered in web and worker processes
alike. Going through the app's registry (not `send_task`) keeps eager mode: with no broker configured the
task runs in process instead of being published to a broker nobody reads.
"""

from celery import current_app
from kombu.exceptions import ChannelError, OperationalError

# A sweep queues again only what is not waiting in the broker already. With more tasks than this waiting, a
# message nobody claimed yet is most likely one of them (the queue is first in, first out), so the sweeps leave
# such messages alone until the backlog falls under it: offered more than it can answer, the deployment works
# through its queue instead of filling it with copies (each costs a worker a task and a query).
SWEEP_BACKLOG_MAX = 20


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
