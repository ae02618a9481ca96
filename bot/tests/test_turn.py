"""The bot turn end to end against the real database, the sample KB, the simulator and a local model server."""

import json
import uuid

import pytest

from bot.turn import run_turn
from bot.writer import LLMWriter, TemplateWriter
from desk.models import Conversation, Escalation, Message
from tests.support.factories import conversation_start
from tests.support.fake_openai import HANG, FakeOpenAI
from traces.models import Trace

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _kb(sample_kb):
    return sample_kb


def start(customer_id="C-1001", language="es", channel="webchat", wa_id=""):
    return conversation_start(name="Test", channel=channel, wa_id=wa_id, customer_id=customer_id,
                              language=language, inbound_at=None)


def say(conversation, text, kind="text", **turn_kwargs):
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind=kind,
                                     text=text, provider_message_id=f"wamid.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk, **turn_kwargs)


def bot_texts(conversation):
    return list(conversation.messages.filter(direction="out").values_list("text", flat=True))


def test_a_spanish_policy_question_is_answered_from_the_kb_and_fully_traced(django_capture_on_commit_callbacks):
    conversation = start()
    with django_capture_on_commit_callbacks(execute=True):
        trace = say(conversation, "cuanto cobran por reconexion de fibra", writer=TemplateWriter())
    assert (trace.outcome, trace.route, trace.escalation_reason) == ("answered", "document", "")
    [reply] = conversation.messages.filter(direction="out")
    assert "Bs. 350,00" in reply.text and "[E" not in reply.text
    assert reply.status == "sent" and reply.provider_message_id.startswith("rec-")
    assert trace.final_text == reply.text
    assert trace.retrieval[0]["doc"] == "reconexion-fibra-es"
    assert {"rank", "vector_score", "text_rank", "matched_by_text", "rrf", "kept"} <= set(trace.retrieval[0])
    assert trace.evidence[0]["id"] == "E1" and trace.evidence[0]["doc"] == "reconexion-fibra-es"
    assert trace.attempts[0]["verdict"]["grounded"] is True
    assert trace.citations == ["E1"]
    assert trace.index_version is not None and trace.prompt_version == "template-1"
    assert {"gate", "route", "retrieve", "write_1", "verify_1", "humanize", "send"} <= set(trace.latency_ms)
    assert trace.provider_message_id.startswith("wamid.")


def test_an_english_question_gets_an_english_answer():
    conversation = start(language="en")
    trace = say(conversation, "What is the reconnection fee for business plans?", writer=TemplateWriter())
    assert trace.outcome == "answered" and trace.language == "en"
    assert "USD 10.00" in trace.final_text or "10.00" in trace.final_text


@pytest.mark.parametrize(
    "text, reason",
    [
        ("quiero hablar con una persona", "USER_REQUEST"),
        ("agent please", "USER_REQUEST"),
        ("cámbienme el plan a Fibra 600", "CAPABILITY_MISSING"),
        ("¿cuál es la capital de Francia?", "NO_CONTEXT"),
        # Off-topic and phrased as a request: the router reads it as an action the bot cannot take.
        ("recomiéndame una película", "CAPABILITY_MISSING"),
    ],
)
def test_refusal_paths_escalate_with_their_reason_before_any_model_call(text, reason):
    conversation = start()
    with FakeOpenAI() as fake:
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="m", timeout=5)
        trace = say(conversation, text, writer=writer)
        assert fake.requests == []  # not a token spent
    assert (trace.outcome, trace.escalation_reason) == ("escalated", reason)
    escalation = Escalation.objects.get(conversation=conversation)
    assert escalation.reason == reason and escalation.trace == trace
    assert escalation.summary and text in escalation.detail
    conversation.refresh_from_db()
    assert conversation.held_by_human


def test_an_image_escalates_because_the_bot_cannot_read_it():
    conversation = start()
    trace = say(conversation, "", kind="image")
    assert (trace.outcome, trace.escalation_reason, trace.route) == ("escalated", "CAPABILITY_MISSING", "media")


def test_the_customer_is_told_once_and_then_the_bot_stays_silent():
    conversation = start()
    say(conversation, "quiero hablar con una persona")
    trace = say(conversation, "¿hola? ¿cuánto cuesta la reconexión?")
    assert (trace.outcome, trace.silenced_at) == ("silenced", "gate")
    assert bot_texts(conversation) == [
        "Gracias por escribirnos. Te paso con una persona de nuestro equipo, que te responderá por aquí en breve."
    ]


