"""Billing computations as evidence: what subscribers ask about, computed from API records.

Pure Python, `Decimal` only, one currency at a time (`Money` raises `CurrencyMismatch` when
USD and VES meet). Every function returns `Fact`s whose text states the derivation in the
customer's language — Venezuelan notation for Spanish (`14,00 USD`, `Bs. 1.234,56`), `USD 14.00`
for English — and whose `derivation` is the same formula, language-neutral, for analysts.
Dates are injected (`today`), never read from the clock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from decimal import Decimal

from billing.evidence import Fact
from billing.records import (
    LINE_TYPES,
    CurrencyMismatch,
    Invoice,
    LineItem,
    Money,
    Payment,
    Plan,
    Promotion,
    money_sum,
    quantize,
)

__all__ = [
    "CurrencyMismatch",
    "charge_facts",
    "due_facts",
    "duplicate_charge_facts",
    "format_amount",
    "format_money",
    "format_rate",
    "invoice_delta_facts",
    "invoice_total_fact",
    "late_fee_facts",
    "outage_credit_facts",
    "payment_facts",
    "plan_facts",
    "promotion_facts",
    "proration_facts",
    "tax_facts",
]

HUNDRED = Decimal(100)

TYPE_LABELS = {
    "es": {
        "recurring": "mensualidad",
        "proration": "prorrateo",
        "discount": "descuentos",
        "credit": "créditos",
        "installation": "instalación",
        "technical_visit": "visita técnica",
        "reconnection": "reconexión",
        "late_fee": "recargo por mora",
        "tax": "impuestos",
    },
    "en": {
        "recurring": "monthly fee",
        "proration": "proration",
        "discount": "discounts",
        "credit": "credits",
        "installation": "installation",
        "technical_visit": "technical visit",
        "reconnection": "reconnection",
        "late_fee": "late fee",
        "tax": "taxes",
    },
}
DISCOUNT_ENDED = {"es": "descuento promocional terminó", "en": "promotional discount ended"}
METHOD_LABELS = {
    "es": {
        "pago_movil": "pago móvil",
        "bank_transfer": "transferencia",
        "direct_debit": "domiciliación",
        "card": "tarjeta nacional",
        "international_card": "tarjeta internacional",
        "zelle": "Zelle",
        "cash_usd": "efectivo en dólares",
        "cash_ves": "efectivo en bolívares",
    },
    "en": {
        "pago_movil": "pago móvil",
        "bank_transfer": "bank transfer",
        "direct_debit": "direct debit",
        "card": "Venezuelan card",
        "international_card": "international card",
        "zelle": "Zelle",
        "cash_usd": "US dollar cash",
        "cash_ves": "bolívar cash",
    },
}
FAILURE_LABELS = {
    "es": {
        "insufficient_funds": "fondos insuficientes",
        "card_declined": "tarjeta rechazada",
        "expired": "operación vencida sin confirmar",
        "returned_by_bank": "devuelto por el banco",
    },
    "en": {
        "insufficient_funds": "insufficient funds",
        "card_declined": "card declined",
        "expired": "operation expired unconfirmed",
        "returned_by_bank": "returned by the bank",
    },
}


def _lang(language: str) -> str:
    if language not in ("es", "en"):
        raise ValueError(f"unsupported language {language!r}")
    return language


# --- notation --------------------------------------------------------------------------


def format_amount(value: Decimal, language: str) -> str:
    """Return a bare amount with two places: `1.234,56` (es) or `1,234.56` (en)."""
    text = f"{quantize(value):,.2f}"
    if _lang(language) == "es":
        text = text.replace(",", "_").replace(".", ",").replace("_", ".")
    return text


def format_money(money: Money, language: str) -> str:
    """Return `14,00 USD` / `Bs. 1.234,56` in Spanish, `USD 14.00` / `VES 1,234.56` in English."""
    sign = "-" if money.amount < 0 else ""
    digits = format_amount(abs(money.amount), language)
    if language == "es":
        return f"{sign}Bs. {digits}" if money.currency == "VES" else f"{sign}{digits} {money.currency}"
    return f"{sign}{money.currency} {digits}"


def format_rate(rate: Decimal, language: str) -> str:
    """Return a percentage the way the bills print it: `16 %` / `2,5 %` (es), `16%` (en)."""
    text = f"{rate.normalize():f}"
    if _lang(language) == "es":
        return text.replace(".", ",") + " %"
    return text + "%"


def _plural(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _bare(money: Money, language: str) -> str:
    sign = "-" if money.amount < 0 else ""
    return sign + format_amount(abs(money.amount), language)


def _minus(left: Money, right: Money, language: str) -> str:
    """Return 'a − b' with a negative b in parentheses."""
    right_text = _bare(right, language)
    if right.amount < 0:
        right_text = f"({right_text})"
    return f"{_bare(left, language)} − {right_text}"


def _m(money: Money) -> str:
    return f"{money.amount:.2f}"


def _r(rate: Decimal) -> str:
    return f"{rate:.2f}"


# --- totals and month-over-month delta -------------------------------------------------


def invoice_total_fact(invoice: Invoice, language: str) -> Fact:
    """State an invoice's total as the sum of its lines, with issue and due dates."""
    lang = _lang(language)
    total = money_sum((line.amount for line in invoice.lines), invoice.currency)
    parts = " + ".join(_m(line.amount) for line in invoice.lines)
    if lang == "es":
        text = (
            f"Total factura {invoice.period} = {format_money(total, lang)} "
            f"(suma de {len(invoice.lines)} líneas; emitida el {invoice.issue_date.isoformat()}, "
            f"vence el {invoice.due_date.isoformat()})"
        )
    else:
        text = (
            f"Invoice {invoice.period} total = {format_money(total, lang)} "
            f"(sum of {len(invoice.lines)} lines; issued {invoice.issue_date.isoformat()}, "
            f"due {invoice.due_date.isoformat()})"
        )
    return Fact(text, _m(total), invoice.currency, "invoice_total", f"sum(lines of {invoice.id}) = {parts}")


