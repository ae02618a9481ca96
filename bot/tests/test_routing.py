import pytest

from bot.routing import Route, detect_language, route_message


@pytest.mark.parametrize(
    "text",
    ["quiero hablar con una persona", "Necesito un asesor", "pásame con un agente por favor", "agent please",
     "Can I talk to a human?", "I want to speak with a real person", "persona real por favor"],
)
def test_wanting_a_human_wins_over_everything(text):
    assert route_message(text).route == Route.HUMAN


def test_wanting_a_human_wins_even_inside_an_account_question():
    assert route_message("mi factura subió, quiero hablar con una persona").route == Route.HUMAN


@pytest.mark.parametrize(
    "text",
    ["cámbienme el plan a Fibra 600", "quiero cancelar el servicio", "I want to cancel my subscription",
     "please upgrade my plan", "no reconozco este cobro", "denme de baja"],
)
def test_actions_the_bot_cannot_take(text):
    assert route_message(text).route == Route.UNSUPPORTED


@pytest.mark.parametrize(
    "text",
    ["¿cuánto cuesta cambiar de plan?", "¿cómo cancelo el servicio?", "how do I cancel my service?",
     "what happens if I downgrade my plan"],
)
def test_questions_about_an_action_are_document_questions(text):
    assert route_message(text).route in {Route.DOCUMENT, Route.ACCOUNT}
    assert route_message(text).route != Route.UNSUPPORTED


@pytest.mark.parametrize(
    "text, capability",
    [
        ("¿Por qué mi factura llegó más alta este mes?", "invoice_change"),
        ("por que me subio la factura", "invoice_change"),
        ("why is my bill higher this month?", "invoice_change"),
        ("ya pagué por pago móvil y no aparece", "payments"),
        ("did you receive my payment?", "payments"),
        ("cuánto debo?", "account_summary"),
        ("what plan am I on? my plan", "account_summary"),
    ],
)
def test_account_questions_name_the_billing_capability(text, capability):
    routing = route_message(text)
    assert (routing.route, routing.capability) == (Route.ACCOUNT, capability)


@pytest.mark.parametrize("text", ["cuanto cobran por reconexion de fibra", "What are your support hours?",
                                  "¿aceptan Zelle?"])
def test_policy_questions_go_to_the_knowledge_base(text):
    assert route_message(text).route == Route.DOCUMENT


@pytest.mark.parametrize("kind", ["image", "audio", "document", "location"])
def test_media_the_bot_cannot_read(kind):
    assert route_message("", kind=kind).route == Route.MEDIA


@pytest.mark.parametrize(
    "text, language",
    [("¿Por qué mi factura es más alta?", "es"), ("why is my bill higher?", "en"), ("ok", "es"),
     ("hola, buenas tardes", "es"), ("hello, what are the support hours", "en")],
)
def test_language_detection(text, language):
    assert detect_language(text) == language


def test_ties_keep_the_default_language():
    assert detect_language("12345", default="en") == "en"