def test_an_account_question_answers_with_computed_billing_facts(healthy_billing):
    conversation = start(customer_id="C-1001")
    trace = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=TemplateWriter())
    assert (trace.outcome, trace.route) == ("answered", "account")
    assert trace.tool_calls[0]["capability"] == "invoice_change" and trace.tool_calls[0]["ok"]
    delta = next(e for e in trace.evidence if e.get("fact_kind") == "invoice_delta")
    assert delta["text"].split(" (")[0] in trace.final_text


def test_billing_outage_escalates_as_tool_error(healthy_billing):
    healthy_billing.set_fault("503")
    conversation = start(customer_id="C-1001")
    trace = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=TemplateWriter())
    assert (trace.outcome, trace.escalation_reason) == ("escalated", "TOOL_ERROR")
    assert trace.tool_calls[0]["should_escalate"] is True


def test_unknown_whatsapp_number_is_asked_to_identify_then_linked(healthy_billing):
    from billing.simulator.data import build_dataset

    customer = build_dataset().accounts["C-1001"].customer
    conversation = start(customer_id="", channel="whatsapp", wa_id="19999999999")
    first = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=TemplateWriter())
    assert first.outcome == "answered" and "cédula" in first.final_text
    second = say(conversation, f"mi contrato es {customer.account_number}", writer=TemplateWriter())
    assert (second.outcome, second.route, second.customer_id) == ("answered", "account", "C-1001")
    assert second.query == "¿Por qué mi factura llegó más alta este mes?"
    conversation.contact.refresh_from_db()
    assert conversation.contact.customer_id == "C-1001"


def faithful(reply, ids=("E1",)):
    return {"reply": reply, "evidence_ids": list(ids), "needs_human": False}


def llm_say(conversation, text, script):
    with FakeOpenAI() as fake:
        fake.chat_script = list(script)
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=1)
        trace = say(conversation, text, writer=writer)
    return trace, fake


def test_llm_faithful_answer_is_sent_without_citations():
    trace, fake = llm_say(start(), "cuanto cobran por reconexion de fibra",
                          [faithful("La reconexión cuesta Bs. 350,00 más IVA [E1].")])
    assert trace.outcome == "answered" and trace.final_text == "La reconexión cuesta Bs. 350,00 más IVA."
    assert trace.model == "test-model" and trace.token_usage["total_tokens"] == 15
    assert len(fake.requests) == 1


def test_llm_wrong_number_is_rewritten_then_sent():
    trace, fake = llm_say(start(), "cuanto cobran por reconexion de fibra", [
        faithful("La reconexión cuesta Bs. 3.500,00 [E1]."),
        faithful("La reconexión cuesta Bs. 350,00 [E1]."),
    ])
    assert trace.outcome == "answered" and "350,00" in trace.final_text
    assert [a["verdict"]["grounded"] for a in trace.attempts] == [False, True]
    rewrite = fake.requests[1]["body"]["messages"][-1]["content"]
    assert "3.500,00" in rewrite


def test_llm_that_keeps_inventing_numbers_escalates_after_two_rewrites():
    conversation = start()
    trace, fake = llm_say(conversation, "cuanto cobran por reconexion de fibra",
                          [faithful("Cuesta Bs. 4.500,00 [E1].")] * 3)
    assert (trace.outcome, trace.escalation_reason) == ("escalated", "UNGROUNDED_OUTPUT")
    assert len(fake.requests) == 3 and len(trace.attempts) == 3
    assert bot_texts(conversation) == [
        "Gracias por escribirnos. Te paso con una persona de nuestro equipo, que te responderá por aquí en breve."
    ]


@pytest.mark.parametrize(
    "script, reason",
    [
        ([faithful("Cuesta Bs. 350,00 [E9].", ["E9"])] * 3, "UNGROUNDED_OUTPUT"),
        ([faithful("Cuesta Bs. 350,00 [E1]. Le garantizamos el reembolso.")] * 3, "UNGROUNDED_OUTPUT"),
        ([500, 500], "MODEL_ERROR"),
        ([HANG, HANG], "MODEL_ERROR"),
        (["this is not json", "{still not"], "MODEL_ERROR"),
        ([{"reply": "", "evidence_ids": [], "needs_human": True}], "MODEL_DEFERRED"),
    ],
)
def test_llm_failure_paths(script, reason):
    trace, _ = llm_say(start(), "cuanto cobran por reconexion de fibra", script)
    assert (trace.outcome, trace.escalation_reason) == ("escalated", reason)


