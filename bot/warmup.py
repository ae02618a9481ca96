"""Load what a turn needs before the first customer waits for it.

A worker process builds its models lazily: the first turn it runs loads the embedder, builds the router's
classifier from the labelled examples' vectors, asks the database for the search's irregular verb forms and
sets up the billing client — a second or more on this machine, paid by whichever customer comes first, once
per process; even then, a turn's first use of the writer, the verifier, the humanizer and the tables it writes
cost it twice a warm turn. `warm()` does it at process start instead: Celery calls it as each worker process starts
(config/celery.py), and `manage.py warm` (run by `make serve` and `make worker` before they start) fills the
on-disk caches so every process after it loads them instead of computing them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from celery import current_app

from billing.api.client import billing_client, in_process_sample_customer
from bot.routing.classifier import get_router
from bot.turn import answer_query
from bot.writer import TemplateWriter, get_writer
from desk.models import Message
from kb.embeddings import get_embedder
from kb.search import search
from traces.models import Trace

logger = logging.getLogger(__name__)

# One question of each kind the router and the search meet (the texts are not stored anywhere).
WARM_QUERIES = ("¿cuánto cobran por la reconexión del servicio de fibra?", "why is my bill higher this month?")


def _simulated_account_answer() -> None:
    """With the in-process billing simulator (no BILLING_API_BASE_URL), build its day's customers and answer one
    account question for the first of them: the simulator has no side effects, and its first request, the billing
    facts and the bill's wording would otherwise be the first customer's to wait for. A real billing API is not
    called at start."""
    customer_id = in_process_sample_customer()
    if customer_id is None:
        return
    answer_query(query=WARM_QUERIES[1], language="en", customer_id=customer_id, writer=TemplateWriter())


def warm(*, report: Callable[[str], None] | None = None) -> dict[str, float]:
    """Load the embedder, the router and its examples' vectors, the search and the billing client, and run one answer
    through the whole path (nothing written, no model, no call to a real billing API); return the seconds each took.
    A part that fails (the database not up yet) is logged and left to the first turn."""
    timings: dict[str, float] = {}
    steps = [
        ("embedder", lambda: get_embedder().embed_query(WARM_QUERIES[0])),
        ("router", lambda: [get_router().route(q) for q in WARM_QUERIES]),
        ("search", lambda: [search(q) for q in WARM_QUERIES]),
        ("writer", get_writer),
        ("billing client", billing_client),
        ("billing data", _simulated_account_answer),
        # Celery finalizes its app and sets up its result backend on the first task queued.
        ("task registry", lambda: (current_app.tasks, current_app.backend)),
        # One whole answer with the template writer (routing, retrieval, composing, the verifier, the humanizer),
        # writing nothing and calling no model or billing, and a read of the tables a turn writes: the first
        # customer's turn does not pay for their first use.
        ("answer path", lambda: answer_query(query=WARM_QUERIES[0], language="es", writer=TemplateWriter())),
        ("turn tables", lambda: (Message.objects.exists(), Trace.objects.exists())),
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
