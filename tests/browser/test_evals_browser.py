"""An analyst builds a golden set from traces, runs it, labels answers and reads the judge's calibration.

The analyst's eval loop, in Debian's Chromium. The traces are real web-chat turns through the bot (the
template writer: no model server) and the judge is the offline LexicalJudge, as in the demo without a
model. The analyst makes a golden case from each trace page and labels the trace's own answer, runs the
set on the whole answer path, labels the run's items pass/fail on the run page, presses "Judge the
labelled items" on the calibration page and reads TPR/TNR with their counts — checked against the
HumanLabel and JudgeVerdict rows — and the corrected pass rate: a number with its interval, or
"undefined" with the reason. After fixing one case's fact and adding one the bot never says, a second
run and the comparison page show the first case newly passing and the second newly failing.

Screenshots go to var/screenshots/ (evals-run.png, evals-calibration.png); the copies in docs/screenshots/
are from a passing run.
"""

import re
import uuid

from tests.browser.conftest import BROWSER_MARKS, SCREENSHOTS, log_in

pytestmark = BROWSER_MARKS

# One web-chat customer per question; the four sample documents answer most of them.
QUESTIONS = [
    ("Marisol Rojas", "cuanto cobran por reconexion de fibra"),
    ("Pedro Salas", "cuando cierra mi ciclo de facturacion"),
    ("Lucía Mendoza", "¿el cambio de plan tiene costo?"),
    ("Jorge Paz", "¿por qué canales los puedo contactar?"),
    ("Ana Quispe", "cuanto tarda la reconexion de fibra"),
    ("Raúl Vargas", "quiero cambiar de plan"),
    ("Elena Ruiz", "¿atienden por whatsapp los domingos?"),
    ("Tomás León", "¿cuándo vence la factura?"),
]
SET_NAME = "web-chat"
WRONG_FACT = "Bs. 9.999,99"  # a figure no sample document states: an answer never contains it


def _answered_traces():
    """Run one real bot turn per web-chat customer; return the traces the bot answered."""
    from bot.turn import run_turn
    from bot.writer import TemplateWriter
    from desk.models import Channel, Contact, Conversation, Message

    traces = []
    for name, text in QUESTIONS:
        contact = Contact.objects.create(channel=Channel.WEBCHAT, name=name, language="es")
        conversation = Conversation.objects.create(contact=contact, channel=Channel.WEBCHAT)
        message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind="text",
                                         text=text, provider_message_id=f"web.{uuid.uuid4().hex}")
        trace = run_turn(message_id=message.pk, writer=TemplateWriter())
        assert trace is not None
        traces.append(trace)
    return [t for t in traces if t.outcome == "answered"]


def _label_for(split: str, given: dict) -> str:
    """Within each split alternate pass, fail, pass…: every split with two labels has both classes."""
    given[split] = given.get(split, 0) + 1
    return "pass" if given[split] % 2 else "fail"


def _expected_accuracy(judge_version: str, split: str) -> dict:
    """Count judge-vs-human agreement on a split straight from the HumanLabel and JudgeVerdict rows."""
    from evals.models import HumanLabel, JudgeVerdict

    human = dict(HumanLabel.objects.filter(split=split).values_list("item_key", "label"))
    judge = dict(JudgeVerdict.objects.filter(judge_version=judge_version, item_key__in=list(human))
                 .values_list("item_key", "label"))
    pairs = [(judge[key], label) for key, label in human.items() if judge.get(key) in ("pass", "fail")]
    return {"human_passes": sum(1 for _, h in pairs if h == "pass"),
            "true_passes": sum(1 for j, h in pairs if h == "pass" and j == "pass"),
            "human_fails": sum(1 for _, h in pairs if h == "fail"),
            "true_fails": sum(1 for j, h in pairs if h == "fail" and j == "fail")}


