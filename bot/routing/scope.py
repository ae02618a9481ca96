"""What the message is about: a policy the help center explains, or something outside plans, bills and payments.

Pure: no Django. Two readings the routing rules need:
- `asks_about_policy`: it wants to know a policy — what a fee or charge is, which payment methods are
  accepted, what the refund or cancellation terms are — in whatever words ("I need help checking the early
  termination charge", "quiero ver las formas de pago", "tell me about your refund policy");
- `outside_scope`: it is about something this assistant does not handle at all — orders, purchases and
  deliveries, newsletters, passwords and PINs, loans and financing, other kinds of accounts, power cuts.
  A question about it goes the document path and the answer path declines it ("not something I can help
  with") instead of quoting an unrelated policy; a request goes the unsupported path and is declined the same
  way. Neither spends an agent's time.
"""

from __future__ import annotations

from bot.routing.text import POWER_CUT, rx

_POLICY_OBJECT = (r"(fees?|charges?|penalt(y|ies)|polic(y|ies)|payment (methods?|options?|modalities|modes?)|"
                  r"(methods?|options?|modalities|ways?) (of|to|for) pay\w*|accepted payment|modalities|guarantee|"
                  r"terms|conditions|requirements|rates?|prices?|pricing|plans?|tarifas?|precios?|costos?|"
                  r"recargos?|multas?|penalidad(es)?|comision(es)?|politicas?|condiciones|requisitos|"
                  r"(formas?|metodos?|medios?|opciones) de pago|garantia|reembolsos?|devoluciones|refunds?|"
                  r"reimburse\w*|money back|cancellation|termination|early (exit|termination)|withdrawal|late payment|"
                  r"mora|reconexion|reconnection|planes)")
_LEARN = (r"(see\w*|check\w*|know|list\w*|find out|learn|view\w*|understand|read|tell me|information|info|details|"
          r"explain|ver|conocer|saber|consultar|revisar|informacion|informar\w*|explica\w*|cuales son|cual es|what are|"
          r"what is|what's|whats|which)")
_POLICY = rx(
    rf"\b{_LEARN}\b.{{0,40}}\b{_POLICY_OBJECT}\b", rf"^\W*{_POLICY_OBJECT}(\s+\w+)?\W*$",
    r"^\W*(have|do|does|are|is|did) (you|there|your|ya|u)\b",
    # Paying late or not at all: what follows is the late-payment policy ("I forgot to pay my bill on time").
    r"\b(forgot|forget|did not|didn'?t|won'?t be able|will not be able|cannot|can'?t|couldn'?t|unable) (to )?pay\w*\b"
    r".{0,30}\b(on time|in time|this month|a tiempo)\b",
    r"\b(no pude|no voy a poder|no puedo|se me olvido|olvide|no alcance a) pagar\b",
    # Where and how one pays: online, by phone, with a card or Zelle.
    r"\b(can|could|puedo|se puede|how|como|where|donde|do you accept|aceptan|is it possible|es posible|make)\b.{0,25}"
    r"\b(pay\w*|pag(ar|o|ue|a))\b.{0,25}\b(online|on ?line|internet|web|app|from my phone|by phone|card|zelle|"
    r"en linea|por internet|con tarjeta|por la app)\b",
)

