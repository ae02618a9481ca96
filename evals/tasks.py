"""Celery tasks of evals: thin — take ids, load, call one service."""

import datetime as dt
import logging

from celery import shared_task
from django.contrib.auth import get_user_model
from django.db import transaction

from core import clock
from evals.gate_rules import GatesFileError
from evals.gates_for_set import run_gate
from evals.judge import JudgePromptError, get_judge
from evals.models import GoldenSet, ReplayExperiment
from evals.offline_judge import LexicalBillJudge
from evals.online_judge import judge_live_day
from evals.replay import replay_experiment_run
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


@shared_task(name="evals.judge_live", ignore_result=True)
def judge_live() -> int:
    """Judge the sample of yesterday's and today's answered turns not judged yet (run hourly by Celery beat).

    Yesterday too: the turns of its last hours came after the last run of that day. Returns verdicts written.
    """
    try:
        judge = get_judge()
    except JudgePromptError as error:  # a judge prompt edited after its release: judge nothing, say why
        logger.warning("live judging skipped: %s", error)
        return 0
    today = clock.today()
    return sum(judge_live_day(day=day, judge=judge).judged_now for day in (today - dt.timedelta(days=1), today))


@shared_task(name="evals.replay_experiment", acks_late=True, ignore_result=True)
def replay_experiment(experiment_id: int) -> None:
    """Replay the traces of one experiment under its configuration and store what changed (nothing is sent)."""
    experiment = ReplayExperiment.objects.filter(pk=experiment_id, status=ReplayExperiment.Status.RUNNING).first()
    if experiment is None:  # run already (a redelivered task) or deleted
        return
    try:
        judge = get_judge()
    except JudgePromptError as error:
        logger.warning("replay %s not judged: %s", experiment_id, error)
        judge = LexicalBillJudge()
    replay_experiment_run(experiment=experiment, judge=judge)
