"""Turn overhead: a whole bot turn with the template writer and the in-process billing simulator.

Target: p95 ≤ 50 ms per turn. Baseline measured in the same run: kb.search alone for the same
questions (the turn's one unavoidable cost), so the ratio says what the rest of the turn adds.

    .venv/bin/python bench/turn.py [--turns 300]

Uses its own database (tracedesk_bench_turn) on the embedded server; never touches the app's data.
"""

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
if not os.environ.get("DATABASE_URL"):
    os.environ["EMBEDDED_PG_DATABASE"] = "tracedesk_bench_turn"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.pop("CELERY_BROKER_URL", None)

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

QUESTIONS = [
    ("document", "cuanto cobran por reconexion de fibra"),
    ("document", "¿hasta qué hora atienden por WhatsApp los domingos?"),
    ("document", "What is the late fee for business accounts?"),
    ("document", "¿el plan anual se puede reembolsar si cancelo a los 10 días?"),
    ("account", "¿Por qué mi factura llegó más alta este mes?"),
    ("account", "why is my bill higher this month?"),
    ("account", "cuánto debo?"),
    ("human", "quiero hablar con una persona"),
]


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()

    from config import embedded_db

    if not os.environ.get("DATABASE_URL"):
        embedded_db.ensure_running()
    call_command("migrate", verbosity=0)
    call_command("kb_import", str(settings.KB_SAMPLE_DIR), "--no-progress", verbosity=0)

    from billing.simulator.mounted import shared_simulator
    from bot.turn import run_turn
    from bot.writer import TemplateWriter
    from desk.chat import demo_customers
    from desk.models import Contact, Conversation, Message
    from kb.search import search

    shared_simulator().set_fault(None)
    customers = [c.id for c in demo_customers()]
    writer = TemplateWriter()
    # Warm up the embedder, the simulator's dataset and the connections.
    for _, question in QUESTIONS:
        search(question)

    turn_ms, search_ms, outcomes = [], [], {}
    started = time.perf_counter()
    for index in range(args.turns):
        kind, question = QUESTIONS[index % len(QUESTIONS)]
        contact = Contact.objects.create(channel="webchat", customer_id=customers[index % len(customers)],
                                         language="es")
        conversation = Conversation.objects.create(contact=contact, channel="webchat")
        message = Message.objects.create(conversation=conversation, direction="in", author="customer",
                                         text=question, provider_message_id=f"bench-{uuid.uuid4().hex}")
        began = time.perf_counter()
        trace = run_turn(message_id=message.pk, writer=writer)
        elapsed = (time.perf_counter() - began) * 1000
        if index >= len(QUESTIONS):  # the first round is warm-up
            turn_ms.append(elapsed)
        outcomes[(kind, trace.outcome, trace.escalation_reason)] = outcomes.get(
            (kind, trace.outcome, trace.escalation_reason), 0) + 1
        began = time.perf_counter()
        search(question)
        if index >= len(QUESTIONS):
            search_ms.append((time.perf_counter() - began) * 1000)
    total_s = time.perf_counter() - started

    print(f"turns: {len(turn_ms)} timed (+{len(QUESTIONS)} warm-up), {total_s:.1f} s in all")
    for key, count in sorted(outcomes.items()):
        print(f"  {key[0]:<9} → {key[1]}{' ' + key[2] if key[2] else ''}: {count}")
    print(f"{'':32}{'p50 ms':>10}{'p95 ms':>10}")
    print(f"{'baseline: kb.search alone':32}{statistics.median(search_ms):>10.2f}{pct(search_ms, .95):>10.2f}")
    print(f"{'whole turn (template writer)':32}{statistics.median(turn_ms):>10.2f}{pct(turn_ms, .95):>10.2f}")
    ratio = pct(turn_ms, .95) / pct(search_ms, .95)
    verdict = "PASS" if pct(turn_ms, .95) <= 50 else "FAIL"
    print(f"turn p95 / search p95 = {ratio:.2f}; turn p95 target ≤ 50 ms: {verdict}")


if __name__ == "__main__":
    main()
