"""The analyst's eval pages: golden sets, runs with plots, comparison, human labels, calibration, permissions."""

import json
import re
import uuid
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from django.template.defaultfilters import floatformat
from django.urls import reverse

from core import clock
from evals.models import (
    EvalRun,
    EvalRunItem,
    GoldenCase,
    GoldenSet,
    GoldenSetVersion,
    HumanLabel,
    JudgeVerdict,
)
from evals.run_plots import PlotValue, line_plot
from traces.models import FailureClass, ReviewNote, ReviewSession, Trace

pytestmark = pytest.mark.django_db

SAMPLE = Path(settings.BASE_DIR) / "evals" / "fixtures" / "golden.jsonl"
CORRECTED = {"value": 0.9, "lower": 0.8, "upper": 0.95, "observed": 0.85, "tpr": 0.9, "tnr": 0.8, "human_passes": 30,
             "human_fails": 25, "judged": 3, "errors": 0, "seed": 2026, "judge_version": "faithfulness-1",
             "clipped": False}
UNDEFINED = {"error": "TPR + TNR ≤ 1: the judge is no better than chance", "observed": 0.7}


def unique(prefix="evals"):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def analyst(client, make_staff):
    user = make_staff(unique("ana"), "analyst")
    client.force_login(user)
    return user


def make_case(golden_set, case_id, **fields):
    return GoldenCase.objects.create(golden_set=golden_set, case_id=case_id, query=f"query {case_id}",
                                     hits=["pago-movil-es"], **fields)


def make_run(golden_set, *, items, metrics, status="done", **fields):
    """Create a finished run with one item per (case_id, failures, answer)."""
    run = EvalRun.objects.create(golden_set=golden_set, golden_version=golden_set.current_version, status=status,
                                 metrics=metrics, prompt_version="writer-3", model="template", index_version=4,
                                 judge_version="faithfulness-1", judge_model="judge-small",
                                 finished_at=clock.now(), **fields)
    for case_id, failures, answer in items:
        EvalRunItem.objects.create(run=run, case_id=case_id, query=f"query {case_id}", answer=answer,
                                   failures=failures, first_hit_rank=None if failures else 1,
                                   judge_label="fail" if failures else "pass", grounded=not failures,
                                   outcome="answered", latency_ms=123.4, must_pass=case_id == "c1")
    return run


@pytest.fixture
def seeded():
    """A set with three reviewed cases and one unreviewed variant, run twice: c1 breaks, c2 is fixed, c4 stays bad."""
    golden_set = GoldenSet.objects.create(name=unique(), current_version=2)
    for number in (1, 2):
        GoldenSetVersion.objects.create(golden_set=golden_set, number=number, note=f"note for v{number}")
    make_case(golden_set, "c1", must_pass=True)
    make_case(golden_set, "c2", clarification_expected=True)
    make_case(golden_set, "c4")
    make_case(golden_set, "v1", synthetic=True, reviewed=False, origin="variant")
    base = make_run(golden_set, items=[("c1", [], "Son Bs. 350,00"), ("c2", ["no hit in top 5"], "No sé"),
                                       ("c4", ["missing fact: 5 días"], "Tarda 3 días")],
                    metrics={"cases": 3, "recall@5": 0.8, "mrr": 0.6, "must_pass_failures": [],
                             "corrected_pass_rate": CORRECTED})
    head = make_run(golden_set, items=[("c1", ["hard negative above the first hit"], "Otra cosa"),
                                       ("c2", [], "Son Bs. 350,00"), ("c4", ["missing fact: 5 días"], "Tarda 3")],
                    metrics={"cases": 3, "recall@5": 0.6, "mrr": 0.5, "must_pass_failures": ["c1"],
                             "corrected_pass_rate": UNDEFINED})
    return golden_set, base, head


def section(body: str, element_id: str) -> str:
    """Return the HTML of the element with this id (up to its closing tag of the same name)."""
    match = re.search(rf'<(\w+)[^>]*\bid="{re.escape(element_id)}"', body)
    assert match, f"no element #{element_id}"
    tag = match.group(1)
    end = body.index(f"</{tag}>", match.end())
    return body[match.start():end]


def text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


# --- golden sets -------------------------------------------------------------------------------------------------


