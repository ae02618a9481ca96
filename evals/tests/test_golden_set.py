"""Golden set: import/export JSONL with versions, cases from a trace, eval_retrieval by set name, role checks."""

import io
import json
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from desk.models import Contact, Conversation, Message
from evals.golden import GoldenFileError
from evals.models import GoldenCase, GoldenSet, GoldenSetVersion
from evals.services import golden_case_from_trace, golden_export, golden_import
from traces.models import Trace

pytestmark = pytest.mark.django_db

SAMPLE = Path(settings.BASE_DIR) / "evals" / "fixtures" / "golden.jsonl"
FILE_FIELDS = ("id", "query", "hits", "hard_negatives", "must_pass")


def sample_rows():
    """The sample file's rows, as a set stores them and an export gives them back (`split` included)."""
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]


def unique(prefix="golden"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def real_trace(text="cuanto cobran por reconexion de fibra") -> Trace:
    from bot.turn import run_turn
    from bot.writer import TemplateWriter

    contact = Contact.objects.create(channel="webchat", name="Test", customer_id="C-1001", language="es")
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="text",
                                     text=text, provider_message_id=f"wamid.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk, writer=TemplateWriter())


def test_importing_the_sample_file_makes_version_1_with_77_cases_and_exports_the_same_rows():
    name = unique()
    version = golden_import(name=name, path=SAMPLE)
    golden_set = GoldenSet.objects.get(name=name)
    assert (version.number, golden_set.current_version, golden_set.cases.count()) == (1, 1, 77)
    exported = golden_export(name=name)
    assert [{k: row[k] for k in FILE_FIELDS} for row in exported] == [{k: row[k] for k in FILE_FIELDS}
                                                                       for row in sample_rows()]
    assert exported == sample_rows()  # nothing else is added for fields the file does not have
    assert all(case.origin == "file" and case.reviewed for case in golden_set.cases.all())


def test_golden_export_command_prints_jsonl_and_reimport_keeps_both_snapshots(tmp_path):
    name = unique()
    call_command("golden_import", name, str(SAMPLE), stdout=io.StringIO())
    rows = sample_rows()
    rows[0]["query"] = "una pregunta distinta"
    rows = rows[:-1] + [{"id": "new1", "query": "q", "hits": ["pago-movil-es"], "hard_negatives": [],
                         "must_pass": False, "facts": ["Bs. 350,00"], "synthetic": True, "origin": "variant"}]
    out = io.StringIO()
    call_command("golden_import", name, str(write_jsonl(tmp_path / "changed.jsonl", rows)), stdout=out)
    assert "version 2" in out.getvalue()
    golden_set = GoldenSet.objects.get(name=name)
    assert golden_set.current_version == 2
    assert list(golden_set.versions.values_list("number", flat=True)) == [1, 2]
    assert golden_export(name=name, version=1) == sample_rows()
    assert golden_export(name=name) == rows
    assert GoldenCase.objects.get(golden_set=golden_set, case_id="new1").reviewed is False
    printed = io.StringIO()
    call_command("golden_export", name, "--version", "1", stdout=printed)
    assert [json.loads(line) for line in printed.getvalue().splitlines()] == sample_rows()


@pytest.mark.parametrize("bad_line, message", [
    ("{not json", ":3: not JSON"),
    (json.dumps({"id": "x", "hits": ["a"]}), ":3: missing query"),
    (json.dumps({"id": "g001", "query": "q", "hits": ["a"]}), ":3: duplicate id 'g001'"),
    (json.dumps({"id": "x", "query": "q", "hits": []}), ":3: missing hits"),
])
def test_a_malformed_file_writes_nothing_and_names_the_line(tmp_path, bad_line, message):
    name = unique()
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()[:2] + [bad_line]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(GoldenFileError, match=message) as caught:
        golden_import(name=name, path=path)
    assert str(path) in str(caught.value)
    assert not GoldenSet.objects.filter(name=name).exists()
    # an existing set keeps its cases and version
    golden_import(name=name, path=SAMPLE)
    with pytest.raises(GoldenFileError):
        golden_import(name=name, path=path)
    golden_set = GoldenSet.objects.get(name=name)
    assert (golden_set.current_version, golden_set.cases.count(), golden_set.versions.count()) == (1, 77, 1)


def test_a_case_from_a_real_trace_is_prefilled_with_the_kept_docs(sample_kb, make_staff):
    trace = real_trace()
    kept = []
    for row in trace.retrieval:
        if row["kept"] and row["doc"] not in kept:
            kept.append(row["doc"])
    assert "reconexion-fibra-es" in kept
    golden_set = GoldenSet.objects.create(name=unique())
    user = make_staff("ana", "analyst")
    case = golden_case_from_trace(trace=trace, user=user, golden_set=golden_set)
    assert (case.query, case.customer_id, case.hits) == (trace.query, "C-1001", kept)
    assert (case.origin, case.trace, case.must_pass) == ("trace", trace, False)
    golden_set.refresh_from_db()
    assert golden_set.current_version == 1
    version = GoldenSetVersion.objects.get(golden_set=golden_set, number=1)
    assert version.created_by == user and version.snapshot[0]["id"] == case.case_id
    again = golden_case_from_trace(trace=trace, user=user, golden_set=golden_set)  # a double click
    assert (again.pk, again.already_in_set) == (case.pk, True)
    golden_set.refresh_from_db()
    assert golden_set.current_version == 1 and golden_set.cases.count() == 1


def eval_json(golden) -> dict:
    out = io.StringIO()
    call_command("eval_retrieval", "--golden", str(golden), "--json", stdout=out)
    return json.loads(out.getvalue())


def test_eval_retrieval_by_set_name_matches_the_file_and_reports_the_version(sample_kb):
    name = unique()
    golden_import(name=name, path=SAMPLE)
    from_file, from_set = eval_json(SAMPLE), eval_json(name)
    assert from_file["golden_version"] is None
    assert from_set["golden_version"] == 1
    for key in ("cases", "recall@5", "mrr", "must_pass_failures", "hard_negative_wins"):
        assert from_set[key] == from_file[key]


def test_an_unknown_golden_name_is_still_a_missing_file_error():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no such file"):
        eval_json(unique("nothing"))


@pytest.mark.parametrize("role, status", [("analyst", 302), ("supervisor", 302), ("agent", 403)])
def test_make_a_golden_case_and_edit_it_per_role(client, make_staff, sample_kb, role, status):
    trace = real_trace()
    golden_set = GoldenSet.objects.create(name=unique())
    client.force_login(make_staff(f"u-{role}", role))
    page = client.get(reverse("evals:trace_panels", args=[trace.pk])).content.decode()
    assert ("Make a golden case" in page) is (role != "agent")
    response = client.post(reverse("evals:golden_case_create", args=[trace.pk]), {"golden_set": golden_set.pk})
    assert response.status_code == status
    if role == "agent":
        case = golden_case_from_trace(trace=trace, user=None, golden_set=golden_set)
        url = reverse("evals:golden_case", args=[case.pk])
        assert client.get(url).status_code == 403
        assert client.post(url, {"query": "x", "hits": "a"}).status_code == 403
        return
    case = GoldenCase.objects.get(golden_set=golden_set)
    assert response["Location"] == reverse("evals:golden_case", args=[case.pk])
    twice = client.post(reverse("evals:golden_case_create", args=[trace.pk]), {"golden_set": golden_set.pk})
    assert twice["Location"] == response["Location"] and GoldenCase.objects.filter(golden_set=golden_set).count() == 1
    assert "already holds this trace as case" in client.get(twice["Location"]).content.decode()
    form = client.get(response["Location"]).content.decode()
    assert "reconexion-fibra-es" in form and "csrfmiddlewaretoken" in form
    saved = client.post(response["Location"], {
        "query": "¿cuánto cuesta reconectar la fibra?", "facts": "Bs. 350,00\n\n24 horas ",
        "hits": "reconexion-fibra-es, reconexion-empresarial-es", "hard_negatives": "pago-movil-es",
        "must_pass": "on", "synthetic": "on"})
    assert saved.status_code == 302
    case.refresh_from_db()
    golden_set.refresh_from_db()
    assert case.facts == ["Bs. 350,00", "24 horas"]
    assert case.hits == ["reconexion-fibra-es", "reconexion-empresarial-es"]
    assert case.hard_negatives == ["pago-movil-es"]
    assert (case.must_pass, case.clarification_expected, case.synthetic) == (True, False, True)
    assert golden_set.current_version == 2
    assert golden_export(name=golden_set.name)[0]["facts"] == ["Bs. 350,00", "24 horas"]
    assert golden_export(name=golden_set.name, version=1)[0]["must_pass"] is False


def test_golden_case_views_need_csrf_and_post(client, make_staff, sample_kb):
    from django.test import Client

    trace = real_trace()
    golden_set = GoldenSet.objects.create(name=unique())
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(make_staff("ana", "analyst"))
    url = reverse("evals:golden_case_create", args=[trace.pk])
    assert csrf_client.post(url, {"golden_set": golden_set.pk}).status_code == 403
    client.force_login(make_staff("sup", "supervisor"))
    assert client.get(url).status_code == 405
    assert not GoldenCase.objects.exists() or not GoldenCase.objects.filter(golden_set=golden_set).exists()


def test_an_account_case_may_name_no_hit_documents(tmp_path):
    from evals.golden import read_golden_rows

    path = tmp_path / "account.jsonl"
    path.write_text(json.dumps({"id": "a1", "query": "¿por qué subió mi factura?", "customer_id": "C-1031",
                                "facts": ["Bs. 324,80"], "split": "dev"}) + "\n", encoding="utf-8")
    [row] = read_golden_rows(path)
    assert (row["hits"], row["customer_id"], row["facts"]) == ([], "C-1031", ["Bs. 324,80"])
