"""Golden sets from the evals pages: create, rename, archive; per-set gates; bulk add from the trace browser."""

import io
import json
import re
import uuid
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from desk.models import Contact, Conversation
from evals.models import EvalRun, GateDecision, GoldenCase, GoldenSet
from evals.services import golden_import
from traces.models import Trace

pytestmark = pytest.mark.django_db

SAMPLE = Path(settings.BASE_DIR) / "evals" / "fixtures" / "golden.jsonl"


def unique(prefix="set"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


@pytest.fixture
def analyst(client, make_staff):
    user = make_staff(unique("ana"), "analyst")
    client.force_login(user)
    return user


def make_set(name=None, case_ids=("c1", "c2"), **fields) -> GoldenSet:
    golden_set = GoldenSet.objects.create(name=name or unique(), current_version=1, **fields)
    for case_id in case_ids:
        GoldenCase.objects.create(golden_set=golden_set, case_id=case_id, query=f"query {case_id}",
                                  hits=["pago-movil-es"])
    return golden_set


def make_trace(*, outcome="answered", reason="", kept=("reconexion-fibra-es",), query="cuanto cobran",
               cited=()) -> Trace:
    """A trace whose search kept `kept` (each one evidence item, E1…) and whose reply cited the items of `cited`."""
    contact = Contact.objects.create(channel="webchat", name="Test", language="es")
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    evidence = [{"id": f"E{n}", "kind": "chunk", "doc": doc, "text": doc} for n, doc in enumerate(kept, start=1)]
    return Trace.objects.create(
        conversation=conversation, channel="webchat", language="es", route="document", outcome=outcome,
        escalation_reason=reason, query=query, verdict="grounded" if outcome == "answered" else "",
        retrieval=[{"rank": rank, "doc": doc, "kept": True, "vector_score": 0.8}
                   for rank, doc in enumerate(kept, start=1)],
        evidence=evidence, citations=[row["id"] for row in evidence if row["doc"] in cited])


def sample_subset(name: str, count: int = 3) -> GoldenSet:
    rows = SAMPLE.read_text(encoding="utf-8").splitlines()[:count]
    path = Path(settings.BASE_DIR) / "var" / f"{unique('golden')}.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    try:
        golden_import(name=name, path=path)
    finally:
        path.unlink()
    return GoldenSet.objects.get(name=name)


# --- create, rename, archive --------------------------------------------------------------------------------------


def test_an_analyst_creates_a_set_and_an_empty_or_taken_name_comes_back_with_the_reason(client, analyst):
    name = unique("Billing")
    response = client.post(reverse("evals:golden_set_create"), {"name": f"  {name}  "})
    golden_set = GoldenSet.objects.get(name=name)
    assert response.status_code == 302 and response["Location"] == reverse("evals:golden_set", args=[golden_set.pk])
    assert (golden_set.current_version, golden_set.cases.count(), golden_set.archived) == (0, 0, False)

    empty = client.post(reverse("evals:golden_set_create"), {"name": "   "})
    assert empty.status_code == 400 and "Give the set a name." in text(empty.content.decode())
    # A second click on the same form, or the same name in other letters: one set, and the page says why.
    again = client.post(reverse("evals:golden_set_create"), {"name": name.upper()})
    assert again.status_code == 400
    assert f"There is already a golden set named “{name}”" in text(again.content.decode())
    assert f'href="{reverse("evals:golden_set", args=[golden_set.pk])}">Open “{name}”</a>' in again.content.decode()
    long = client.post(reverse("evals:golden_set_create"), {"name": "x" * 101})
    assert long.status_code == 400 and "longer than 100 characters" in text(long.content.decode())
    assert GoldenSet.objects.filter(name__iexact=name).count() == 1


def test_rename_keeps_cases_and_refuses_a_name_another_set_has(client, analyst):
    golden_set, other = make_set(), make_set()
    new_name = unique("renamed")
    response = client.post(reverse("evals:golden_set_rename", args=[golden_set.pk]), {"name": new_name})
    assert response.status_code == 302
    golden_set.refresh_from_db()
    assert golden_set.name == new_name and golden_set.cases.count() == 2

    taken = client.post(reverse("evals:golden_set_rename", args=[golden_set.pk]), {"name": other.name})
    page = text(taken.content.decode())
    assert taken.status_code == 400 and f"There is already a golden set named “{other.name}”" in page
    golden_set.refresh_from_db()
    assert golden_set.name == new_name
    assert client.post(reverse("evals:golden_set_rename", args=[golden_set.pk]), {"name": ""}).status_code == 400


def test_an_archived_set_is_hidden_by_default_takes_no_cases_or_runs_and_comes_back_when_unarchived(
        client, analyst, django_capture_on_commit_callbacks):
    golden_set = make_set()
    url = reverse("evals:golden_set_archive", args=[golden_set.pk])
    assert client.post(url, {"action": "archive"}).status_code == 302
    twice = client.post(url, {"action": "archive"}, follow=True)  # a double click changes nothing
    assert "was already archived" in text(twice.content.decode())
    golden_set.refresh_from_db()
    assert golden_set.archived

    listing = client.get(reverse("evals:golden_sets")).content.decode()
    assert f"set-{golden_set.pk}" not in listing and "archived set hidden. Show archived" in text(listing)
    assert f"set-{golden_set.pk}" in client.get(reverse("evals:golden_sets"), {"archived": "yes"}).content.decode()
    assert client.get(reverse("evals:golden_sets"), {"archived": "maybe"}).status_code == 200  # odd flag: ignored

    page = text(client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode())
    assert "it takes no new cases or runs until unarchived" in page
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        refused = client.post(reverse("evals:golden_set_run", args=[golden_set.pk]), follow=True)
    assert not callbacks and not EvalRun.objects.filter(golden_set=golden_set).exists()
    assert "is archived: unarchive it to run it" in text(refused.content.decode())

    trace = make_trace()
    single = client.post(reverse("evals:golden_case_create", args=[trace.pk]), {"golden_set": golden_set.pk},
                         follow=True)
    assert "is archived: unarchive it to add cases to it" in text(single.content.decode())
    bulk = client.post(reverse("evals:golden_bulk_add"), {"trace": [trace.pk], "golden_set": golden_set.pk})
    assert bulk.status_code == 400 and "is archived" in text(bulk.content.decode())
    assert golden_set.cases.count() == 2

    assert client.post(url, {"action": "unarchive"}).status_code == 302
    golden_set.refresh_from_db()
    assert not golden_set.archived
    assert f"set-{golden_set.pk}" in client.get(reverse("evals:golden_sets")).content.decode()
    assert client.post(url, {"action": "delete"}, follow=True).status_code == 200  # unknown action: a message


def test_gate_command_refuses_an_archived_set_clearly(sample_kb, tmp_path):
    from django.core.management.base import CommandError

    golden_set = sample_subset(unique("arch"))
    GoldenSet.objects.filter(pk=golden_set.pk).update(archived_at="2026-11-30T12:00:00Z")
    gates = tmp_path / "gates.json"
    gates.write_text(json.dumps({"golden_set": golden_set.name, "retrieval_only": True,
                                 "metrics": {"recall@5": {"block_below": 0.1}}}), encoding="utf-8")
    with pytest.raises(CommandError, match="is archived: unarchive it to run it"):
        call_command("gate", "--gates", str(gates), stdout=io.StringIO())


# --- per-set gates ------------------------------------------------------------------------------------------------


def gates_form(**overrides):
    form = {"action": "save", "iterate:recall@5": "0.9", "block:recall@5": "0.8", "iterate:mrr": "0.75",
            "block:mrr": "0.6", "block:must_pass_failures": "0", "iterate:corrected_pass_rate": "0.85",
            "block:corrected_pass_rate": "0.7", "must_pass": "", "no_new_failures": "on"}
    form.update(overrides)
    return {key: value for key, value in form.items() if value is not None}


def test_a_set_follows_the_gates_file_until_its_own_gates_are_saved_and_bad_ones_are_refused(client, analyst):
    golden_set = make_set()
    page = client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode()
    assert "Following the repository's gates file" in text(page) and 'value="0.8"' in page  # gates.toml's recall
    assert 'name="block:must_pass_failures" value="0"' in page
    url = reverse("evals:golden_set_gates", args=[golden_set.pk])

    for form, reason in [
        (gates_form(**{"block:recall@5": "1.5", "iterate:recall@5": ""}),
         "Recall@5: thresholds are rates between 0 and 1; the block threshold 1.5 is not."),
        (gates_form(**{"block:must_pass_failures": "-1"}),
         "Must-pass failures: thresholds are counts of 0 or more; the block threshold -1 is not."),
        (gates_form(**{"iterate:mrr": "0.5"}), "MRR: iterate below 0.5 must not be lower than block below 0.6"),
        (gates_form(must_pass="c1, nope"), "Must-pass ids must be cases of this set; not in it: nope."),
        (gates_form(**{"iterate:mrr": "lots"}), "MRR: the iterate threshold must be a number, not “lots”."),
    ]:
        response = client.post(url, form)
        assert response.status_code == 400, reason
        assert reason in text(response.content.decode()), reason
    golden_set.refresh_from_db()
    assert golden_set.gates is None

    saved = client.post(url, gates_form(**{"iterate:recall@5": "0.95", "iterate:mrr": "", "block:mrr": ""},
                                        must_pass="c2", no_new_failures=None))
    assert saved.status_code == 302
    golden_set.refresh_from_db()
    assert golden_set.gates == {
        "k": 5, "must_pass": ["c2"], "no_new_failures": False,
        "metrics": {"recall@5": {"block_below": 0.8, "iterate_below": 0.95},
                    "must_pass_failures": {"block_above": 0.0},
                    "corrected_pass_rate": {"block_below": 0.7, "iterate_below": 0.85, "optional": True}}}
    assert client.post(url, gates_form(**{"iterate:recall@5": "0.95", "iterate:mrr": "", "block:mrr": ""},
                                       must_pass="c2", no_new_failures=None)).status_code == 302  # same again
    page = client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode()
    assert "This set's own gates" in text(page) and 'value="0.95"' in page and 'value="c2"' in page

    assert client.post(url, {"action": "reset"}).status_code == 302
    golden_set.refresh_from_db()
    assert golden_set.gates is None


def test_a_run_from_the_sets_page_is_gated_with_the_sets_own_gates_and_the_page_shows_the_decision(
        client, analyst, sample_kb, django_capture_on_commit_callbacks):
    golden_set = sample_subset(unique("gated"))
    # Every sample case passes retrieval with these three: hold the set to an impossible recall to see a block.
    client.post(reverse("evals:golden_set_gates", args=[golden_set.pk]),
                gates_form(**{"iterate:recall@5": "1", "block:recall@5": "1", "iterate:mrr": "", "block:mrr": "",
                              "block:must_pass_failures": "0"}, must_pass="g001", no_new_failures=None))
    golden_set.refresh_from_db()
    golden_set.gates["metrics"]["recall@5"] = {"block_above": 0.5}  # recall above 0.5 blocks: it will
    GoldenSet.objects.filter(pk=golden_set.pk).update(gates=golden_set.gates)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("evals:golden_set_run", args=[golden_set.pk]), {"retrieval_only": "on"})
    run = EvalRun.objects.get(golden_set=golden_set)
    decision = GateDecision.objects.get(run=run)
    assert decision.gates_file == f"golden set “{golden_set.name}”: its own gates"
    assert decision.decision == "block" and [r["metric"] for r in decision.failed_gates] == ["recall@5"]
    assert {r["metric"] for r in decision.reasons} == {"recall@5", "must_pass_failures", "corrected_pass_rate",
                                                       "must_pass (listed)"}
    for url in (reverse("evals:golden_set", args=[golden_set.pk]), reverse("evals:run", args=[run.pk])):
        card = text(client.get(url).content.decode())
        assert "Release gate Block" in card and "its own gates" in card