def test_golden_sets_page_shows_version_case_counts_and_the_last_runs_numbers(client, analyst, seeded):
    golden_set, base, head = seeded
    body = client.get(reverse("evals:golden_sets")).content.decode()
    row = text(section(body, f"set-{golden_set.pk}"))
    # version, cases, must pass, synthetic, awaiting review, last run (the head), recall@5, MRR
    assert row.startswith(f"{golden_set.name} v2 4 1 1 1 #{head.pk}")
    assert "0.600 @5 0.500" in row


def test_golden_set_page_lists_cases_with_flags_versions_runs_and_the_review_queue(client, analyst, seeded):
    golden_set, base, head = seeded
    body = client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode()
    cases = text(section(body, "cases"))
    assert "c1 query c1 pago-movil-es — must pass" in cases
    assert "c2 query c2 pago-movil-es — clarification" in cases
    assert "synthetic, unreviewed Variant" in cases
    queue = section(body, "review-queue")
    # Read as text: the CSRF token in the forms' markup is random and may hold "c1".
    assert "v1" in text(queue) and "c1" not in text(queue)
    assert 'value="approve"' in queue and 'value="reject"' in queue
    assert "v2 ·" in body and "note for v1" in body
    assert f"#{head.pk}" in body and f"#{base.pk}" in body
    assert 'name="retrieval_only"' in body


# --- runs --------------------------------------------------------------------------------------------------------


def test_runs_page_shows_versions_numbers_corrected_rate_or_why_undefined_and_plots(client, analyst, seeded):
    golden_set, base, head = seeded
    body = client.get(reverse("evals:runs"), {"golden": golden_set.pk}).content.decode()
    base_row, head_row = text(section(body, f"run-{base.pk}")), text(section(body, f"run-{head.pk}"))
    assert f"{golden_set.name} v2 full path writer-3 4 template faithfulness-1 (judge-small)" in base_row
    assert "0.800 @5 0.600 0.900 [0.800, 0.950] 0 Done" in base_row
    assert "0.600 @5 0.500 undefined: TPR + TNR ≤ 1: the judge is no better than chance (observed 0.700) 1 Done" \
        in head_row
    recall_plot = section(body, "plot-recall")
    assert recall_plot.count("<circle") == 2 and recall_plot.count("<polyline") == 1
    assert f"run #{base.pk}: 0.800" in recall_plot and f"run #{head.pk}: 0.600" in recall_plot
    corrected_plot = section(body, "plot-corrected")
    # One run has a corrected rate, the other none: one point with its interval as a whisker, no line to zero.
    assert corrected_plot.count("<circle") == 1 and 'class="whisker"' in corrected_plot
    assert f"run #{base.pk}: 0.900 [0.800, 0.950]" in corrected_plot
    compare = section(body, "runs")  # the table; the compare form preselects the two latest runs of the set
    assert compare
    assert re.search(rf'name="base">.*?<option value="{base.pk}" selected', body, re.S)
    assert re.search(rf'name="head">.*?<option value="{head.pk}" selected', body, re.S)


def test_run_page_lists_failing_cases_first_with_answer_and_a_label_form_showing_the_split(client, analyst, seeded):
    from evals.human_labels import split_for

    golden_set, base, head = seeded
    body = client.get(reverse("evals:run", args=[head.pk])).content.decode()
    order = re.findall(r'<details class="run-item (\w+)" id="item-(\d+)"', body)
    case_of = dict(EvalRunItem.objects.filter(run=head).values_list("pk", "case_id"))
    assert [(state, case_of[int(pk)]) for state, pk in order] == [("failing", "c1"), ("failing", "c4"),
                                                                   ("passed", "c2")]
    c1 = head.items.get(case_id="c1")
    row = section(body, f"item-{c1.pk}")
    assert "hard negative above the first hit" in row and "Otra cosa" in row and "must pass" in row
    assert f'<strong class="split">{split_for(f"item:{c1.pk}")}</strong>' in row
    assert "2 of 3 cases failing" in text(section(body, "run-numbers"))


def test_the_compare_page_lists_newly_failing_before_newly_passing_then_the_numbers(client, analyst, seeded):
    golden_set, base, head = seeded
    response = client.get(reverse("evals:run_compare"), {"base": base.pk, "head": head.pk})
    assert response.status_code == 200
    body = response.content.decode()
    assert text(section(body, "newly-failing")) == "Newly failing (1) c1"
    assert text(section(body, "newly-passing")) == "Newly passing (1) c2"
    assert text(section(body, "still-failing")) == "Still failing (1) c4"
    assert body.index('id="newly-failing"') < body.index('id="newly-passing"') < body.index('id="still-failing"') \
        < body.index('id="numbers"')
    numbers = text(section(body, "numbers"))
    assert "-0.2" in numbers and "different golden sets" not in body


