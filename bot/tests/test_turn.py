"""The bot turn end to end against the real database, the sample KB, the simulator and a local model server."""

import json
import re
import uuid
from datetime import date
from decimal import Decimal

import pytest

from bot.compose import money
from bot.turn import run_turn
from bot.writer import LLMWriter, TemplateWriter
from core import clock
from desk.models import Conversation, Escalation, Message
from tests.support.billing_sim import AS_OF, client_for, simulator_for
from tests.support.factories import conversation_start
from tests.support.fake_openai import HANG, FakeOpenAI
from traces.fingerprint import differences
from traces.models import Configuration, Trace

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
    assert trace.index_version is not None and trace.prompt_version == "template-2"
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


@pytest.mark.parametrize("text", ["¿cuál es la capital de Francia?", "recomiéndame una película",
                                  "where is the nearest pizza place",
                                  # another company's plan, bill or account: the provider's words, someone else's
                                  "¿cómo recargo saldo en Movistar?", "how do I cancel my Netflix",
                                  "¿Cómo pago el recibo de la luz de Corpoelec?",
                                  # the power company's cut, however the customer says it
                                  "Se nos fue la luz en toda la urbanización. ¿Saben cuándo vuelve?",
                                  # a job with the provider
                                  "are you hiring? I'd like to apply for a sales job",
                                  # what a general assistant or a bank is asked, in billing's own words
                                  "set an alarm for 6 am", "cancel my dentist appointment",
                                  "what is my credit card limit", "apaga las luces del cuarto"])
def test_a_message_outside_plans_and_billing_is_declined_without_a_person_or_a_model(text):
    conversation = start()
    with FakeOpenAI() as fake:
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="m", timeout=5)
        trace = say(conversation, text, writer=writer)
        assert fake.requests == []  # not a token spent
    assert (trace.outcome, trace.escalation_reason, trace.evidence) == ("declined", "", [])
    assert bot_texts(conversation) == [trace.final_text]
    assert "planes, facturas y pagos" in trace.final_text or "plans, invoices and payments" in trace.final_text
    assert not Escalation.objects.filter(conversation=conversation).exists()
    conversation.refresh_from_db()
    assert not conversation.held_by_human


@pytest.mark.parametrize("text", ["¿ustedes son más baratos que CANTV? ¿cuánto cuesta la fibra 300?",
                                  "I'm switching from Movistar, how much is the installation?",
                                  "can you remind me when my bill is due?",
                                  "agenda una cita con el técnico para el lunes"])
def test_another_company_named_beside_the_provider_is_not_declined(text):
    trace = say(start(customer_id=""), text, writer=TemplateWriter())
    assert trace.outcome != "declined"


@pytest.mark.parametrize("text", ["can I get a tax receipt for my company?",
                                  "¿dónde mando el comprobante de retención del impuesto?"])
def test_a_question_about_taxes_or_their_receipts_is_not_declined_as_outside_billing(text):
    trace = say(start(customer_id=""), text, writer=TemplateWriter())
    assert trace.outcome != "declined"
    assert "planes, facturas y pagos" not in trace.final_text and "plans, invoices and payments" not in trace.final_text


def test_an_image_escalates_as_media_because_the_bot_cannot_read_it():
    conversation = start()
    trace = say(conversation, "", kind="image")
    assert (trace.outcome, trace.escalation_reason, trace.route) == ("escalated", "MEDIA", "media")


def test_the_customer_is_told_once_and_then_the_bot_stays_silent():
    conversation = start()
    say(conversation, "quiero hablar con una persona")
    trace = say(conversation, "¿hola? ¿cuánto cuesta la reconexión?")
    assert (trace.outcome, trace.silenced_at) == ("silenced", "gate")
    assert bot_texts(conversation) == [
        "Gracias por escribirnos. Te paso con una persona de nuestro equipo, que te responderá por aquí en breve."
    ]


