"""Human labels, judge verdicts, the hash split, the calibration report and a run's corrected pass rate."""

import uuid
from collections import Counter
from types import SimpleNamespace

import pytest

from core import clock
from desk.models import Contact, Conversation
from evals.judge import FaithfulnessJudge
from evals.judgement import Judgement
from evals.offline_judge import LexicalJudge
from evals.human_labels import (
    LabelError,
    calibration_report,
    human_label_save,
    judge_labelled,
    judge_verdict_record,
    run_corrected_rate,
    split_for,
)
from evals.models import EvalRun, EvalRunItem, GoldenSet, HumanLabel, JudgeVerdict
from tests.support.fake_openai import FakeOpenAI
from traces.models import Trace

EVIDENCE = [{"id": "E1", "text": "Reconexión fibra: la reconexión cuesta Bs. 350,00 y se hace en 4 horas hábiles.",
             "value": None}]
SUPPORTED = "La reconexión cuesta Bs. 350,00 [E1]."
UNSUPPORTED = "La reconexión es gratis y se hace en 2 horas [E1]."


# --- The split (no database) ------------------------------------------------------------------------------------

@pytest.mark.parametrize("item_key, split", [
    ("trace:1", "test"), ("trace:2", "train"), ("trace:3", "test"), ("trace:42", "dev"),
    ("item:1", "train"), ("item:2", "test"), ("item:3", "dev"), ("item:42", "test"),
])
def test_the_split_of_a_key_never_changes(item_key, split):
    assert split_for(item_key) == split


@pytest.mark.parametrize("prefix", ["trace", "item"])
def test_the_split_is_20_40_40_within_two_points_over_10000_keys(prefix):
    counts = Counter(split_for(f"{prefix}:{n}") for n in range(10_000))
    shares = {split: counts[split] / 10_000 for split in ("train", "dev", "test")}
    assert abs(shares["train"] - 0.20) <= 0.02
    assert abs(shares["dev"] - 0.40) <= 0.02
    assert abs(shares["test"] - 0.40) <= 0.02


# --- Rows -------------------------------------------------------------------------------------------------------

@pytest.fixture
def conversation(db):
    contact = Contact.objects.create(channel="webchat", name="Test", customer_id="C-1001", language="es")
    return Conversation.objects.create(contact=contact, channel="webchat")


@pytest.fixture
def make_trace(conversation):
    def make(*, answer=SUPPORTED, query="¿cuánto cuesta la reconexión?", split=None):
        while True:
            trace = Trace.objects.create(conversation=conversation, channel="webchat", outcome="answered",
                                         query=query, final_text=answer, evidence=EVIDENCE)
            if split is None or split_for(f"trace:{trace.pk}") == split:
                return trace
            trace.delete()  # keep only traces that hash into the wanted split

    return make


@pytest.fixture
def analyst(make_staff):
    return make_staff(f"ana-{uuid.uuid4().hex[:6]}", "analyst")


def a_judge(version):
    return SimpleNamespace(version=version, model="m")


def judgement(verdict, version="judge-x"):
    return Judgement(verdict=verdict, reason=f"judged {verdict}", judge_version=version, model="m", attempts=1,
                     raw="")


@pytest.fixture
def labelled(make_trace, analyst):
    """Return a factory: a trace on `split` with a human label and (unless None) a judge verdict."""
    def make(split, human, judge, version="judge-x"):
        trace = make_trace(split=split)
        human_label_save(trace=trace, label=human, author=analyst)
        if judge == "error":
            judge_verdict_record(trace=trace, error="judge call failed", judge=a_judge(version))
        elif judge is not None:
            judge_verdict_record(trace=trace, judgement=judgement(judge, version), judge=None)
        return trace

    return make