def test_comparing_runs_of_different_golden_sets_is_allowed_with_a_warning(client, analyst, seeded):
    golden_set, base, head = seeded
    other = GoldenSet.objects.create(name=unique(), current_version=1)
    elsewhere = make_run(other, items=[("c1", [], "ok")], metrics={"recall@5": 1.0, "mrr": 1.0})
    response = client.get(reverse("evals:run_compare"), {"base": base.pk, "head": elsewhere.pk})
    assert response.status_code == 200
    assert "different golden sets" in text(section(response.content.decode(), "different-sets"))


def test_compare_without_two_runs_goes_back_to_the_runs_page(client, analyst):
    response = client.get(reverse("evals:run_compare"), {"base": "1"})
    assert response.status_code == 302 and response["Location"] == reverse("evals:runs")


# --- human labels ------------------------------------------------------------------------------------------------


def test_the_label_form_on_a_run_item_saves_the_label_and_the_page_shows_it_with_its_split(client, analyst, seeded):
    from evals.human_labels import split_for

    golden_set, base, head = seeded
    item = head.items.get(case_id="c4")
    response = client.post(reverse("evals:run_item_label", args=[item.pk]), {"label": "fail", "note": "3 ≠ 5 días"})
    assert response.status_code == 302 and response["Location"].endswith(f"/runs/{head.pk}/#item-{item.pk}")
    label = HumanLabel.objects.get(run_item=item)
    assert (label.label, label.note, label.split, label.author) == ("fail", "3 ≠ 5 días",
                                                                     split_for(f"item:{item.pk}"), analyst)
    row = text(section(client.get(reverse("evals:run", args=[head.pk])).content.decode(), f"item-{item.pk}"))
    assert f"split {label.split} · labelled fail by {analyst.username}" in row
    # A second save changes the label; there is still one label per item.
    client.post(reverse("evals:run_item_label", args=[item.pk]), {"label": "pass", "note": ""})
    assert HumanLabel.objects.filter(run_item=item).count() == 1
    assert HumanLabel.objects.get(run_item=item).label == "pass"


def test_the_label_form_answers_htmx_with_the_form_fragment_and_refuses_a_missing_label(client, analyst, seeded):
    golden_set, base, head = seeded
    item = head.items.get(case_id="c1")
    url = reverse("evals:run_item_label", args=[item.pk])
    refused = client.post(url, {"note": "no label"}, headers={"HX-Request": "true"})
    assert refused.status_code == 400 and "Choose pass or fail." in refused.content.decode()
    assert not HumanLabel.objects.filter(run_item=item).exists()
    saved = client.post(url, {"label": "pass"}, headers={"HX-Request": "true"})
    fragment = saved.content.decode()
    assert saved.status_code == 200 and fragment.lstrip().startswith("<form") and "<html" not in fragment
    assert "labelled <strong>pass</strong>" in fragment


def test_a_trace_page_has_the_human_label_form_with_the_split(client, analyst):
    from desk.models import Contact, Conversation
    from evals.human_labels import split_for

    contact = Contact.objects.create(channel="webchat", name="T", language="es")
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    trace = Trace.objects.create(conversation=conversation, channel="webchat", outcome="answered",
                                 query="cuanto cuesta", final_text="Son Bs. 350,00")
    assert reverse("evals:trace_panels", args=[trace.pk]) in client.get(reverse("traces:detail", args=[trace.pk])).content.decode()
    page = client.get(reverse("evals:trace_panels", args=[trace.pk])).content.decode()
    assert f'split <strong class="split">{split_for(f"trace:{trace.pk}")}</strong>' in page
    response = client.post(reverse("evals:trace_label", args=[trace.pk]), {"label": "pass", "note": "all cited"})
    assert response.status_code == 302
    label = HumanLabel.objects.get(trace=trace)
    assert (label.label, label.note, label.item_key) == ("pass", "all cited", f"trace:{trace.pk}")
    assert "labelled <strong>pass</strong>" in client.get(reverse("evals:trace_panels", args=[trace.pk])).content.decode()


# --- variants ----------------------------------------------------------------------------------------------------


