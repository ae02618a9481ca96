#!/usr/bin/env python
"""The fault run: real parts on loopback, a bounded burst of customers per fault, and what became of each message.

    .venv/bin/python bench/chaos.py [--faults db_restart,broker_restart,worker_kill,redis_down,billing_down]
                                    [--messages 120] [--rate 10] [--keep-logs]

`make chaos` runs every fault; `make chaos-ci` (in .ci/run) only the database restart, bounded to a few
minutes. The deployment (bench/stack.py): gunicorn (2 workers), a Celery worker (2 processes) and beat on a
private Redis broker, the breaker's state in a second private Redis, the billing simulator on its own port,
a Graph API that records every send, and an embedded PostgreSQL of the bench's own — all with production
settings (debug off). Each fault gets a fresh database and a burst of signed webhook posts from customers who
each write once (so a reply's recipient names its message); a post answered anything but 200 is delivered
again after 1, 2, 4, 8 s, as Meta does.

Faults, each injected while its burst is a third through:
- db_restart: `pg_ctl restart -m fast` of the embedded server (every connection cut, the server down a moment);
- broker_restart: the broker's Redis stopped and started again 3 s later, losing its queue (no persistence);
- worker_kill: `kill -9` of the worker process running a turn that has not finished (billing answers in 2.5 s,
  so turns are long enough to be caught);
- redis_down: the breaker's Redis killed for the rest of the burst (the breaker fails open);
- billing_down: the billing API killed, started again 10 s later (turns escalate: "te paso con una persona").

Per fault it prints: messages sent, webhook posts (with redeliveries) and non-200 answers, rows stored,
messages answered exactly once, lost (no reply), doubled (more than one), and the seconds to recover: from the
fault until every message sent up to the fault's end had its reply. Target: 0 lost, 0 doubled, the killed
worker's turn answered within 60 s. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import stack as bench  # noqa: E402

DB_NAME = "tracedesk_bench_chaos"
DOCUMENT = ["¿cuánto cobran por la reconexión del servicio de fibra?",
            "¿hasta qué hora atienden por WhatsApp los domingos?",
            "What is the late fee for business accounts?",
            "¿el plan anual se puede reembolsar si cancelo a los 10 días?"]
ACCOUNT = ["¿cuánto debo este mes?", "why is my bill higher this month?"]
PERSON = ["quiero hablar con una persona"]
MIXED = [DOCUMENT[0], ACCOUNT[0], DOCUMENT[1], PERSON[0], DOCUMENT[2], ACCOUNT[1], DOCUMENT[3]]
KILLED_TARGET_S = 60.0
FAULTS = ["db_restart", "broker_restart", "worker_kill", "redis_down", "billing_down"]


@dataclass
class Fault:
    name: str
    started: float | None = None
    ended: float | None = None
    notes: list[str] = field(default_factory=list)
    killed_wa_id: str = ""


def inject(name: str, deployment: bench.Stack, fault: Fault) -> None:
    """Do the fault (called in its own thread when the burst reaches it)."""
    fault.started = time.time()
    if name == "db_restart":
        took = bench.database_restart()
        fault.notes.append(f"pg_ctl restart took {took:.1f} s")
    elif name == "broker_restart":
        deployment.stop_part("broker")
        time.sleep(3)  # the broker stays away for a moment, as a restart of a busy host does
        deployment.start_redis("broker")
    elif name == "worker_kill":
        fault.killed_wa_id = kill_a_running_turn(deployment, fault)
    elif name == "redis_down":
        deployment.stop_part("breaker", sig=signal.SIGKILL)
    elif name == "billing_down":
        deployment.stop_part("billing", sig=signal.SIGKILL)
        time.sleep(10)
        deployment.start_billing()
    fault.ended = time.time()


def kill_a_running_turn(deployment: bench.Stack, fault: Fault) -> str:
    """kill -9 the worker process that runs a bot turn now; return the wa_id of the customer it was answering."""
    deadline = time.time() + 30
    while time.time() < deadline:
        try:  # a fresh client each time: the broker may have been restarted by the fault before
            active = deployment.celery_client().control.inspect(timeout=1).active() or {}
        except Exception as exc:  # noqa: BLE001 - the broker is still coming back: ask again
            fault.notes.append(f"inspect failed once: {type(exc).__name__}")
            time.sleep(0.5)
            continue
        for tasks in active.values():
            for task in tasks:
                if task.get("name") == "bot.handle_inbound" and task.get("worker_pid"):
                    message_id = int(task["args"][0])
                    if _answered(message_id):  # inspect's answer is a second old: that turn is over
                        continue
                    os.kill(task["worker_pid"], signal.SIGKILL)
                    fault.started = time.time()
                    fault.notes.append(f"killed worker process {task['worker_pid']} during the turn of message "
                                       f"{message_id}")
                    return _wa_id_of(message_id)
    fault.notes.append("no turn was running to kill within 30 s")
    return ""


def _answered(message_id: int) -> bool:
    from django.db import close_old_connections

    from traces.models import Trace

    close_old_connections()
    return Trace.objects.filter(message_id=message_id).exists()


def _wa_id_of(message_id: int) -> str:
    from django.db import close_old_connections

    from desk.models import Message

    close_old_connections()
    return Message.objects.filter(pk=message_id).values_list("conversation__contact__wa_id", flat=True).first()


def burst_texts(name: str, count: int) -> list[str]:
    if name == "worker_kill":
        return [ACCOUNT[i % len(ACCOUNT)] for i in range(count)]
    return [MIXED[i % len(MIXED)] for i in range(count)]


def run_fault(name: str, deployment: bench.Stack, args) -> dict:
    """Play one fault during its burst; return its row of the table."""
    run_id = uuid.uuid4().hex[:4]
    customers = bench.Customers(deployment.web_url, run_id=run_id)
    count, rate = (args.messages, args.rate) if name != "worker_kill" else (20, 1.0)
    fault = Fault(name)
    if name == "worker_kill":
        deployment.billing_fault("latency:2500")  # turns last a few seconds, so the kill lands inside one
    threads = []

    def at_index(i: int):
        if i == count // 3:
            thread = threading.Thread(target=inject, args=(name, deployment, fault))
            threads.append(thread)
            thread.start()

    messages = customers.burst(burst_texts(name, count), rate=rate, at_index=at_index)
    for thread in threads:
        thread.join()
    if name == "worker_kill":
        deployment.billing_fault(None)
    bench.wait_for_answers(deployment.graph, messages, deadline_s=args.answer_deadline, quiet_s=args.quiet)
    if name == "redis_down":
        deployment.start_redis("breaker")

    replies = {m.wa_id: deployment.graph.replies(m.wa_id) for m in messages}
    once = sum(1 for m in messages if len(replies[m.wa_id]) == 1)
    lost = [m for m in messages if not replies[m.wa_id]]
    doubled = [m for m in messages if len(replies[m.wa_id]) > 1]
    posts = sum(len(m.posts) for m in messages)
    non_200 = sum(1 for m in messages for _, status in m.posts if status != 200)
    before_end = [replies[m.wa_id][0] for m in messages if m.due <= (fault.ended or 0) and replies[m.wa_id]]
    recover = (max(before_end) - fault.started) if before_end and fault.started else float("nan")
    killed = None
    if fault.killed_wa_id:
        answers = replies.get(fault.killed_wa_id) or deployment.graph.replies(fault.killed_wa_id)
        killed = (answers[0] - fault.started) if answers else float("inf")
    return {"fault": name, "sent": len(messages), "posts": posts, "non_200": non_200,
            "stored": bench.stored_count([m.wamid for m in messages]), "once": once, "lost": len(lost),
            "doubled": len(doubled), "recover_s": recover, "killed_answer_s": killed, "notes": fault.notes,
            "lost_wamids": [m.wamid for m in lost][:5], "doubled_wamids": [m.wamid for m in doubled][:5]}


def warm_up(deployment: bench.Stack) -> None:
    """Send one message of each kind and wait for the replies: every worker process has loaded its models."""
    customers = bench.Customers(deployment.web_url, run_id="0000")
    messages = customers.burst(MIXED * deployment.worker_concurrency, rate=5)
    bench.wait_for_answers(deployment.graph, messages, deadline_s=180, quiet_s=0)


def drained(deployment: bench.Stack, row: dict) -> None:
    """Wait for the broker's queue to empty before the next fault; note it when it does not within 5 minutes."""
    try:
        bench.wait_for(lambda: deployment.queue_depth() == 0, deadline_s=300, what="the broker's queue drained")
    except RuntimeError:
        row["notes"].append(f"the broker still held {deployment.queue_depth()} tasks 5 minutes after the burst")


