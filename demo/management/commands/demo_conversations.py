"""Play a few WhatsApp conversations through the real webhook so the desk has something to show.

Each message is a signed Cloud API webhook body, posted to the webhook view; the turn runs as
in production (eagerly without a broker). The wamids are fixed, so running it again adds
nothing: the webhook drops redeliveries.

Then the review side of the demo: a review session over these traces in which the worst
retrieval failure is coded — the English downgrade question that the sample KB answers from the
annual-plan refund policy while the proration document, which says a downgrade gives no money back,
ranks fifth — with a fail note at stage "retrieval" in a failure class, and a golden set "demo" holding
that trace's case (hit: proration-en) plus a few sample cases. A KB editor takes it from there.
"""

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import RequestFactory

from core import clock
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
    # g028 of evals/fixtures/golden.jsonl: proration-en is not the first document the bot reads (the failed-debit
    # page is) — the review below codes it as the worst retrieval failure.
    ("new_customer", [("text", "if i downgrade mid month do i get money back for the days left")], None),
]
RETRIEVAL_FAILURE = len(SCRIPT)  # the script entry whose trace the demo review codes as a retrieval failure
REVIEW_SESSION = "Demo review: WhatsApp conversations"
FAILURE_CLASS = ("Right document not retrieved", "The document that answers the question ranked below "
                 "documents about something else, so the writer answered from the wrong policy.")
FAILURE_NOTE = ("Retrieval ranked another policy first; proration-en, which says a downgrade gives no money "
                "back, was not the first document.")
GOLDEN_SET = "demo"
GOLDEN_FILE = Path(__file__).resolve().parents[3] / "evals" / "fixtures" / "golden.jsonl"
GOLDEN_SAMPLE_CASES = ["g027", "g028", "g026", "g029", "g001"]


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
        from billing.simulator.data import build_dataset
        from billing.simulator.mounted import shared_simulator
        from desk.webhooks import whatsapp_webhook

        secret = settings.WHATSAPP_APP_SECRET
        if not secret:
            raise CommandError("WHATSAPP_APP_SECRET is not set: the webhook refuses unsigned bodies. "
                               "`make demo` sets a demo secret; set one yourself to run this by hand.")
        if settings.BILLING_API_BASE_URL:
            raise CommandError("demo_conversations plays simulator customers; unset BILLING_API_BASE_URL.")
        dataset = build_dataset(as_of=clock.today())
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
        session, trace = demo_review_seed()
        self.stdout.write(f"Review session {session.pk} “{session.name}”: trace {trace.pk} coded as a "
                          f"retrieval failure; golden set “{GOLDEN_SET}” holds its case (log in as analyst, "
                          "then as editor).")


def demo_review_seed():
    """Code the demo's worst retrieval failure in a review session and put its case in golden set "demo".

    Idempotent: a second run finds the session, note, class and cases and changes nothing.
    """
    from django.db import transaction

    from bot.turn import run_turn
    from desk.models import Message
    from traces.models import Trace

    message = Message.objects.get(provider_message_id=f"wamid.demo-{RETRIEVAL_FAILURE}-1")
    trace = Trace.objects.filter(message=message).first()
    if trace is None:
        # The webhook queued the turn on commit; inside an outer transaction (tests) it has not run yet.
        # Claiming is atomic, so the queued task later finds the message handled and does nothing.
        trace = run_turn(message_id=message.pk) or Trace.objects.get(message=message)
    with transaction.atomic():
        session = _review_session(trace)
        _golden_set(trace)
    return session, trace


def demo_analyst():
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from core.roles import ensure_roles

    ensure_roles()
    user, created = get_user_model().objects.get_or_create(username="analyst")
    if created:  # `make demo` runs demo_users first; by hand this user gets no password until it does
        user.set_unusable_password()
        user.save(update_fields=["password"])
        user.groups.add(Group.objects.get(name="analyst"))
    return user


def _review_session(trace):
    from datetime import timedelta

    from django.db.models import Max, Min

    from traces import services
    from traces.models import ReviewNote, ReviewSession, Trace

    analyst = demo_analyst()
    session = ReviewSession.objects.filter(name=REVIEW_SESSION).first()
    if session is None:
        demo = Trace.objects.filter(provider_message_id__startswith="wamid.demo-")
        window = demo.aggregate(start=Min("created_at"), end=Max("created_at"))
        session = services.review_session_create(
            name=REVIEW_SESSION, window_start=window["start"] - timedelta(minutes=1),
            window_end=window["end"] + timedelta(minutes=1), size=demo.count(),
            filters={"channel": "whatsapp"}, seed=2026, created_by=analyst)
    # The draw is uniform; the failure must be in it (added after the drawn ones unless drawn).
    services.review_session_add_traces(session=session, trace_ids=[trace.pk])
    note = ReviewNote.objects.filter(session=session, trace=trace, author=analyst).first()
    if note is None:
        note = services.review_note_save(session=session, trace=trace, author=analyst, verdict="fail",
                                         first_failure=FAILURE_NOTE, stage="retrieval", model_faithful=True)
    # The team's class of that name: made by the first run, returned by the next ones (the taxonomy is the
    # team's, so a class of one name is never made twice, whichever session asks).
    failure_class = services.failure_class_create(session=session, name=FAILURE_CLASS[0],
                                                  definition=FAILURE_CLASS[1], stage="retrieval",
                                                  actor=analyst)
    if note.failure_class_id is None:
        services.review_notes_assign(session=session, note_ids=[note.pk], failure_class=failure_class,
                                     actor=analyst)
    return session


def _golden_set(trace):
    from evals import services
    from evals.golden import read_golden_rows
    from evals.models import GoldenCase, GoldenSet

    golden_set, _ = GoldenSet.objects.get_or_create(name=GOLDEN_SET)
    if golden_set.cases.filter(trace=trace).exists():
        return golden_set
    rows = {row["id"]: row for row in read_golden_rows(GOLDEN_FILE)}
    taken = set(golden_set.cases.values_list("case_id", flat=True))
    GoldenCase.objects.bulk_create([
        GoldenCase(golden_set=golden_set, case_id=rows[case_id]["id"], query=rows[case_id]["query"],
                   hits=rows[case_id]["hits"], hard_negatives=rows[case_id]["hard_negatives"],
                   must_pass=rows[case_id]["must_pass"], facts=rows[case_id]["facts"])
        for case_id in GOLDEN_SAMPLE_CASES if case_id in rows and case_id not in taken])
    # The trace's own case: what the customer asked, the document that answers it, the one that won instead.
    GoldenCase.objects.create(golden_set=golden_set, case_id=f"t{trace.pk}", query=trace.query,
                              customer_id=trace.customer_id or "", hits=["proration-en"],
                              hard_negatives=["annual-plan-refund-en"], origin=GoldenCase.Origin.TRACE,
                              trace=trace)
    services.golden_set_bump(golden_set=golden_set, note=f"demo: case t{trace.pk} from the coded retrieval "
                                                         f"failure, with sample cases")
    return golden_set
