"""Create a few Spanish and English canned replies for the desk, unless there are some already."""

from django.core.management.base import BaseCommand
from django.db import transaction

from desk.models import CannedReply

# No amounts or dates here: a figure that reaches a customer comes from the billing system, not a template.
SEED = [
    ("es", 1, "Saludo", "Hola, soy parte del equipo de atención. Ya estoy revisando tu caso."),
    ("es", 2, "Revisando la cuenta", "Estoy revisando tu cuenta en nuestro sistema de facturación; "
                                     "te escribo en unos minutos con la respuesta."),
    ("es", 3, "Cierre", "¿Hay algo más en lo que te pueda ayudar? Gracias por escribirnos."),
    ("en", 1, "Greeting", "Hi, I'm on the support team and I'm looking at your case now."),
    ("en", 2, "Checking the account", "I'm checking your account in our billing system; "
                                      "I'll get back to you here in a few minutes."),
    ("en", 3, "Closing", "Is there anything else I can help you with? Thanks for writing to us."),
]


class Command(BaseCommand):
    help = "Create 3 Spanish and 3 English canned replies if there are none (editable in the admin)."

    @transaction.atomic
    def handle(self, *args, **options):
        if CannedReply.objects.exists():
            self.stdout.write(f"{CannedReply.objects.count()} canned replies already exist; nothing created.")
            return
        CannedReply.objects.bulk_create(
            CannedReply(language=language, order=order, title=title, text=text)
            for language, order, title, text in SEED
        )
        self.stdout.write(f"Created {len(SEED)} canned replies (es, en).")