def test_approve_and_reject_of_synthetic_cases_survive_a_double_click(client, analyst, seeded):
    golden_set, base, head = seeded
    keep = GoldenCase.objects.get(golden_set=golden_set, case_id="v1")
    drop = make_case(golden_set, "v2", synthetic=True, reviewed=False, origin="variant")
    approve = reverse("evals:golden_case_review", args=[golden_set.pk, keep.pk])
    reject = reverse("evals:golden_case_review", args=[golden_set.pk, drop.pk])
    first = client.post(approve, {"decision": "approve"})
    version_after_approve = GoldenSet.objects.get(pk=golden_set.pk).current_version
    second = client.post(approve, {"decision": "approve"})
    assert first.status_code == second.status_code == 302
    keep.refresh_from_db()
    assert keep.reviewed and keep.synthetic
    assert GoldenSet.objects.get(pk=golden_set.pk).current_version == version_after_approve  # acted once
    assert [client.post(reject, {"decision": "reject"}).status_code for _ in range(2)] == [302, 302]
    assert not GoldenCase.objects.filter(pk=drop.pk, reviewed=False).exists()
    page = client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode()
    assert "Nothing to review." in section(page, "review-queue")


def test_generate_variants_from_a_failure_class_puts_them_in_the_review_queue(client, analyst, seeded):
    from desk.models import Contact, Conversation

    golden_set, base, head = seeded
    contact = Contact.objects.create(channel="webchat", name="T", language="es")
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    trace = Trace.objects.create(conversation=conversation, channel="webchat", outcome="answered", language="es",
                                 query="¿Cuánto cuesta la reconexión del plan Fibra 300?")
    now = clock.now()
    session = ReviewSession.objects.create(name=unique("session"), window_start=now, window_end=now, seed=1,
                                           requested_size=1)
    failure_class = FailureClass.objects.create(session=session, name="Wrong fee", definition="d", stage="retrieval")
    ReviewNote.objects.create(session=session, trace=trace, author=analyst, verdict="fail", stage="retrieval",
                              first_failure="cited the old fee", failure_class=failure_class)
    page = client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode()
    assert f'<option value="{failure_class.pk}">Wrong fee (Retrieval, 1 note)</option>' in page
    response = client.post(reverse("evals:golden_set_variants", args=[golden_set.pk]),
                           {"failure_class": failure_class.pk, "per_trace": "2"})
    assert response.status_code == 302
    made = list(GoldenCase.objects.filter(golden_set=golden_set, failure_class=failure_class))
    assert len(made) == 2 and all(c.synthetic and not c.reviewed and c.origin == "variant" for c in made)
    assert all("300" in c.query for c in made)  # numbers are kept
    queue = text(section(client.get(reverse("evals:golden_set", args=[golden_set.pk])).content.decode(),
                         "review-queue"))
    assert queue.startswith("Synthetic cases awaiting review (3)") and all(c.case_id in queue for c in made)


# --- calibration -------------------------------------------------------------------------------------------------


def labelling_run(golden_set, *, size=150):
    """Return a finished run of `size` answered items, to label and judge, grouped by their split."""
    from evals.human_labels import split_for

    run = make_run(golden_set, items=[], metrics={"recall@5": 1.0, "mrr": 1.0})
    EvalRunItem.objects.bulk_create([EvalRunItem(run=run, case_id=f"k{n:03d}", query="q", answer="a",
                                                 outcome="answered") for n in range(size)])
    by_split = {"train": [], "dev": [], "test": []}
    for item in run.items.order_by("case_id"):
        by_split[split_for(f"item:{item.pk}")].append(item)
    return run, by_split


def label_and_judge(items, *, human, judge, version, author):
    from evals.human_labels import human_label_save

    for item, human_label, judge_label in zip(items, human, judge, strict=True):
        human_label_save(run_item=item, label=human_label, note="", author=author)
        JudgeVerdict.objects.create(run_item=item, item_key=f"item:{item.pk}", judge_version=version,
                                    label=judge_label)