def _sums_by_type(invoice: Invoice) -> dict[str, Money]:
    sums = {line_type: Money.zero(invoice.currency) for line_type in LINE_TYPES}
    for line in invoice.lines:
        sums[line.type] = sums[line.type] + line.amount
    return sums


def invoice_delta_facts(current: Invoice, previous: Invoice, language: str) -> list[Fact]:
    """Return the month-over-month delta of two invoices and its breakdown by line-item type.

    The first fact is the total delta with the breakdown in its text; one fact per line type
    that changed follows, each `sum(type, current) − sum(type, previous)`.
    """
    lang = _lang(language)
    if current.currency != previous.currency:
        raise CurrencyMismatch(f"invoices {current.id} and {previous.id} are in different currencies")
    now_sums, before_sums = _sums_by_type(current), _sums_by_type(previous)
    delta = current.total - previous.total
    changed: OrderedDict[str, Money] = OrderedDict()
    for line_type in LINE_TYPES:
        type_delta = now_sums[line_type] - before_sums[line_type]
        if not type_delta.is_zero():
            changed[line_type] = type_delta

    def label(line_type: str) -> str:
        if (
            line_type == "discount"
            and now_sums["discount"].is_zero()
            and not before_sums["discount"].is_zero()
        ):
            return DISCOUNT_ENDED[lang]
        return TYPE_LABELS[lang][line_type]

    breakdown = "; ".join(f"{label(t)}: {_bare(d, lang)}" for t, d in changed.items())
    derivation = f"total({current.id}) - total({previous.id}) = {_m(current.total)} - {_m(previous.total)} = {_m(delta)}"
    if changed:
        derivation += "; by type: " + ", ".join(f"{t} {_m(d)}" for t, d in changed.items())
    if not changed:
        if lang == "es":
            text = (
                f"Factura {current.period} igual a {previous.period}: total {format_money(current.total, lang)} "
                f"en ambas (ningún tipo de cargo cambió)"
            )
        else:
            text = (
                f"Invoice {current.period} equals {previous.period}: total {format_money(current.total, lang)} "
                f"on both (no charge type changed)"
            )
    elif lang == "es":
        text = (
            f"Diferencia factura {current.period} vs {previous.period} = {format_money(delta, lang)} "
            f"({breakdown})"
        )
    else:
        text = (
            f"Difference invoice {current.period} vs {previous.period} = {format_money(delta, lang)} "
            f"({breakdown})"
        )
    facts = [Fact(text, _m(delta), current.currency, "invoice_delta", derivation)]
    for line_type, type_delta in changed.items():
        now, before = now_sums[line_type], before_sums[line_type]
        name = TYPE_LABELS[lang][line_type]
        if lang == "es":
            type_text = (
                f"Variación de {name} {current.period} vs {previous.period} = "
                f"{format_money(type_delta, lang)} ({_minus(now, before, lang)})"
            )
        else:
            type_text = (
                f"Change in {name} {current.period} vs {previous.period} = "
                f"{format_money(type_delta, lang)} ({_minus(now, before, lang)})"
            )
        facts.append(
            Fact(
                type_text,
                _m(type_delta),
                current.currency,
                "delta_by_type",
                f"sum({line_type} lines of {current.id}) - sum({line_type} lines of {previous.id}) "
                f"= {_m(now)} - {_m(before)}",
            )
        )
    return facts