def test_the_other_one_with_nothing_named_is_asked_about_and_the_answer_read_with_the_question_before():
    from bot.turn import answer_query

    history = [("user", "¿Cuánto cuesta el plan Fibra 300?"), ("assistant", "Fibra 300 cuesta USD 28,00 al mes.")]
    asked = answer_query(query="¿y el otro?", history=history, writer=TemplateWriter())
    assert type(asked.outcome).__name__ == "Clarify" and asked.outcome.text.startswith("¿A cuál te refieres?")
    assert asked.draft.retrieval == [] and "asked which one" in asked.draft.routing_rule

    conversation = start()
    say(conversation, "¿Cuánto cuesta el plan Fibra 300?", writer=TemplateWriter())
    trace = say(conversation, "¿y el otro?", writer=TemplateWriter())
    assert trace.outcome == "clarify" and bot_texts(conversation)[-1].startswith("¿A cuál te refieres?")
    trace = say(conversation, "¿y el de 600?", writer=TemplateWriter())
    # Read with "¿Cuánto cuesta el plan Fibra 300?" (bot/followups.py's previous_question), not with "¿y el otro?".
    assert trace.outcome == "answered" and "follow-up of the previous question" in trace.routing_rule


class _DocumentRouter:
    """Routes every message down the document path, as a classifier unsure of a message it cannot place does."""

    def route(self, text, *, kind="text", default_language="es"):
        from bot.routing.types import Route, Routing

        return Routing(Route.DOCUMENT, default_language, rule="examples", confidence=0.4, unsure=True)


def test_a_message_the_bot_cannot_place_goes_to_a_person_mid_way_through_a_conversation_about_the_bill():
    from bot.turn import answer_query

    alone = answer_query(query="qwzx vrrbl klompt", language="en", writer=TemplateWriter(), router=_DocumentRouter())
    assert type(alone.outcome).__name__ == "Declined"  # a first message about nothing the bot knows: declined
    history = [("user", "how much is my bill?"), ("assistant", "Your latest bill is USD 23.20.")]
    after = answer_query(query="qwzx vrrbl klompt", language="en", history=history, writer=TemplateWriter(),
                         router=_DocumentRouter())
    assert type(after.outcome).__name__ == "Escalated" and after.outcome.reason.value == "NO_CONTEXT"


def test_an_account_question_answers_with_computed_billing_facts(healthy_billing):
    conversation = start(customer_id="C-1001")
    trace = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=TemplateWriter())
    assert (trace.outcome, trace.route) == ("answered", "account")
    assert trace.tool_calls[0]["capability"] == "invoice_change" and trace.tool_calls[0]["ok"]
    # C-1001 had a technical visit: the change and its cause lead, in the customer's notation.
    # (The shared simulator's months follow today's date; its amounts do not.)
    assert trace.final_text.startswith("Tu factura de ") and " subió USD 17,40 respecto a la de " in trace.final_text
    assert "por una visita técnica, de USD 15,00." in trace.final_text
    # Its last sentence is the open balance while the bill is unpaid, else what the rest of the change is.
    if trace.tool_calls[0]["data"]["current_invoice"]["status"] == "paid":
        assert "El resto, USD 2,40, corresponde al IVA." in trace.final_text
    else:
        assert "Esta factura tiene un saldo pendiente de USD 40,60" in trace.final_text
    delta = next(e for e in trace.evidence if e.get("fact_kind") == "invoice_delta")
    assert {"evidence_id": delta["id"], "value": "17.40", "role": "primary", "name": "delta"} in trace.key_figures
    assert trace.internal_note.startswith("Root cause: a one-off charge on the bill — charge USD 15.00")


def test_billing_outage_escalates_as_tool_error(healthy_billing):
    healthy_billing.set_fault("503")
    conversation = start(customer_id="C-1001")
    trace = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=TemplateWriter())
    assert (trace.outcome, trace.escalation_reason) == ("escalated", "TOOL_ERROR")
    assert trace.tool_calls[0]["should_escalate"] is True


def test_unknown_whatsapp_number_is_asked_to_identify_then_linked(healthy_billing):
    from billing.simulator.data import build_dataset

    customer = build_dataset(as_of=clock.today()).accounts["C-1001"].customer
    conversation = start(customer_id="", channel="whatsapp", wa_id="19999999999")
    first = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=TemplateWriter())
    assert first.outcome == "answered" and "cédula" in first.final_text
    second = say(conversation, f"mi contrato es {customer.account_number}", writer=TemplateWriter())
    assert (second.outcome, second.route, second.customer_id) == ("answered", "account", "C-1001")
    assert second.query == "¿Por qué mi factura llegó más alta este mes?"
    conversation.contact.refresh_from_db()
    assert conversation.contact.customer_id == "C-1001"