def test_calibration_page_shows_tpr_tnr_with_counts_the_small_class_warning_and_the_corrected_rate(
        client, analyst, seeded):
    from evals.human_labels import run_corrected_rate

    golden_set, base, head = seeded
    version = f"judge-{uuid.uuid4().hex[:6]}"
    labelled, by_split = labelling_run(golden_set)
    # dev: 5 human passes (judge passes 4), 5 human fails (judge fails 4) — both classes under 20.
    label_and_judge(by_split["dev"][:10], human=["pass"] * 5 + ["fail"] * 5,
                    judge=["pass"] * 4 + ["fail"] + ["fail"] * 4 + ["pass"], version=version, author=analyst)
    # test: 20 human passes (judge passes 18), 20 human fails (judge fails 18): TPR = TNR = 0.9.
    label_and_judge(by_split["test"][:40], human=["pass"] * 20 + ["fail"] * 20,
                    judge=["pass"] * 18 + ["fail"] * 2 + ["fail"] * 18 + ["pass"] * 2, version=version,
                    author=analyst)
    # The latest run judged with this version: 5 of 10 answers pass → θ = (0.5 + 0.9 − 1) / (0.9 + 0.9 − 1) = 0.5.
    judged = make_run(golden_set, items=[(f"j{n}", [], "a") for n in range(10)], metrics={"recall@5": 1.0})
    EvalRun.objects.filter(pk__in=[labelled.pk, judged.pk]).update(judge_version=version)
    for n, item in enumerate(judged.items.order_by("case_id")):
        JudgeVerdict.objects.create(run_item=item, item_key=f"item:{item.pk}", judge_version=version,
                                    label="pass" if n < 5 else "fail")
    body = client.get(reverse("evals:calibration"), {"judge_version": version, "split": "dev"}).content.decode()
    assert text(section(body, "tpr")) == "TPR (judge passes what a human passes) 0.800 4 5"
    assert text(section(body, "tnr")) == "TNR (judge fails what a human fails) 0.800 4 5"
    assert text(section(body, "accuracy")).count("(< 20)") == 2  # one warning per small class
    assert "10 labelled on dev · 10 judged by this version" in text(section(body, "coverage"))
    judged.refresh_from_db()
    expected = run_corrected_rate(run=judged, seed=2026)
    assert expected["value"] == 0.5 and expected["lower"] <= 0.5 <= expected["upper"]
    latest = text(section(body, "latest-run"))
    assert f"Run #{judged.pk}" in latest
    interval = f"[{floatformat(expected['lower'], 3)}, {floatformat(expected['upper'], 3)}]"
    assert f"0.500 0.500 {interval} {version} 2026" in latest
    test_split = client.get(reverse("evals:calibration"), {"judge_version": version, "split": "test"})
    assert text(section(test_split.content.decode(), "tpr")).endswith("0.900 18 20")


def test_calibration_shows_undefined_with_the_reason_when_the_judge_is_no_better_than_chance(client, analyst,
                                                                                               seeded):
    golden_set, base, head = seeded
    version = f"judge-{uuid.uuid4().hex[:6]}"
    labelled, by_split = labelling_run(golden_set)
    # test: the judge agrees with the human on half of each class: TPR + TNR − 1 = 0.
    label_and_judge(by_split["test"][:40], human=["pass"] * 20 + ["fail"] * 20,
                    judge=["pass", "fail"] * 20, version=version, author=analyst)
    EvalRun.objects.filter(pk__in=[labelled.pk, head.pk]).update(judge_version=version)
    EvalRun.objects.filter(pk=head.pk).update(started_at=clock.now())
    item = head.items.first()
    JudgeVerdict.objects.create(run_item=item, item_key=f"item:{item.pk}", judge_version=version, label="pass")
    body = client.get(reverse("evals:calibration"), {"judge_version": version, "split": "test"}).content.decode()
    assert f"<option selected>{version}</option>" in body
    assert text(section(body, "tpr")).endswith("0.500 10 20")
    undefined = text(section(body, "corrected-undefined"))
    assert undefined.startswith(f"Corrected pass rate undefined: {version} on the test split:")
    assert "chance" in undefined


def test_calibration_without_labels_says_why_it_is_not_computable(client, analyst, seeded):
    version = f"judge-{uuid.uuid4().hex[:6]}"
    JudgeVerdict.objects.create(run_item=seeded[2].items.first(), item_key=f"item:{seeded[2].items.first().pk}",
                                judge_version=version, label="pass")
    body = client.get(reverse("evals:calibration"), {"judge_version": version}).content.decode()
    assert text(section(body, "calibration-error")).startswith("Not computable: not enough labels on dev")
    assert "No finished run was judged with this version." in body


