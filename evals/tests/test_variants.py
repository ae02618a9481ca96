"""Synthetic variants from a taxonomy class: with and without a model, deduped, reviewed before they count."""

import re
import uuid

import pytest
from django.utils import timezone

from bot.llm import openai_client
from core import clock
from desk.models import Contact, Conversation
from evals.models import GoldenCase, GoldenSet
from evals.services import golden_case_from_trace, golden_case_update, golden_export
from evals.variants import VariantError, normalized_query, rewrites, variant_review, variants_generate
from tests.support.fake_openai import FakeOpenAI
from traces.models import ReviewNote, ReviewSession, SessionTrace, Trace
from traces.services import failure_class_create, failure_class_merge, review_notes_assign

pytestmark = pytest.mark.django_db

FEE_QUERY = "¿Cuánto cuesta la reconexión? Pagué Bs. 350,00 el 2026-10-03."
PLAN_QUERY = "Why did my bill go up by 14.00 USD this month?"
ID_QUERY = "Mi cédula es V-12345678, ¿cuánto debo?"
NUMBERS = re.compile(r"\d+(?:[.,\-]\d+)*")


@pytest.fixture(autouse=True)
def no_model(settings):
    settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL, settings.OPENAI_MODEL = "", "", "writer-model"


@pytest.fixture
def analyst(make_staff):
    return make_staff(f"ana-{uuid.uuid4().hex[:6]}", "analyst")