def test_a_set_without_its_own_gates_is_gated_with_the_gates_file_minus_another_sets_must_pass_ids(
        client, analyst, sample_kb, django_capture_on_commit_callbacks):
    golden_set = sample_subset(unique("plain"))
    for _ in range(2):  # the second run has the first as its baseline (no_new_failures)
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("evals:golden_set_run", args=[golden_set.pk]), {"retrieval_only": "on"})
    first, second = EvalRun.objects.filter(golden_set=golden_set).order_by("pk")
    decision = GateDecision.objects.get(run=second)
    assert decision.gates_file == "evals/fixtures/gates.toml" and decision.baseline == f"run {first.pk}"
    metrics = {r["metric"]: r["decision"] for r in decision.reasons}
    # gates.toml lists g018 and g045 as must-pass for the set "sample" only: not this set's business.
    assert "must_pass (listed)" not in metrics and metrics["newly_failing"] == "go"
    assert GateDecision.objects.get(run=first).baseline == ""


def test_the_gate_command_holds_a_set_to_its_own_gates_unless_told_to_use_the_files(sample_kb, tmp_path):
    golden_set = sample_subset(unique("cmd"))
    gates = tmp_path / "gates.json"
    gates.write_text(json.dumps({"golden_set": golden_set.name, "retrieval_only": True,
                                 "metrics": {"recall@5": {"block_below": 0.1}}}), encoding="utf-8")
    out = io.StringIO()
    call_command("gate", "--gates", str(gates), stdout=out)  # the file alone: go
    GoldenSet.objects.filter(pk=golden_set.pk).update(gates={"k": 5, "metrics": {"mrr": {"block_above": 0.1}},
                                                             "must_pass": [], "no_new_failures": False})
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("gate", "--gates", str(gates), stdout=out)
    assert exit_info.value.code == 1
    assert f"golden set {golden_set.name} has its own gates" in out.getvalue()
    assert GateDecision.objects.filter(golden_set=golden_set).first().gates_file.endswith("its own gates")
    out = io.StringIO()
    call_command("gate", "--gates", str(gates), "--file-gates", stdout=out)
    assert "decision: go" in out.getvalue()
    assert GateDecision.objects.filter(golden_set=golden_set).first().gates_file == str(gates)