def test_a_company_identified_by_its_rif_as_typed_is_linked(healthy_billing):
    from billing.simulator.data import build_dataset

    company = next(account.customer for account in build_dataset(as_of=clock.today()).accounts.values()
                   if account.customer.national_id.startswith("J-"))
    letter, digits, check = company.national_id.split("-")
    typed = f"{letter.lower()} {digits[:2]}.{digits[2:5]}.{digits[5:]} - {check}"  # "j 34.472.459 - 7"
    conversation = start(customer_id="", channel="whatsapp", wa_id="19999999998")
    first = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=TemplateWriter())
    assert first.outcome == "answered" and "cédula" in first.final_text
    second = say(conversation, f"el RIF de la empresa es {typed}", writer=TemplateWriter())
    assert (second.route, second.customer_id) == ("account", company.id)


def faithful(reply, ids=("E1",), note="Root cause: the reconnection fee is in the document [E1]."):
    return {"customer_message": reply, "internal_note": note, "evidence_ids": list(ids), "needs_human": False}


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


def citing_every_passage(reply):
    """A model reply citing every passage its prompt offers (how many the prune keeps is the embedder's business)."""
    def step(request):
        offered = re.findall(r"^\[(E\d+)\]", "\n".join(m["content"] for m in request["messages"]), re.MULTILINE)
        return faithful(f"{reply} {''.join(f'[{n}]' for n in dict.fromkeys(offered))}.")
    return step


def test_llm_that_drops_working_days_is_rewritten_before_the_customer_reads_it():
    # Every retrieved passage cited: the number is there, its kind of day is the question.
    trace, fake = llm_say(start(customer_id=""), "¿en cuántos días hacen la devolución de un pago duplicado?", [
        citing_every_passage("La devolución se hace en un máximo de 3 días"),
        citing_every_passage("La devolución se hace en un máximo de 3 días hábiles"),
    ])
    assert trace.outcome == "answered" and "3 días hábiles" in trace.final_text
    assert [a["verdict"]["grounded"] for a in trace.attempts] == [False, True]
    rewrite = fake.requests[1]["body"]["messages"][-1]["content"]
    assert "“3 días” changes what is counted" in rewrite and "3 días hábiles" in rewrite


def test_llm_that_keeps_inventing_numbers_ends_with_the_quoted_passage_not_an_escalation():
    conversation = start()
    trace, fake = llm_say(conversation, "cuanto cobran por reconexion de fibra",
                          [faithful("Cuesta Bs. 4.500,00 [E1].")] * 3)
    assert (trace.outcome, trace.fallback) == ("answered", "quote")
    assert len(fake.requests) == 3 and len(trace.attempts) == 3
    assert [a["verdict"]["grounded"] for a in trace.attempts] == [False, False, False]
    assert trace.verdict == "ungrounded"  # the writer's drafts; the fallback is recorded on its own
    [reply] = bot_texts(conversation)
    assert "350,00" in reply and "4.500" not in reply and reply == trace.final_text
    assert "failed the verifier" in trace.internal_note and "[E1]" in trace.internal_note


@pytest.mark.parametrize(
    "script",
    [
        [faithful("Cuesta Bs. 350,00 [E9].", ["E9"])] * 3,
        [faithful("Cuesta Bs. 350,00 [E1]. Le garantizamos el reembolso.")] * 3,
        [faithful("Cuesta Bs. 350,00 [E1].", note="Costs 3.500,00 [E1].")] * 3,
        [faithful("Cuesta Bs. 350,00 [E1].", note="")] * 3,
    ],
    ids=["unknown-citation", "banned-promise", "note-invents-a-figure", "no-note"],
)
def test_after_the_last_rewrite_the_verified_quote_is_sent(script):
    trace, _ = llm_say(start(), "cuanto cobran por reconexion de fibra", script)
    assert (trace.outcome, trace.fallback) == ("answered", "quote")
    assert "350,00" in trace.final_text and trace.fallback_draft["verdict"]["grounded"]