def test_a_model_error_is_retried_once():
    trace, fake = llm_say(start(), "cuanto cobran por reconexion de fibra",
                          [500, faithful("Cuesta Bs. 350,00 [E1].")])
    assert trace.outcome == "answered" and len(fake.requests) == 2


def test_forbidden_phrase_escalates_and_offers_the_draft():
    conversation = start()
    trace, _ = llm_say(conversation, "cuanto cobran por reconexion de fibra",
                       [faithful("Como modelo de lenguaje, te digo que cuesta Bs. 350,00 [E1].")])
    assert (trace.outcome, trace.escalation_reason) == ("escalated", "FORBIDDEN_PHRASE")
    assert "350,00" in Escalation.objects.get(conversation=conversation).suggested_reply


class TakeOverWhileWriting(TemplateWriter):
    """An agent takes the conversation while the writer works: the reply must not go out."""

    def write(self, request, **kwargs):
        Conversation.objects.filter(pk=self.conversation_id).update(handler="human")
        return super().write(request, **kwargs)


def test_take_over_between_retrieval_and_send_means_nothing_is_sent():
    conversation = start()
    writer = TakeOverWhileWriting()
    writer.conversation_id = conversation.pk
    trace = say(conversation, "cuanto cobran por reconexion de fibra", writer=writer)
    assert (trace.outcome, trace.silenced_at) == ("silenced", "send")
    assert bot_texts(conversation) == []


def test_a_message_is_handled_once_even_if_the_task_runs_twice():
    conversation = start()
    message = Message.objects.create(conversation=conversation, direction="in", author="customer",
                                     text="cuanto cobran por reconexion de fibra", provider_message_id="wamid.once")
    assert run_turn(message_id=message.pk, writer=TemplateWriter()) is not None
    assert run_turn(message_id=message.pk, writer=TemplateWriter()) is None
    assert Trace.objects.filter(message=message).count() == 1
    assert len(bot_texts(conversation)) == 1


def test_traces_export_writes_one_json_object_per_trace(capsys):
    import io

    from django.core.management import call_command

    conversation = start()
    say(conversation, "cuanto cobran por reconexion de fibra", writer=TemplateWriter())
    say(conversation, "quiero hablar con una persona")
    out = io.StringIO()
    call_command("traces_export", "--since", "2000-01-01", "--jsonl", stdout=out)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    mine = [r for r in rows if r["conversation"] == conversation.pk]
    assert [(r["outcome"], r["escalation_reason"]) for r in mine] == [("answered", ""), ("escalated", "USER_REQUEST")]
    assert {"retrieval", "evidence", "attempts", "latency_ms", "provider_message_id", "final_text"} <= set(mine[0])


def test_a_resolved_web_chat_goes_back_to_the_bot_when_the_customer_writes(make_staff,
                                                                          django_capture_on_commit_callbacks,
                                                                          settings):
    from desk.chat import chat_message_receive
    from desk.services import conversation_resolve, conversation_take_over

    settings.DESK_REOPEN_TO_HUMAN = False
    agent = make_staff("ana", "agent")
    conversation = start()
    say(conversation, "quiero hablar con una persona")
    conversation_take_over(conversation_id=conversation.pk, agent=agent)
    conversation_resolve(conversation_id=conversation.pk, agent=agent)
    with django_capture_on_commit_callbacks(execute=True):
        chat_message_receive(conversation=Conversation.objects.get(pk=conversation.pk),
                             text="cuanto cobran por reconexion de fibra")
    conversation.refresh_from_db()
    assert (conversation.status, conversation.handler) == ("open", "bot")
    assert conversation.traces.order_by("-pk").first().outcome == "answered"


def test_reopening_to_the_humans_is_a_setting(make_staff, settings):
    from desk.chat import chat_message_receive
    from desk.services import conversation_resolve

    settings.DESK_REOPEN_TO_HUMAN = True
    conversation = start()
    conversation_resolve(conversation_id=conversation.pk, agent=make_staff("ana", "agent"))
    chat_message_receive(conversation=Conversation.objects.get(pk=conversation.pk), text="hola otra vez")
    conversation.refresh_from_db()
    assert (conversation.status, conversation.handler) == ("open", "human")


