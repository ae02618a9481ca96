"""A database made before the rooms were split migrates forward without losing a row.

It goes back to the last migrations before the split (models still in bot and traces, permissions on
desk.StaffAccess, the escalation pointing at its trace), writes rows there with the historical models,
then migrates forward and reads them through today's models.
"""

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("desk", "0009_credit_notes"), ("traces", "0006_trace_retrieval_gin"), ("kb", "0005_document_source_default"),
          ("bot", "0001_initial"), ("evals", None), ("billing", None)]


def migrate_back():
    """Migrate to BEFORE and return the historical models of that state."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor.loader.build_graph()
    return executor.loader.project_state([target for target in BEFORE if target[1]]).apps


@pytest.mark.django_db(transaction=True)
def test_rows_made_before_the_split_survive_it():
    try:
        _rows_survive()
    finally:
        call_command("migrate", verbosity=0)  # leave the shared test database as every other test expects it


def _rows_survive():
    old = migrate_back()
    User, Group = old.get_model("auth", "User"), old.get_model("auth", "Group")
    Permission, ContentType = old.get_model("auth", "Permission"), old.get_model("contenttypes", "ContentType")
    # The old permission holder, as the migrations of that time made it.
    holder, _ = ContentType.objects.get_or_create(app_label="desk", model="staffaccess")
    review, _ = Permission.objects.get_or_create(content_type=holder, codename="review_traces",
                                                 defaults={"name": "Review traces"})
    group = Group.objects.create(name=f"old-analysts-{connection.settings_dict['NAME']}")
    group.permissions.add(review)
    analyst = User.objects.create(username="old-analyst")
    analyst.groups.add(group)
    old.get_model("bot", "BreakerState").objects.create(name="billing", state="open", failures=5)
    Contact = old.get_model("desk", "Contact")
    conversation = old.get_model("desk", "Conversation").objects.create(
        contact=Contact.objects.create(channel="webchat", name="Old"), channel="webchat")
    trace = old.get_model("traces", "Trace").objects.create(conversation=conversation, channel="webchat",
                                                             outcome="escalated", escalation_reason="NO_CONTEXT")
    escalation = old.get_model("desk", "Escalation").objects.create(
        conversation=conversation, reason="NO_CONTEXT", summary="s", trace=trace)
    golden_set = old.get_model("traces", "GoldenSet").objects.create(name="old-set")
    old.get_model("traces", "GoldenCase").objects.create(golden_set=golden_set, case_id="c1", query="q",
                                                         hits=["doc"], trace=trace)

    call_command("migrate", verbosity=0)

    from django.contrib.auth.models import User as CurrentUser

    from billing.models import BreakerState
    from evals.models import GoldenCase
    from traces.models import Trace

    assert BreakerState.objects.get(name="billing").state == "open"
    case = GoldenCase.objects.get(case_id="c1")
    assert (case.golden_set.name, case.trace_id) == ("old-set", trace.pk)
    assert Trace.objects.get(pk=trace.pk).escalation_id == escalation.pk
    assert CurrentUser.objects.get(username="old-analyst").has_perm("traces.review_traces")
