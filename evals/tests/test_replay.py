"""Replay: a traced turn run again with its history and customer, under the current or a recorded configuration,
sending nothing and writing no conversation or message row; and a set of traces replayed as one experiment."""

import re
import uuid

import pytest
from django.urls import reverse

from bot.turn import run_turn
from bot.writer import LLMWriter, TemplateWriter
from desk.models import Conversation, Escalation, Event, Message
from evals.models import ReplayExperiment
from evals.offline_judge import LexicalBillJudge
from evals.replay import CURRENT, ReplayError, replay_setup, replay_trace
from evals.replay_compare import BETTER, SAME, UNKNOWN, WORSE, TurnView, compare, verdict_change, verdict_of
from kb.search import current_index_version
from tests.support.factories import conversation_start
from tests.support.fake_graph import FakeGraph
from tests.support.fake_openai import FakeOpenAI
from traces.models import Configuration, Trace

QUESTION = "cuanto cobran por reconexion de fibra"


# --- Comparing two turns (no database) -------------------------------------------------------------------------

def view(outcome="answered", judge="pass", **kw):
    return TurnView(outcome=outcome, route=kw.pop("route", "document"), judge=judge, **kw)


@pytest.mark.parametrize("before, after, change", [
    (view(judge="fail"), view(judge="pass"), BETTER),
    (view(outcome="escalated", judge=None), view(judge="pass"), BETTER),
    (view(judge="fail"), view(outcome="escalated", judge=None), BETTER),  # a wrong answer is worse than a person
    (view(judge="pass"), view(outcome="escalated", judge=None), WORSE),
    (view(judge="pass"), view(judge="fail"), WORSE),
    (view(judge="pass"), view(judge="pass"), SAME),
    (view(outcome="clarify", judge=None), view(outcome="escalated", judge=None), SAME),
    (view(judge="error"), view(judge="pass"), UNKNOWN),
])
def test_better_worse_or_same_by_faithfulness_and_outcome(before, after, change):
    assert verdict_change(before, after) == change


def test_the_aspects_that_changed_are_marked():
    before = view(chunks=("a § 1",), reply="Cuesta 3.", latency_ms=100.0, cost=0.0)
    after = view(chunks=("b § 2",), reply="Cuesta 3.", latency_ms=110.0, cost=0.00002)
    changed = {a.name for a in compare(before, after) if a.changed}
    assert changed == {"Retrieved chunks (kept)", "Cost (USD)"}


@pytest.mark.parametrize("attempts, verdict", [
    ([], "none"),
    ([{"verdict": {"grounded": True}}], "grounded"),
    ([{"verdict": {"grounded": False}}, {"verdict": {"grounded": True}}], "rewritten"),
    ([{"verdict": {"grounded": False}}], "ungrounded"),
    ([{"error": "timeout"}], "none"),
])
def test_the_verifier_verdict_is_read_as_the_trace_column_reads_it(attempts, verdict):
    assert verdict_of(attempts) == verdict


# --- Replaying a trace --------------------------------------------------------------------------------------------



@pytest.fixture
def kb(sample_kb, settings):
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    return sample_kb


def _say(conversation, text, writer):
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", text=text,
                                     provider_message_id=f"wamid.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk, writer=writer)


def _failing_trace(conversation):
    """A turn whose model writer failed twice: escalated, recorded under the model's configuration."""
    with FakeOpenAI() as fake:
        fake.chat_script = [500, 500]
        trace = _say(conversation, QUESTION, LLMWriter(api_key="k", base_url=fake.base_url, model="test-model",
                                                       timeout=2))
    assert (trace.outcome, trace.escalation_reason) == ("escalated", "MODEL_ERROR")
    return trace


def _rows():
    return (Conversation.objects.count(), Message.objects.count(), Escalation.objects.count(), Event.objects.count(),
            Trace.objects.count())


@pytest.mark.django_db
def test_a_replay_uses_the_history_and_customer_and_writes_and_sends_nothing(
        kb, settings, django_capture_on_commit_callbacks):
    conversation = conversation_start(name="Replay", channel="whatsapp", wa_id="584121230000",
                                      customer_id="C-1001", inbound_at=None)
    first = _say(conversation, "hola", TemplateWriter())
    failing = _failing_trace(conversation)
    before = _rows()
    with FakeGraph() as graph:
        settings.WHATSAPP_API_BASE_URL = graph.base_url
        settings.WHATSAPP_ACCESS_TOKEN = graph.access_token
        settings.WHATSAPP_PHONE_NUMBER_ID = graph.phone_number_id
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            result = replay_trace(trace=failing, setup=replay_setup(CURRENT), judge=LexicalBillJudge())
    assert graph.requests == [] and callbacks == []
    assert _rows() == before
    assert result.history == [("user", "hola"), ("assistant", first.final_text)]
    assert result.before.outcome == "escalated" and result.before.reason == "MODEL_ERROR"
    assert result.after.outcome == "answered" and "Bs. 350,00" in result.after.reply
    assert result.after.judge == "pass" and result.change == BETTER
    assert {a.name for a in result.aspects if a.changed} >= {"Outcome", "Reply", "Judge (faithfulness)"}
    assert result.not_as_chosen == [] and result.setup.gaps == []