# --- single-invoice checks -------------------------------------------------------------


def _vat_rate(invoice: Invoice) -> Decimal | None:
    for line in invoice.lines_of("tax"):
        if line.code == "IVA" and line.rate is not None:
            return line.rate
    return None


def duplicate_charge_facts(invoice: Invoice, language: str) -> list[Fact]:
    """Return one fact per charge that appears more than once with the same text, amount and period."""
    lang = _lang(language)
    groups: OrderedDict[tuple, list[LineItem]] = OrderedDict()
    for line in invoice.lines:
        if line.type in ("tax", "late_fee"):
            continue
        key = (line.type, line.description, line.amount, line.service_start, line.service_end, line.date)
        groups.setdefault(key, []).append(line)
    facts = []
    vat = _vat_rate(invoice)
    for (line_type, description, amount, *_), lines in groups.items():
        if len(lines) < 2:
            continue
        excess = amount.times(len(lines) - 1)
        vat_on_excess = excess.times(vat / HUNDRED) if vat is not None else Money.zero(invoice.currency)
        overcharge = excess + vat_on_excess
        if lang == "es":
            text = (
                f"Cargo repetido en factura {invoice.period}: «{description}» aparece {len(lines)} veces "
                f"({format_money(amount, lang)} cada una); cobrado de más = {format_money(excess, lang)} "
                f"+ IVA {format_money(vat_on_excess, lang)} = {format_money(overcharge, lang)}"
            )
        else:
            text = (
                f"Repeated charge on invoice {invoice.period}: “{description}” appears {len(lines)} times "
                f"({format_money(amount, lang)} each); overcharged = {format_money(excess, lang)} "
                f"+ VAT {format_money(vat_on_excess, lang)} = {format_money(overcharge, lang)}"
            )
        derivation = (
            f"{_m(amount)} x ({len(lines)} - 1) = {_m(excess)}; VAT {_r(vat or Decimal(0))}% x {_m(excess)} "
            f"= {_m(vat_on_excess)}; lines {', '.join(line.id for line in lines)}"
        )
        facts.append(Fact(text, _m(overcharge), invoice.currency, "duplicate_charge", derivation))
    return facts


def tax_facts(current: Invoice, previous: Invoice | None, language: str) -> list[Fact]:
    """Return each tax line as rate × base, and any tax whose rate changed since the previous invoice."""
    lang = _lang(language)
    facts = []
    for line in current.lines_of("tax"):
        if line.rate is None or line.base is None:
            continue
        computed = line.base.times(line.rate / HUNDRED)
        name = line.code or line.description
        if lang == "es":
            text = (
                f"{name} {format_rate(line.rate, lang)} × base gravable {format_money(line.base, lang)} "
                f"= {format_money(computed, lang)} (factura {current.period})"
            )
            if computed != line.amount:
                text += f"; la factura cobra {format_money(line.amount, lang)}"
        else:
            text = (
                f"{name} {format_rate(line.rate, lang)} × taxable base {format_money(line.base, lang)} "
                f"= {format_money(computed, lang)} (invoice {current.period})"
            )
            if computed != line.amount:
                text += f"; the invoice charges {format_money(line.amount, lang)}"
        facts.append(
            Fact(
                text,
                _m(computed),
                current.currency,
                "tax_computation",
                f"{_r(line.rate)}% x {_m(line.base)} = {_m(computed)} (line {line.id}: {_m(line.amount)})",
            )
        )
    if previous is None:
        return facts
    before = {line.code: line for line in previous.lines_of("tax") if line.code and line.rate is not None}
    for line in current.lines_of("tax"):
        old = before.get(line.code)
        if old is None or line.rate is None or old.rate == line.rate or line.base is None:
            continue
        effect = line.base.times((line.rate - old.rate) / HUNDRED)
        if lang == "es":
            change = (
                f"{line.code} pasó de {format_rate(old.rate, lang)} (factura {previous.period}) a "
                f"{format_rate(line.rate, lang)} (factura {current.period})"
            )
            effect_text = (
                f"Efecto del cambio de {line.code} en {current.period} = "
                f"({format_rate(line.rate, lang)} − {format_rate(old.rate, lang)}) × base "
                f"{format_money(line.base, lang)} = {format_money(effect, lang)}"
            )
        else:
            change = (
                f"{line.code} went from {format_rate(old.rate, lang)} (invoice {previous.period}) to "
                f"{format_rate(line.rate, lang)} (invoice {current.period})"
            )
            effect_text = (
                f"Effect of the {line.code} change on {current.period} = "
                f"({format_rate(line.rate, lang)} − {format_rate(old.rate, lang)}) × base "
                f"{format_money(line.base, lang)} = {format_money(effect, lang)}"
            )
        facts.append(
            Fact(
                change,
                _r(line.rate),
                None,
                "tax_rate_change",
                f"rate({old.id}) = {_r(old.rate)}; rate({line.id}) = {_r(line.rate)}",
            )
        )
        facts.append(
            Fact(
                effect_text,
                _m(effect),
                current.currency,
                "tax_rate_effect",
                f"({_r(line.rate)} - {_r(old.rate)})% x {_m(line.base)} = {_m(effect)}",
            )
        )
    return facts


