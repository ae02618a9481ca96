"""The pure routing decision: rules first, then the classifier's scores. No database, no embedding."""

import pytest

from bot.routing.capability import account_capability
from bot.routing.courtesy import courtesy_of
from bot.routing.decision import asks_what_would_follow, decide, rule_route, yield_to_published_number
from bot.routing.language import detect_language
from bot.routing.text import for_search
from bot.routing.types import Courtesy, Route


def scores(**by_route):
    """Classifier scores for the given routes, the rest of the probability shared by nobody."""
    return {route: float(p) for route, p in by_route.items()}


@pytest.mark.parametrize(
    "text",
    ["quiero hablar con una persona", "Necesito un asesor", "pásame con un agente por favor", "agent please",
     "Can I talk to a human?", "I want to speak with a real person", "persona real por favor",
     # Asked for a person without any of the old rule's words: the old router sent them to the knowledge base.
     "pásame con alguien", "necesito que me atienda alguien", "can a real agent help me",
     "mi factura subió, quiero hablar con una persona", "¿no tienen a nadie que atienda?",
     # A bare word for a person as one sentence of several.
     "Ya escribí tres veces lo mismo. Persona, por favor.", "Third time asking. Someone? Anyone?",
     # Misspelt, as typed in a hurry; asked to be attended or rung; a person asked for after one was mentioned.
     "kiero ablar con alguien ya", "i need a reprsentative", "supervisr please", "is someone real there",
     "solicito ser atendida por un ejecutivo", "could somebody from billing give me a ring",
     "the agent told me to wait a week, I want a supervisor now"],
)
def test_asking_for_a_person_is_decided_by_the_rules(text):
    assert rule_route(text).route == Route.HUMAN
    assert decide(text, scores(document=1.0)).route == Route.HUMAN  # whatever the classifier says


@pytest.mark.parametrize(
    "text",
    ["Is there a fee to transfer the account to another person's name?", "send someone over to fix the router",
     "¿cuánto cuesta el plan de 300?", "mi factura subió este mes",
     # What a person said or did, the customer's own boss, thanks, a job, what the bot is, opening hours.
     "the agent said my refund was approved, when will it arrive?", "ya me atendió el asesor, todo resuelto gracias",
     "my manager asked me what the exchange rate is today", "mi jefa quiere la factura con el RIF de la empresa",
     "never mind the agent, found it", "do you have openings for sales reps? I want to apply",
     "lol my mom thinks you are a real person", "which days do your agents work?"],
)
def test_a_person_mentioned_in_passing_is_not_a_request_for_one(text):
    assert rule_route(text) is None or rule_route(text).route != Route.HUMAN


@pytest.mark.parametrize("text", [
    "la ONT no sirve, cámbienmela", "necesito el plan de 600, actívenmelo", "trasladen el servicio a mi casa nueva",
    "pásenme al ciclo A", "quiero poner el contrato a nombre de mi esposo", "put the account in my son's name",
    "the technician didn't come, reschedule me for Monday", "turn off automatic payment on my card",
    "give me a discount this month please"])
def test_a_request_to_act_is_read_from_its_form(text):
    assert rule_route(text).rule == "asks to act"


@pytest.mark.parametrize("text", ["I'd like to take a quick look at my last invoice", "quiero echarle un vistazo a mi factura",
                                  "can I have a look at my bill from March?", "pásenme la factura de marzo",
                                  "give me a breakdown of my bill"])
def test_asking_to_see_something_is_not_asking_the_bot_to_act(text):
    ruled = rule_route(text)
    assert ruled is None or ruled.rule != "asks to act"


@pytest.mark.parametrize("kind", ["image", "audio", "document", "video", "sticker", "location", "contacts"])
def test_media_is_the_type_of_a_message(kind):
    assert decide("", scores(document=1.0), kind=kind).route == Route.MEDIA


@pytest.mark.parametrize(
    "text",
    ["<imagen omitida>", "[image] what is this charge?", "IMG-20240312-WA0015.jpg", "te mando la foto del recibo",
     "check the screenshot I sent", "where could I see the invoice #12588?", "expliqueme la factura",
     "la luz esta carisima"],
)
def test_text_is_never_media_whatever_it_mentions(text):
    assert decide(text, scores(document=0.6, account=0.4)).route != Route.MEDIA


