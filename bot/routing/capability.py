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
)
_ACCOUNT_PAYMENT = rx(
    r"\b(mi|el) pago\b.*\b(llego|registr|aplic|reflej|proces|pas)",
    r"\b(ya )?pague\b", r"\b(pago|payment)\b.*\b(rechaz|fall|failed|declined)",
    r"\b(my )?payment\b.*\b(went through|received|registered|posted|applied)",
    r"\bdid (you|u) (get|receive) my payment\b",
)
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
    if _ACCOUNT_CHANGE.search(folded):
        return "invoice_change"
    if _ACCOUNT_PAYMENT.search(folded):
        return "payments"
    return "account_summary"
