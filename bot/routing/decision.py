"""Route a subscriber's message before anything is retrieved. Pure: no Django.

Rules decide what their words prove, and only that: the message's type (a photo, an audio, a document is
media; text never is), an explicit request for a person (bot/routing/person.py), nothing but courtesy
(bot/routing/courtesy.py). Everything else is a question for the knowledge base (document), the customer's
own records (account) or something the bot cannot do (unsupported), decided by a classifier's probability
for each of the three (bot/routing/classifier.py: learnt from labelled examples, or a model when one is
configured): the winner's probability is the confidence, and below the threshold the routing is *unsure*
(the turn does not ask an unknown customer for their account number on an unsure account route: it
answers from the knowledge base). A question about how a policy works, asked about the customer's own
case, is a document question that also wants the customer's billing facts (`account_evidence`).

This module only decides: the caller embeds the message and scores it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.routing.actions import asks_how, asks_to_act
from bot.routing.capability import OWN_BILL, account_capability
from bot.routing.courtesy import REQUEST_MARKERS, SOCIAL_MARKERS, courtesy_of
from bot.routing.language import detect_language
from bot.routing.person import asks_for_person
from bot.routing.records import DAYS_LATE, RECORDS_ONLY, WHICH_PLAN, own_records
from bot.routing.scope import asks_about_policy, in_domain, outside_scope
from bot.routing.text import read_as_meant, rx
from bot.routing.types import Courtesy, Route, Routing

# Below this probability the routing is unsure. Chosen on the dev split, where the route is the same at any
# threshold (it only sets the flag): 0.55 is the lowest that flags wrong routes (2 of the 5) while flagging
# under a tenth of the messages (11 of 156); 0.8 flags all 5 but a fifth of the messages.
DEFAULT_THRESHOLD = 0.55

# A message of one of these types is media: the bot cannot see it. Text is never media, whatever it says.
MEDIA_KINDS = frozenset({"image", "audio", "document", "video", "sticker", "location", "contacts", "unsupported"})
# The routes a classifier chooses between; the rules decide the others. Its small talk stands only for a
# message with social words and no question, complaint or plea (courtesy.SOCIAL_MARKERS, REQUEST_MARKERS).
CLASSIFIED_ROUTES = (Route.DOCUMENT, Route.ACCOUNT, Route.UNSUPPORTED, Route.SMALLTALK)
# A classifier's class for a message about something other than plans, bills and payments: the unsupported route,
# flagged out of scope (the bot declines it), unless the message names something the bot does handle.
OUT_OF_SCOPE = "out_of_scope"

# A hypothetical of something the customer might do ("si cancelo…", "si me atraso…", "si pago con…") asks what
# would follow, not for the thing to be done. Present or subjunctive only: "si pagué" tells what happened.
_HYPOTHETICAL = (r"\bsi (me |lo |la |les )?(cancel|cambi|pag|retir|suspend|baj|mud|atras|renunci|devuelv|adelant)"
                 r"(o|as|a|amos|an|ara|aras|aran|ase)\b")
# The same in English: "and if we pay late?", "what if I don't pay", "if I cancel now".
_HYPOTHETICAL_EN = (r"\bif (i|we) (don'?t |do not |never )?(pay|cancel|change|switch|move|return|downgrade|upgrade|"
                    r"suspend|quit|leave|am late|are late|'m late|'re late|fall behind|miss)\b")
_WOULD_FOLLOW = rx(_HYPOTHETICAL, _HYPOTHETICAL_EN)


def asks_what_would_follow(text: str) -> bool:
    """Whether the message asks what would follow from something the customer might do ("y si la pagamos tarde…",
    "what if I don't pay this month?"): a rule's question, whatever their records say."""
    return bool(_WOULD_FOLLOW.search(read_as_meant(text)))

# "¿cómo activo…?", "como cambio la clave…", "…, cómo recupero esa plata": how-to at the start of a clause (not
# "hace como cuatro años", "reinicié el router como cinco veces").
_HOW_TO = r"(^|[¿?,.;:!]\s*|\by )como (lo |la |le |me |les )?[a-z]{3,}o\b"

# --- information: a question about how, how much, when or where is a document question --------------------------
# Not one message that asks the bot to act, or asks for a person without a rule above noticing, reads like this
# (examples and dev splits); the classifier's unsupported or human for such a message is overruled.
_INFORMATION = rx(
    r"\bcomo (hago|se|puedo|funciona|es el|es la|son)\b",
    r"\bcuant[oa]s? (cuesta|cobran|sale|tarda|es|son|dias|me cobran|me van)\b",
    r"\b(que pasa|que datos|que requisitos|que significa|a que hora|a que correo|donde)\b",
    r"\bhay (alguna|algun) (multa|cargo|recargo|penalidad)\b|\bque opcion(es)? (tengo|hay)\b|\bcon que tasa\b",
    r"\bwhat (are )?(my )?options\b|\bwhat (can|should|do) i do\b|\bque (puedo|debo|tengo que) hacer\b",
    r"\bse puede\b",
    _HYPOTHETICAL,
    _HOW_TO,
    r"\bcual(es)? (es|son) (el|la|los|las) (procedimiento|proceso|pasos|requisitos|politica)\b",
    r"\bwhat (is|are|'s) the (procedure|process|steps|requirements|policy)\b",
    r"\bhow (do|does|much|long|many)\b|\bwhat happens\b|\bwhat('s| is| are) the\b|\bis there (a|an|any)\b",
    # The same questions in English as the Spanish above ("se puede", "dónde", "cómo puedo"): whether it can be done,
    # where, how one could.
    r"\bis it possible\b|\bwhere (do|can|could|should) ?(i|we)\b|\bhow (can|could|should|would) (i|we|one)\b",
)


