"""WhatsApp templates: supervisors keep the list; after the 24-hour window the composer offers the approved ones
in the customer's language, pre-filled, previewed, and sent as Meta's template message through the outbox."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest

from core import clock
from desk import services
from desk.models import Channel, CreditNoteRequest, Message, MessageTemplate
from desk.senders import WhatsAppCloudSender
from desk.tests.media_support import graph, media_storage  # noqa: F401
from tests.support.factories import CUSTOMER, conversation_start
from tests.support.fake_graph import change_value, delivery_status, webhook_body

pytestmark = pytest.mark.django_db

BALANCE = "Hola {{1}}, su factura de {{2}} está lista. Responda a este mensaje si tiene dudas."
CREDIT = "Hola {{1}}, registramos la nota de crédito {{2}} en su cuenta. Gracias por su paciencia."


def template(name="saldo_pendiente", *, body=BALANCE, language="es", status="approved",
             sources=("customer_name", "amount_due"), buttons=("Pagar ahora", "Hablar con alguien")):
    return MessageTemplate.objects.create(name=name, language=language, body=body, status=status,
                                          category="utility", variable_sources=list(sources), buttons=list(buttons))


def closed_window(agent, **start):
    """A WhatsApp conversation the agent holds, whose customer last wrote 30 hours ago."""
    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id=CUSTOMER,
                                      inbound_at=clock.now() - timedelta(hours=30), **start)
    services.conversation_take_over(conversation_id=conversation.pk, agent=agent)
    return conversation


@pytest.fixture
def agent_client(client, make_staff):
    agent = make_staff("ana", "agent")
    client.force_login(agent)
    return client, agent


# The supervisors' page ------------------------------------------------------------------------------

def test_supervisors_create_a_template_and_agents_cannot_open_the_page(client, make_staff):
    client.force_login(make_staff("ana", "agent"))
    assert client.get("/desk/templates/").status_code == 403
    assert client.post("/desk/templates/new/", {"name": "x"}).status_code == 403

    client.force_login(make_staff("sol", "supervisor"))
    page = client.get("/desk/templates/")
    assert page.status_code == 200 and "No templates yet" in page.content.decode()
    response = client.post("/desk/templates/new/", {
        "name": "saldo_pendiente", "language": "es", "category": "utility", "status": "approved", "body": BALANCE,
        "buttons_text": "Pagar ahora\nHablar con alguien", "source_1": "customer_name", "source_2": "amount_due"})
    assert response.status_code == 302
    saved = MessageTemplate.objects.get()
    assert saved.buttons == ["Pagar ahora", "Hablar con alguien"]
    assert saved.variable_sources == ["customer_name", "amount_due"]
    listing = client.get("/desk/templates/").content.decode()
    assert "saldo_pendiente" in listing and "Approved" in listing and "2 variables" in listing
    edit = client.post(f"/desk/templates/{saved.pk}/", {
        "name": "saldo_pendiente", "language": "es", "category": "utility", "status": "paused", "body": BALANCE})
    assert edit.status_code == 302
    saved.refresh_from_db()
    assert saved.status == "paused" and saved.buttons == []


@pytest.mark.parametrize("field, value, sentence", [
    ("body", "Hola {{1}}, su nota {{3}} está lista.", "no gap"),
    ("body", "{{1}} su factura está lista.", "starts or ends"),
    ("name", "Saldo Pendiente", "lowercase letters"),
    ("language", "español", "language code"),
    ("buttons_text", "Un botón con un texto demasiado largo", "25 characters"),
])
def test_a_template_meta_would_refuse_is_not_saved_and_the_form_says_why(client, make_staff, field, value,
                                                                        sentence):
    client.force_login(make_staff("sol", "supervisor"))
    data = {"name": "saldo_pendiente", "language": "es", "category": "utility", "status": "pending",
            "body": BALANCE, field: value}
    response = client.post("/desk/templates/new/", data)
    assert response.status_code == 400 and sentence in response.content.decode()
    assert not MessageTemplate.objects.exists()


def test_the_same_name_and_language_twice_is_refused(client, make_staff):
    template()
    client.force_login(make_staff("sol", "supervisor"))
    response = client.post("/desk/templates/new/", {"name": "saldo_pendiente", "language": "es",
                                                    "category": "utility", "status": "approved", "body": BALANCE})
    assert response.status_code == 400 and "already exists" in response.content.decode()
    assert MessageTemplate.objects.count() == 1


def test_supervisors_marked_staff_edit_templates_in_the_admin(client, make_staff):
    supervisor = make_staff("sol", "supervisor")
    supervisor.is_staff = True
    supervisor.save()
    client.force_login(supervisor)
    assert client.get("/admin/desk/messagetemplate/add/").status_code == 200
    assert "{{1}} is filled with" in client.get("/admin/desk/messagetemplate/add/").content.decode()


# The composer after the window ---------------------------------------------------------------------

def test_after_the_window_the_composer_offers_approved_templates_in_the_customers_language_prefilled(
        agent_client, healthy_billing):
    client, agent = agent_client
    balance = template()
    template("nota_credito", body=CREDIT, sources=("customer_name", "credit_note"), buttons=())
    template("pendiente_revision", status="pending")
    template("balance_due", language="en_US")
    conversation = closed_window(agent, name="Marisol Rojas", customer_id="C-1001")
    first = client.get(f"/desk/conversations/{conversation.pk}/").content.decode()
    assert first.index("nota_credito") < first.index("saldo_pendiente")  # by name; the first is chosen
    page = client.get(f"/desk/conversations/{conversation.pk}/?template={balance.pk}").content.decode()
    assert 'id="template-composer"' in page and 'id="composer-text"' not in page
    assert "saldo_pendiente" in page and "nota_credito" in page
    assert "pendiente_revision" not in page and "balance_due" not in page
    # {{1}} from the contact, {{2}} from the account panel's invoice, and the preview the customer reads.
    assert 'name="v1" id="v1" value="Marisol Rojas"' in page and "(from the customer&#x27;s name)" in page
    amount = page.split('name="v2" id="v2" value="', 1)[1].split('"', 1)[0]
    assert amount.startswith(("Bs.", "USD")) and f"Hola Marisol Rojas, su factura de {amount} está lista." in page
    assert "Pagar ahora" in page


def test_the_credit_note_number_is_prefilled_when_billing_filed_one(agent_client):
    client, agent = agent_client
    credit = template("nota_credito", body=CREDIT, sources=("customer_name", "credit_note"), buttons=())
    conversation = closed_window(agent, name="Marisol Rojas")
    CreditNoteRequest.objects.create(conversation=conversation, customer_id="C-1001", invoice_id="F-1",
                                     amount=Decimal("5.00"), currency="USD", reason="duplicado", status="sent",
                                     billing_credit_note_id="NC-000042", sent_at=clock.now())
    part = client.get(f"/desk/conversations/{conversation.pk}/template/?template={credit.pk}",
                      HTTP_HX_REQUEST="true").content.decode()
    assert 'value="NC-000042"' in part and "registramos la nota de crédito NC-000042" in part


def test_the_preview_follows_what_the_agent_types_and_names_a_value_whatsapp_refuses(agent_client):
    client, agent = agent_client
    chosen = template()
    conversation = closed_window(agent)
    part = client.get(f"/desk/conversations/{conversation.pk}/template/", {
        "template": chosen.pk, "typed": "1", "v1": "Don Pedro", "v2": "USD 40,60"}, HTTP_HX_REQUEST="true")
    assert part.status_code == 200
    assert "Hola Don Pedro, su factura de USD 40,60 está lista." in part.content.decode()
    bad = client.get(f"/desk/conversations/{conversation.pk}/template/", {
        "template": chosen.pk, "typed": "1", "v1": "Don\tPedro", "v2": "USD 1"}).content.decode()
    assert "must be on one line" in bad


def test_a_template_is_sent_as_metas_template_message_and_a_double_click_sends_once(
        agent_client, graph, django_capture_on_commit_callbacks):
    client, agent = agent_client
    chosen = template()
    graph.templates = {("saldo_pendiente", "es"): 2}
    conversation = closed_window(agent)
    form = {"template": chosen.pk, "v1": "Marisol", "v2": "Bs. 406,00", "form_key": "key-1"}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/desk/conversations/{conversation.pk}/template/send/", form)
    assert response.status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/desk/conversations/{conversation.pk}/template/send/", form)
    message = Message.objects.get(author="agent")
    assert (message.kind, message.status) == ("template", "sent")
    assert message.text == "Hola Marisol, su factura de Bs. 406,00 está lista. Responda a este mensaje si tiene dudas."
    (sent,) = [r["body"] for r in graph.requests if r["path"].endswith("/messages")]
    assert sent == {"messaging_product": "whatsapp", "recipient_type": "individual", "to": CUSTOMER,
                    "type": "template", "template": {
                        "name": "saldo_pendiente", "language": {"code": "es"},
                        "components": [{"type": "body", "parameters": [
                            {"type": "text", "text": "Marisol"}, {"type": "text", "text": "Bs. 406,00"}]}]}}
    page = client.get(f"/desk/conversations/{conversation.pk}/").content.decode()
    assert "template saldo_pendiente" in page and 'class="delivery sent"' in page


@pytest.mark.parametrize("change, sentence", [
    ({"v2": ""}, "Fill in {{2}}"),
    ({"v2": "dos\nlíneas"}, "one line"),
    ({"template": "pending"}, "pending review in WhatsApp"),
    ({"template": "english"}, "language is es"),
    ({"extra": True}, "has 2 variables; 3 values"),
])
def test_a_template_send_whatsapp_would_refuse_sends_nothing_and_says_why(agent_client, graph, change, sentence):
    client, agent = agent_client
    chosen = template()
    others = {"pending": template("en_revision", status="pending").pk,
              "english": template("balance_due", language="en").pk}
    conversation = closed_window(agent)
    form = {"template": chosen.pk, "v1": "Marisol", "v2": "Bs. 406,00"}
    if change.get("extra"):
        form["v3"] = "de más"
    else:
        form.update({k: others.get(v, v) for k, v in change.items()})
    response = client.post(f"/desk/conversations/{conversation.pk}/template/send/", form)
    assert response.status_code == 409 and sentence in response.content.decode()
    assert not Message.objects.filter(author="agent").exists() and graph.requests == []


def test_a_refused_template_send_keeps_what_the_agent_typed(agent_client, graph):
    client, agent = agent_client
    chosen = template()
    conversation = closed_window(agent)
    response = client.post(f"/desk/conversations/{conversation.pk}/template/send/", {
        "template": chosen.pk, "typed": "1", "v1": "Don Pedro", "v2": ""})
    page = response.content.decode()
    assert response.status_code == 409 and "Fill in {{2}}" in page
    assert 'name="v1" id="v1" value="Don Pedro"' in page and 'name="v2" id="v2" value=""' in page


def test_inside_the_window_free_text_stays_and_no_template_is_offered(agent_client):
    client, agent = agent_client
    template()
    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id=CUSTOMER)
    services.conversation_take_over(conversation_id=conversation.pk, agent=agent)
    page = client.get(f"/desk/conversations/{conversation.pk}/").content.decode()
    assert 'id="composer-text"' in page and 'id="template-composer"' not in page and 'id="attach"' in page


def test_without_an_approved_template_the_composer_says_so(agent_client):
    client, agent = agent_client
    template(status="rejected")
    conversation = closed_window(agent)
    page = client.get(f"/desk/conversations/{conversation.pk}/").content.decode()
    assert "No approved template in this customer's language (es)" in page


# The fake Graph API checks the template message's shape ---------------------------------------------

@pytest.mark.parametrize("name, language, parameters, code", [
    ("", "es", ["a"], 100),
    ("saldo_pendiente", "", ["a"], 100),
    ("saldo_pendiente", "es", ["una\nlínea"], 132018),
    ("saldo_pendiente", "es", ["solo uno"], 132000),
    ("no_existe", "es", ["a", "b"], 132001),
])
def test_the_fake_graph_refuses_a_malformed_template_message_as_meta_does(graph, name, language, parameters, code):
    graph.templates = {("saldo_pendiente", "es"): 2}
    sender = WhatsAppCloudSender(base_url=graph.base_url, access_token=graph.access_token,
                                 phone_number_id=graph.phone_number_id, sleep=lambda s: None)
    result = sender.send_template(to=CUSTOMER, name=name, language=language, parameters=parameters)
    assert not result.ok and f"(code {code})" in result.error and result.attempts == 1


def test_the_fake_graph_refuses_a_template_body_of_the_wrong_shape(graph):
    sender = WhatsAppCloudSender(base_url=graph.base_url, access_token=graph.access_token,
                                 phone_number_id=graph.phone_number_id, sleep=lambda s: None)
    for template_object in ({"name": "x", "language": "es"},
                            {"name": "x", "language": {"code": "es"}, "components": [{"type": "footer"}]},
                            {"name": "x", "language": {"code": "es"},
                             "components": [{"type": "body", "parameters": [{"type": "text"}]}]}):
        result = sender._retrying(lambda t=template_object: sender._attempt(
            {"messaging_product": "whatsapp", "to": CUSTOMER, "type": "template", "template": t}))
        assert not result.ok and "(code 100)" in result.error


# Delivery statuses in the thread -------------------------------------------------------------------------

def test_each_outgoing_message_shows_its_status_and_a_failure_says_what_to_do(deliver, queued, make_staff, client):
    agent = make_staff("ana", "agent")
    conversation = conversation_start(channel=Channel.WHATSAPP, wa_id=CUSTOMER)
    services.conversation_take_over(conversation_id=conversation.pk, agent=agent)
    sent = [Message.objects.create(conversation=conversation, direction="out", author="agent", agent=agent,
                                   text=f"respuesta {n}", status="sent", provider_message_id=f"wamid.OUT{n}")
            for n in range(3)]
    deliver(webhook_body(change_value(statuses=[
        delivery_status("wamid.OUT0", "delivered"),
        delivery_status("wamid.OUT1", "read"),
        delivery_status("wamid.OUT2", "failed", errors=[{
            "code": 131047, "title": "Re-engagement message", "message": "Re-engagement message",
            "error_data": {"details": "Message failed to send because more than 24 hours have passed since the "
                                      "customer last replied to this number."}}]),
    ])))
    client.force_login(agent)
    page = client.get(f"/desk/conversations/{conversation.pk}/").content.decode()
    for message, status in zip(sent, ("delivered", "read", "failed"), strict=True):
        block = page.split(f'id="message-{message.pk}"', 1)[1].split('class="msg ', 1)[0]
        assert f'class="delivery {status}"' in block
    failed = page.split(f'id="message-{sent[2].pk}"', 1)[1].split('class="bad small send-failure"', 1)[1]
    failure = failed.split("</div>", 1)[0]
    assert "More than 24 hours since the customer last wrote — send a template." in failure
    assert "code 131047" in failure and "Re-engagement message" in failure
    event = page.split('class="event event-send_failed"', 1)[1].split("</div>", 1)[0]
    assert "sending failed: Re-engagement message" in event and "— More than 24 hours since" in event


def test_the_seed_command_adds_valid_samples_once(capsys):
    from django.core.management import call_command

    from desk.template_text import body_problem

    call_command("message_templates_seed")
    assert MessageTemplate.objects.count() == 5 and set(MessageTemplate.objects.values_list("status", flat=True)) \
        == {"pending"}
    assert all(body_problem(t.body) == "" for t in MessageTemplate.objects.all())
    call_command("message_templates_seed", "--approved")
    assert "already exist; nothing created" in capsys.readouterr().out
    MessageTemplate.objects.all().delete()
    call_command("message_templates_seed", "--approved")
    assert set(MessageTemplate.objects.values_list("status", flat=True)) == {"approved"}
