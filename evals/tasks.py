"""Celery tasks of evals: thin — take ids, load, call one service."""

import logging

from celery import shared_task
from django.contrib.auth import get_user_model
from django.db import transaction

from evals.gate_rules import GatesFileError
from evals.gates_for_set import run_gate
from evals.models import GoldenSet
from evals.runner import EvalRunError, eval_run
from evals.services import GoldenSetError

logger = logging.getLogger(__name__)


@shared_task(name="evals.eval_run", acks_late=True, ignore_result=True)
def eval_run_task(golden_set_id: int, retrieval_only: bool, user_id: int | None) -> None:
    """Run the current version of one golden set (retrieval only, or the whole answer path), then gate the run
    with the set's gates (its own, or the repository's gates file) and store the decision."""
    golden_set = GoldenSet.objects.get(pk=golden_set_id)
    user = get_user_model().objects.filter(pk=user_id).first() if user_id else None
    try:
        run = eval_run(golden_set=golden_set, retrieval_only=retrieval_only, user=user)
    except (EvalRunError, GoldenSetError) as error:
        # A failed run is saved with its error and shows so on the runs page (retrying would repeat it); a set
        # archived after the run was queued ran nothing.
        logger.warning("%s", error)
        return
    try:
        run_gate(run=run)
    except GatesFileError as error:  # the set's stored gates were edited outside its page: the set page says so
        logger.warning("run %s of %s not gated: %s", run.pk, golden_set.name, error)


def eval_run_enqueue(*, golden_set_id: int, retrieval_only: bool, user_id: int | None) -> None:
    """Queue a run once the current transaction commits (eager without a broker: it runs right then)."""
    transaction.on_commit(lambda: eval_run_task.delay(golden_set_id, bool(retrieval_only), user_id))
