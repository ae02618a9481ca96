"""Does the message point at the customer's own records? Pure: no Django.

A message that names a bill or an account by its number, asks what the customer owes, says what they were
charged, asks whose name the account is in or which payments they made, or asks to see, find or download
a specific bill of theirs (theirs by "my", by a number, by a month or by whoever issued it) needs billing's
records, however it is worded — "I want to take a quick look at invoice #4471", "¿por cuánto me llegó la
luz en agosto?", "wanna download my bills". Read on `bot.routing.text.read_as_meant`'s text, so "cuánto
debo cancelar" is paying and "la luz está carísima" is the bill.
"""

from __future__ import annotations

from bot.routing.text import rx

_RECORD = (r"(facturas?|recibos?|invoices?|bills?|statements?|estado de cuenta|cuenta|account|contrato|contract|"
           r"suscriptor|subscriber)")
_NUMBERED = rx(
    rf"\b{_RECORD}\s*(?:#|no\.?|n°|nro\.?|numero|number|num\.?|id)?\s*:?\s*#?\s*\d{{3,}}",
    r"#\s*\d{3,}",
)
# Which plan the customer has: "y yo q plan es q tengo?", "what plan am I on" (routing's decision also reads it as
# their records beside a price question's "cuánto cuesta": the price asked is their plan's).
WHICH_PLAN = (r"\b(que|q|cual|which|what) plan (es (que|q) )?(tengo|tenemos|tiene mi|do i have|do we have|am i on|"
              r"are we on)\b|\bmi plan (actual|contratado)\b")
# How late the customer paid: "how many days late was i", "¿cuántos días de atraso tuve?" (routing's decision also
# reads it as their records, not the grace-period rule, beside a policy question's "how many").
DAYS_LATE = (r"\bdays late (was i|were we|am i|are we|did i pay|did we pay)\b|\bcuantos dias (de atraso|tarde) "
             r"(tuve|tengo|llevo|pague|pagamos)\b")
_OWED = rx(
    r"\bcuant[oa]\b.{0,20}\b(debo|deben|debemos|adeudo|tengo que pagar|hay que pagar|tengo pendiente|voy a pagar|"
    r"pago este mes|es mi factura|sale mi factura|es la factura de este mes)\b",
    r"\bhow much (do i|i|will i|should i) (owe|have to pay|need to pay|pay this month)\b",
    r"\bwhat do i owe\b|\bmy (current |outstanding |pending )?balance\b|\bmi (saldo|deuda)\b|\bque debo\b",
    r"^\W*(consulta de |consultar (el |mi )?|ver (mi |el )?)?saldo\W*$|\bcuant[oa]s? (facturas|recibos) (tengo|debo)\b|"
    r"\b(tengo|have i got|do i have) (\w+ )?(facturas|recibos|bills|invoices) (vencid|pendient|overdue|unpaid)",
    WHICH_PLAN,
    DAYS_LATE,
    r"\bpor cuanto me (llego|vino|salio)\b|\bcuanto me (llego|vino|salio|cobraron)\b",
    r"\bhasta cuando (tengo|puedo|hay)\b.{0,25}\bpagar\b.{0,15}\b(la|mi) factura\b",
    r"\b(cuando|when)\b.{0,10}\b(vence|is due|due date)\b.{0,10}\b(mi factura|my (bill|invoice))\b|\bwhen is my "
    r"(bill|invoice|payment) due\b",
)
_CHARGED = rx(
    r"\bme (cobraron|cobran|estan cobrando|han cobrado)\b.{0,12}(\d|usd|bs|dolares|bolivares)",
    r"\bme (han|habeis|has|hayan) cobrado\b|\bme (salio|aparecio|aparece|llego|sale) un (cargo|cobro)\b",
    r"\b(am i|i am|i'm|im|why am i) (being )?charged\b|\b(tengo|hay) (algun|un) (recargo|cargo|cobro)\b.{0,20}\b(mi cuenta|"
    r"mi factura)\b",
    r"\bme (cobraron|cobran|estan cobrando|llego|vino|salio)\b.{0,30}\b(caro|cara|carisim[oa]|alt[oa]|mas|doble|"
    r"dos veces|de mas|demasiado)",
    r"\b(factura|recibo)\b.{0,25}\b(carisim[oa]|muy car[oa]|tan car[oa]|car[oa]|muy alt[oa]|tan alt[oa])\b",
    r"\b(charged me|i was charged|i got charged|overcharged|double charged|charged twice)\b",
    r"\b(did|have) (we|i) (get |been )?charged\b|\b(were we|was i|we were|we got) charged\b",
)
# A line of the bill named by its amount: "what's the minus 50 line?", "la línea de 250", "ese cargo de 750".
_LINE = rx(r"\b(the|that|this|ese|este|esa|esta|la|el) (minus |menos |-)?\d+([.,]\d+)? (line|linea|charge|cargo|item)\b",
           r"\b(line|linea|cargo|charge|item|cobro) (de|of|for) (minus |menos |-)?\d+")