def charge_facts(invoice: Invoice, language: str) -> list[Fact]:
    """Return one-off charges and credits on an invoice as read from it (no derivation)."""
    lang = _lang(language)
    facts = []
    for line in invoice.lines:
        if line.type not in ("installation", "reconnection", "technical_visit", "credit"):
            continue
        when = line.date or line.service_start
        if lang == "es":
            text = f"«{line.description}» en factura {invoice.period} = {format_money(line.amount, lang)}"
            if when:
                text += f" (fecha {when.isoformat()})"
        else:
            text = f"“{line.description}” on invoice {invoice.period} = {format_money(line.amount, lang)}"
            if when:
                text += f" (date {when.isoformat()})"
        facts.append(Fact(text, _m(line.amount), invoice.currency, line.type, None))
    return facts


def outage_credit_facts(invoice: Invoice, language: str) -> list[Fact]:
    """Recompute outage credits as monthly fee × days down ÷ 30 (the published rule)."""
    lang = _lang(language)
    recurring = invoice.lines_of("recurring")
    if not recurring:
        return []
    monthly_fee = recurring[0].amount
    facts = []
    for line in invoice.lines_of("credit"):
        if line.code != "outage" or line.service_start is None or line.service_end is None:
            continue
        days = (line.service_end - line.service_start).days + 1
        computed = -Money(quantize(monthly_fee.amount * days / Decimal(30)), invoice.currency)
        if lang == "es":
            text = (
                f"Crédito por interrupción en factura {invoice.period} = {format_money(monthly_fee, lang)} × "
                f"{days} días ÷ 30 = {format_money(-computed, lang)} a favor "
                f"(días sin servicio del {line.service_start.isoformat()} al {line.service_end.isoformat()})"
            )
        else:
            text = (
                f"Outage credit on invoice {invoice.period} = {format_money(monthly_fee, lang)} × "
                f"{days} days ÷ 30 = {format_money(-computed, lang)} in your favour "
                f"(days without service {line.service_start.isoformat()} to {line.service_end.isoformat()})"
            )
        if computed != line.amount:
            text += f" [{format_money(line.amount, lang)}]"
        facts.append(
            Fact(
                text,
                _m(-computed),
                invoice.currency,
                "outage_credit",
                f"{_m(monthly_fee)} x {days} / 30 = {_m(-computed)} (line {line.id}: {_m(line.amount)})",
            )
        )
    return facts


# --- promotions ------------------------------------------------------------------------


def _months(promotion: Promotion) -> int | None:
    if promotion.invoices_total:
        return promotion.invoices_total
    return None