@pytest.mark.parametrize(
    "text, courtesy",
    [("hola", Courtesy.GREETING), ("buenas", Courtesy.GREETING), ("HOLAAA", Courtesy.GREETING),
     ("hello", Courtesy.GREETING), ("Buenas tardes, ¿cómo están?", Courtesy.GREETING),
     ("gracias", Courtesy.THANKS), ("thanks", Courtesy.THANKS), ("perfecto, muchas gracias", Courtesy.THANKS),
     ("ok", Courtesy.ACK), ("vale", Courtesy.ACK), ("👍", Courtesy.ACK), ("got it", Courtesy.ACK),
     ("bye", Courtesy.FAREWELL), ("hasta luego", Courtesy.FAREWELL)],
)
def test_courtesy_alone_is_small_talk(text, courtesy):
    assert courtesy_of(text) == courtesy
    routing = decide(text, scores(account=1.0))
    assert (routing.route, routing.courtesy, routing.confidence) == (Route.SMALLTALK, courtesy, 1.0)


@pytest.mark.parametrize("text", ["hola buenas, ¿cuánto cuesta el plan de 300?", "gracias, y cuánto debo?", "123", "",
                                  # Every word a courtesy word, but the number is what it asks about.
                                  "¿y el de 600?", "ok, y la de 100"])
def test_courtesy_around_a_request_is_not_small_talk(text):
    assert courtesy_of(text) is None


def test_the_classifier_decides_when_no_rule_applies_and_its_probability_is_the_confidence():
    routing = decide("me voy del país a fin de mes", scores(unsupported=0.8, account=0.2), version="v1")
    assert (routing.route, routing.confidence, routing.unsure, routing.rule, routing.version) == (
        Route.UNSUPPORTED, 0.8, False, "examples", "v1")


def test_below_the_threshold_the_routing_is_unsure():
    routing = decide("me voy del país a fin de mes", scores(unsupported=0.5, account=0.3, document=0.2),
                     threshold=0.55)
    assert (routing.route, routing.unsure) == (Route.UNSUPPORTED, True)


@pytest.mark.parametrize("route", ["human", "media"])
def test_the_classifier_never_decides_a_person_or_media(route):
    routing = decide("me voy del país a fin de mes", {route: 0.9, "document": 0.1})
    assert routing.route == Route.DOCUMENT


def test_an_unsure_account_question_keeps_its_route_and_says_it_is_unsure():
    routing = decide("la mora de este mes", scores(account=0.5, document=0.45, unsupported=0.05), threshold=0.55)
    # "la mora" names a charge: the bill-change capability states the late fee's workings.
    assert (routing.route, routing.unsure, routing.capability) == (Route.ACCOUNT, True, "invoice_change")


def test_a_policy_question_about_the_customers_own_case_is_a_document_question_with_their_facts():
    routing = decide("si cancelo el plan anual a la semana de pagarlo me devuelven todo?", scores(account=0.9))
    assert (routing.route, routing.account_evidence, routing.rule) == (
        Route.DOCUMENT, True, "examples: policy question")


def test_a_confident_account_question_stays_an_account_question():
    routing = decide("¿cuánto debo?", scores(account=0.9, document=0.1))
    assert (routing.route, routing.capability, routing.account_evidence) == (Route.ACCOUNT, "account_summary", False)


def test_meaning_of_a_charge_on_my_bill_is_a_document_question_that_adds_the_customers_facts():
    routing = decide("¿qué significa el cargo IGTF en mi factura?", scores(document=0.8, account=0.2))
    assert (routing.route, routing.account_evidence) == (Route.DOCUMENT, True)
    assert decide("¿qué significa IGTF?", scores(document=0.9)).account_evidence is False


@pytest.mark.parametrize("route", ["unsupported", "human"])
def test_an_information_question_is_never_an_action_or_a_request_for_a_person(route):
    routing = decide("¿cómo hago para cambiar de plan?", {route: 0.7, "document": 0.2, "account": 0.1})
    assert routing.route == Route.DOCUMENT


def test_without_a_classifier_the_knowledge_base_path_is_taken_unsure():
    routing = decide("algo raro", {})
    assert (routing.route, routing.unsure, routing.confidence) == (Route.DOCUMENT, True, 0.0)