# --- bulk add from the trace browser --------------------------------------------------------------------------------


def test_the_trace_browser_has_a_checkbox_per_trace_posting_to_the_bulk_add(client, analyst):
    trace = make_trace()
    page = client.get(reverse("traces:list")).content.decode()
    assert f'action="{reverse("evals:golden_bulk_add")}"' in page
    assert f'name="trace" value="{trace.pk}"' in page


def test_bulk_add_asks_for_a_set_then_adds_one_case_per_trace_with_the_single_paths_hygiene(client, analyst):
    golden_set = make_set(case_ids=())
    archived = make_set(archived_at="2026-11-01T00:00:00Z")
    answered = make_trace(kept=("reconexion-fibra-es", "pago-movil-es"), cited=("pago-movil-es",))
    escalated = make_trace(outcome="escalated", reason="NO_CONTEXT", query="¿capital de Francia?")
    back = f"{reverse('traces:list')}?outcome=answered"
    choose = client.post(reverse("evals:golden_bulk_add"), {"trace": [answered.pk, escalated.pk], "next": back})
    page = choose.content.decode()
    assert choose.status_code == 200 and "Add 2 traces to a golden set" in text(page)
    assert f'<option value="{golden_set.pk}"' in page and f'<option value="{archived.pk}"' not in page

    added = client.post(reverse("evals:golden_bulk_add"),
                        {"trace": [answered.pk, escalated.pk], "golden_set": golden_set.pk, "next": back})
    assert added.status_code == 302 and added["Location"] == back
    cases = {case.trace_id: case for case in golden_set.cases.all()}
    assert cases[answered.pk].hits == ["pago-movil-es"]  # what the reply cited, not everything the search kept
    assert cases[escalated.pk].hits == []  # what an escalated turn retrieved is what failed: the analyst picks
    assert not any(c.reviewed for c in cases.values())  # added in bulk: they wait for review
    assert {c.origin for c in cases.values()} == {"trace"} and not any(c.must_pass for c in cases.values())
    golden_set.refresh_from_db()
    assert golden_set.current_version == 2  # one version for the whole batch

    third = make_trace(query="¿cuándo vence la factura?")
    again = client.post(reverse("evals:golden_bulk_add"),
                        {"trace": [answered.pk, escalated.pk, third.pk], "golden_set": golden_set.pk, "next": back},
                        follow=True)
    assert f"1 added to {golden_set.name} (version 3), 2 already in the set." in text(again.content.decode())
    twice = client.post(reverse("evals:golden_bulk_add"),
                        {"trace": [third.pk], "golden_set": golden_set.pk, "next": back}, follow=True)
    assert f"0 added to {golden_set.name}, 1 already in the set." in text(twice.content.decode())
    assert golden_set.cases.count() == 3