@pytest.fixture
def golden_set():
    return GoldenSet.objects.create(name=f"set-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def coded(analyst):
    """Three failing traces in a session: two in "Wrong fee doc", one in a class merged into it."""
    contact = Contact.objects.create(channel="webchat", name="T", customer_id="C-1001", language="es")
    conversation = Conversation.objects.create(contact=contact, channel="webchat")
    now = clock.now()
    session = ReviewSession.objects.create(name="s", window_start=now - timezone.timedelta(days=1), window_end=now,
                                           seed=1, requested_size=3)
    retrieval = [{"doc": "reconexion-es", "kept": True}, {"doc": "tarifas-es", "kept": True},
                 {"doc": "pago-movil-es", "kept": False}]
    traces = [Trace.objects.create(conversation=conversation, channel="webchat", outcome="answered", query=query,
                                   language=language, customer_id="C-1001", retrieval=retrieval)
              for query, language in ((FEE_QUERY, "es"), (PLAN_QUERY, "en"), (ID_QUERY, "es"))]
    notes = []
    for position, trace in enumerate(traces, start=1):
        SessionTrace.objects.create(session=session, trace=trace, source="uniform", position=position)
        notes.append(ReviewNote.objects.create(session=session, trace=trace, author=analyst, verdict="fail",
                                               first_failure="wrong doc", stage="retrieval"))
    fee = failure_class_create(session=session, name="Wrong fee doc", definition="d", stage="retrieval")
    absorbed = failure_class_create(session=session, name="Fee confusion", definition="d", stage="retrieval")
    review_notes_assign(session=session, note_ids=[notes[0].pk, notes[1].pk], failure_class=fee)
    review_notes_assign(session=session, note_ids=[notes[2].pk], failure_class=absorbed)
    failure_class_merge(source=absorbed, target=fee)
    absorbed.refresh_from_db()
    return {"survivor": fee, "absorbed": absorbed, "traces": traces}


def test_rewrites_never_change_a_number():
    for query, language in ((FEE_QUERY, "es"), (PLAN_QUERY, "en"), (ID_QUERY, "es")):
        variants = rewrites(query, language=language)
        assert len(variants) == (4 if query == PLAN_QUERY else 5) == len(set(variants))  # no accents to strip
        assert all(NUMBERS.findall(v) == NUMBERS.findall(query) for v in variants), variants
    assert rewrites(FEE_QUERY, language="es") == [
        "¿Cuanto cuesta la reconexion? Pague Bs. 350,00 el 2026-10-03.",
        "cuánto cuesta la reconexión pagué bs 350,00 el 2026-10-03.",
        "Buenas tardes, disculpe, ¿Cuánto cuesta la reconexión? Pagué Bs. 350,00 el 2026-10-03.",
        "¿Cuánto cuesta la recoenxión? Pagué Bs. 350,00 el 2026-10-03.",
        "hola una pregunta cuánto cuesta la reconexión pagué bs 350,00 el 2026-10-03.",
    ]
    assert rewrites(PLAN_QUERY, language="en")[1] == "Good afternoon, could you tell me: why did my bill go up by " \
                                                     "14.00 USD this month?"


def test_without_a_model_each_trace_of_the_merged_class_gets_three_unreviewed_variants(coded, golden_set, analyst):
    fee_trace = coded["traces"][0]
    made_from_trace = golden_case_from_trace(trace=fee_trace, user=analyst, golden_set=golden_set)
    golden_case_update(case=made_from_trace, user=analyst, query=FEE_QUERY, facts=["Bs. 350,00"],
                       hits=["reconexion-es"], hard_negatives=["reconexion-empresas-es"], must_pass=True,
                       clarification_expected=False, synthetic=False)
    golden_set.refresh_from_db()
    version = golden_set.current_version

    # Asked from the absorbed class: the variants belong to the class it was merged into.
    cases = variants_generate(failure_class=coded["absorbed"], golden_set=golden_set, user=analyst)

    assert [c.case_id for c in cases] == [f"wrong-fee-doc-v{n}" for n in range(1, 10)]
    assert {(c.synthetic, c.reviewed, c.origin, c.failure_class_id, c.must_pass) for c in cases} == {
        (True, False, "variant", coded["survivor"].pk, False)}
    by_trace = {trace.pk: [c for c in cases if c.trace_id == trace.pk] for trace in coded["traces"]}
    assert [len(v) for v in by_trace.values()] == [3, 3, 3]
    for trace in coded["traces"]:
        for case in by_trace[trace.pk]:
            assert NUMBERS.findall(case.query) == NUMBERS.findall(trace.query)
            assert normalized_query(case.query) != normalized_query(trace.query)
    fee_variant = by_trace[fee_trace.pk][0]  # copied from the golden case made from the trace
    assert (fee_variant.hits, fee_variant.hard_negatives, fee_variant.facts) == (
        ["reconexion-es"], ["reconexion-empresas-es"], ["Bs. 350,00"])
    plan_variant = by_trace[coded["traces"][1].pk][0]  # no case from that trace: the kept chunks' docs
    assert (plan_variant.hits, plan_variant.facts, plan_variant.customer_id) == (
        ["reconexion-es", "tarifas-es"], [], "C-1001")
    assert by_trace[coded["traces"][1].pk][1].query.startswith("Good afternoon")  # the query's own language
    golden_set.refresh_from_db()
    assert golden_set.current_version == version + 1  # one bump for the whole batch
    assert len([row for row in golden_export(name=golden_set.name) if row.get("origin") == "variant"]) == 9


def test_a_second_batch_skips_queries_already_in_the_set_and_numbers_on(coded, golden_set):
    first = variants_generate(failure_class=coded["survivor"], golden_set=golden_set, per_trace=2)
    second = variants_generate(failure_class=coded["survivor"], golden_set=golden_set, per_trace=2)
    assert len(first) == 6 and len(second) == 6
    assert [c.case_id for c in second] == [f"wrong-fee-doc-v{n}" for n in range(7, 13)]
    queries = [normalized_query(q) for q in golden_set.cases.values_list("query", flat=True)]
    assert len(queries) == len(set(queries)) == 12


def test_with_a_model_the_paraphrases_that_keep_every_number_come_first(coded, golden_set):
    good = ["¿Me dice cuánto sale la reconexión? Pagué Bs. 350,00 el 2026-10-03.",
            "Hola, pagué Bs. 350,00 el 2026-10-03, ¿cuánto es la reconexión?"]
    with FakeOpenAI() as fake:
        fake.chat_script = [
            {"variants": [good[0], "¿Cuánto cuesta la reconexión? Pagué Bs. 300 ayer.", good[1]]},  # one drops
            "this is not json",  # garbage: the deterministic rewrites stand in
            500,  # a server error: the same
        ]
        client = openai_client(api_key="k", base_url=fake.base_url, timeout=5)
        cases = variants_generate(failure_class=coded["survivor"], golden_set=golden_set, per_trace=3,
                                  writer_client=client, model="para-model")
    fee = [c.query for c in cases if c.trace_id == coded["traces"][0].pk]
    assert fee == [*good, "¿Cuanto cuesta la reconexion? Pague Bs. 350,00 el 2026-10-03."]
    plan = [c.query for c in cases if c.trace_id == coded["traces"][1].pk]
    assert plan == rewrites(PLAN_QUERY, language="en")[:3]
    assert len(cases) == 9
    body = fake.requests[0]["body"]
    assert body["model"] == "para-model" and body["response_format"]["json_schema"]["name"] == "query_variants"
    assert body["messages"][1]["content"] == FEE_QUERY
    assert "every number" in body["messages"][0]["content"] and "3 different" in body["messages"][0]["content"]


def test_the_configured_model_is_used_when_no_client_is_given(coded, golden_set, settings):
    with FakeOpenAI() as fake:
        settings.OPENAI_BASE_URL = fake.base_url
        fake.chat_script = [{"variants": ["how come my bill is 14.00 USD higher this month?"]}] * 3
        cases = variants_generate(failure_class=coded["survivor"], golden_set=golden_set, per_trace=1)
    assert [c.query for c in cases if c.trace_id == coded["traces"][1].pk] == [
        "how come my bill is 14.00 USD higher this month?"]
    assert {r["body"]["model"] for r in fake.requests} == {"writer-model"} and len(fake.requests) == 3


def test_approving_keeps_a_variant_and_rejecting_deletes_it_each_a_new_version(coded, golden_set, analyst):
    kept, dropped, *_ = variants_generate(failure_class=coded["survivor"], golden_set=golden_set, per_trace=1)
    golden_set.refresh_from_db()
    version = golden_set.current_version
    assert variant_review(case=kept, approve=True, user=analyst).reviewed is True
    assert variant_review(case=dropped, approve=False, user=analyst) is None
    golden_set.refresh_from_db()
    assert golden_set.current_version == version + 2
    assert not GoldenCase.objects.filter(pk=dropped.pk).exists()
    assert list(golden_set.cases.filter(synthetic=True, reviewed=True).values_list("case_id", flat=True)) == [
        kept.case_id]
    assert golden_set.cases.filter(synthetic=True, reviewed=False).count() == 1
    assert dropped.case_id not in [row["id"] for row in golden_export(name=golden_set.name)]


def test_reviewing_a_case_that_is_not_awaiting_review_is_refused(coded, golden_set, analyst):
    case = golden_case_from_trace(trace=coded["traces"][0], user=analyst, golden_set=golden_set)
    golden_set.refresh_from_db()
    with pytest.raises(VariantError, match="not awaiting review"):
        variant_review(case=case, approve=False, user=analyst)
    assert GoldenCase.objects.filter(pk=case.pk).exists()
    assert GoldenSet.objects.get(pk=golden_set.pk).current_version == golden_set.current_version


def test_a_class_without_traces_makes_nothing_and_keeps_the_version(coded, golden_set):
    empty = failure_class_create(session=coded["survivor"].session, name="Empty", definition="d", stage="routing")
    assert variants_generate(failure_class=empty, golden_set=golden_set) == []
    assert GoldenSet.objects.get(pk=golden_set.pk).current_version == 0
    with pytest.raises(VariantError):
        variants_generate(failure_class=empty, golden_set=golden_set, per_trace=0)