@pytest.mark.parametrize(
    "script, reason",
    [
        ([500, 500], "MODEL_ERROR"),
        ([HANG, HANG], "MODEL_ERROR"),
        (["this is not json", "{still not"], "MODEL_ERROR"),
        ([{"customer_message": "", "internal_note": "", "evidence_ids": [], "needs_human": True}], "MODEL_DEFERRED"),
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


# ---------------------------------------------------------------- key figures, fallback and the agent's note

@pytest.fixture(scope="module")
def _billing_as_of():
    simulator = simulator_for(flipped=False)
    with client_for(simulator, AS_OF) as client:
        yield simulator, client


@pytest.fixture
def pinned(_billing_as_of):
    """The simulator and a client pinned to the billing tests' date, so figures are the worked ones; the
    product's clock reads the same date, so the bot's month words agree with billing's invoices."""
    with clock.pinned(AS_OF):
        yield _billing_as_of


def scenario_customer(pinned, scenario, variant=0):
    return pinned[0].data.scenarios[scenario][variant]


KEY_FIGURES = [
    ("¿Por qué mi factura llegó más alta este mes?", "promotion_ended", 0, "invoice_change",
     [("delta", "324.80", "invoice_delta"), ("discount_ended", "280.00", "promotion_value")]),
    ("¿Por qué mi factura llegó más alta este mes?", "plan_upgrade_proration", 0, "invoice_change",
     [("delta", "634.14", "invoice_delta"), ("prorated_amount", "146.67", "proration"),
      ("prorated_days", "11", "proration_days")]),
    ("¿Ya pagué, mi pago llegó?", "payment_failed_then_succeeded", 0, "payments",
     [("payment_amount", "1624.00", "payment"), ("payment_date", "2026-10-04", "payment")]),
    ("¿Cuánto debo de mi factura?", "late_fee", 0, "account_summary",
     [("balance", "1705.20", "payments_vs_total"), ("due_date", "2026-10-10", "days_overdue")]),
]


@pytest.mark.parametrize(("text", "scenario", "variant", "capability", "primary"), KEY_FIGURES,
                         ids=[f"{c}-{s}" for _t, s, _v, c, _p in KEY_FIGURES])
def test_each_capability_passes_its_primary_key_figures_to_the_verifier(pinned, text, scenario, variant,
                                                                       capability, primary):
    trace = say(start(customer_id=scenario_customer(pinned, scenario, variant)), text, writer=TemplateWriter(),
                billing=pinned[1])
    assert (trace.outcome, trace.tool_calls[0]["capability"]) == ("answered", capability)
    facts = {e["id"]: e for e in trace.evidence}
    stated = [(k["name"], k["value"], facts[k["evidence_id"]]["fact_kind"]) for k in trace.key_figures
              if k["role"] == "primary"]
    assert stated == primary
    # the figure the key figure names is the value of the fact it points at (or in its text, for a date)
    for figure in trace.key_figures:
        fact = facts[figure["evidence_id"]]
        assert figure["value"] == fact["value"] or figure["value"] in fact["text"]
    assert trace.attempts[0]["verdict"]["grounded"] and not trace.fallback


def fact_ids(pinned, customer_id, text):
    """Return {fact kind: evidence id} for a question as the turn will number it (chunks come first)."""
    from bot.turn import answer_query

    draft = answer_query(query=text, customer_id=customer_id, writer=TemplateWriter(), billing=pinned[1]).draft
    ids = {}
    for item in draft.evidence:
        ids.setdefault(item.get("fact_kind") or "chunk", item["id"])
    return ids


def test_an_answer_without_its_key_figure_is_rewritten(pinned):
    text = "¿Por qué mi factura llegó más alta este mes?"
    customer_id = scenario_customer(pinned, "promotion_ended")
    ids = fact_ids(pinned, customer_id, text)
    total, delta, promotion = ids["invoice_total"], ids["invoice_delta"], ids["promotion_value"]
    # The bug this guards: the invoice total cited as the increase.
    wrong = faithful(f"Tu factura subió Bs. 1.624,00 [{total}].", [total], note=f"Total 1624.00 [{total}].")
    right = faithful(f"Tu factura subió Bs. 324,80 [{delta}] porque terminó una promoción de Bs. 280,00 "
                     f"[{promotion}] al mes.", [delta, promotion],
                     note=f"Root cause: promotion ended, 280.00 [{promotion}]; 1624.00 - 1299.20 = 324.80 [{delta}].")
    with FakeOpenAI() as fake:
        fake.chat_script = [wrong, right]
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=5)
        trace = say(start(customer_id=customer_id), text, writer=writer, billing=pinned[1])
    assert [a["verdict"]["grounded"] for a in trace.attempts] == [False, True]
    assert [p["token"] for p in trace.attempts[0]["verdict"]["problems"]] == ["324.80", "280.00"]
    rewrite = fake.requests[1]["body"]["messages"][-1]["content"]
    assert f"must state 324.80 (delta), the key figure of this finding ({delta} holds it)" in rewrite
    assert trace.outcome == "answered" and "324,80" in trace.final_text
    assert trace.internal_note == right["internal_note"]


def shifted(delta="E1"):
    """A model that always moves the decimal separator: 324,80 becomes 32.480."""
    return faithful(f"Tu factura subió Bs. 32.480 [{delta}] por el fin de la promoción.", [delta],
                    note=f"Delta 32.480 [{delta}].")


def test_a_model_that_always_shifts_decimals_ends_with_the_verified_template_answer_sent(pinned):
    conversation = start(customer_id=scenario_customer(pinned, "promotion_ended"))
    with FakeOpenAI() as fake:
        fake.chat_script = [shifted()] * 3
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=5)
        trace = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=writer, billing=pinned[1])
    assert len(fake.requests) == 3 and [a["verdict"]["grounded"] for a in trace.attempts] == [False] * 3
    assert (trace.outcome, trace.fallback, trace.get_fallback_display()) == (
        "answered", "template", "Sent the verified template answer (the writer's drafts failed)")
    assert bot_texts(conversation) == [
        "Tu factura de octubre subió Bs. 324,80 respecto a la de septiembre por el fin de la promoción «Descuento "
        "de bienvenida», que te descontaba Bs. 280,00 al mes. El resto, Bs. 44,80, corresponde al IVA."]
    assert not Escalation.objects.filter(conversation=conversation).exists()
    assert trace.internal_note.startswith("Root cause: a promotion ended")
    assert "Fallback: every draft the writer was allowed failed the verifier" in trace.internal_note