# A question about how a policy works, even about the customer's own case ("si cancelo el plan anual, ¿me
# devuelven todo?"): the knowledge base answers it, and the customer's facts join when they are known.
_POLICY_QUESTION = rx(
    r"\bcuant[oa]s? (cuesta|cobran|sale|tarda|dias|meses|es (la|el) (multa|recargo|cargo|costo))\b",
    r"\bque pasa (si|con)\b", r"\bsignifica\b",
    _HYPOTHETICAL,
    r"\bcomo (hago|funciona|se)\b", _HOW_TO, r"\bse puede\b",
    r"\bhow much (does|do you|is the|is a|is an|are the|for)\b", r"\bhow (many|long|do|does)\b",
    r"\bwhat happens\b", r"\bmean\b", r"\bif i\b", r"\bdo you (accept|take|charge|offer)\b",
    r"\bis there (a|an|any)\b",
    r"\bwhat (is|are|'s) (this|that|these|those)\b.{0,40}\b(line|charge|fee|item)\b",
    r"\bque (es|son) (este|ese|esto|eso|estos|esos)\b.{0,40}\b(cargo|concepto|item|linea|recargo)\b",
)
# ...but the amount of the customer's own bill for a period, or what they owe, is their records however it is
# asked ("¿cuánto sale la factura de este mes?", "how many months am I behind?").
_OWN_RECORDS = rx(
    r"\b(cuant[oa]|how much)\b.{0,25}\b(factura|recibo|bill|invoice)\b.{0,25}"
    r"\b(este mes|del mes|mes pasado|this month|last month)\b",
    r"\b(debo|adeudo|owe|am i behind|estoy atrasad\w*|tengo (algo )?pendiente)\b",
    DAYS_LATE,  # "how many days late was i" asks their records, not the grace-period rule
    WHICH_PLAN,  # "¿qué plan tengo y cuánto cuesta?" asks their plan's price, not a price list
    # A charge on their own bill asked about: "why is there a late fee on my bill?", "¿por qué me sale un recargo en
    # mi factura?" ("is there a late fee?" alone asks the policy).
    r"\b(why|por ?que|xq)\b.{0,40}\b(on|in) my (bill|invoice|account|statement)\b",
    r"\b(por ?que|xq)\b.{0,40}\b(en|de) mi (factura|recibo|cuenta|estado de cuenta)\b",
)


# --- the decision -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ruled:
    """What a rule decided: the route, the rule's name for the trace, and what it found on the way."""

    route: Route
    rule: str
    courtesy: Courtesy | None = None
    out_of_scope: bool = False
    records_required: bool = False


def rule_route(text: str, *, kind: str = "text") -> Ruled | None:
    """Return what a rule decides about the message, None when no rule does (the classifier decides).

    In order: the message's type (media), an explicit request for a person, nothing but courtesy, a subject
    outside plans and billing (asked about: the document path, which declines it; asked for: unsupported), a
    request to act (the bot changes nothing), a pointer at the customer's own records, a question about a policy.
    """
    if kind in MEDIA_KINDS:
        return Ruled(Route.MEDIA, f"media:{kind}")
    meant = read_as_meant(text)
    if asks_for_person(meant):
        return Ruled(Route.HUMAN, "asks for a person")
    courtesy = courtesy_of(text)
    if courtesy is not None:
        return Ruled(Route.SMALLTALK, f"courtesy:{courtesy.value}", courtesy=courtesy)
    if outside_scope(meant):
        return Ruled(_out_of_scope_route(meant), "outside plans and billing", out_of_scope=True)
    if asks_to_act(meant) and not _INFORMATION.search(meant):
        return Ruled(Route.UNSUPPORTED, "asks to act")
    records = own_records(meant)
    if records and not (_POLICY_QUESTION.search(meant) and not _OWN_RECORDS.search(meant)):
        return Ruled(Route.ACCOUNT, f"own records: {records}", records_required=records in RECORDS_ONLY)
    if asks_about_policy(meant):
        return Ruled(Route.DOCUMENT, "asks about a policy")
    return None