def test_judge_the_labelled_items_button_records_a_verdict_for_each_labelled_item(client, analyst, seeded):
    from evals.judge import get_judge

    golden_set, base, head = seeded
    judge = get_judge()
    for item in head.items.all():
        HumanLabel.objects.create(run_item=item, item_key=f"item:{item.pk}", label="pass", split="dev",
                                  author=analyst)
    response = client.post(reverse("evals:calibration"), {"split": "test"})
    assert response.status_code == 302 and f"judge_version={judge.version}&split=test" in response["Location"]
    judged = JudgeVerdict.objects.filter(run_item__run=head, judge_version=judge.version)
    assert judged.count() == 3


# --- the run form end to end ------------------------------------------------------------------------------------


def test_run_this_set_queues_the_task_and_the_finished_run_shows_on_the_runs_page(
        client, analyst, sample_kb, django_capture_on_commit_callbacks):
    from evals.services import golden_import

    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:3]]
    path = Path(settings.BASE_DIR) / "var" / f"{unique('golden')}.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    try:
        name = unique()
        golden_import(name=name, path=path)
    finally:
        path.unlink()
    golden_set = GoldenSet.objects.get(name=name)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = client.post(reverse("evals:golden_set_run", args=[golden_set.pk]), {"retrieval_only": "on"})
    assert len(callbacks) == 1
    assert response.status_code == 302 and response["Location"] == f"{reverse('evals:runs')}?golden={golden_set.pk}"
    run = EvalRun.objects.get(golden_set=golden_set)
    assert (run.status, run.retrieval_only, run.golden_version, run.created_by) == ("done", True, 1, analyst)
    assert sorted(run.items.values_list("case_id", flat=True)) == ["g001", "g002", "g003"]
    page = client.get(response["Location"]).content.decode()
    row = text(section(page, f"run-{run.pk}"))
    assert f"{name} v1 retrieval only" in row and f"{run.metrics['recall@5']:.3f} @5" in row
    assert "Run of" in page and "queued (retrieval only)" in page


# --- permissions -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["agent", "kb_editor"])
def test_agents_and_kb_editors_get_403_on_every_eval_page_and_action(client, make_staff, seeded, role):
    golden_set, base, head = seeded
    client.force_login(make_staff(unique(role), role))
    case = GoldenCase.objects.get(golden_set=golden_set, case_id="v1")
    item = head.items.first()
    pages = [reverse("evals:golden_sets"), reverse("evals:golden_set", args=[golden_set.pk]),
             reverse("evals:runs"), reverse("evals:run", args=[head.pk]),
             f"{reverse('evals:run_compare')}?base={base.pk}&head={head.pk}", reverse("evals:calibration")]
    actions = [(reverse("evals:golden_set_run", args=[golden_set.pk]), {}),
               (reverse("evals:golden_set_variants", args=[golden_set.pk]), {}),
               (reverse("evals:golden_case_review", args=[golden_set.pk, case.pk]), {"decision": "approve"}),
               (reverse("evals:run_item_label", args=[item.pk]), {"label": "pass"}),
               (reverse("evals:calibration"), {})]
    assert [client.get(url).status_code for url in pages] == [403] * len(pages)
    assert [client.post(url, data).status_code for url, data in actions] == [403] * len(actions)
    assert not EvalRun.objects.filter(golden_set=golden_set).exclude(pk__in=[base.pk, head.pk]).exists()
    assert not HumanLabel.objects.filter(run_item=item).exists()
    case.refresh_from_db()
    assert not case.reviewed


def test_a_supervisor_may_use_the_eval_pages_and_the_nav_links_them(client, make_staff, seeded):
    client.force_login(make_staff(unique("sol"), "supervisor"))
    assert client.get(reverse("evals:runs")).status_code == 200
    assert f'href="{reverse("evals:golden_sets")}">Evals<' in client.get(reverse("home")).content.decode()


# --- plot layout (pure) -----------------------------------------------------------------------------------------


def test_a_run_without_a_value_breaks_the_line_and_intervals_make_a_band():
    plot = line_plot([PlotValue("#1", 0.5, 0.4, 0.6), PlotValue("#2", 1.0, 0.9, 1.0), PlotValue("#3", None),
                      PlotValue("#4", 0.0)], width=240, height=124)
    assert len(plot.points) == 3 and len(plot.lines) == 2 and len(plot.bands) == 1
    first, second, last = plot.points
    assert (first.y, second.y, last.y) == (55.0, 10.0, 100.0)  # 90 px of plot height, 10 px top margin
    assert (first.y_upper, first.y_lower) == (46.0, 64.0)
    assert first.x == 40.0 and last.x == 228.0
    assert plot.lines[1] == "228.0,100.0"