@pytest.mark.django_db
def test_a_recorded_configuration_that_cannot_be_rebuilt_is_named_not_pretended(kb):
    conversation = conversation_start(name="Replay", customer_id="C-1001", inbound_at=None)
    failing = _failing_trace(conversation)
    setup = replay_setup(failing.configuration_id)  # test-model, and no model server configured here
    assert any("test-model needs a model server" in gap for gap in setup.gaps)
    current = current_index_version()
    gone = Configuration.objects.create(**{**failing.configuration.parts().__dict__, "index_version": current + 7,
                                           "fingerprint": "0123456789abcdef", "tuning_hash": "t"})
    assert any(f"Index version v{current + 7} is not in this database" in gap
               for gap in replay_setup(gone.fingerprint).gaps)
    with pytest.raises(ReplayError, match="No recorded configuration"):
        replay_setup("ffffffffffffffff")


@pytest.mark.django_db
def test_the_replay_page_shows_both_turns_and_says_what_could_not_be_rebuilt(kb, client, make_staff):
    conversation = conversation_start(name="Replay", customer_id="C-1001", inbound_at=None)
    template = _say(conversation, "¿y cuánto tarda?", TemplateWriter())
    failing = _failing_trace(conversation)
    client.force_login(make_staff("ana", "analyst"))
    form = client.get(reverse("evals:replay_trace", args=[failing.pk])).content.decode()
    assert f'value="{CURRENT}"' in form and f'value="{failing.configuration_id}"' in form
    messages = Message.objects.count()
    page = client.post(reverse("evals:replay_trace", args=[failing.pk]), {"configuration": CURRENT})
    text = re.sub(r"\s+([,.])", r"\1", re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.content.decode())))
    assert page.status_code == 200 and Message.objects.count() == messages
    assert "By faithfulness and outcome the replay is better" in text
    assert "Outcome changed Escalated Answered" in text
    assert "Judge (faithfulness) changed not judged pass (faithful)" in text
    assert f"Replayed under {template.configuration_id}, exactly the configuration chosen" in text
    recorded = client.post(reverse("evals:replay_trace", args=[failing.pk]),
                           {"configuration": failing.configuration_id}).content.decode()
    assert "This is not exactly configuration" in recorded and "needs a model server" in recorded
    refused = client.post(reverse("evals:replay_trace", args=[failing.pk]), {"configuration": "nope"})
    assert refused.status_code == 400 and "Choose one of the configurations listed" in refused.content.decode()


@pytest.mark.django_db
def test_replay_these_runs_the_ticked_traces_as_one_experiment_listed_with_the_runs(
        kb, client, make_staff, settings, django_capture_on_commit_callbacks):
    conversation = conversation_start(name="Replay", customer_id="C-1001", inbound_at=None)
    answered = _say(conversation, QUESTION, TemplateWriter())
    failing = _failing_trace(conversation_start(name="Other", customer_id="C-1001", inbound_at=None))
    client.force_login(make_staff("ana", "analyst"))
    ticked = {"trace": [answered.pk, failing.pk], "next": "/traces/"}
    choose = client.post(reverse("evals:replay_experiment_new"), ticked)
    assert choose.status_code == 200 and "Replay 2 traces as one experiment" in choose.content.decode()
    messages = Message.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(reverse("evals:replay_experiment_new"), {**ticked, "configuration": CURRENT})
        again = client.post(reverse("evals:replay_experiment_new"), {**ticked, "configuration": CURRENT})
    experiment = ReplayExperiment.objects.get()  # the double click made one
    assert started.url == again.url == reverse("evals:replay_experiment", args=[experiment.pk])
    assert Message.objects.count() == messages
    assert (experiment.status, experiment.better, experiment.worse, experiment.same) == ("done", 1, 0, 1)
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", client.get(started.url).content.decode()))
    assert "1 better · 0 worse · 1 same" in page
    runs = client.get(reverse("evals:runs")).content.decode()
    assert f'href="{started.url}"' in runs
    settings.REPLAY_MAX_TRACES = 1
    too_many = client.post(reverse("evals:replay_experiment_new"), {**ticked, "configuration": CURRENT})
    assert too_many.status_code == 400 and "Replay at most 1 traces" in too_many.content.decode()


@pytest.mark.django_db
def test_replay_the_traces_a_filter_matches(kb, client, make_staff):
    conversation = conversation_start(name="Replay", customer_id="C-1001", inbound_at=None)
    answered = _say(conversation, QUESTION, TemplateWriter())
    _failing_trace(conversation_start(name="Other", customer_id="C-1001", inbound_at=None))
    client.force_login(make_staff("ana", "analyst"))
    listing = client.get(reverse("traces:list"), {"outcome": "answered"}).content.decode()
    assert 'name="matching" value="outcome=answered"' in listing
    choose = client.post(reverse("evals:replay_experiment_new"), {"matching": "outcome=answered", "next": "/traces/"})
    assert choose.status_code == 200
    assert re.findall(r'name="trace" value="(\d+)"', choose.content.decode()) == [str(answered.pk)]
    odd = client.post(reverse("evals:replay_experiment_new"), {"matching": "outcome=\x00", "next": "/traces/"},
                      follow=True)
    assert odd.redirect_chain[-1][0] == "/traces/" and "NUL" in odd.content.decode()