def decide(text: str, scores: Mapping[str, float], *, kind: str = "text", default_language: str = "es",
           threshold: float = DEFAULT_THRESHOLD, source: str = "examples", version: str = "") -> Routing:
    """Decide the route of one message from the rules and the classifier's score for each route.

    `scores` is a probability per route (they sum to 1), from the examples classifier or a model;
    `source` names it for the trace. Empty scores (no classifier) fall back to the document path.
    """
    language = detect_language(text, default_language) if text.strip() else default_language
    ruled = rule_route(text, kind=kind)
    if ruled is not None:
        return Routing(ruled.route, language,
                       capability=account_capability(text) if ruled.route == Route.ACCOUNT else "",
                       rule=ruled.rule, courtesy=ruled.courtesy, out_of_scope=ruled.out_of_scope,
                       records_required=ruled.records_required, version=version)
    classes = [route.value for route in CLASSIFIED_ROUTES] + [OUT_OF_SCOPE]
    known = {name: float(scores[name]) for name in classes if name in scores}
    total = sum(known.values())
    known = {route: score / total for route, score in known.items()} if total > 0 else {}
    if not known:
        # No classifier: the knowledge base is the path that can still answer or escalate.
        return Routing(Route.DOCUMENT, language, rule="no classifier", confidence=0.0, unsure=True, version=version)
    folded = read_as_meant(text)
    if not SOCIAL_MARKERS.search(folded) or REQUEST_MARKERS.search(folded):
        known = _without(known, Route.SMALLTALK.value)
    if _INFORMATION.search(folded):
        known = _without(known, Route.UNSUPPORTED.value)
    if in_domain(folded):
        known = _without(known, OUT_OF_SCOPE)
    winner = max(known, key=lambda r: (known[r], r))
    confidence = known[winner]
    if winner == OUT_OF_SCOPE:
        return Routing(_out_of_scope_route(folded), language, rule=f"{source}: outside plans and billing",
                       confidence=confidence, unsure=confidence < threshold, out_of_scope=True, version=version)
    route = Route(winner)
    unsure = confidence < threshold
    own_bill = bool(OWN_BILL.search(folded))
    if route == Route.ACCOUNT and _POLICY_QUESTION.search(folded) and not _OWN_RECORDS.search(folded):
        # How a policy works, asked about the customer's own case: the knowledge base answers the policy, and the
        # customer's facts join it when they are known, so nobody is asked for an account number first.
        return Routing(Route.DOCUMENT, language, capability=account_capability(text),
                       rule=f"{source}: policy question", confidence=confidence, unsure=unsure,
                       account_evidence=True, version=version)
    if route == Route.DOCUMENT:
        return Routing(route, language, capability=account_capability(text) if own_bill else "", rule=source,
                       confidence=confidence, unsure=unsure, account_evidence=own_bill, version=version)
    if route == Route.ACCOUNT:
        return Routing(route, language, capability=account_capability(text), rule=source, confidence=confidence,
                       unsure=unsure, version=version)
    # Courtesy the vocabulary recognises was decided by the rules above: the classifier's small talk is thanks.
    courtesy = Courtesy.THANKS if route == Route.SMALLTALK else None
    return Routing(route, language, rule=source, confidence=confidence, unsure=unsure, courtesy=courtesy,
                   version=version)


def _out_of_scope_route(meant: str) -> Route:
    """Return the route of a message outside plans and billing: the request decides, as everywhere else.

    Asking how, where or whether ("how do I sign up to the newsletter?") is a question (the document path);
    asking for it to be done ("sign me up to the newsletter") is a request (unsupported). Both are declined.
    """
    return Route.DOCUMENT if asks_how(meant) or asks_about_policy(meant) or _INFORMATION.search(meant) \
        else Route.UNSUPPORTED


def _without(known: dict[str, float], name: str) -> dict[str, float]:
    """Return the scores without one class, the others scaled to sum to 1 (unchanged when it is all there is)."""
    rest = {other: score for other, score in known.items() if other != name}
    total = sum(rest.values())
    return {name: score / total for name, score in rest.items()} if total > 0 else known


# The sources a classifier's decision names in `Routing.rule` (a rule names itself).
CLASSIFIER_SOURCES = ("examples", "model")


# The rule that reads a number as the customer's bill or account: a number the provider publishes is not theirs.
_OWN_NUMBER_RULE = "own records: a bill or account number"


def yield_to_published_number(routing: Routing, text: str, publishing: list[str]) -> Routing:
    """Send a classifier's account or "cannot do that" route — or the number rule's account route — to the documents
    when the message quotes a number a document publishes (`publishing`: those documents' slugs).

    A bank account, phone line or tax id that the provider itself publishes is proof of what the message is about
    ("transferí a la cuenta 0102…", "I sent a zelle to 305…"): the number names the document, not the customer's
    account. The customer's own facts still join the answer when they are known (account evidence). The other
    rules (a request for a person, media, courtesy, a request to act) always stand.
    """
    if not publishing or routing.rule not in (*CLASSIFIER_SOURCES, _OWN_NUMBER_RULE):
        return routing
    if routing.route not in (Route.ACCOUNT, Route.UNSUPPORTED):
        return routing
    return replace(routing, route=Route.DOCUMENT, capability=account_capability(text), account_evidence=True,
                   rule=f"{routing.rule}: number published in {publishing[0]}"[:100])