def test_a_fallback_that_cannot_state_the_key_figures_escalates_with_the_verified_draft(pinned, monkeypatch):
    from bot import compose

    # A composition that forgets the delta: its figures check out, the answer does not.
    monkeypatch.setitem(compose.PHRASES["es"], "up", "Tu factura de {month} cambió respecto a la de {previous}")
    conversation = start(customer_id=scenario_customer(pinned, "promotion_ended"))
    with FakeOpenAI() as fake:
        fake.chat_script = [shifted()] * 3
        writer = LLMWriter(api_key="k", base_url=fake.base_url, model="test-model", timeout=5)
        trace = say(conversation, "¿Por qué mi factura llegó más alta este mes?", writer=writer, billing=pinned[1])
    assert (trace.outcome, trace.escalation_reason, trace.fallback) == ("escalated", "UNGROUNDED_OUTPUT", "escalated")
    escalation = Escalation.objects.get(conversation=conversation)
    assert escalation.suggested_reply.startswith("Tu factura de octubre cambió respecto a la de septiembre por el")
    assert "Bs. 280,00" in escalation.suggested_reply and "[E" not in escalation.suggested_reply
    assert escalation.internal_note == trace.internal_note and escalation.internal_note.startswith("Root cause:")


@pytest.mark.parametrize(
    ("text", "customer_id", "fault", "reason", "expected"),
    [
        ("quiero hablar con una persona", "C-1001", None, "USER_REQUEST",
         ["Customer: identified as C-1001.", "Documents looked at: none"]),
        ("quiero hablar con una persona", "", None, "USER_REQUEST", ["Customer: not identified"]),
        ("¿Por qué mi factura llegó más alta este mes?", "C-1001", "503", "TOOL_ERROR",
         ["Customer: identified as C-1001.", "Billing: invoice_change failed — http_503: billing API answered HTTP 503."]),
        ("can i pay my bill in installments", "C-1001", None, "NO_CONTEXT", ["Documents looked at: ", ", vector 0."]),
    ],
)
def test_an_escalation_without_a_writer_says_what_the_bot_already_knew(healthy_billing, text, customer_id, fault,
                                                                      reason, expected):
    healthy_billing.set_fault(fault)
    conversation = start(customer_id=customer_id)
    trace = say(conversation, text, writer=TemplateWriter())
    escalation = Escalation.objects.get(conversation=conversation)
    assert (trace.escalation_reason, escalation.reason) == (reason, reason)
    assert escalation.internal_note == trace.internal_note
    for fragment in expected:
        assert fragment in escalation.internal_note
    assert escalation.internal_note.endswith("The bot wrote no reply.")