_OUTSIDE = rx(
    # Orders, purchases, products and deliveries.
    r"\b(my|the|an|your|this|that|of|an?) orders?\b|\border\s*(#|no\.?|number|\d)|\b(track\w*|place|cancel\w*) "
    r"(an? |my |the )?orders?\b",
    r"\b(pedidos?|compras? en linea|productos?|products?|articulos?|articles?|items? i bought|purchases?|purchas\w*|"
    r"shop\w*|comprar (algo|un|una|productos?)|buy (something|some|several|a product|products?|your))\b",
    r"\b(shipping|deliver\w*|envios?|despachos?|domicilios?|shipment|address (change|update))\b",
    # Newsletters, passwords and PINs, other kinds of accounts.
    r"\b(newsletter|boletin|mailing list)\b",
    r"\b(password|passcode|contrasena|pin( code)?|codigo pin|profile key|user ?name|usuario y clave)\b",
    r"\b(pro|gold|silver|standard|premium|platinum|user|profile|bank|savings|freemium) accounts?\b|\bopen (an?|a new) "
    r"\w* ?account\b|\babrir una cuenta\b|\bregistrarme\b|\bsign ?up (to|for) (the |your )?(newsletter|mailing)\b",
    # Loans and financing, the status of another company's claim process.
    r"\b(creditos?|prestamos?|financiacion|finaciacion|financiamiento|loans?|financing|mortgage|hipoteca|"
    r"cuotas del credito)\b",
    r"\b(pqrs?|radicado)\b",
)
# Things that belong elsewhere whatever billing words come with them ("what is my credit card limit", "cancel my
# dentist appointment", "set an alarm"): a card, a cancellation or a charge there is not the provider's. The message
# stays in scope only when it also names the provider's own things (`_OURS`: "can you remind me when my bill is due?").
_ELSEWHERE = rx(
    # Banking products: a card's limit, savings and checking, interest rates.
    r"\b(credit (card )?limit|card limit|limite de (mi )?(tarjeta|credito)|cuenta de ahorros|checking account|"
    r"interest rates?|tasa de interes)\b",
    # What a general voice assistant is asked to do: alarms and reminders, music, the lights and the TV, tables,
    # appointments and meetings, messages to someone, lists, rides and trips, recipes, translations.
    r"\b(alarms?|alarmas?|despiertame|wake me|reminders?|remind me|recuerdame|music|musica|songs?|cancion(es)?|"
    r"playlists?|podcasts?|audiobooks?|(turn|switch) (on|off) the lights|(prende|apaga|enciende)\w* las luces|"
    r"television|televisor|the tv|la tele|"
    r"restaurants?|restaurantes?|a table for|una mesa|appointments?|citas? (con|del|de la|medica|en el)|meetings?|"
    r"reunion(es)?|send a text|send a message to|mandale un mensaje|shopping list|grocery list|lista de (compras|"
    r"mercado)|taxi|flights?|vuelos?|hotel(es)?|train|tren|recipes?|recetas?|translate|traduc\w+|language to|"
    r"idioma (a|al))\b",
    # A job with the provider: recruiting is not this assistant's.
    r"\b(hiring|vacantes?|vacanc(y|ies)|job (openings?|applications?)|curriculum|resume|trabajar (con|para) ustedes|"
    r"work (for|with) you)\b",
    # Crypto prices and sports results.
    r"\b(bitcoin|btc|ethereum|cripto\w*|crypto\w*)\b",
    r"\b(score|scores|marcador|resultado del partido|el partido|como salio|how did .{1,20} do|liga|league|"
    r"mundial|world cup|champions|beisbol|baseball|futbol|football|soccer|nba|mlb)\b",
)
_OURS = rx(r"\b(facturas?|recibos?|invoices?|bills?|planes|plan|fibra|fiber|internet|conectia|wifi|router|modem|ont|"
           r"servicio|service|velocidad|speed|megas|mbps|reconexion|reconnection|instalacion|installation|tecnicos?|"
           r"technicians?|visita|visit|mensualidad|monthly fee)\b")
# Power cuts: the power company's, not the provider's (bot.routing.text.POWER_CUT; "la luz" about paying or a bill
# is read as the bill before this runs).
_OUTSIDE_PARTS = (_OUTSIDE, POWER_CUT)

