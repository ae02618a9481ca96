"""Load what a turn needs before the first customer waits for it.

A worker process builds its models lazily: the first turn it runs loads the embedder, builds the router's
classifier from the labelled examples' vectors, asks the database for the search's irregular verb forms and
sets up the billing client — a second or more on this machine, paid by whichever customer comes first, once
per process. `warm()` does it at process start instead: Celery calls it as each worker process starts
(config/celery.py), and `manage.py warm` (run by `make serve` and `make worker` before they start) fills the
on-disk caches so every process after it loads them instead of computing them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from billing.api.client import billing_client
from bot.routing.classifier import get_router
from bot.writer import get_writer
from kb.embeddings import get_embedder
from kb.search import search

logger = logging.getLogger(__name__)

# One question of each kind the router and the search meet (the texts are not stored anywhere).
WARM_QUERIES = ("¿cuánto cobran por la reconexión del servicio de fibra?", "why is my bill higher this month?")


def warm(*, report: Callable[[str], None] | None = None) -> dict[str, float]:
    """Load the embedder, the router and its examples' vectors, the search and the billing client; return the
    seconds each took. A part that fails (the database not up yet) is logged and left to the first turn."""
    timings: dict[str, float] = {}
    steps = [
        ("embedder", lambda: get_embedder().embed_query(WARM_QUERIES[0])),
        ("router", lambda: [get_router().route(q) for q in WARM_QUERIES]),
        ("search", lambda: [search(q) for q in WARM_QUERIES]),
        ("writer", get_writer),
        ("billing client", billing_client),
    ]
    for name, step in steps:
        began = time.perf_counter()
        try:
            step()
        except Exception:  # noqa: BLE001 - warming is an optimisation: the first turn does it otherwise
            logger.warning("warm-up of the %s failed; the first turn loads it", name, exc_info=True)
            continue
        timings[name] = time.perf_counter() - began
        if report is not None:
            report(f"{name}: {timings[name]:.2f} s")
    return timings