def _bootstrap_refuses(counts: dict, run) -> bool:
    """Whether the interval is refused: the test split's pairs (counted as above), resampled with the page's seed."""
    from evals.calibration import CalibrationError, corrected_pass_rate
    from evals.human_labels import calibration_pairs
    from evals.models import JudgeVerdict
    from evals.views.calibration import CALIBRATION_SEED

    pairs, _ = calibration_pairs(judge_version=run.judge_version, split="test")
    assert (sum(p.human_pass for p in pairs), sum(not p.human_pass for p in pairs)) == (
        counts["human_passes"], counts["human_fails"])
    verdicts = [label == "pass" for label in JudgeVerdict.objects.filter(run_item__run=run)
                .values_list("label", flat=True) if label in ("pass", "fail")]
    try:
        corrected_pass_rate(pairs, verdicts, seed=CALIBRATION_SEED)
    except CalibrationError:
        return True
    return False


def _first_words(text: str, n: int = 4) -> str:
    """The answer's first words without its citation markers: a fact the answer certainly contains."""
    words = re.sub(r"\[E\d+\]", " ", text).split()
    return " ".join(words[:n])


def test_an_analyst_builds_a_golden_set_runs_it_labels_items_and_reads_the_judges_calibration(
        live_server, browser_page, small_kb, healthy_billing, make_staff, settings):
    from evals.models import GoldenSet

    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""  # template writer and offline judge: no model server
    traces = _answered_traces()
    assert len(traces) >= 5
    golden_set = GoldenSet.objects.create(name=SET_NAME)  # the trace page adds cases to an existing set
    analyst = make_staff("ines", "analyst", password="ines-password-1")
    page = browser_page
    given = {}

    log_in(page, live_server.url, "ines", "ines-password-1", f"/traces/{traces[0].pk}/")
    first_case, second_case = _cases_and_labels_from_trace_pages(page, live_server, traces, golden_set, given)
    first_run = _run_from_the_set_page(page, live_server, golden_set, traces)
    items, labels = _label_the_run_items(page, first_run, golden_set, first_case, traces, analyst, given)
    _read_the_calibration(page, live_server, labels, traces, first_run)
    _fix_two_facts_run_again_and_compare(page, live_server, golden_set, first_run, items, first_case, second_case)


def _cases_and_labels_from_trace_pages(page, live_server, traces, golden_set, given):
    """From each trace page: a golden case in the set (one click), then a human label on the trace's answer;
    return the first two traces' cases."""
    from playwright.sync_api import expect

    from evals.human_labels import split_for
    from evals.models import GoldenCase

    # From each trace page: a golden case in the set (one click), then a human label on the trace's answer.
    for number, trace in enumerate(traces, start=1):
        page.goto(f"{live_server.url}/traces/{trace.pk}/")
        golden = page.locator("#golden")
        golden_set.refresh_from_db()
        golden.locator("select[name=golden_set]").select_option(label=f"{SET_NAME} (v{golden_set.current_version})")
        golden.get_by_role("button", name="Make a golden case").click()
        page.wait_for_url(f"{live_server.url}/traces/golden/cases/*/")
        case = GoldenCase.objects.get(golden_set=golden_set, trace=trace)
        expect(page.locator(".messages")).to_contain_text(f"Case {case.case_id} added to {SET_NAME} "
                                                          f"(version {golden_set.current_version + 1})")
        expect(page.locator("textarea[name=query]")).to_have_value(trace.query)
        if number == 1:
            # The analyst writes down the fee the answer must state, with a wrong figure.
            page.locator("textarea[name=facts]").fill(WRONG_FACT)
            page.get_by_role("button", name="Save", exact=True).click()
            expect(page.locator(".messages")).to_contain_text("Saved;")
        page.get_by_role("link", name=f"← Trace {trace.pk}").click()
        page.wait_for_url(f"{live_server.url}/traces/{trace.pk}/")
        form = page.locator("form[aria-label='Human label']")
        split = form.locator(".split").inner_text()
        assert split == split_for(f"trace:{trace.pk}")
        label = _label_for(split, given)
        form.locator(f"input[name=label][value={label}]").check()
        form.locator("input[name=note]").fill(f"{label}: read against the evidence")
        form.get_by_role("button", name="Save label").click()
        expect(page.locator(".messages")).to_contain_text(f"Labelled {label} ({split} split).")
    first_case, second_case = (GoldenCase.objects.get(golden_set=golden_set, trace=t) for t in traces[:2])
    golden_set.refresh_from_db()
    assert golden_set.cases.count() == len(traces) and golden_set.current_version == len(traces) + 1
    return first_case, second_case


