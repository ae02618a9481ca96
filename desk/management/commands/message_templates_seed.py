"""Create sample WhatsApp message templates (Spanish and English) for the desk, unless there are some already."""

from django.core.management.base import BaseCommand
from django.db import transaction

from desk.models import MessageTemplate

# (name, language, body, what pre-fills each variable, quick replies). A template reaches a customer only if Meta
# approved one with the same name and language, so these are written as pending unless --approved.
SEED = [
    ("saldo_pendiente", "es", "Hola {{1}}, su factura de {{2}} está disponible. Responda a este mensaje si tiene "
                              "alguna duda.", ["customer_name", "amount_due"], ["Tengo una duda"]),
    ("nota_credito_emitida", "es", "Hola {{1}}, registramos la nota de crédito {{2}} en su cuenta. Gracias por su "
                                   "paciencia.", ["customer_name", "credit_note"], []),
    ("seguimiento_caso", "es", "Hola {{1}}, seguimos revisando su caso. ¿Podemos continuar la conversación por "
                               "aquí?", ["customer_name"], ["Sí, continuemos", "Ya está resuelto"]),
    ("balance_due", "en", "Hi {{1}}, your invoice of {{2}} is ready. Reply to this message if you have any "
                          "questions.", ["customer_name", "amount_due"], ["I have a question"]),
    ("case_follow_up", "en", "Hi {{1}}, we are still looking into your case. Can we continue the conversation "
                             "here?", ["customer_name"], ["Yes, let's continue", "It's solved"]),
]


class Command(BaseCommand):
    help = ("Create sample WhatsApp message templates (es, en) if there are none; pending unless --approved "
            "(the demo marks them approved: a real number needs Meta's approval of each).")

    def add_arguments(self, parser):
        parser.add_argument("--approved", action="store_true",
                            help="mark them approved (demo: no message really reaches WhatsApp)")

    @transaction.atomic
    def handle(self, *args, approved=False, **options):
        if MessageTemplate.objects.exists():
            self.stdout.write(f"{MessageTemplate.objects.count()} message templates already exist; nothing created.")
            return
        status = MessageTemplate.Status.APPROVED if approved else MessageTemplate.Status.PENDING
        MessageTemplate.objects.bulk_create(
            MessageTemplate(name=name, language=language, category=MessageTemplate.Category.UTILITY, body=body,
                            variable_sources=sources, buttons=buttons, status=status)
            for name, language, body, sources, buttons in SEED)
        self.stdout.write(f"Created {len(SEED)} message templates (es, en), {status.label.lower()}.")