def run_with_items(*, version="judge-x", passes=0, fails=0, errors=0):
    golden_set = GoldenSet.objects.create(name=f"set-{uuid.uuid4().hex[:8]}")
    run = EvalRun.objects.create(golden_set=golden_set, golden_version=1, judge_version=version, judge_model="m")
    labels = ["pass"] * passes + ["fail"] * fails + ["error"] * errors
    for n, label in enumerate(labels):
        item = EvalRunItem.objects.create(run=run, case_id=f"c{n}", query="q", answer=SUPPORTED, evidence=EVIDENCE)
        if label == "error":
            judge_verdict_record(run_item=item, error="no verdict after 2 attempts", judge=a_judge(version))
        else:
            judge_verdict_record(run_item=item, judgement=judgement(label, version), judge=None)
    return run


# --- human_label_save / judge_verdict_record --------------------------------------------------------------------

def test_a_label_goes_to_the_split_of_its_key_and_a_second_label_replaces_the_first(make_trace, analyst):
    trace = make_trace()
    first = human_label_save(trace=trace, label="fail", note=" wrong fee ", author=analyst)
    assert (first.item_key, first.split, first.note) == (f"trace:{trace.pk}", split_for(f"trace:{trace.pk}"),
                                                         "wrong fee")
    second = human_label_save(trace=trace, label="pass", note="fine after all", author=analyst)
    assert second.pk == first.pk
    assert list(HumanLabel.objects.filter(trace=trace).values_list("label", "note")) == [("pass", "fine after all")]


def test_a_run_item_is_labelled_under_its_own_key(analyst):
    run = run_with_items(passes=1)
    item = run.items.get()
    saved = human_label_save(run_item=item, label="pass", author=analyst)
    assert (saved.item_key, saved.split, saved.trace_id) == (f"item:{item.pk}", split_for(f"item:{item.pk}"), None)


@pytest.mark.parametrize("targets, label, message", [
    ("none", "pass", "exactly one"), ("both", "pass", "exactly one"), ("trace", "maybe", "pass or fail"),
])
def test_a_label_needs_one_target_and_pass_or_fail(make_trace, analyst, targets, label, message):
    trace = make_trace()
    item = run_with_items(passes=1).items.get()
    kwargs = {"none": {}, "both": {"trace": trace, "run_item": item}, "trace": {"trace": trace}}[targets]
    with pytest.raises(LabelError, match=message):
        human_label_save(**kwargs, label=label, author=analyst)
    assert not HumanLabel.objects.filter(trace=trace).exists()


def test_a_verdict_is_one_row_per_item_and_judge_version_and_an_error_is_never_a_pass(make_trace):
    trace = make_trace()
    judge_verdict_record(trace=trace, error="no verdict after 2 attempts: not JSON", judge=LexicalJudge())
    judge_verdict_record(trace=trace, judgement=judgement("fail", "lexical-support-1"), judge=LexicalJudge())
    judge_verdict_record(trace=trace, judgement=judgement("pass", "faithfulness-1"), judge=None)
    rows = dict(JudgeVerdict.objects.filter(trace=trace).values_list("judge_version", "label"))
    assert rows == {"lexical-support-1": "fail", "faithfulness-1": "pass"}
    other = make_trace()
    error = judge_verdict_record(trace=other, error="judge call failed", judge=LexicalJudge())
    assert (error.label, error.reason, error.model) == ("error", "judge call failed", "offline")


# --- judge_labelled ---------------------------------------------------------------------------------------------

def test_the_offline_judge_judges_each_labelled_item_once(make_trace, analyst):
    good, bad, unlabelled = make_trace(answer=SUPPORTED), make_trace(answer=UNSUPPORTED), make_trace()
    human_label_save(trace=good, label="pass", author=analyst)
    human_label_save(trace=bad, label="fail", author=analyst)
    item = run_with_items(version="", passes=0).items.create(case_id="x", query="q", answer=UNSUPPORTED,
                                                             evidence=EVIDENCE)
    human_label_save(run_item=item, label="fail", author=analyst)
    assert judge_labelled(judge=LexicalJudge()) == 3
    verdicts = {v.item_key: v.label for v in JudgeVerdict.objects.filter(judge_version="lexical-support-1")}
    assert verdicts == {f"trace:{good.pk}": "pass", f"trace:{bad.pk}": "fail", f"item:{item.pk}": "fail"}
    assert not JudgeVerdict.objects.filter(trace=unlabelled).exists()
    assert judge_labelled(judge=LexicalJudge()) == 0  # nothing left for this version