def promotion_facts(
    promotions: Iterable[Promotion], *, current: Invoice, previous: Invoice | None, language: str
) -> list[Fact]:
    """Return promotions that ended in time to leave the current invoice, and those still running."""
    lang = _lang(language)
    facts = []
    window_start = previous.service_start if previous is not None else current.service_start
    for promotion in promotions:
        discount = promotion.monthly_discount
        if discount.currency != current.currency:
            raise CurrencyMismatch(
                f"promotion {promotion.id} is in {discount.currency}, invoice in {current.currency}"
            )
        how = ""
        derivation_worth = f"monthly_discount({promotion.id}) = {_m(discount)}"
        if promotion.percent is not None:
            how = f" = {format_rate(promotion.percent, lang)} × " + (
                "mensualidad" if lang == "es" else "monthly fee"
            )
            derivation_worth += f" ({_r(promotion.percent)}% of the monthly fee)"
        ended = promotion.end_date is not None and promotion.end_date < current.service_start
        if ended and promotion.end_date >= window_start - timedelta(days=1):
            count = _months(promotion)
            if lang == "es":
                text = (
                    f"Promoción «{promotion.name}» terminó el {promotion.end_date.isoformat()} "
                    f"(vigente desde {promotion.start_date.isoformat()}); ya no se aplica en la factura "
                    f"{current.period}"
                )
                worth = f"Promoción «{promotion.name}» valía {format_money(discount, lang)} al mes{how}"
                if count:
                    total = format_money(discount.times(count), lang)
                    worth += f"; {count} facturas × {_bare(discount, lang)} = {total}"
            else:
                text = (
                    f"Promotion “{promotion.name}” ended on {promotion.end_date.isoformat()} "
                    f"(running since {promotion.start_date.isoformat()}); it no longer applies on invoice "
                    f"{current.period}"
                )
                worth = f"Promotion “{promotion.name}” was worth {format_money(discount, lang)} a month{how}"
                if count:
                    total = format_money(discount.times(count), lang)
                    worth += f"; {count} invoices × {_bare(discount, lang)} = {total}"
            facts.append(
                Fact(
                    text,
                    promotion.end_date.isoformat(),
                    None,
                    "promotion_ended",
                    f"end_date({promotion.id}) = {promotion.end_date.isoformat()} < "
                    f"service_start({current.id}) = {current.service_start.isoformat()}",
                )
            )
            facts.append(Fact(worth, _m(discount), discount.currency, "promotion_value", derivation_worth))
        elif not ended and promotion.start_date <= current.service_end:
            until = promotion.end_date.isoformat() if promotion.end_date else None
            if lang == "es":
                text = (
                    f"Promoción «{promotion.name}» vigente: {format_money(discount, lang)} al mes{how}, "
                    + (f"hasta el {until}" if until else "sin fecha de fin")
                )
            else:
                text = (
                    f"Promotion “{promotion.name}” running: {format_money(discount, lang)} a month{how}, "
                    + (f"until {until}" if until else "with no end date")
                )
            facts.append(Fact(text, _m(discount), discount.currency, "promotion_active", derivation_worth))
    return facts


# --- proration -------------------------------------------------------------------------


def _price_entries(plan: Plan, change_day: date):
    new = next((e for e in plan.price_history if e.start_date == change_day), None)
    old = next((e for e in plan.price_history if e.end_date == change_day - timedelta(days=1)), None)
    return old, new


def proration_facts(current: Invoice, cycle: Invoice | None, plan: Plan, language: str) -> list[Fact]:
    """Recompute each plan-change proration on `current`.

    Rule: (new list price − old list price) × remaining days ÷ days of the cycle, where remaining
    days count from the change day (included) to the end of the cycle that was running — the
    service period of `cycle`, the invoice that covered the change day.
    """
    lang = _lang(language)
    facts = []
    for line in current.lines_of("proration"):
        if line.service_start is None or line.service_end is None:
            continue
        old, new = _price_entries(plan, line.service_start)
        if old is None or new is None or cycle is None:
            continue
        if not cycle.service_start <= line.service_start <= cycle.service_end:
            continue
        days = (line.service_end - line.service_start).days + 1
        cycle_days = (cycle.service_end - cycle.service_start).days + 1
        diff = new.price - old.price
        computed = Money(quantize(diff.amount * days / Decimal(cycle_days)), current.currency)
        if lang == "es":
            text = (
                f"Prorrateo por cambio de plan {old.plan_name} → {new.plan_name} del "
                f"{line.service_start.isoformat()} al {line.service_end.isoformat()} = "
                f"({_minus(new.price, old.price, lang)}) × {days} días ÷ {cycle_days} días = "
                f"{format_money(computed, lang)}"
            )
            if computed != line.amount:
                text += f"; la factura cobra {format_money(line.amount, lang)}"
            days_text = (
                f"Días prorrateados: {days} de {cycle_days} (desde el día del cambio, "
                f"{line.service_start.isoformat()}, incluido, hasta el fin del ciclo, {line.service_end.isoformat()})"
            )
        else:
            text = (
                f"Proration for the plan change {old.plan_name} → {new.plan_name} from "
                f"{line.service_start.isoformat()} to {line.service_end.isoformat()} = "
                f"({_minus(new.price, old.price, lang)}) × {days} days ÷ {cycle_days} days = "
                f"{format_money(computed, lang)}"
            )
            if computed != line.amount:
                text += f"; the invoice charges {format_money(line.amount, lang)}"
            days_text = (
                f"Prorated days: {days} of {cycle_days} (from the change day, {line.service_start.isoformat()}, "
                f"included, to the end of the cycle, {line.service_end.isoformat()})"
            )
        facts.append(
            Fact(
                text,
                _m(computed),
                current.currency,
                "proration",
                f"({_m(new.price)} - {_m(old.price)}) x {days} / {cycle_days} = {_m(computed)} "
                f"(line {line.id}: {_m(line.amount)})",
            )
        )
        facts.append(
            Fact(
                days_text,
                str(days),
                None,
                "proration_days",
                f"{line.service_end.isoformat()} - {line.service_start.isoformat()} + 1 = {days}; "
                f"cycle {cycle.service_start.isoformat()}..{cycle.service_end.isoformat()} = {cycle_days}",
            )
        )
    return facts