def said_with(conversation, text, *, kind="text", payload):
    message = Message.objects.create(conversation=conversation, direction="in", author="customer", kind=kind,
                                     text=text, payload=payload, provider_message_id=f"wamid.{uuid.uuid4().hex}")
    return run_turn(message_id=message.pk)


def test_a_cut_message_goes_to_a_person_instead_of_being_answered_from_its_first_part():
    conversation = start()
    trace = said_with(conversation, "hola " * 800, payload={"truncated": True, "text_length": 20000})
    assert (trace.outcome, trace.escalation_reason) == ("escalated", "CAPABILITY_MISSING")
    assert "20000 characters" in trace.escalation.detail and trace.retrieval == []


def test_a_message_deleted_before_its_turn_gets_no_reply():
    conversation = start()
    trace = said_with(conversation, "cuanto cobran por reconexion", payload={"deleted": True})
    assert (trace.outcome, trace.silenced_at) == ("silenced", "deleted") and bot_texts(conversation) == []


def test_an_order_goes_to_a_person_as_something_the_bot_cannot_do():
    conversation = start()
    trace = said_with(conversation, "", kind="order", payload={"order": {"catalog_id": "1"}})
    assert (trace.outcome, trace.escalation_reason, trace.route) == ("escalated", "CAPABILITY_MISSING", "media")


@pytest.mark.parametrize(
    "text, language, expected",
    [("hola", "es", "planes, facturas y pagos"), ("buenas", "es", "planes, facturas y pagos"),
     ("gracias", "es", "Con gusto"), ("ok", "es", "planes, facturas y pagos"),
     ("hello", "en", "plans, invoices and payments"), ("thanks", "en", "You're welcome")],
)
def test_small_talk_gets_a_short_reply_in_the_customers_language_and_never_escalates(text, language, expected):
    conversation = start(language="es" if language == "es" else "en")
    with FakeOpenAI() as fake:
        trace = say(conversation, text, writer=LLMWriter(api_key="k", base_url=fake.base_url, model="m", timeout=5))
        assert fake.requests == []  # small talk needs no model
    assert (trace.outcome, trace.route, trace.escalation_reason, trace.language) == ("answered", "smalltalk", "",
                                                                                     language)
    assert expected in trace.final_text and bot_texts(conversation) == [trace.final_text]
    assert not Escalation.objects.filter(conversation=conversation).exists()
    assert trace.route_confidence == 1.0 and trace.router_version.startswith("rules1+probe1/")


def test_a_bare_acknowledgement_of_a_bot_answer_gets_no_reply():
    conversation = start()
    say(conversation, "cuanto cobran por reconexion de fibra", writer=TemplateWriter())
    trace = say(conversation, "ok 👍")
    assert (trace.outcome, trace.silenced_at, trace.route) == ("silenced", "ack", "smalltalk")
    assert len(bot_texts(conversation)) == 1
    assert not Escalation.objects.filter(conversation=conversation).exists()


def test_thanks_after_a_bot_answer_is_still_answered():
    conversation = start()
    say(conversation, "cuanto cobran por reconexion de fibra", writer=TemplateWriter())
    trace = say(conversation, "muchas gracias")
    assert (trace.outcome, trace.route) == ("answered", "smalltalk") and len(bot_texts(conversation)) == 2


def test_the_trace_records_the_classifiers_confidence_and_the_router_version():
    trace = say(start(), "cuanto cobran por reconexion de fibra", writer=TemplateWriter())
    assert trace.route == "document" and trace.routing_rule == "examples"
    assert 0.0 < trace.route_confidence <= 1.0 and trace.router_version.endswith("/t0.55")


def test_a_policy_question_about_the_customers_bill_is_answered_from_documents_with_their_facts(healthy_billing):
    script = [faithful("El IGTF es un impuesto del 3 % sobre pagos en divisas [E1].")]
    trace, fake = llm_say(start(customer_id="C-1001"), "¿qué significa el cargo IGTF en mi factura?", script)
    assert trace.route == "document" and trace.tool_calls and trace.tool_calls[0]["ok"]
    kinds = {e.get("kind") for e in trace.evidence}
    assert kinds == {"chunk", "fact"}
    assert trace.customer_id == "C-1001"


def test_an_unknown_customer_with_a_policy_question_is_not_asked_for_an_account_number():
    trace = say(start(customer_id=""), "si cancelo el plan anual a la semana de pagarlo me devuelven todo?",
                writer=TemplateWriter())
    assert trace.route == "document" and trace.tool_calls == []
    assert "cédula" not in trace.final_text
