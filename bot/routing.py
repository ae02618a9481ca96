"""Route a subscriber's message before anything is retrieved. Pure: no Django.

Rules first, in this order: wants a human (always wins), asks for an action the bot cannot
take, asks about their own account (needs the billing system), otherwise a document question
for the knowledge base. A question *about* an action ("¿cuánto cuesta cambiar de plan?") is a
document question; a request to *do* it ("cámbienme el plan") is not something the bot can do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from core.text import fold


class Route(StrEnum):
    HUMAN = "human"
    UNSUPPORTED = "unsupported"
    ACCOUNT = "account"
    DOCUMENT = "document"
    MEDIA = "media"


@dataclass(frozen=True)
class Routing:
    route: Route
    language: str
    capability: str = ""  # billing capability for account questions
    rule: str = ""  # the rule that decided, for the trace


def _rx(*patterns: str) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


_HUMAN = _rx(
    r"\b(hablar|conversar|comunicar(me)?|chatear)\s+(con\s+)?(una?\s+)?(persona|humano|agente|asesor|operador|"
    r"representante|alguien)",
    r"\b(quiero|necesito|pasame|paseme|paseme con|comuniqueme con)\s+(con\s+)?(una?\s+)?(persona|humano|agente|"
    r"asesor|operador)",
    r"\b(persona real|atencion humana|un humano|agente por favor|asesor por favor)\b",
    r"\b(talk|speak|chat)\s+(to|with)\s+(a\s+|an\s+|some\s*one|somebody)?\s*(human|person|agent|representative|"
    r"someone|somebody|real person|operator)",
    r"\b(agent|human|representative|operator)\s+please\b",
    r"\breal (person|human)\b",
    r"\b(connect|transfer) me\b",
)

# Asking how / how much / what happens is informational even when it names an action.
_INFORMATIONAL = _rx(
    r"\bcomo\b", r"\bcuanto", r"\bque pasa\b", r"\bse puede\b", r"\bpuedo\b", r"\brequisitos?\b",
    r"\bhow\b", r"\bwhat happens\b", r"\bcan i\b", r"\bis it possible\b", r"\bwhat (is|are) the\b",
)
_ACTION = _rx(
    r"\b(quiero|necesito|deseo|quisiera|favor)\s+(de\s+)?(cambiar|subir|bajar|cancelar|anular|dar de baja|"
    r"suspender|disputar|impugnar|reclamar|mudar|trasladar)",
    r"\b(cambienme|cambiame|cancelenme|cancelame|denme de baja|dame de baja|anulen|anulame|suspendan|"
    r"devuelvanme|reembolsenme|mudenme)\b",
    r"\bno reconozco (este|ese|el) (cobro|cargo)\b",
    r"\b(i want|i need|i'd like|i would like|please)\s+(to\s+)?(change|upgrade|downgrade|cancel|terminate|"
    r"dispute|suspend|move|close)\b",
    r"\b(cancel|change|upgrade|downgrade) my (plan|service|subscription|account)\b",
    r"\b(refund me|dispute (this|the|a) charge)\b",
)

_ACCOUNT_CHANGE = _rx(
    r"\b(por ?que|xq|pq)\b.*\b(factura|recibo|cobro|monto|pago|cuenta)\b.*\b(mas|alta|subio|aumento|cara|"
    r"diferente|distint)",
    r"\b(subio|aumento|cambio)\b.*\b(mi )?(factura|recibo|monto|cuenta)\b",
    r"\bwhy\b.*\b(bill|invoice|charge)\b.*\b(higher|more|up|increase|different|changed)",
    r"\b(my )?(bill|invoice) (went up|is higher|increased|changed)\b",
    r"\bme (cobraron|estan cobrando|llego) (de mas|mas|un cargo)",
    r"\b(charged me|extra charge|overcharged)\b",
)
_ACCOUNT_PAYMENT = _rx(
    r"\b(mi|el) pago\b.*\b(llego|registr|aplic|reflej|proces|pas)",
    r"\b(ya )?pague\b", r"\b(pago|payment)\b.*\b(rechaz|fall|failed|declined)",
    r"\b(my )?payment\b.*\b(went through|received|registered|posted|applied)",
    r"\bdid (you|u) (get|receive) my payment\b",
)
_ACCOUNT = _rx(
    r"\bmi (factura|recibo|cuenta|saldo|deuda|plan|servicio|pago|contrato|mensualidad)\b",
    r"\bcuanto (debo|tengo que pagar|me toca pagar)\b",
    r"\b(mis|mi ultimo|mi ultima) (facturas|pagos|factura|pago)\b",
    r"\bme cobraron\b", r"\bmi numero de cuenta\b",
    r"\bmy (bill|invoice|account|balance|plan|payment|payments|due date|subscription)\b",
    r"\bhow much do i owe\b", r"\bwhen is my\b", r"\bam i (late|overdue)\b",
)

_SPANISH_MARKERS = re.compile(
    r"[¿¡ñáéíóú]|\b(el|la|los|las|de|del|que|por|para|mi|me|cuanto|cuando|como|porque|factura|cobro|pago|"
    r"quiero|hola|gracias|tengo|estoy|es|una|un|con|no|si|ya|pero|y)\b"
)
_ENGLISH_MARKERS = re.compile(
    r"\b(the|my|is|are|what|why|how|when|bill|invoice|payment|want|please|hello|hi|thanks|i|you|your|do|does|"
    r"can|to|of|and|a|an|with|it|me)\b"
)


def detect_language(text: str, default: str = "es") -> str:
    """Return 'es' or 'en' by counting marker words; ties keep the default."""
    lowered = text.lower()
    spanish = len(_SPANISH_MARKERS.findall(lowered))
    english = len(_ENGLISH_MARKERS.findall(lowered))
    if spanish == english:
        return default
    return "es" if spanish > english else "en"


MEDIA_KINDS = frozenset({"image", "audio", "document", "video", "sticker", "location", "contacts", "unsupported"})


def route_message(text: str, *, kind: str = "text", default_language: str = "es") -> Routing:
    """Decide what kind of turn this message is; the first matching rule wins."""
    language = detect_language(text, default_language) if text.strip() else default_language
    if kind in MEDIA_KINDS:
        return Routing(Route.MEDIA, language, rule=f"media:{kind}")
    folded = fold(text, case="lower", keep_enye=True)
    if _HUMAN.search(folded):
        return Routing(Route.HUMAN, language, rule="wants a human")
    if _ACTION.search(folded) and not _INFORMATIONAL.search(folded):
        return Routing(Route.UNSUPPORTED, language, rule="asks for an action")
    if _ACCOUNT_CHANGE.search(folded):
        return Routing(Route.ACCOUNT, language, capability="invoice_change", rule="bill changed")
    if _ACCOUNT_PAYMENT.search(folded):
        return Routing(Route.ACCOUNT, language, capability="payments", rule="payment status")
    if _ACCOUNT.search(folded):
        return Routing(Route.ACCOUNT, language, capability="account_summary", rule="own account")
    return Routing(Route.DOCUMENT, language, rule="document question")