def _run_from_the_set_page(page, live_server, golden_set, traces):
    """Run the set from its page on the whole answer path; return the run."""
    from playwright.sync_api import expect

    from evals.offline_judge import LEXICAL_JUDGE_VERSION
    from evals.models import EvalRun

    # The set page: run it on the whole answer path (not retrieval only); eager Celery runs it at once.
    page.goto(f"{live_server.url}/traces/golden/")
    page.locator(f"#set-{golden_set.pk}").get_by_role("link", name=SET_NAME).click()
    page.wait_for_url(f"{live_server.url}/traces/golden/{golden_set.pk}/")
    expect(page.locator("#cases tbody tr")).to_have_count(len(traces))
    run_form = page.locator("form[aria-label='Run this set']")
    expect(run_form.locator("input[name=retrieval_only]")).not_to_be_checked()
    run_form.get_by_role("button", name="Run this set").click()
    page.wait_for_url(f"{live_server.url}/traces/runs/?golden={golden_set.pk}")
    first_run = EvalRun.objects.get()
    assert first_run.status == EvalRun.Status.DONE and not first_run.retrieval_only
    assert first_run.judge_version == LEXICAL_JUDGE_VERSION
    row = page.locator(f"#run-{first_run.pk}")
    expect(row).to_contain_text("full path")
    expect(row).to_contain_text(LEXICAL_JUDGE_VERSION)
    row.get_by_role("link", name=f"#{first_run.pk}").click()
    page.wait_for_url(f"{live_server.url}/traces/runs/{first_run.pk}/")
    return first_run


def _label_the_run_items(page, first_run, golden_set, first_case, traces, analyst, given):
    """Read the run page and label each of its items; return the run's items by case and the human labels by key."""
    from playwright.sync_api import expect

    from evals.human_labels import split_for
    from evals.models import HumanLabel, JudgeVerdict

    # The run page lists every case; the wrong fact makes the first one fail.
    items = {item.case_id: item for item in first_run.items.all()}
    assert set(items) == set(golden_set.cases.values_list("case_id", flat=True))
    expect(page.locator("details.run-item")).to_have_count(len(traces))
    expect(page.locator(f"#item-{items[first_case.case_id].pk}")).to_have_class(re.compile(r"\bfailing\b"))
    expect(page.locator(f"#item-{items[first_case.case_id].pk} .failures")).to_contain_text(
        f"missing fact: {WRONG_FACT}")
    judged_in_run = JudgeVerdict.objects.filter(run_item__run=first_run).count()
    assert judged_in_run == sum(1 for item in items.values() if item.outcome == "answered")

    # Expand each item, read its answer, label it (htmx swaps the form in place).
    for item in sorted(items.values(), key=lambda i: (not i.failures, i.case_id)):
        details = page.locator(f"#item-{item.pk}")
        details.locator("summary").first.click()
        expect(details).to_have_attribute("open", "")
        expect(details.locator(".run-item-body")).to_contain_text(item.query)
        form = page.locator(f"#label-{item.pk}")
        split = form.locator(".split").inner_text()
        label = _label_for(split, given)
        form.locator(f"input[name=label][value={label}]").check()
        form.locator("input[name=note]").fill(f"{label}: every claim checked against the evidence")
        form.get_by_role("button", name="Save label").click()
        expect(page.locator(f"#label-{item.pk}")).to_contain_text(f"labelled {label} by ines")
    labels = {hl.item_key: hl for hl in HumanLabel.objects.all()}
    assert len(labels) == 2 * len(traces)
    assert all(hl.author == analyst and hl.split == split_for(key) for key, hl in labels.items())
    page.reload()
    expect(page.locator(".run-item .muted", has_text="· human")).to_have_count(len(items))
    page.locator(f"#item-{items[first_case.case_id].pk} summary").first.click()
    page.screenshot(path=str(SCREENSHOTS / "evals-run.png"), full_page=True)
    return items, labels