@pytest.mark.parametrize(
    "text, capability",
    [("¿Por qué mi factura llegó más alta este mes?", "invoice_change"), ("why is my bill higher this month?",
     "invoice_change"), ("ya pagué por pago móvil y no aparece", "payments"),
     ("did you receive my payment?", "payments"), ("cuánto debo?", "account_summary"),
     ("the one before was lower, why?", "invoice_change"), ("salió más alta, ¿por qué?", "invoice_change"),
     ("¿y la del mes anterior?", "account_summary"),
     # A line asked about by its amount or name, or the bill against what was paid before: the change explains it.
     ("250 de q?", "invoice_change"), ("y ese cargo de 750 qué es?", "invoice_change"),
     ("what's the minus 50 line?", "invoice_change"), ("y ese recargo x q si yo pagué", "invoice_change"),
     ("wait why is it double??", "invoice_change"), ("y antes cuánto pagaba?", "invoice_change"),
     ("that's way more than my usual, what else is on there", "invoice_change"),
     ("so what happened with my card then", "payments"), ("¿qué pasó con mi tarjeta?", "payments"),
     ("why is there a late fee on my bill?? I paid!", "invoice_change"),
     ("¿por qué me sale un recargo en mi factura?", "invoice_change"),
     ("and what's that discount?", "invoice_change"), ("¿qué es ese crédito?", "invoice_change"),
     ("y de igtf cuánto se pagó", "payments"), ("how many days late was i", "invoice_change"),
     # A kind of charge named: the capability that states each line, the taxes and the late fee's workings.
     ("y de iva cuanto me estan cobrando en total", "invoice_change"), ("do u guys put vat on that fee too",
     "invoice_change"), ("y xq fallo lo d la tarjeta si yo tenia saldo", "payments")],
)
def test_account_questions_name_the_billing_capability(text, capability):
    assert account_capability(text) == capability


@pytest.mark.parametrize(
    "text, language",
    [("¿Por qué mi factura es más alta?", "es"), ("why is my bill higher?", "en"), ("ok", "es"),
     ("hola, buenas tardes", "es"), ("hello, what are the support hours", "en"), ("thanks", "en"),
     ("gracias", "es"), ("buenas", "es")],
)
def test_language_detection(text, language):
    assert detect_language(text) == language


def test_ties_keep_the_default_language():
    assert detect_language("12345", default="en") == "en"
    assert decide("👍", {}, default_language="en").language == "en"


# --- a number the knowledge base publishes ---------------------------------------------------------------

PUBLISHED = ["pago-transferencia-es"]


@pytest.mark.parametrize(
    ("route", "confidence", "expected"),
    [
        ("account", 0.9, Route.DOCUMENT),  # "I sent a zelle to 305…, when will it show?": the number names the doc
        ("unsupported", 0.4, Route.DOCUMENT),
        ("document", 0.9, Route.DOCUMENT),
    ],
)
def test_a_classifier_route_yields_to_a_number_a_document_publishes(route, confidence, expected):
    text = "I sent a zelle to 3055550147 on saturday, when will it show as paid?"
    rest = (1 - confidence) / 2  # shared by two other routes, so the route named still wins
    others = [r for r in ("account", "document", "unsupported") if r != route][:2]
    decided = decide(text, scores(**{route: confidence, others[0]: rest, others[1]: rest}))
    assert decided.route.value == route and decided.unsure == (confidence < 0.55)
    routed = yield_to_published_number(decided, text, PUBLISHED)
    assert routed.route == expected
    if expected == Route.DOCUMENT and route != "document":
        assert routed.account_evidence  # the customer's own payments still join when they are known
        assert routed.rule == "examples: number published in pago-transferencia-es"


def test_a_number_read_as_the_customers_account_yields_when_the_provider_publishes_it():
    text = "transferí a la cuenta 01020456780001234567 ayer y no me sale reflejado"
    decided = decide(text, scores(document=1.0))
    assert (decided.route, decided.rule) == (Route.ACCOUNT, "own records: a bill or account number")
    routed = yield_to_published_number(decided, text, PUBLISHED)
    assert (routed.route, routed.account_evidence) == (Route.DOCUMENT, True)
    assert yield_to_published_number(decided, text, []) == decided  # a number nobody publishes is theirs


@pytest.mark.parametrize(
    "text",
    ["quiero hablar con una persona sobre la cuenta 01020456780001234567",  # a rule decided: it stands
     "pásame con un asesor, transferí a 01020456780001234567"],
)
def test_rules_are_never_overridden_by_a_published_number(text):
    decided = decide(text, scores(account=1.0))
    assert yield_to_published_number(decided, text, PUBLISHED) == decided


def test_without_a_published_number_the_classifier_stands():
    decided = decide("me cobraron dos veces", scores(account=0.9, document=0.1))
    assert yield_to_published_number(decided, "me cobraron dos veces", []) == decided