# ---------------------------------------------------------------- clarifying questions

def test_an_ambiguous_refund_question_is_answered_after_one_question(django_capture_on_commit_callbacks):
    # Someone billing does not know: whether the annual plan's, the trial's or the monthly rule applies is theirs to
    # say (for a known customer billing reports the term, and nobody is asked).
    conversation = start(customer_id="")
    asked = say(conversation, "si cancelo el servicio me devuelven el dinero?", writer=TemplateWriter())
    assert (asked.outcome, asked.get_outcome_display()) == ("clarify", "Asked to clarify")
    assert asked.final_text == ("Para responderte bien, ¿cuál es tu caso: plan anual, plan de prueba o plan "
                                "mensual?")
    conversation.refresh_from_db()
    assert conversation.pending_clarification["query"] == "si cancelo el servicio me devuelven el dinero?"
    assert not Escalation.objects.filter(conversation=conversation).exists()

    answer = say(conversation, "el anual", writer=TemplateWriter())
    assert (answer.outcome, answer.query) == ("answered", "si cancelo el servicio me devuelven el dinero?")
    assert answer.routing_rule == "clarified: plan anual; original question"
    assert {e["doc"] for e in answer.evidence} <= {"reembolso-plan-anual-es", "deposito-equipos-es"}
    cited = {e["id"]: e["doc"] for e in answer.evidence}
    assert [cited[i] for i in answer.citations] == ["reembolso-plan-anual-es"]  # the annual plan's rule
    conversation.refresh_from_db()
    assert conversation.pending_clarification == {}
    assert bot_texts(conversation) == [asked.final_text, answer.final_text]


def test_someone_unknown_gets_each_kinds_late_fee_then_their_own_once_they_say_which():
    conversation = start(customer_id="")
    asked = say(conversation, "¿cuánto es el recargo si pago tarde?", writer=TemplateWriter())
    assert asked.outcome == "clarify"
    assert "Cuentas residenciales:" in asked.final_text and "Cuentas empresariales:" in asked.final_text
    assert asked.final_text.endswith("¿Tu servicio es de hogar o de empresa? Así te confirmo el que te aplica.")
    cited = {e["id"]: e["doc"] for e in asked.evidence}
    assert {cited[i] for i in asked.citations} == {"recargo-mora-hogar-es", "recargo-mora-empresarial-es"}

    answer = say(conversation, "hogar", writer=TemplateWriter())
    assert (answer.outcome, answer.query) == ("answered", "¿cuánto es el recargo si pago tarde?")
    assert "5 %" in answer.final_text and "3,00" not in answer.final_text
    assert "empresarial" not in answer.final_text.lower()
    assert bot_texts(conversation) == [asked.final_text, answer.final_text]


def test_a_reply_that_picks_no_option_is_a_new_question():
    conversation = start()
    say(conversation, "si cancelo el servicio me devuelven el dinero?", writer=TemplateWriter())
    trace = say(conversation, "cuanto cobran por reconexion de fibra", writer=TemplateWriter())
    assert (trace.outcome, trace.query) == ("answered", "cuanto cobran por reconexion de fibra")
    conversation.refresh_from_db()
    assert conversation.pending_clarification == {}