# --- payments, late fees, due dates ----------------------------------------------------


def _succeeded(invoice: Invoice, payments: Iterable[Payment], *, before: date | None = None) -> list[Payment]:
    return [
        p
        for p in payments
        if p.invoice_id == invoice.id and p.succeeded and (before is None or p.date < before)
    ]


def _paid(invoice: Invoice, payments: Sequence[Payment], *, before: date | None = None) -> Money:
    return money_sum((p.amount for p in _succeeded(invoice, payments, before=before)), invoice.currency)


def payment_facts(invoice: Invoice, payments: Sequence[Payment], language: str) -> list[Fact]:
    """Return the sum of succeeded payments against the invoice total, and each attempt on it."""
    lang = _lang(language)
    mine = sorted((p for p in payments if p.invoice_id == invoice.id), key=lambda p: (p.date, p.id))
    for payment in mine:
        if payment.amount.currency != invoice.currency:
            raise CurrencyMismatch(f"payment {payment.id} is in {payment.amount.currency}")
    succeeded = [p for p in mine if p.succeeded]
    failed = [p for p in mine if not p.succeeded]
    paid = money_sum((p.amount for p in succeeded), invoice.currency)
    balance = invoice.total - paid
    if lang == "es":
        count = f"{len(succeeded)} pago{'s' if len(succeeded) != 1 else ''}"
        if failed:
            count += "; " + _plural(len(failed), "intento fallido no cuenta", "intentos fallidos no cuentan")
        if balance.amount > 0:
            outcome = f"saldo pendiente {format_money(balance, lang)}"
        elif balance.amount < 0:
            outcome = f"saldo a favor {format_money(-balance, lang)}"
        else:
            outcome = f"saldo {format_money(balance, lang)}: pagada"
        text = (
            f"Pagos exitosos a la factura {invoice.period} = {format_money(paid, lang)} ({count}) "
            f"vs total {format_money(invoice.total, lang)} → {outcome}"
        )
    else:
        count = f"{len(succeeded)} payment{'s' if len(succeeded) != 1 else ''}"
        if failed:
            count += f"; {len(failed)} failed attempt{'s' if len(failed) != 1 else ''} not counted"
        if balance.amount > 0:
            outcome = f"balance due {format_money(balance, lang)}"
        elif balance.amount < 0:
            outcome = f"credit balance {format_money(-balance, lang)}"
        else:
            outcome = f"balance {format_money(balance, lang)}: paid"
        text = (
            f"Succeeded payments to invoice {invoice.period} = {format_money(paid, lang)} ({count}) "
            f"vs total {format_money(invoice.total, lang)} → {outcome}"
        )
    derivation = (
        f"total({invoice.id}) - sum(succeeded payments) = {_m(invoice.total)} - ("
        + (" + ".join(_m(p.amount) for p in succeeded) or "0.00")
        + f") = {_m(balance)}"
    )
    facts = [Fact(text, _m(balance), invoice.currency, "payments_vs_total", derivation)]
    for payment in mine:
        method = METHOD_LABELS[lang].get(payment.method, payment.method)
        if payment.succeeded:
            if lang == "es":
                text = (
                    f"Pago del {payment.date.isoformat()} por {format_money(payment.amount, lang)} ({method}) "
                    f"aplicado a la factura {invoice.period}"
                )
                if payment.igtf is not None:
                    text += f"; IGTF {format_money(payment.igtf, lang)} en el recibo, no en la factura"
            else:
                text = (
                    f"Payment on {payment.date.isoformat()} of {format_money(payment.amount, lang)} ({method}) "
                    f"applied to invoice {invoice.period}"
                )
                if payment.igtf is not None:
                    text += f"; IGTF {format_money(payment.igtf, lang)} on the receipt, not on the invoice"
            facts.append(Fact(text, _m(payment.amount), invoice.currency, "payment", None))
        else:
            reason = FAILURE_LABELS[lang].get(payment.failure_reason or "", payment.failure_reason or "")
            if lang == "es":
                text = (
                    f"Intento de pago del {payment.date.isoformat()} por {format_money(payment.amount, lang)} "
                    f"({method}) falló ({reason}); no se abonó a la factura {invoice.period}"
                )
            else:
                text = (
                    f"Payment attempt on {payment.date.isoformat()} of {format_money(payment.amount, lang)} "
                    f"({method}) failed ({reason}); it was not applied to invoice {invoice.period}"
                )
            facts.append(Fact(text, _m(payment.amount), invoice.currency, "payment_failed", None))
    return facts