def print_table(rows: list[dict]) -> None:
    header = (f"{'fault':<15} {'sent':>5} {'posts':>6} {'non-200':>8} {'stored':>7} {'answered once':>14} "
              f"{'lost':>5} {'doubled':>8} {'recover s':>10}")
    print("\n" + header)
    print("-" * len(header))
    for row in rows:
        print(f"{row['fault']:<15} {row['sent']:>5} {row['posts']:>6} {row['non_200']:>8} {row['stored']:>7} "
              f"{row['once']:>14} {row['lost']:>5} {row['doubled']:>8} {row['recover_s']:>10.1f}")
    for row in rows:
        extra = list(row["notes"])
        if row["killed_answer_s"] is not None:
            extra.append(f"the killed turn's customer was answered {row['killed_answer_s']:.1f} s after the kill "
                         f"(target ≤ {KILLED_TARGET_S:.0f} s)")
        if row["lost_wamids"]:
            extra.append(f"lost: {row['lost_wamids']}")
        if row["doubled_wamids"]:
            extra.append(f"doubled: {row['doubled_wamids']}")
        for note in extra:
            print(f"  {row['fault']}: {note}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--messages", type=int, default=120)
    parser.add_argument("--rate", type=float, default=10.0)
    parser.add_argument("--answer-deadline", type=float, default=180.0,
                        help="seconds after the burst a message may still be answered")
    parser.add_argument("--quiet", type=float, default=20.0, help="seconds to watch for late doubles")
    parser.add_argument("--keep-logs", action="store_true")
    args = parser.parse_args()
    names = [name.strip() for name in args.faults.split(",") if name.strip()]
    unknown = set(names) - set(FAULTS)
    if unknown:
        parser.error(f"unknown faults {sorted(unknown)}; choose among {FAULTS}")

    bench.django_environment(DB_NAME)
    began = time.time()
    bench.prepare_database(DB_NAME)
    run_dir = bench.temp_run_dir("chaos-")
    deployment = bench.Stack(db_name=DB_NAME, run_dir=run_dir)
    rows = []
    try:
        deployment.start()
        print(f"chaos: the deployment is up ({time.time() - began:.0f} s, logs in {run_dir})", flush=True)
        warm_up(deployment)
        for name in names:
            print(f"chaos: {name} …", flush=True)
            rows.append(run_fault(name, deployment, args))
            drained(deployment, rows[-1])
    finally:
        deployment.stop()
        from config import embedded_db

        embedded_db.stop()
    print_table(rows)
    print(f"\nchaos: {time.time() - began:.0f} s in all; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    if not args.keep_logs:
        import shutil

        shutil.rmtree(run_dir, ignore_errors=True)
    failed = [r["fault"] for r in rows if r["lost"] or r["doubled"]
              or (r["killed_answer_s"] is not None and r["killed_answer_s"] > KILLED_TARGET_S)]
    if any(r["fault"] == "worker_kill" and r["killed_answer_s"] is None for r in rows):
        failed.append("worker_kill (no turn was killed)")
    if failed:
        print(f"chaos: FAILED — {', '.join(failed)}")
        return 1
    print("chaos: every message stored and answered once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