# Another company's service: its plans, its bill, its orders, its account ("¿cómo recargo saldo en Movistar?", "how do
# I cancel my Netflix", "¿cómo pago el recibo de Corpoelec?"). Its words are this assistant's words (a plan, a bill,
# cancelling), but the provider is someone else's. Payment platforms are not here: "can I pay with PayPal?" asks how
# to pay this provider. Words too common to be a name ("claro", "une", "inter") are left out.
_OTHER_COMPANY = rx(
    r"\b(corpoelec|hidrocapital|hidrolago|hidroven|hidrocentro|cantv|movilnet|movistar|digitel|netuno|simple ?tv|"
    r"directv|airtek|thundernet|tigo|telcel|telmex|entel|verizon|at ?& ?t|t-mobile|comcast|xfinity|vodafone|"
    r"netflix|spotify|disney ?\+|disney plus|hbo|amazon|mercado ?libre|uber|rappi|pedidos ?ya)\b")
# ...unless the message brings the provider in: switching to it, comparing it, or asking it ("¿ustedes son más
# baratos que CANTV?", "I'm moving from Movistar to you, how much is installation?").
_ABOUT_US = rx(
    r"\b(conectia|ustedes|uds|you guys|with you|your (company|service|plans?|prices?|fiber|internet)|vs|versus|than|"
    r"mejor que|mas (barato|caro|rapido|lento)s? que|compar\w*|instead of|en vez de|switch\w*|cambi\w+ de|me paso|"
    r"pasarme|migr\w+|vengo de|tenia (a )?\w+ antes|leave|leaving|dejar)\b")


def asks_about_policy(meant: str) -> bool:
    """Whether the message asks to know a policy: a fee, a charge, the payment methods, refund or cancellation terms."""
    return bool(_POLICY.search(meant))


# A bill named in the message keeps it in scope ("check invoices from four purchases ago" is about invoices).
_BILL = rx(r"\b(facturas?|recibos?|invoices?|bills?|statements?)\b")


def outside_scope(meant: str) -> bool:
    """Whether the message is about something other than plans, bills and payments."""
    if _OTHER_COMPANY.search(meant) and not _ABOUT_US.search(meant):
        return True
    if _ELSEWHERE.search(meant) and not _OURS.search(meant):
        return True
    return (any(part.search(meant) for part in _OUTSIDE_PARTS) and not _BILL.search(meant)
            and not in_domain(meant))


# Words that only come up about what this assistant handles: a classifier's "out of scope" yields to them.
_DOMAIN = rx(
    r"\b(facturas?|recibos?|invoices?|bills?|billing|facturacion|planes|plan (de|anual|mensual|empresarial|hogar)|"
    r"fibra|fiber|internet|megas|mbps|router|modem|wifi|mora|recargo|late fee|reconexion|reconnection|suspension|"
    r"iva|igtf|vat|conectia|zelle|pago movil|domiciliacion|direct debit|prorrateo|proration|deposito|deposit|"
    r"visita tecnica|technical visit|instalacion|installation|mensualidad|monthly fee|cargo|charge|saldo|balance|"
    r"credito por (interrupcion|referido|caida)|outage credit|referral credit|nota de credito|credit note|"
    r"whatsapp oficial|numero de (contacto|atencion|emergencias?|soporte)|horarios? de atencion|support hours|"
    r"fallas?|averias?|oficinas?|offices?|sucursal\w*|agencias?|portal|mi conectia|app|whatsapp|transferencia\w*|"
    r"transfer|pagos?|pagar|pague|payments?|pay|paid|cobr\w+|charged?|plata|dinero|money|refunds?|reembols\w*|"
    r"devolu\w+|deudas?|debt|contrato|contract|servicio|service|suscripcion|cuenta|account|tasa|rate|bcv|dolares|"
    r"bolivares|efectivo|cash|tarjeta|card|descuento|discount|promocion|cancelacion|cancel\w*|baja|equipo|ont|"
    # Taxes and what proves them: the tax pages and the fiscal invoice answer these.
    r"impuestos?|taxe?s?|fiscal(es)?|rif|retencion|withholding|receipts?|comprobantes?)\b")


def in_domain(meant: str) -> bool:
    """Whether the message names something the assistant handles: a bill, a plan, the service, a fee, a payment."""
    return bool(_DOMAIN.search(meant))