def due_facts(invoice: Invoice, payments: Sequence[Payment], *, today: date, language: str) -> list[Fact]:
    """Return days until due, or days overdue, for an invoice with a balance (none when settled)."""
    lang = _lang(language)
    balance = invoice.total - _paid(invoice, payments)
    if balance.amount <= 0:
        return []
    days = (invoice.due_date - today).days
    due = invoice.due_date.isoformat()
    derivation = f"due_date({invoice.id}) - today = {due} - {today.isoformat()} = {days} days"
    if days >= 0:
        if lang == "es":
            text = (
                f"Factura {invoice.period} vence el {due}: "
                + ("vence hoy" if days == 0 else f"faltan {days} día{'s' if days != 1 else ''}")
                + f" (hoy es {today.isoformat()}; saldo {format_money(balance, lang)})"
            )
        else:
            text = (
                f"Invoice {invoice.period} is due on {due}: "
                + ("due today" if days == 0 else f"{days} day{'s' if days != 1 else ''} left")
                + f" (today is {today.isoformat()}; balance {format_money(balance, lang)})"
            )
        return [Fact(text, str(days), None, "days_until_due", derivation)]
    overdue = -days
    if lang == "es":
        text = (
            f"Factura {invoice.period} venció el {due}: {overdue} día{'s' if overdue != 1 else ''} de atraso "
            f"(hoy es {today.isoformat()}; saldo {format_money(balance, lang)})"
        )
    else:
        text = (
            f"Invoice {invoice.period} was due on {due}: {overdue} day{'s' if overdue != 1 else ''} overdue "
            f"(today is {today.isoformat()}; balance {format_money(balance, lang)})"
        )
    return [
        Fact(text, str(overdue), None, "days_overdue", f"today - due_date({invoice.id}) = {overdue} days")
    ]