def test_a_question_asked_before_a_person_took_over_is_not_answered_after_the_hand_back(make_staff):
    from desk import services

    ana = make_staff("ana", "agent")
    conversation = start()
    say(conversation, "si cancelo el servicio me devuelven el dinero?", writer=TemplateWriter())
    services.conversation_take_over(conversation_id=conversation.pk, agent=ana)
    services.agent_reply_send(conversation_id=conversation.pk, agent=ana, text="¿Me dice su número de cuenta?")
    services.conversation_hand_back(conversation_id=conversation.pk, agent=ana)
    conversation.refresh_from_db()
    assert conversation.pending_clarification == {}
    # "el anual" is no longer read as picking the annual plan out of the bot's old menu.
    trace = say(conversation, "el anual", writer=TemplateWriter())
    assert trace.query == "el anual" and not (trace.routing_rule or "").startswith("clarified")


def test_a_question_that_names_its_plan_is_answered_from_that_plan_only():
    trace = say(start(), "si cancelo el plan anual a la semana de pagarlo me devuelven todo?", writer=TemplateWriter())
    assert trace.outcome == "answered"
    assert "reembolso-plan-prueba-es" not in {e.get("doc") for e in trace.evidence}
    assert "cancelacion-servicio-es" not in {e.get("doc") for e in trace.evidence}


def test_a_bill_question_without_a_period_is_about_the_newest_bill(pinned):
    customer_id = scenario_customer(pinned, "promotion_ended", 2)  # cycle B: October's bill issued 10-16, due 10-26
    trace = say(start(customer_id=customer_id), "¿Por qué mi factura llegó más alta?", writer=TemplateWriter(),
                billing=pinned[1])
    assert trace.outcome == "answered" and trace.final_text.startswith("Tu factura de octubre subió")


def test_a_bill_question_naming_a_month_not_billed_yet_asks_which_bill(healthy_billing):
    with clock.pinned(date(2026, 10, 5)):  # cycle B bills on the 16th: October's bill is not out yet
        customer_id = next(cid for cid in healthy_billing.data.scenarios["promotion_ended"]
                           if healthy_billing.data.accounts[cid].customer.billing_cycle == "B")
        conversation = start(customer_id=customer_id)
        asked = say(conversation, "¿Por qué mi factura de octubre llegó más alta?", writer=TemplateWriter())
        assert (asked.outcome, asked.final_text) == ("clarify", "¿Te refieres a tu factura de septiembre o a la "
                                                                "de agosto?")
        answer = say(conversation, "la de agosto", writer=TemplateWriter())
    assert answer.outcome == "answered" and answer.routing_rule == "clarified: agosto; original question"
    assert answer.final_text.startswith("Tu factura de agosto ")
    assert answer.tool_calls[-1]["data"]["current_invoice"]["period"] == "2026-08"


def test_a_bill_question_that_names_the_month_is_answered_for_that_month(pinned):
    customer_id = scenario_customer(pinned, "promotion_ended", 2)
    trace = say(start(customer_id=customer_id), "¿Por qué mi factura de octubre llegó más alta?",
                writer=TemplateWriter(), billing=pinned[1])
    assert trace.outcome == "answered" and trace.final_text.startswith("Tu factura de octubre subió")


