"""Per-language phrase tables for billing evidence: every word a customer reads, and nothing else.

Pure data, no Django. wording.py fills these templates (`str.format`, named fields) with figures
already written in the language's notation; it decides which phrase a finding needs, the table
decides the words and their order. To add a language, add a `Phrases` with every key of `ES`
(a test checks the keys and fields match) and list it in `PHRASES` and `money.LANGUAGES`.

Money in evidence uses `money.money_text` (`Bs. 1.624,00`, `USD 10.00`) except where evidence
texts have always been written otherwise; `money_patterns` keeps those (`14,00 USD` in Spanish,
`VES 1,234.56` in English) so no evidence line changed when the notation got one home. Dropping
a pattern switches that currency to the one notation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType

from billing.answers.money import amount_text, check_language, money_text, rate_text


@dataclass(frozen=True)
class Phrases:
    language: str
    money_patterns: Mapping[str, str]  # currency → "{sign}…{amount}…" where evidence predates money_text
    line_types: Mapping[str, str]
    methods: Mapping[str, str]
    failures: Mapping[str, str]
    text: Mapping[str, str]
    plurals: Mapping[str, tuple[str, str]]  # key → (one, other), each with an {n}

    def say(self, key: str, **fields) -> str:
        return self.text[key].format(**fields)

    def count(self, key: str, n: int) -> str:
        one, other = self.plurals[key]
        return (one if n == 1 else other).format(n=n)

    def amount(self, amount: Decimal) -> str:
        return amount_text(amount, self.language)

    def money(self, amount: Decimal, currency: str) -> str:
        pattern = self.money_patterns.get(currency)
        if pattern is None:
            return money_text(amount, currency, self.language)
        sign = "-" if amount < 0 else ""
        return pattern.format(sign=sign, amount=amount_text(abs(amount), self.language))

    def rate(self, rate: Decimal) -> str:
        return rate_text(rate, self.language)


def _frozen(**tables) -> dict:
    return {name: MappingProxyType(table) for name, table in tables.items()}


ES = Phrases(
    language="es",
    **_frozen(
        money_patterns={"USD": "{sign}{amount} USD"},
        line_types={
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
        methods={
            "pago_movil": "pago móvil",
            "bank_transfer": "transferencia",
            "direct_debit": "domiciliación",
            "card": "tarjeta nacional",
            "international_card": "tarjeta internacional",
            "zelle": "Zelle",
            "cash_usd": "efectivo en dólares",
            "cash_ves": "efectivo en bolívares",
        },
        failures={
            "insufficient_funds": "fondos insuficientes",
            "card_declined": "tarjeta rechazada",
            "expired": "operación vencida sin confirmar",
            "returned_by_bank": "devuelto por el banco",
        },
        text={
            "customer": "Cliente {id}: {name}, contrato {account}, ciclo {cycle}, factura en {currency}",
            "credit_note": "Nota de crédito {id} solicitada por {amount} sobre {invoice} ({status})",
            "plan": "Plan actual: {name} ({down}/{up} Mbps) a {price} al mes antes de IVA, desde el {since}",
            "plan_price": "Precio {span}: {name} a {price} al mes",
            "price_span": "del {start} al {end}",
            "price_since": "desde el {start}",
            "invoice_total": (
                "Total factura {period} = {total} (suma de {lines} líneas; emitida el {issued}, vence el {due})"
            ),
            "delta": "Diferencia factura {current} vs {previous} = {delta} ({breakdown})",
            "delta_part": "{label}: {amount}",
            "delta_parts_separator": "; ",
            "discount_ended": "descuento promocional terminó",
            "delta_none": (
                "Factura {current} igual a {previous}: total {total} en ambas (ningún tipo de cargo cambió)"
            ),
            "delta_by_type": "Variación de {label} {current} vs {previous} = {delta} ({formula})",
            "duplicate_charge": (
                "Cargo repetido en factura {period}: «{description}» aparece {count} veces "
                "({amount} cada una); cobrado de más = {excess} + IVA {vat} = {overcharge}"
            ),
            "invoice_charges": "; la factura cobra {billed}",
            "tax": "{name} {rate} × base gravable {base} = {computed} (factura {period})",
            "tax_rate_change": "{code} pasó de {old} (factura {previous}) a {new} (factura {current})",
            "tax_rate_effect": (
                "Efecto del cambio de {code} en {current} = ({new} − {old}) × base {base} = {effect}"
            ),
            "charge": "«{description}» en factura {period} = {amount}",
            "invoice_line": "Línea de la factura {period}: «{description}» = {amount}",
            "charge_date": " (fecha {date})",
            "outage_credit": (
                "Crédito por interrupción en factura {period} = {fee} × {days} ÷ 30 = {credit} a favor "
                "(días sin servicio del {start} al {end})"
            ),
            "outage_billed": " [{billed}]",
            "promotion_ended": (
                "Promoción «{name}» terminó el {end} (vigente desde {start}); ya no se aplica en la factura "
                "{period}"
            ),
            "promotion_value": "Promoción «{name}» valía {discount} al mes{how}",
            "promotion_how": " = {rate} × mensualidad",
            "promotion_total": "; {invoices} × {each} = {total}",
            "promotion_active": "Promoción «{name}» vigente: {discount} al mes{how}, {until}",
            "promotion_until": "hasta el {end}",
            "promotion_no_end": "sin fecha de fin",
            "proration": (
                "Prorrateo por cambio de plan {old} → {new} del {start} al {end} = ({formula}) × {days} "
                "÷ {cycle_days} = {computed}"
            ),
            "proration_days": (
                "Días prorrateados: {days} de {cycle_days} (desde el día del cambio, {start}, incluido, hasta el "
                "fin del ciclo, {end})"
            ),
            "payments_vs_total": "Pagos exitosos a la factura {period} = {paid} ({count}) vs total {total} → {outcome}",
            "payment_counts": "{succeeded}; {failed}",
            "balance_due": "saldo pendiente {amount}",
            "credit_balance": "saldo a favor {amount}",
            "balance_settled": "saldo {amount}: pagada",
            "payment": "Pago del {date} por {amount} ({method}) aplicado a la factura {period}",
            "payment_igtf": "; IGTF {igtf} en el recibo, no en la factura",
            "payment_failed": (
                "Intento de pago del {date} por {amount} ({method}) falló ({reason}); no se abonó a la factura "
                "{period}"
            ),
            "days_until_due": "Factura {period} vence el {due}: {left} (hoy es {today}; saldo {balance})",
            "due_today": "vence hoy",
            "days_overdue": "Factura {period} venció el {due}: {overdue} (hoy es {today}; saldo {balance})",
            "late_fee_rate": (
                "Recargo por mora en factura {period} = {rate} × {basis} = {fee}; {basis} es el saldo de la "
                "factura {late_period} (total {late_total} − pagos {paid_before}) sin pagar al generarse el "
                "recargo el {generated} (vencía el {late_due})"
            ),
            "late_fee_flat": (
                "Recargo por mora en factura {period} = {fee} fijo por la factura {late_period}, que vencía el "
                "{late_due} y tenía saldo {basis} al {generated}"
            ),
            "late_fee_basis": "Base del recargo por mora = {basis} (saldo de la factura {late_period})",
            "days_late": (
                "La factura {late_period} quedó pagada el {settled}, {after} de su vencimiento ({late_due})"
            ),
        },
        plurals={
            "succeeded_payments": ("{n} pago", "{n} pagos"),
            "failed_attempts": ("{n} intento fallido no cuenta", "{n} intentos fallidos no cuentan"),
            "days_left": ("falta {n} día", "faltan {n} días"),  # the verb agrees: falta 1 día
            "days": ("{n} día", "{n} días"),
            "days_after": ("{n} día después", "{n} días después"),
            "invoices": ("{n} factura", "{n} facturas"),
            "days_overdue": ("{n} día de atraso", "{n} días de atraso"),
        },
    ),
)

EN = Phrases(
    language="en",
    **_frozen(
        money_patterns={"VES": "{sign}VES {amount}"},
        line_types={
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
        methods={
            "pago_movil": "pago móvil",
            "bank_transfer": "bank transfer",
            "direct_debit": "direct debit",
            "card": "Venezuelan card",
            "international_card": "international card",
            "zelle": "Zelle",
            "cash_usd": "US dollar cash",
            "cash_ves": "bolívar cash",
        },
        failures={
            "insufficient_funds": "insufficient funds",
            "card_declined": "card declined",
            "expired": "operation expired unconfirmed",
            "returned_by_bank": "returned by the bank",
        },
        text={
            "customer": "Customer {id}: {name}, contract {account}, cycle {cycle}, billed in {currency}",
            "credit_note": "Credit note {id} requested for {amount} on {invoice} ({status})",
            "plan": "Current plan: {name} ({down}/{up} Mbps) at {price} a month before VAT, since {since}",
            "plan_price": "Price {span}: {name} at {price} a month",
            "price_span": "from {start} to {end}",
            "price_since": "since {start}",
            "invoice_total": "Invoice {period} total = {total} (sum of {lines} lines; issued {issued}, due {due})",
            "delta": "Difference invoice {current} vs {previous} = {delta} ({breakdown})",
            "delta_part": "{label}: {amount}",
            "delta_parts_separator": "; ",
            "discount_ended": "promotional discount ended",
            "delta_none": "Invoice {current} equals {previous}: total {total} on both (no charge type changed)",
            "delta_by_type": "Change in {label} {current} vs {previous} = {delta} ({formula})",
            "duplicate_charge": (
                "Repeated charge on invoice {period}: “{description}” appears {count} times ({amount} each); "
                "overcharged = {excess} + VAT {vat} = {overcharge}"
            ),
            "invoice_charges": "; the invoice charges {billed}",
            "tax": "{name} {rate} × taxable base {base} = {computed} (invoice {period})",
            "tax_rate_change": "{code} went from {old} (invoice {previous}) to {new} (invoice {current})",
            "tax_rate_effect": "Effect of the {code} change on {current} = ({new} − {old}) × base {base} = {effect}",
            "charge": "“{description}” on invoice {period} = {amount}",
            "invoice_line": "Line of invoice {period}: “{description}” = {amount}",
            "charge_date": " (date {date})",
            "outage_credit": (
                "Outage credit on invoice {period} = {fee} × {days} ÷ 30 = {credit} in your favour "
                "(days without service {start} to {end})"
            ),
            "outage_billed": " [{billed}]",
            "promotion_ended": (
                "Promotion “{name}” ended on {end} (running since {start}); it no longer applies on invoice "
                "{period}"
            ),
            "promotion_value": "Promotion “{name}” was worth {discount} a month{how}",
            "promotion_how": " = {rate} × monthly fee",
            "promotion_total": "; {invoices} × {each} = {total}",
            "promotion_active": "Promotion “{name}” running: {discount} a month{how}, {until}",
            "promotion_until": "until {end}",
            "promotion_no_end": "with no end date",
            "proration": (
                "Proration for the plan change {old} → {new} from {start} to {end} = ({formula}) × {days} "
                "÷ {cycle_days} = {computed}"
            ),
            "proration_days": (
                "Prorated days: {days} of {cycle_days} (from the change day, {start}, included, to the end of "
                "the cycle, {end})"
            ),
            "payments_vs_total": (
                "Succeeded payments to invoice {period} = {paid} ({count}) vs total {total} → {outcome}"
            ),
            "payment_counts": "{succeeded}; {failed}",
            "balance_due": "balance due {amount}",
            "credit_balance": "credit balance {amount}",
            "balance_settled": "balance {amount}: paid",
            "payment": "Payment on {date} of {amount} ({method}) applied to invoice {period}",
            "payment_igtf": "; IGTF {igtf} on the receipt, not on the invoice",
            "payment_failed": (
                "Payment attempt on {date} of {amount} ({method}) failed ({reason}); it was not applied to "
                "invoice {period}"
            ),
            "days_until_due": "Invoice {period} is due on {due}: {left} (today is {today}; balance {balance})",
            "due_today": "due today",
            "days_overdue": "Invoice {period} was due on {due}: {overdue} (today is {today}; balance {balance})",
            "late_fee_rate": (
                "Late fee on invoice {period} = {rate} × {basis} = {fee}; {basis} is what remained unpaid of "
                "invoice {late_period} (total {late_total} − payments {paid_before}) when the fee was generated "
                "on {generated} (it was due {late_due})"
            ),
            "late_fee_flat": (
                "Late fee on invoice {period} = flat {fee} for invoice {late_period}, due {late_due}, with "
                "{basis} unpaid on {generated}"
            ),
            "late_fee_basis": "Late fee basis = {basis} (unpaid balance of invoice {late_period})",
            "days_late": "Invoice {late_period} was settled on {settled}, {after} its due date ({late_due})",
        },
        plurals={
            "succeeded_payments": ("{n} payment", "{n} payments"),
            "failed_attempts": ("{n} failed attempt not counted", "{n} failed attempts not counted"),
            "days_left": ("{n} day left", "{n} days left"),
            "days": ("{n} day", "{n} days"),
            "days_after": ("{n} day after", "{n} days after"),
            "invoices": ("{n} invoice", "{n} invoices"),
            "days_overdue": ("{n} day overdue", "{n} days overdue"),
        },
    ),
)

PHRASES = {phrases.language: phrases for phrases in (ES, EN)}


def phrases_for(language: str) -> Phrases:
    """Return the phrase table of a language; raise ValueError for one billing cannot write."""
    return PHRASES[check_language(language)]