@pytest.mark.parametrize("form, message", [
    ({}, "Tick at least one trace to add."),
    ({"trace": ["abc"]}, "A trace id must be a whole number"),
    ({"trace": ["999999999"]}, "No trace 999999999."),
    ({"trace": ["1"] * 201}, "Add at most 200 traces at a time."),
])
def test_bulk_add_with_odd_input_goes_back_with_a_message(client, analyst, form, message):
    response = client.post(reverse("evals:golden_bulk_add"), {**form, "next": "https://evil.example/"}, follow=True)
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == reverse("traces:list")  # never off-site
    assert message in text(response.content.decode())


def test_bulk_add_to_a_set_that_does_not_exist_asks_again(client, analyst):
    trace = make_trace()
    for value in ("999999", "x"):
        response = client.post(reverse("evals:golden_bulk_add"), {"trace": [trace.pk], "golden_set": value})
        assert response.status_code == 400
    assert "does not exist" in text(client.post(reverse("evals:golden_bulk_add"),
                                                {"trace": [trace.pk], "golden_set": "999999"}).content.decode())


@pytest.mark.parametrize("role", ["agent", "kb_editor"])
def test_only_trace_reviewers_may_manage_sets_or_bulk_add(client, make_staff, role):
    golden_set = make_set()
    client.force_login(make_staff(unique(role), role))
    trace = make_trace()
    actions = [(reverse("evals:golden_set_create"), {"name": unique()}),
               (reverse("evals:golden_set_rename", args=[golden_set.pk]), {"name": unique()}),
               (reverse("evals:golden_set_archive", args=[golden_set.pk]), {"action": "archive"}),
               (reverse("evals:golden_set_gates", args=[golden_set.pk]), gates_form()),
               (reverse("evals:golden_bulk_add"), {"trace": [trace.pk], "golden_set": golden_set.pk})]
    assert [client.post(url, data).status_code for url, data in actions] == [403] * len(actions)
    golden_set.refresh_from_db()
    assert (golden_set.archived, golden_set.gates, golden_set.cases.count()) == (False, None, 2)