def late_fee_facts(
    current: Invoice, invoices: Sequence[Invoice], payments: Sequence[Payment], language: str
) -> list[Fact]:
    """Explain each late fee on `current` from the invoice it penalises and that invoice's payments.

    Basis: the late invoice's total minus succeeded payments made before the fee was generated
    (the line's `date`, the day after the grace period). A percentage fee is rate × basis;
    a flat fee (no rate) is stated as such.
    """
    lang = _lang(language)
    by_id = {invoice.id: invoice for invoice in invoices}
    facts = []
    for line in current.lines_of("late_fee"):
        late = by_id.get(line.related_invoice_id or "")
        if late is None or line.date is None:
            continue
        paid_before = _paid(late, payments, before=line.date)
        basis = late.total - paid_before
        settled = _first_settling_payment(late, payments)
        if line.rate is not None:
            computed = basis.times(line.rate / HUNDRED)
            if lang == "es":
                text = (
                    f"Recargo por mora en factura {current.period} = {format_rate(line.rate, lang)} × "
                    f"{format_money(basis, lang)} = {format_money(computed, lang)}; "
                    f"{format_money(basis, lang)} es el saldo de la factura {late.period} "
                    f"(total {format_money(late.total, lang)} − pagos {format_money(paid_before, lang)}) "
                    f"sin pagar al generarse el recargo el {line.date.isoformat()} "
                    f"(vencía el {late.due_date.isoformat()})"
                )
            else:
                text = (
                    f"Late fee on invoice {current.period} = {format_rate(line.rate, lang)} × "
                    f"{format_money(basis, lang)} = {format_money(computed, lang)}; "
                    f"{format_money(basis, lang)} is what remained unpaid of invoice {late.period} "
                    f"(total {format_money(late.total, lang)} − payments {format_money(paid_before, lang)}) "
                    f"when the fee was generated on {line.date.isoformat()} (it was due {late.due_date.isoformat()})"
                )
            derivation = (
                f"{_r(line.rate)}% x ({_m(late.total)} - {_m(paid_before)}) = {_m(computed)} "
                f"(line {line.id}: {_m(line.amount)})"
            )
        else:
            computed = line.amount
            if lang == "es":
                text = (
                    f"Recargo por mora en factura {current.period} = {format_money(computed, lang)} fijo por la "
                    f"factura {late.period}, que vencía el {late.due_date.isoformat()} y tenía saldo "
                    f"{format_money(basis, lang)} al {line.date.isoformat()}"
                )
            else:
                text = (
                    f"Late fee on invoice {current.period} = flat {format_money(computed, lang)} for invoice "
                    f"{late.period}, due {late.due_date.isoformat()}, with {format_money(basis, lang)} unpaid "
                    f"on {line.date.isoformat()}"
                )
            derivation = f"flat fee; basis {_m(late.total)} - {_m(paid_before)} = {_m(basis)}"
        if computed != line.amount:
            text += (
                f"; la factura cobra {format_money(line.amount, lang)}"
                if lang == "es"
                else f"; the invoice charges {format_money(line.amount, lang)}"
            )
        facts.append(Fact(text, _m(computed), current.currency, "late_fee", derivation))
        facts.append(
            Fact(
                (
                    f"Base del recargo por mora = {format_money(basis, lang)} (saldo de la factura {late.period})"
                    if lang == "es"
                    else f"Late fee basis = {format_money(basis, lang)} (unpaid balance of invoice {late.period})"
                ),
                _m(basis),
                current.currency,
                "late_fee_basis",
                f"total({late.id}) - payments before {line.date.isoformat()} = {_m(late.total)} - {_m(paid_before)}",
            )
        )
        if settled is not None:
            days_late = (settled.date - late.due_date).days
            if lang == "es":
                text = (
                    f"La factura {late.period} quedó pagada el {settled.date.isoformat()}, "
                    f"{days_late} días después de su vencimiento ({late.due_date.isoformat()})"
                )
            else:
                text = (
                    f"Invoice {late.period} was settled on {settled.date.isoformat()}, "
                    f"{days_late} days after its due date ({late.due_date.isoformat()})"
                )
            facts.append(
                Fact(
                    text,
                    str(days_late),
                    None,
                    "days_late",
                    f"{settled.date.isoformat()} - {late.due_date.isoformat()} = {days_late} days",
                )
            )
    return facts


def _first_settling_payment(invoice: Invoice, payments: Sequence[Payment]) -> Payment | None:
    running = Money.zero(invoice.currency)
    for payment in sorted(_succeeded(invoice, payments), key=lambda p: (p.date, p.id)):
        running = running + payment.amount
        if invoice.total <= running:
            return payment
    return None


# --- plan ------------------------------------------------------------------------------


def plan_facts(plan: Plan, language: str) -> list[Fact]:
    """Return the current plan and its price history as read from the system of record."""
    lang = _lang(language)
    if lang == "es":
        text = (
            f"Plan actual: {plan.name} ({plan.download_mbps}/{plan.upload_mbps} Mbps) a "
            f"{format_money(plan.price, lang)} al mes antes de IVA, desde el {plan.since.isoformat()}"
        )
    else:
        text = (
            f"Current plan: {plan.name} ({plan.download_mbps}/{plan.upload_mbps} Mbps) at "
            f"{format_money(plan.price, lang)} a month before VAT, since {plan.since.isoformat()}"
        )
    facts = [Fact(text, _m(plan.price), plan.price.currency, "plan", None)]
    for entry in plan.price_history:
        end = entry.end_date.isoformat() if entry.end_date else None
        if lang == "es":
            span = (
                f"del {entry.start_date.isoformat()} al {end}"
                if end
                else f"desde el {entry.start_date.isoformat()}"
            )
            text = f"Precio {span}: {entry.plan_name} a {format_money(entry.price, lang)} al mes"
        else:
            span = (
                f"from {entry.start_date.isoformat()} to {end}"
                if end
                else f"since {entry.start_date.isoformat()}"
            )
            text = f"Price {span}: {entry.plan_name} at {format_money(entry.price, lang)} a month"
        facts.append(Fact(text, _m(entry.price), entry.price.currency, "plan_price", None))
    return facts