def test_the_model_judge_sees_the_trace_and_a_malformed_reply_is_recorded_as_an_error(make_trace, analyst):
    first, second = make_trace(query="¿cuánto cuesta la reconexión?"), make_trace(answer=UNSUPPORTED)
    human_label_save(trace=first, label="pass", author=analyst)
    human_label_save(trace=second, label="fail", author=analyst)
    with FakeOpenAI() as fake:
        fake.chat_script = [{"reason": "E1 says Bs. 350,00", "verdict": "pass"}, "not json", "still not json"]
        judge = FaithfulnessJudge(api_key="k", base_url=fake.base_url, model="judge-model", timeout=5)
        assert judge_labelled(judge=judge, limit=5) == 2
    user = fake.requests[0]["body"]["messages"][1]["content"]
    assert "¿cuánto cuesta la reconexión?" in user and "[E1] Reconexión fibra" in user and SUPPORTED in user
    rows = {v.item_key: (v.label, v.model) for v in JudgeVerdict.objects.filter(judge_version="faithfulness-1")}
    assert rows == {f"trace:{first.pk}": ("pass", "judge-model"), f"trace:{second.pk}": ("error", "judge-model")}
    assert "no verdict after 2 attempts" in JudgeVerdict.objects.get(trace=second).reason


# --- calibration_report -----------------------------------------------------------------------------------------

def test_the_calibration_report_counts_dev_pairs_only(labelled):
    # dev: humans pass 6 (judge passes 5), humans fail 4 (judge fails 3) → TPR 5/6, TNR 3/4
    for judge in ["pass"] * 5 + ["fail"]:
        labelled("dev", "pass", judge)
    for judge in ["fail"] * 3 + ["pass"]:
        labelled("dev", "fail", judge)
    labelled("dev", "pass", "error")  # a judge error: left out, counted
    labelled("dev", "fail", None)  # not judged yet
    labelled("dev", "fail", "pass", version="another-judge")  # another version's verdict does not count
    labelled("test", "fail", "pass")  # other splits do not count
    labelled("train", "pass", "fail")
    report = calibration_report(judge_version="judge-x", split="dev")
    assert "error" not in report
    assert (report["tpr"], report["tnr"]) == (0.8333, 0.75)
    assert (report["true_passes"], report["human_passes"], report["true_fails"], report["human_fails"]) == (5, 6, 3, 4)
    assert (report["pairs"], report["errors"], report["labelled"], report["unjudged"]) == (10, 1, 13, 2)
    assert report["warnings"] == [
        "only 6 human-labelled pass items (< 20): TPR is a rough estimate",
        "only 4 human-labelled fail items (< 20): TNR is a rough estimate",
    ]
    test_report = calibration_report(judge_version="judge-x", split="test")
    assert test_report["pairs"] == 1 and "not enough labels" in test_report["error"]


def test_without_enough_labels_the_report_says_so_instead_of_failing(labelled):
    empty = calibration_report(judge_version="judge-x", split="dev")
    assert empty["pairs"] == 0 and empty["tpr"] is None
    assert empty["error"].startswith("not enough labels on dev judged by judge-x")
    labelled("dev", "pass", "pass")
    labelled("dev", "pass", "fail")
    only_passes = calibration_report(judge_version="judge-x", split="dev")
    assert (only_passes["human_passes"], only_passes["human_fails"], only_passes["tnr"]) == (2, 0, None)
    assert "no human-labelled fail" in only_passes["error"]
    with pytest.raises(LabelError):
        calibration_report(judge_version="judge-x", split="holdout")


