"""Review data made when classes and notes belonged to one session migrates to the team's taxonomy and scores
without losing anything: every class and note stays, a second session's class of the same name is renamed after
its session, and every "model faithful" answer becomes the built-in faithfulness score."""

import datetime as dt

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("traces", "0017_declined_outcome"), ("evals", "0006_golden_case_as_of_labels_and_judge_test_reads")]


@pytest.mark.django_db(transaction=True)
def test_session_classes_and_faithfulness_survive_the_move_to_the_team():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        executor.loader.build_graph()
        old = executor.loader.project_state(BEFORE).apps
        ids = _old_rows(old)
        call_command("migrate", verbosity=0)
        _check(ids)
    finally:
        call_command("migrate", verbosity=0)


def _old_rows(old):
    User = old.get_model("auth", "User")
    Contact, Conversation = old.get_model("desk", "Contact"), old.get_model("desk", "Conversation")
    Trace, Session = old.get_model("traces", "Trace"), old.get_model("traces", "ReviewSession")
    FailureClass, Note = old.get_model("traces", "FailureClass"), old.get_model("traces", "ReviewNote")
    ana = User.objects.create(username="old-ana")
    conversation = Conversation.objects.create(contact=Contact.objects.create(channel="webchat", name="Old"),
                                               channel="webchat")
    trace = Trace.objects.create(conversation=conversation, channel="webchat", outcome="answered", final_text="x")
    now = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    sessions = [Session.objects.create(name=name, window_start=now, window_end=now, seed=1, requested_size=1)
                for name in ("October", "November")]
    classes = [FailureClass.objects.create(session=s, name="Wrong fee", definition="d", stage="retrieval")
               for s in sessions]
    notes = [Note.objects.create(session=s, trace=trace, author=ana, verdict="fail", first_failure="f",
                                 stage="retrieval", model_faithful=faithful, failure_class=c)
             for s, c, faithful in zip(sessions, classes, (True, False))]
    return {"classes": [c.pk for c in classes], "notes": [n.pk for n in notes], "trace": trace.pk, "ana": ana.pk}


def _check(ids):
    from traces.models import FailureClass, ReviewNote, TraceScore

    first, second = (FailureClass.objects.get(pk=pk) for pk in ids["classes"])
    assert (first.name, second.name) == ("Wrong fee", "Wrong fee (November)")
    assert second.events.get(kind="renamed").detail["from"] == "Wrong fee"
    notes = ReviewNote.objects.filter(pk__in=ids["notes"]).order_by("pk")
    assert [n.failure_class_id for n in notes] == ids["classes"] and [n.session.name for n in notes] == [
        "October", "November"]
    # The analyst's latest answer on the trace is their faithfulness score.
    score = TraceScore.objects.get(trace_id=ids["trace"], author_id=ids["ana"])
    assert (score.definition.key, score.definition.built_in, score.value) == ("faithful", True, "no")