def _read_the_calibration(page, live_server, labels, traces, first_run):
    """Judge the labelled items on the calibration page and read TPR/TNR and the corrected pass rate."""
    from playwright.sync_api import expect

    from evals.calibration import no_better_than_chance
    from evals.offline_judge import LEXICAL_JUDGE_VERSION
    from evals.models import JudgeVerdict

    # Calibration: the run items were judged during the run; the labelled traces are judged now.
    page.goto(f"{live_server.url}/traces/calibration/")
    expect(page.locator("h1")).to_have_text("Judge calibration")
    unjudged = len(labels) - JudgeVerdict.objects.filter(item_key__in=list(labels),
                                                         judge_version=LEXICAL_JUDGE_VERSION).count()
    assert unjudged == len(traces)
    page.get_by_role("button", name="Judge the labelled items").click()
    page.wait_for_url(f"{live_server.url}/traces/calibration/?judge_version={LEXICAL_JUDGE_VERSION}&split=dev")
    expect(page.locator(".messages")).to_contain_text(
        f"Judged {unjudged} labelled item(s) with {LEXICAL_JUDGE_VERSION}.")
    assert JudgeVerdict.objects.filter(trace__in=traces, judge_version=LEXICAL_JUDGE_VERSION).count() == len(traces)

    # The split to read: dev, unless only test has both human classes among judged items.
    expected = {split: _expected_accuracy(LEXICAL_JUDGE_VERSION, split) for split in ("dev", "test")}
    complete = [s for s in ("dev", "test") if expected[s]["human_passes"] and expected[s]["human_fails"]]
    split = complete[0] if complete else "dev"
    if split != "dev":
        picker = page.locator("form[aria-label='Judge version and split']")
        picker.locator("select[name=split]").select_option(split)
        picker.get_by_role("button", name="Show").click()
        page.wait_for_url(f"{live_server.url}/traces/calibration/?judge_version={LEXICAL_JUDGE_VERSION}"
                          f"&split={split}")
    accuracy = page.locator("#accuracy")
    expect(accuracy.locator("h2")).to_have_text(f"{LEXICAL_JUDGE_VERSION} on {split}")
    counts = expected[split]
    labelled_on_split = sum(1 for hl in labels.values() if hl.split == split)
    expect(page.locator("#coverage")).to_contain_text(f"{labelled_on_split} labelled on {split}")
    if complete:
        tpr = counts["true_passes"] / counts["human_passes"]
        tnr = counts["true_fails"] / counts["human_fails"]
        expect(page.locator("#tpr td")).to_have_text(
            [re.compile("TPR"), f"{tpr:.3f}", str(counts["true_passes"]), str(counts["human_passes"])])
        expect(page.locator("#tnr td")).to_have_text(
            [re.compile("TNR"), f"{tnr:.3f}", str(counts["true_fails"]), str(counts["human_fails"])])
        expect(accuracy).to_contain_text("(< 20)")  # a handful of labels: the small-class warning shows
    else:  # not a single split with both classes: the page says why instead of a rate
        expect(page.locator("#calibration-error")).to_contain_text("no human-labelled")

    # The latest run's corrected pass rate, from the test split's TPR/TNR: a number with its interval, or why not.
    latest = page.locator("#latest-run")
    expect(latest).to_contain_text(f"Run #{first_run.pk}")
    on_test = expected["test"]
    if not (on_test["human_passes"] and on_test["human_fails"]):
        reason = "no human-labelled"
    elif no_better_than_chance(on_test["true_passes"] / on_test["human_passes"]
                               + on_test["true_fails"] / on_test["human_fails"] - 1):
        reason = "no better than chance"
    elif _bootstrap_refuses(on_test, first_run):
        # A handful of labels: too many resamples of them show a judge no better than chance.
        reason = "bootstrap resamples show a judge no better than chance"
    else:
        reason = ""
    if reason:
        expect(page.locator("#corrected-undefined")).to_contain_text("Corrected pass rate undefined: ")
        expect(page.locator("#corrected-undefined")).to_contain_text(reason)
        expect(page.locator("#corrected")).to_have_count(0)
    else:
        cells = page.locator("#corrected tbody td")
        expect(cells.nth(1)).to_have_text(re.compile(r"^[01]\.\d{3}"))
        expect(cells.nth(2)).to_have_text(re.compile(r"^\[[01]\.\d{3}, [01]\.\d{3}\]$"))
        expect(cells.nth(3)).to_have_text(LEXICAL_JUDGE_VERSION)
        expect(cells.nth(4)).to_have_text("2026")
    page.screenshot(path=str(SCREENSHOTS / "evals-calibration.png"), full_page=True)