# --- run_corrected_rate -----------------------------------------------------------------------------------------

@pytest.fixture
def calibrated(labelled):
    """Test split: humans pass 10 (judge passes 9), humans fail 10 (judge fails 8) → TPR 0.9, TNR 0.8."""
    for judge in ["pass"] * 9 + ["fail"]:
        labelled("test", "pass", judge)
    for judge in ["fail"] * 8 + ["pass"] * 2:
        labelled("test", "fail", judge)
    for _ in range(3):
        labelled("dev", "fail", "pass")  # dev labels never calibrate a run


def test_a_runs_corrected_rate_uses_the_test_split_and_is_reproducible_with_its_seed(calibrated):
    run = run_with_items(passes=7, fails=3, errors=1)
    result = run_corrected_rate(run=run, seed=7, resamples=500)
    # θ = (0.7 + 0.8 − 1) / (0.9 + 0.8 − 1) = 0.5 / 0.7
    assert result["value"] == 0.7143 and result["observed"] == 0.7
    assert (result["tpr"], result["tnr"], result["human_passes"], result["human_fails"]) == (0.9, 0.8, 10, 10)
    assert (result["judged"], result["errors"], result["seed"], result["judge_version"]) == (10, 1, 7, "judge-x")
    assert result["clipped"] is False
    assert 0 <= result["lower"] < result["value"] < result["upper"] <= 1
    assert run_corrected_rate(run=run, seed=7, resamples=500) == result


def test_a_clipped_rate_says_so(calibrated):
    result = run_corrected_rate(run=run_with_items(passes=10), resamples=0)
    assert (result["value"], result["clipped"], result["lower"]) == (1.0, True, None)  # (1 + .8 − 1)/.7 > 1


def test_a_run_that_cannot_be_corrected_says_why(labelled):
    assert run_corrected_rate(run=run_with_items(version="")) == {
        "error": "the run was not judged", "observed": None, "judge_version": ""}
    only_errors = run_corrected_rate(run=run_with_items(errors=2))
    assert only_errors["observed"] is None and "no verdicts of judge-x" in only_errors["error"]
    for _ in range(2):
        labelled("test", "pass", "pass")
    no_fails = run_corrected_rate(run=run_with_items(passes=3, fails=1))
    assert no_fails["observed"] == 0.75 and "no human-labelled fail" in no_fails["error"]
    labelled("test", "fail", "pass")
    labelled("test", "fail", "pass")  # the judge passes every answer: TPR 1, TNR 0
    chance = run_corrected_rate(run=run_with_items(passes=3, fails=1))
    assert "no better than chance" in chance["error"] and chance["judge_version"] == "judge-x"


def test_a_review_note_that_judges_faithfulness_becomes_the_traces_calibration_label(make_trace, analyst):
    import datetime as dt

    from traces.models import ReviewSession, SessionTrace
    from traces.services import review_note_save

    answered, escalated = make_trace(), make_trace(answer="")
    now = clock.now()
    session = ReviewSession.objects.create(name="s", window_start=now - dt.timedelta(days=7), window_end=now,
                                           seed=1, requested_size=2)
    for position, trace in enumerate([answered, escalated]):
        SessionTrace.objects.create(session=session, trace=trace, source="uniform", position=position)

    review_note_save(session=session, trace=answered, author=analyst, verdict="fail",
                     first_failure="The price is not in the passage.", stage="writing", model_faithful=False)
    review_note_save(session=session, trace=escalated, author=analyst, verdict="pass", model_faithful=True)
    review_note_save(session=session, trace=answered, author=analyst, verdict="defer")  # no faithfulness said

    label = HumanLabel.objects.get()
    assert label.trace == answered and label.label == "fail" and label.note == "The price is not in the passage."
    assert label.split == split_for(f"trace:{answered.pk}")