_HOLDER = rx(
    r"\ba nombre de quien\b", r"\b(titular|dueno|duena) de(l| la| mi| un| una)? (cuenta|servicio|factura)\b",
    r"\bnombre del (titular|suscriptor|subscriptor)\b", r"\bwho(se name| is)? (is )?the account (holder|owner)\b",
    r"\bmy account (details|information|info|data)\b|\binformacion de mi cuenta\b|\bdatos de mi cuenta\b",
)
_PAID = rx(
    r"\b(que|cuales) pagos (he|hemos|se han|se ha|tengo)\b", r"\bque se ha pagado\b",
    r"\bdid (you|u) (get|receive) my payment\b", r"\b(mi|el) pago (no )?(ha )?(llego|aparece|se reflej|registr)",
    r"\b(mi|el) pago\b.{0,40}\b(aplicad\w*|acreditad\w*|procesad\w*|recibid\w*)\b",
    r"\bdid (you|u)( guys)? (get|receive) (the|my) (money|payment|transfer|zelle)\b",
    r"\b(anything|something|algo) (overdue|pending|pendiente|vencid\w*) (on|in|en) (my|mi) (account|cuenta)\b",
    r"\bmy payments?\b.{0,20}\b(history|made|went through|received|arrived|show)",
    r"\b(ya )?pague\b.{0,40}\b(no (me )?(aparece|sale|refleja|registra|llega)|todavia|aun)\b",
    r"\bi (already |have )?paid\b.{0,40}\b(not|isn'?t|hasn'?t|still)\b",
    r"\b(showing|show up|shows up|reflected|posted|registered)\b.{0,10}\b(on|in) my account\b",
    r"\b(ya )?(entro|llego|se reflejo|aparecio) mi (transferencia|pago|pago movil|deposito)\b",
    # What they paid, and their own latest payment: "how much igtf did i pay on that zelle", "my last card payment".
    r"\bhow much\b.{0,25}\b(did|have) (i|we) (pay|paid)\b",
    r"\b(my|our) (last|latest|previous|recent) (\w+ )?payment\b|\b(mi|nuestro) (ultimo|pago anterior)\b.{0,15}\bpago\b",
)
# Their bill changed: "¿por qué mi factura llegó más alta?", "why is my bill lower than last month?".
_CHANGED = rx(
    r"\b(mi|my|la|the) (factura|recibo|bill|invoice)\b.{0,40}\b(mas alt\w*|higher|subio|went up|aumento|increased|mas "
    r"car\w*|more expensive|llego alt\w*|vino alt\w*|diferente|different|mas baj\w*|lower|bajo|went down|decreased|"
    r"distint\w*|cambio)\b",
    r"\b(por que|porque|xq|pq|why)\b.{0,25}\b(subio|aumento|bajo|cambio|went up|went down|increased|decreased|is higher|"
    r"is lower|llego (mas|menos))\b.{0,25}\b(factura|recibo|bill|invoice)\b",
)
# A bill of theirs before the newest, or how much one was: "and the previous bill?", "how much was that bill",
# "¿cuánto fue la factura anterior?".
_EARLIER = rx(
    r"\b(the|my|our) (previous|prior) (bill|invoice|statement)\b|\b(mi|la|nuestra) factura (anterior|pasada)\b",
    r"\bhow much (was|were) (that|the|my|our) (\w+ )?(bill|invoice)\b",
    r"\bcuanto (fue|era|salio|vino) (esa|la|mi|nuestra) (\w+ )?(factura|recibo)\b",
)
_EXPLAIN = rx(r"\bexpli(ca|que|quen|came|queme|quenme)\w* (la|mi) factura\b", r"\bexplain my (bill|invoice)\b")
# Seeing, finding or downloading a bill is about the customer's own one when "my", a number, a month or its
# issuer makes it specific; "how do I get a copy of the invoice" asks how, and stays a question for the documents.
_FETCH = (r"(check\w*|see\w*|view\w*|locat\w*|find\w*|get\w*|download\w*|look (at|for)|looking for|take a (quick )?look|"
          r"show me|pull up|go through|mostrar\w*|muestr\w*|"
          r"ver|revisar|consultar|descargar|bajar|buscar|consegu\w*|obtener|mirar)")