def test_the_bill_before_the_current_one_is_answered_with_its_own_total(pinned):
    customer_id = scenario_customer(pinned, "promotion_ended", 2)  # October's bill is the newest on the pinned date
    conversation = start(customer_id=customer_id)
    first = say(conversation, "¿cuánto fue mi factura?", writer=TemplateWriter(), billing=pinned[1])
    assert first.outcome == "answered" and "octubre" in first.final_text and "septiembre" not in first.final_text
    trace = say(conversation, "¿y la del mes anterior?", writer=TemplateWriter(), billing=pinned[1])
    invoices = trace.tool_calls[-1]["data"]["invoices"]
    assert [invoice["period"] for invoice in invoices] == ["2026-10", "2026-09"]
    previous = invoices[1]["total"]  # {"amount": "…", "currency": "…"}
    total = money(Decimal(previous["amount"]), previous["currency"], "es")
    assert trace.outcome == "answered" and f"La anterior, de septiembre, fue de {total}." in trace.final_text
    named = say(start(customer_id=customer_id, language="en"), "how much was my September bill?",
                writer=TemplateWriter(), billing=pinned[1])
    assert f"The one before, for September, was {money(Decimal(previous['amount']), previous['currency'], 'en')}" \
        in named.final_text
    older = say(start(customer_id=customer_id), "¿cuánto fue mi factura de agosto?", writer=TemplateWriter(),
                billing=pinned[1])
    (august,) = older.tool_calls[-1]["data"]["invoices"]
    assert august["period"] == "2026-08"
    total = money(Decimal(august["total"]["amount"]), august["total"]["currency"], "es")
    assert older.final_text.startswith(f"Tu factura de agosto es de {total}.")


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
    assert trace.route_confidence == 1.0 and trace.router_version.startswith("rules2+probe3/")


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


# The configuration fingerprint ----------------------------------------------------------------

FEE_QUESTION = "cuanto cobran por reconexion de fibra"


def test_every_trace_carries_the_configuration_it_ran_under_and_equal_settings_share_one_row(settings):
    answered = say(start(), FEE_QUESTION, writer=TemplateWriter())
    refused = say(start(), "quiero hablar con una persona", writer=TemplateWriter())  # stops before retrieval
    silenced = say(Conversation.objects.get(pk=refused.conversation_id), "¿hola?", writer=TemplateWriter())
    assert (refused.outcome, silenced.outcome) == ("escalated", "silenced")
    assert answered.configuration_id == refused.configuration_id == silenced.configuration_id
    assert Configuration.objects.filter(pk=answered.configuration_id).count() == 1
    configuration = answered.configuration
    assert (configuration.prompt_version, configuration.model) == ("template-2", "template")
    assert (configuration.router_version, configuration.index_version) == (answered.router_version,
                                                                          answered.index_version)
    assert (configuration.kb_prune_margin, configuration.kb_context_min_score, configuration.bot_max_rewrites) == (
        settings.KB_PRUNE_MARGIN, settings.KB_CONTEXT_MIN_SCORE, settings.BOT_MAX_REWRITES)


@pytest.mark.parametrize("setting, value, label", [
    ("KB_PRUNE_MARGIN", 0.2, "Retrieval prune margin"),
    ("KB_CONTEXT_MIN_SCORE", 0.9, "Minimum score to count as context"),
    ("BOT_MAX_REWRITES", 4, "Rewrites allowed after the verifier refuses"),
    ("GROUNDING_BANNED_PHRASES", ["le garantizo"], "Forbidden and humanizer phrase lists (content hash)"),
])
def test_changing_one_tuning_setting_records_a_new_configuration_that_names_what_changed(settings, setting, value,
                                                                                        label):
    before = say(start(), FEE_QUESTION, writer=TemplateWriter())
    setattr(settings, setting, value)
    after = say(start(), FEE_QUESTION, writer=TemplateWriter())
    assert after.configuration_id != before.configuration_id
    assert Configuration.objects.filter(pk__in=[before.configuration_id, after.configuration_id]).count() == 2
    changed = differences(before.configuration.parts(), after.configuration.parts())
    assert [difference.part.label for difference in changed] == [label]
    if setting != "GROUNDING_BANNED_PHRASES":
        assert changed[0].after == value and changed[0].before == getattr(before.configuration, setting.lower())
    assert after.configuration.tuning_hash != before.configuration.tuning_hash


def test_another_writer_model_is_another_configuration_with_the_same_tuning():
    template = say(start(), "¿cuál es la capital de Francia?", writer=TemplateWriter())
    with FakeOpenAI() as fake:
        model = say(start(), "¿cuál es la capital de Francia?",
                    writer=LLMWriter(api_key="k", base_url=fake.base_url, model="m-2", timeout=5))
    changed = {d.part.name: (d.before, d.after)
               for d in differences(template.configuration.parts(), model.configuration.parts())}
    assert changed["model"] == ("template", "m-2") and set(changed) == {"model", "prompt_version"}
    assert model.configuration.tuning_hash == template.configuration.tuning_hash