@pytest.mark.parametrize(("text", "searched"), [
    ("¿cuánto debo cancelar este mes?", "¿cuanto debo pagar este mes?"),
    ("¿cuánto cuesta que me monten la fibra?", "¿cuánto cuesta que me instalen la fibra?"),
    ("la luz está carísima", "la factura está carísima"),
    ("se fue la luz", "se fue la luz"),  # a power cut stays one
    ("se nos fue la luz otra vez", "se nos fue la luz otra vez"),
    ("¿a qué hora vuelve la luz?", "¿a qué hora vuelve la luz?"),
    ("quiero cancelar el plan", "quiero cancelar el plan"),  # ending the plan is not paying
    ("¿Cuánto cuesta la reconexión?", "¿Cuánto cuesta la reconexión?"),  # nothing read: the message as written
    ("cuánto queda el plan de 100 megas?", "cuánto queda el plan de 100 Mbps?"),  # a speed, as the plans say it
    ("I have the 300mb plan", "I have the 300 Mbps plan"),
    ("tengo 3 meses de deuda", "tengo 3 meses de deuda"),
    # The service cut off is its suspension, putting it back its reconnection; the power cut and the bill's closing
    # date ("fecha de corte") are not.
    ("si me cortan el servicio cuánto pago para que me lo vuelvan a poner",
     "si me suspenden el servicio cuánto pago para que me lo reconecten"),
    ("nos cortaron el internet por deuda", "nos suspendieron el internet por deuda"),
    ("si abono la mitad me dan unos días más sin cortarme?", "si abono la mitad me dan unos días más sin suspenderme?"),
    ("cuánto cobran para que me vuelvan a activar el internet después del corte?",
     "cuánto cobran para que me reconecten el internet después de la suspension?"),
    ("me cortaron la luz", "me cortaron la luz"),
    ("¿cuál es la fecha de corte de mi factura?", "¿cuál es la fecha de corte de mi factura?"),
])
def test_retrieval_searches_a_regional_word_as_meant_and_the_rest_as_written(text, searched):
    assert for_search(text) == searched


@pytest.mark.parametrize("text", ["why is there a late fee on my bill?? I paid!",
                                  "¿por qué me sale un recargo en mi factura?"])
def test_a_charge_on_the_customers_own_bill_asked_why_is_their_records_not_the_policy(text):
    assert decide(text, scores(account=0.6, document=0.4)).route == Route.ACCOUNT


def test_whether_there_is_a_fee_asked_alone_is_the_policy():
    assert decide("is there a late fee if I pay after the due date?", scores(account=0.6, document=0.4)).route \
        == Route.DOCUMENT


@pytest.mark.parametrize("text", ["is it possible to get my receipts by email?", "where can i see my payment history?",
                                  "how could i pay from abroad?"])
def test_an_english_question_of_whether_where_or_how_is_never_an_action(text):
    assert decide(text, scores(unsupported=0.7, document=0.3)).route != Route.UNSUPPORTED


@pytest.mark.parametrize("text", [
    "did we get charged igtf on the zelle one",
    "was i charged a late fee?",
    "y yo q plan es q tengo?",
    "how many days late was i",
])
def test_a_question_about_what_the_customer_was_charged_or_has_is_their_records(text):
    # Whatever a classifier would say: "did we get charged" and "q plan tengo" point at their own records.
    decided = decide(text, scores(document=1.0))
    assert decided.route == Route.ACCOUNT and decided.rule.startswith("own records")


@pytest.mark.parametrize(("text", "would_follow"), [
    ("y si la pagamos tarde cuánto es el recargo?", True),
    ("si me atraso con la factura qué pasa", True),
    ("and if we don't pay this month?", True),
    ("what if i cancel now", True),
    ("si pagué ayer por qué sigue pendiente", False),  # what happened, not what would
    ("if i paid yesterday why is it still pending", False),
    ("¿de cuánto es mi factura?", False),
])
def test_a_question_about_what_would_follow_from_the_customers_own_move(text, would_follow):
    assert asks_what_would_follow(text) is would_follow


@pytest.mark.parametrize("text", ["ya va, y yo q plan es q tengo? y cuanto cuesta normal",
                                  "what plan am i on and how much does it cost?"])
def test_which_plan_they_have_is_their_records_even_beside_a_price_question(text):
    ruled = rule_route(text)
    assert ruled is not None and ruled.route == Route.ACCOUNT, ruled


@pytest.mark.parametrize(("text", "capability"), [
    ("ok and how much igtf did i pay on that zelle", "payments"),
    ("how much igtf did i pay on my last card payment?", "payments"),
    ("and the previous bill? it was cheaper i think", "invoice_change"),
    ("¿cuánto fue la factura anterior?", "account_summary"),
])
def test_what_they_paid_and_their_earlier_bill_are_their_records(text, capability):
    ruled = rule_route(text)
    assert ruled is not None and ruled.route == Route.ACCOUNT, ruled
    assert account_capability(text) == capability


@pytest.mark.parametrize(("text", "capability"), [
    ("y la anterior cuanto fue y con q la pagué?", "payments"),
    ("how did i pay it?", "payments"),
    ("recargo?? pero si yo pague la del mes pasado, xq me ponen eso", "invoice_change"),
    ("the one before was less right? how much was that bill and the igtf", "payments"),  # the IGTF is on a receipt
])
def test_how_they_paid_and_a_charge_asked_why_name_their_capability(text, capability):
    assert account_capability(text) == capability
