"""Which billing capability answers a question about the customer's own account. Pure: no Django."""

from __future__ import annotations

from bot.routing.text import rx
from core.text import fold

_ACCOUNT_CHANGE = rx(
    r"\b(por ?que|xq|pq)\b.*\b(factura|recibo|cobro|monto|pago|cuenta)\b.*\b(mas|alta|subio|aumento|cara|"
    r"diferente|distint|baja|bajo|menos|menor)",
    r"\b(por ?que|xq|pq)\b.{0,40}\b(mas|menos) (alta|baja|cara|barata)\b.{0,40}\b(factura|recibo|mes pasado|anterior)",
    r"\b(subio|aumento|cambio)\b.*\b(mi )?(factura|recibo|monto|cuenta)\b",
    r"\bwhy\b.*\b(bill|invoice|charge)\b.*\b(higher|more|up|increase|different|changed|lower|less|down|decrease)",
    r"\bwhy\b.{0,30}\b(higher|lower|more|less)\b.{0,40}\b(bill|invoice|last month|usual|before)",
    r"\b(my )?(bill|invoice) (went up|is higher|increased|changed)\b",
    # The comparison first, the question after: "the one before was lower, why?", "salió más alta, ¿por qué?"
    r"\b(higher|lower|more|less|cheaper|went up|went down)\b.{0,40}\bwhy\b",
    r"\b(mas alta|mas baja|mas cara|mas barata|subio|bajo|aumento)\b.{0,40}\b(por ?que|xq|pq)\b",
    r"\bme (cobraron|estan cobrando|llego) (de mas|mas|un cargo)",
    r"\b(charged me|extra charge|overcharged)\b",
    # A line of the bill asked about, by its amount or its name: "250 de q?", "y ese cargo de 750 qué es?", "what's
    # the minus 50 line?", "y ese recargo x q", "what else is on there?".
    r"\b\d+([.,]\d+)? (de|for) (q|que|what)\b|\b(que|what'?s?|what is) (es )?(the |this |that |ese |este |esa |esta )?"
    r"(minus |menos |-)?\d+([.,]\d+)?\b",
    r"\b(ese|este|esa|esta|that|this|the) (cargo|recargo|cobro|linea|line|charge|item|concepto|descuento|discount|"
    r"credito|credit)\b.{0,25}\b(que es|q es|de que|de q|por que|x ?q|xq|pq|what|why|for)\b",
    r"\b(que|what)( es|'?s| is) (ese|este|esa|esta|that|this) (cargo|recargo|cobro|linea|line|charge|item|concepto|"
    r"descuento|discount|credito|credit|fee)\b",
    r"\bwhat else (is )?(on|in)\b|\bque mas (trae|tiene|me cobran)\b|\b(desglose|breakdown)\b",
    # Against what the customer usually pays, or paid before: "way more than my usual 58", "si yo pago 1624 todos
    # los meses", "and before the upgrade how much was i paying", "y antes cuánto pagaba", "why is it double?".
    r"\b(more|less|higher|lower|mas|menos) (than|que) (my |mi |lo )?(usual|normal|siempre|de costumbre|always)\b",
    r"\b(si )?(yo )?(siempre )?pago \d+|\bi (usually|always|normally) pay\b",
    r"\b(antes|before)\b.{0,30}\b(pagaba|paying|pay|paid|cuanto|how much)\b|\b(cuanto|how much)\b.{0,30}\b(antes|"
    r"before)\b",
    r"\b(doble|double|twice|dos veces)\b",
    # A charge on the bill asked why: "why is there a late fee on my bill?", "¿por qué me sale un recargo?".
    r"\b(why|por ?que|xq|pq)\b.{0,30}\b(is there|are there|hay|aparece|sale|me sale|me salio|do i have|tengo)\b.{0,30}"
    r"\b(recargo|late fee|cargo|charge|fee|cobro|multa)\b",
    r"\b(por ?que|xq|pq|x q|why)\b.{0,30}\b(anterior|previous|the one before|last one)\b.{0,20}\b(menos|mas|less|more|"
    r"lower|higher)\b",
    # A charge named, then asked why: "recargo?? pero si yo pagué la del mes pasado, xq me ponen eso".
    r"\b(recargo|late fee|cargo|charge|fee|cobro|multa)\b.{0,60}\b(xq|por ?que|pq|why)\b",
    # An earlier bill said to be cheaper or dearer, without a "why": "and the previous bill? it was cheaper i think".
    r"\b(previous|prior|the one before|last month|anterior|mes pasado|la pasada)\b.{0,30}\b(cheaper|lower|less|higher|"
    r"more expensive|mas barat\w*|mas baj\w*|mas alt\w*|mas car\w*)\b",
)
_ACCOUNT_PAYMENT = rx(
    r"\b(mi|el) pago\b.*\b(llego|registr|aplic|reflej|proces|pas)",
    # What became of an attempt: "so what happened with my card then", "¿qué pasó con la tarjeta?".
    r"\b(what happened|what went wrong|que paso|que sucedio)\b.{0,30}\b(card|tarjeta|payment|pago|transfer\w*|"
    r"zelle)\b",
    r"\b(card|tarjeta)\b.{0,30}\b(didn'?t (work|go through)|no (funciono|paso|sirvio)|rechaz\w*|declined|failed|"
    r"fallo)\b",
    r"\b(fallo|rechazo|rechazaron|failed|declined)\b.{0,20}\b(card|tarjeta|payment|pago|zelle|transferencia)\b",
    r"\b(ya )?pague\b", r"\b(pago|payment)\b.*\b(rechaz|fall|failed|declined)",
    r"\b(my )?payment\b.*\b(went through|received|registered|posted|applied)",
    r"\bdid (you|u) (get|receive) my payment\b",
    # How they paid: "y con q la pagué?", "por donde la pagamos", "how did i pay it".
    r"\b(con|como|por donde|por que medio|de que forma) (que |q )?(la |lo |las |los )?(pague|pagamos|cancele|"
    r"cancelamos)\b",
    r"\bhow (did|do) (i|we) pay\b|\bwhat did (i|we) pay (it |that |with |by )",
)
# The tax paid on a payment in foreign currency is on the payment's receipt: "y de igtf cuánto se pagó", "how much was
# that bill and the igtf" — whatever else the question compares.
_IGTF = rx(r"\bigtf\b")
# A kind of charge on the bill named ("y de iva cuánto me están cobrando", "ese recargo de dónde sale", "with the
# discount"): the bill-change capability states each line, the taxes and the late fee's workings.
_CHARGE_KIND = rx(r"\b(iva|vat|impuestos?|tax|taxes|recargo|mora|late fee|days late|dias de atraso|visita|visit|"
                  r"reconexion|reconnection|"
                  r"descuento|discount|credito|credit|prorrateo|proration|mensualidad|monthly fee)\b")
# The customer's own bill or charges: on a document question, their facts help when they are known.
OWN_BILL = rx(
    r"\b(mi|mis|en mi|de mi) (factura|facturas|recibo|cuenta|estado de cuenta|cobro|pago|plan)\b",
    r"\bme (cobraron|cobran|estan cobrando|aparece|sale|salio|llego)\b",
    r"\b(my|on my|in my) (bill|invoice|statement|account|plan|payment)\b",
    r"\b(charged me|i was charged|i got charged)\b",
)


def account_capability(text: str) -> str:
    """Return the billing capability that answers a message about the customer's own account."""
    folded = fold(text, case="lower", keep_enye=True)
    if _IGTF.search(folded):  # the tax on a payment in foreign currency is on its receipt, never on the bill
        return "payments"
    if _ACCOUNT_CHANGE.search(folded):
        return "invoice_change"
    if _ACCOUNT_PAYMENT.search(folded):
        return "payments"
    if _CHARGE_KIND.search(folded):
        return "invoice_change"
    return "account_summary"