def test_the_new_pages_show_words_not_raw_data(client, analyst):
    from tests.support.readable import assert_readable

    golden_set = make_set(gates={"k": 5, "metrics": {"mrr": {"block_below": 0.6}}, "must_pass": ["c1"],
                                 "no_new_failures": True})
    archived = make_set(archived_at="2026-11-01T00:00:00Z")
    trace = make_trace()
    pages = [client.get(reverse("evals:golden_sets")), client.get(reverse("evals:golden_sets"), {"archived": "yes"}),
             client.get(reverse("evals:golden_set", args=[golden_set.pk])),
             client.get(reverse("evals:golden_set", args=[archived.pk])),
             client.post(reverse("evals:golden_bulk_add"), {"trace": [trace.pk]}),
             client.post(reverse("evals:golden_set_gates", args=[golden_set.pk]), gates_form(must_pass="zz"))]
    for response in pages:
        assert_readable(response.content.decode())
    assert "This set's own gates" in text(pages[2].content.decode())
    assert 'name="block:mrr" value="0.6"' in pages[2].content.decode()
    assert 'name="block:recall@5" value=""' in pages[2].content.decode()  # not gated by this set: empty


def test_golden_import_and_variants_refuse_an_archived_set(tmp_path):
    from django.core.management.base import CommandError

    from evals.services import GoldenSetError
    from evals.variants import variants_generate
    from traces.models import FailureClass, ReviewSession

    golden_set = make_set(archived_at="2026-11-01T00:00:00Z")
    path = tmp_path / "one.jsonl"
    path.write_text(SAMPLE.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match="is archived: unarchive it to import cases into it"):
        call_command("golden_import", golden_set.name, str(path), stdout=io.StringIO())
    session = ReviewSession.objects.create(name=unique("s"), window_start="2026-11-01T00:00:00Z",
                                           window_end="2026-11-02T00:00:00Z", seed=1, requested_size=1)
    failure_class = FailureClass.objects.create(session=session, name="x", definition="x", stage="retrieval")
    with pytest.raises(GoldenSetError, match="is archived: unarchive it to add cases to it"):
        variants_generate(failure_class=failure_class, golden_set=golden_set)
    assert sorted(golden_set.cases.values_list("case_id", flat=True)) == ["c1", "c2"]


def test_stored_gates_edited_outside_the_page_are_reported_not_a_500(client, analyst, django_capture_on_commit_callbacks,
                                                                     sample_kb):
    golden_set = sample_subset(unique("broken"), count=1)
    GoldenSet.objects.filter(pk=golden_set.pk).update(gates={"metrics": {"mrr": {"block_bellow": 0.5}}})
    page = client.get(reverse("evals:golden_set", args=[golden_set.pk]))
    assert page.status_code == 200
    assert "The set's stored gates cannot be used" in text(page.content.decode())
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("evals:golden_set_run", args=[golden_set.pk]), {"retrieval_only": "on"})
    run = EvalRun.objects.get(golden_set=golden_set)
    assert run.status == "done" and not GateDecision.objects.filter(run=run).exists()