def _fix_two_facts_run_again_and_compare(page, live_server, golden_set, first_run, items, first_case, second_case):
    """Fix one case's fact and break another's, run the set again and compare the two runs."""
    from playwright.sync_api import expect

    from evals.models import EvalRun

    # Fix the first case's fact from the answer it got; give the second a figure the bot never says.
    right_fact = _first_words(items[first_case.case_id].answer)
    for case, facts in ((first_case, right_fact), (second_case, WRONG_FACT)):
        page.goto(f"{live_server.url}/traces/golden/cases/{case.pk}/")
        page.locator("textarea[name=facts]").fill(facts)
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.locator(".messages")).to_contain_text("Saved;")

    # Run again, then compare: newly failing first, newly passing next.
    page.goto(f"{live_server.url}/traces/golden/{golden_set.pk}/")
    page.locator("form[aria-label='Run this set']").get_by_role("button", name="Run this set").click()
    page.wait_for_url(f"{live_server.url}/traces/runs/?golden={golden_set.pk}")
    second_run = EvalRun.objects.exclude(pk=first_run.pk).get()
    assert second_run.status == EvalRun.Status.DONE and second_run.golden_version == first_run.golden_version + 2
    expect(page.locator(f"#run-{second_run.pk}")).to_be_visible()
    compare = page.locator("form[aria-label='Compare two runs']")
    expect(compare.locator("select[name=base]")).to_have_value(str(first_run.pk))
    expect(compare.locator("select[name=head]")).to_have_value(str(second_run.pk))
    compare.get_by_role("button", name="Compare").click()
    page.wait_for_url(f"{live_server.url}/traces/runs/compare/?base={first_run.pk}&head={second_run.pk}")

    before = dict(first_run.items.values_list("case_id", "failures"))
    after = dict(second_run.items.values_list("case_id", "failures"))
    newly_failing = sorted(c for c in before.keys() & after.keys() if after[c] and not before[c])
    newly_passing = sorted(c for c in before.keys() & after.keys() if before[c] and not after[c])
    assert second_case.case_id in newly_failing and first_case.case_id in newly_passing
    expect(page.locator("#newly-failing h2")).to_have_text(f"Newly failing ({len(newly_failing)})")
    expect(page.locator("#newly-failing li")).to_have_text(newly_failing)
    expect(page.locator("#newly-passing h2")).to_have_text(f"Newly passing ({len(newly_passing)})")
    expect(page.locator("#newly-passing li")).to_have_text(newly_passing)
    expect(page.locator("#different-versions")).to_be_visible()
    # The ids come before the numbers.
    assert page.locator(".compare-ids, #numbers").evaluate_all("els => els.map(e => e.id || e.className)") == [
        "compare-ids", "numbers"]
