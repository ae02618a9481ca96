"""Play a few WhatsApp conversations through the real webhook so the desk has something to show.

Each message is a signed Cloud API webhook body, posted to the webhook view; the turn runs as
in production (eagerly without a broker). The wamids are fixed, so running it again adds
nothing: the webhook drops redeliveries.
"""

import json
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import RequestFactory

from desk.whatsapp import signature_header

# (scenario of the simulator customer, messages: (kind, text)). The billing outage is injected
# for the one conversation flagged with fault.
SCRIPT = [
    ("technical_visit", [("text", "¿Por qué mi factura llegó más alta este mes?")], None),
    ("promotion_ended", [("text", "cuanto cobran por reconexion de fibra")], None),
    ("late_fee", [("text", "¿Qué pasa si pago la factura después del vencimiento?")], None),
    ("duplicate_charge", [("text", "quiero hablar con una persona, me cobraron dos veces")], None),
    ("plan_upgrade_proration", [("text", "quiero cancelar el servicio")], None),
    ("reconnection_fee", [("image", "")], None),
    ("tax_rate_change", [("text", "¿cuál es la capital de Francia?")], None),
    ("payment_failed_then_succeeded", [("text", "¿Por qué mi factura subió?")], "503"),
    ("unchanged", [("text", "What are your support hours on Sundays?")], None),
]


def _body(*, wa_id: str, name: str, wamid: str, kind: str, text: str) -> dict:
    message = {"from": wa_id, "id": wamid, "timestamp": str(int(time.time())), "type": kind}
    if kind == "text":
        message["text"] = {"body": text}
    else:
        message[kind] = {"id": f"media-{wamid}", "mime_type": "image/jpeg"}
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "demo-waba", "changes": [{"field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "582125550100", "phone_number_id": "demo-phone-number-id"},
            "contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
            "messages": [message],
        }}]}],
    }


class Command(BaseCommand):
    help = "Send demo WhatsApp conversations through the signed webhook (idempotent)."

    def handle(self, *args, **options):
        from bot.billing.simulator.data import build_dataset
        from bot.billing.simulator.mounted import shared_simulator
        from desk.webhooks import whatsapp_webhook

        secret = settings.WHATSAPP_APP_SECRET
        if not secret:
            raise CommandError("WHATSAPP_APP_SECRET is not set: the webhook refuses unsigned bodies. "
                               "`make demo` sets a demo secret; set one yourself to run this by hand.")
        if settings.BILLING_API_BASE_URL:
            raise CommandError("demo_conversations plays simulator customers; unset BILLING_API_BASE_URL.")
        dataset = build_dataset()
        by_scenario = {}
        for account in dataset.accounts.values():
            by_scenario.setdefault(account.scenario, account.customer)
        factory = RequestFactory()
        simulator = shared_simulator()
        for number, (scenario, messages, fault) in enumerate(SCRIPT, start=1):
            customer = by_scenario[scenario]
            simulator.set_fault(fault)
            try:
                for index, (kind, text) in enumerate(messages, start=1):
                    raw = json.dumps(_body(wa_id=customer.whatsapp_id, name=customer.name,
                                           wamid=f"wamid.demo-{number}-{index}", kind=kind, text=text)).encode()
                    request = factory.post("/webhooks/whatsapp/", data=raw, content_type="application/json",
                                           HTTP_X_HUB_SIGNATURE_256=signature_header(raw, secret))
                    response = whatsapp_webhook(request)
                    if response.status_code != 200:
                        raise CommandError(f"webhook answered {response.status_code}: {response.content[:200]!r}")
            finally:
                simulator.set_fault(None)
            self.stdout.write(f"  {customer.name} ({scenario}): {messages[-1][1] or '[' + messages[-1][0] + ']'}")
        self.stdout.write("Demo WhatsApp conversations are in the desk (log in as agent).")