_SPECIFIC = rx(
    r"\b(my|mis|mi|our|nuestr[ao]s?)\s+(last |latest |recent |previous |current )?(bills?|invoices?|facturas?|recibos?|"
    r"statements?)\b",
    rf"\b{_RECORD}\s+(from|de|del)\s+(mr|ms|mrs|miss|sr|sra|srta|[a-z]+\s+[a-z]+\b(?<!\bthe\b))",
    r"\b(bills?|invoices?|facturas?|recibos?)\s+(from|de|del)\s+(enero|febrero|marzo|abril|mayo|junio|julio|agosto|"
    r"septiembre|octubre|noviembre|diciembre|january|february|march|april|may|june|july|august|september|october|"
    r"november|december|last month|el mes pasado|this month|este mes|\w+ (purchases|months) ago)\b",
)
_FETCHES = rx(rf"\b{_FETCH}\b.{{0,40}}\b(bills?|invoices?|facturas?|recibos?|statements?|my account|mi cuenta)\b",
              r"^\W*(check|see|view|download|get|ver|revisar|consultar|descargar)\s+(the\s+|my\s+|la\s+|mi\s+)?"
              r"(bills?|invoices?|facturas?|recibos?)\W*$")


# What only the customer's records answer: asked by someone billing cannot identify yet, the bot asks who they are
# first. A charge they name ("me cobraron 15 dólares por la visita") is also what a policy explains, so the help
# center may answer it before they are identified.
RECORDS_ONLY = frozenset({"a bill or account number", "what is owed", "the account's holder", "payments made",
                          "explain my bill", "a specific bill", "a change in their bill"})


def own_records(meant: str) -> str:
    """Return why the message points at the customer's own records ("" when it does not)."""
    if _BANK_DETAILS.search(meant):
        return ""  # the provider's bank account number to pay into is a policy, not the customer's records
    for name, pattern in (("a bill or account number", _NUMBERED), ("what is owed", _OWED),
                          ("a change in their bill", _CHANGED), ("a charge", _CHARGED), ("a line of the bill", _LINE),
                          ("the account's holder", _HOLDER), ("payments made", _PAID), ("explain my bill", _EXPLAIN),
                          ("a specific bill", _EARLIER)):
        if pattern.search(meant):
            return name
    if _FETCHES.search(meant) and (_SPECIFIC.search(meant) or not _asks_how(meant)):
        return "a specific bill"
    return ""


_BANK_DETAILS = rx(r"\b(bank account|cuenta bancaria|cuenta del banco|numero de cuenta (de|del) (banco|ustedes|la empresa))\b")
_HOW = rx(r"\b(como|how (do|can|could|would) (i|you|we)|how to|donde|where)\b")


def _asks_how(meant: str) -> bool:
    return bool(_HOW.search(meant))
