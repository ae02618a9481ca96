#!/usr/bin/env python
"""Capacity: the whole path at steady rates — signed webhook → gunicorn → broker → Celery turn → Graph API send.

    .venv/bin/python bench/capacity.py [--rates 2,5,10,20,40] [--seconds 60] [--workers 1,2,4]
                                       [--writers template,model] [--model-delay 0.8] [--quick]

The deployment is bench/stack.py's with production settings: gunicorn (2 workers), a Celery worker with 1, 2
or 4 prefork processes and beat on a private Redis, the in-process billing simulator, retrieval on an embedded
PostgreSQL of the bench's own, and a Graph API that records when each reply arrives. Customers each write once
(a mix of document, account and "a person, please" questions), open loop: message i is due at start + i/rate
whatever happened before, and its latency runs from that moment to its reply at the Graph API.

Writers: the template writer, and a fake model (a local chat-completions server answering after
--model-delay seconds, as a hosted model would; a rewrite is another call).

Per rate it prints answered turns/s (answered ÷ time from the first message due to the last reply), p50/p95
latency, the broker's queue depth (max, mean), CPU seconds per turn over every process of the deployment
(web, worker, beat, PostgreSQL), unique memory per worker process, messages lost or answered twice, and the
machine's load average; then where throughput stops growing (the first rate answered at less than 90 % of
what was offered). Each writer and worker count gets a fresh database. --quick: 15 s per rate.

Targets on a 2-core machine with the template writer: ≥ 15 answered turns/s sustained; p95 ≤ 2 s at 10
msg/s; offered 20 or 40 msg/s it keeps answering at its capacity, every message answered once.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import stack as bench  # noqa: E402
from bench.chaos import MIXED  # noqa: E402

DB_NAME = "tracedesk_bench_capacity"


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class DepthSampler:
    """Sample the broker's queue depth every half second while a rate runs."""

    def __init__(self, deployment: bench.Stack):
        self.deployment = deployment
        self.samples: list[int] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopped.wait(0.5):
            depth = self.deployment.queue_depth()
            if depth >= 0:
                self.samples.append(depth)

    def stop(self) -> tuple[int, float]:
        self.stopped.set()
        self.thread.join()
        return (max(self.samples) if self.samples else 0), (statistics.fmean(self.samples) if self.samples else 0.0)


def run_rate(deployment: bench.Stack, rate: float, seconds: float, *, drain_s: float) -> dict:
    customers = bench.Customers(deployment.web_url, run_id=uuid.uuid4().hex[:4], connections=32)
    count = max(1, int(rate * seconds))
    texts = [MIXED[i % len(MIXED)] for i in range(count)]
    sampler = DepthSampler(deployment)
    cpu_before = bench.cpu_seconds(deployment.app_pids())
    load_before = os.getloadavg()[0]
    messages = customers.burst(texts, rate=rate)
    bench.wait_for_answers(deployment.graph, messages, deadline_s=drain_s, quiet_s=2)
    cpu_after = bench.cpu_seconds(deployment.app_pids())
    depth_max, depth_mean = sampler.stop()
    replies = {m.wa_id: deployment.graph.replies(m.wa_id) for m in messages}
    answered = [m for m in messages if replies[m.wa_id]]
    latencies = [replies[m.wa_id][0] - m.due for m in answered]
    span = (max(replies[m.wa_id][0] for m in answered) - messages[0].due) if answered else float("nan")
    return {
        "rate": rate, "sent": len(messages), "answered": len(answered),
        "throughput": len(answered) / span if answered else 0.0,
        "p50": pct(latencies, 0.50), "p95": pct(latencies, 0.95),
        "depth_max": depth_max, "depth_mean": depth_mean,
        "cpu_ms_per_turn": 1000 * (cpu_after - cpu_before) / max(1, len(answered)),
        "lost": len(messages) - len(answered), "doubled": sum(1 for m in answered if len(replies[m.wa_id]) > 1),
        "non_200": sum(1 for m in messages for _, status in m.posts if status != 200),
        "load": (load_before + os.getloadavg()[0]) / 2,
    }


def warm_up(deployment: bench.Stack) -> float:
    """Answer a few messages so every process has served one; return the slowest first reply (seconds)."""
    customers = bench.Customers(deployment.web_url, run_id="0000")
    messages = customers.burst(MIXED[:4] * max(1, deployment.worker_concurrency), rate=4)
    bench.wait_for_answers(deployment.graph, messages, deadline_s=180, quiet_s=0)
    return max((deployment.graph.replies(m.wa_id) or [float("nan")])[0] - m.due for m in messages)


def print_header(writer: str, workers: int, memory: list[float], warm_s: float) -> None:
    mem = f"{statistics.fmean(memory):.0f} MB" if memory else "?"
    print(f"\n{writer} writer, {workers} worker process{'es' if workers > 1 else ''} "
          f"(unique memory per worker process {mem}; slowest warm-up reply {warm_s:.2f} s)", flush=True)
    print(f"{'offered/s':>9} {'sent':>6} {'answered/s':>10} {'p50 s':>7} {'p95 s':>7} {'queue max':>9} "
          f"{'queue mean':>10} {'CPU ms/turn':>11} {'lost':>5} {'doubled':>7} {'load':>5}", flush=True)


def print_row(row: dict) -> None:
    print(f"{row['rate']:>9g} {row['sent']:>6} {row['throughput']:>10.1f} {row['p50']:>7.2f} {row['p95']:>7.2f} "
          f"{row['depth_max']:>9} {row['depth_mean']:>10.1f} {row['cpu_ms_per_turn']:>11.0f} {row['lost']:>5} "
          f"{row['doubled']:>7} {row['load']:>5.1f}", flush=True)


def knee(rows: list[dict]) -> str:
    for row in rows:
        if row["throughput"] < 0.9 * row["rate"]:
            best = max(r["throughput"] for r in rows)
            return (f"throughput stops growing at {row['rate']:g} msg/s offered: {row['throughput']:.1f} answered/s "
                    f"(best {best:.1f}/s)")
    return f"throughput grows with every rate offered, up to {rows[-1]['throughput']:.1f} answered/s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="2,5,10,20,40")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--writers", default="template,model")
    parser.add_argument("--model-delay", type=float, default=0.8)
    parser.add_argument("--drain", type=float, default=400.0, help="seconds a rate's backlog may take to drain")
    parser.add_argument("--quick", action="store_true", help="15 s per rate")
    args = parser.parse_args()
    seconds = 15.0 if args.quick else args.seconds
    rates = [float(r) for r in args.rates.split(",")]
    workers_list = [int(w) for w in args.workers.split(",")]
    writers = [w.strip() for w in args.writers.split(",")]

    bench.django_environment(DB_NAME)
    print(f"capacity: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before the run; "
          f"{seconds:g} s per rate", flush=True)
    missed = []
    for writer in writers:
        model = bench.FakeModel(args.model_delay) if writer == "model" else None
        label = f"fake model ({args.model_delay:g} s)" if model else "template"
        for workers in workers_list:
            bench.prepare_database(DB_NAME)
            deployment = bench.Stack(db_name=DB_NAME, run_dir=bench.temp_run_dir("capacity-"), billing="inprocess",
                                     worker_concurrency=workers, model=model,
                                     extra_env={"EMBEDDINGS_CACHE_DIR": ""})  # production's default
            try:
                deployment.start()
                warm_s = warm_up(deployment)
                print_header(label, workers, bench.memory_mb(deployment.worker_children()), warm_s)
                rows = []
                for rate in rates:
                    row = run_rate(deployment, rate, seconds, drain_s=args.drain)
                    rows.append(row)
                    print_row(row)
                    bench.wait_for(lambda: deployment.queue_depth() == 0, deadline_s=args.drain,
                                   what="the queue drained")
                print(f"  {knee(rows)}; memory per worker process now "
                      f"{statistics.fmean(bench.memory_mb(deployment.worker_children()) or [0]):.0f} MB", flush=True)
                missed += [f"{label}/{workers}: {r['lost']} lost, {r['doubled']} doubled at {r['rate']:g}/s"
                           for r in rows if r["lost"] or r["doubled"]]
            finally:
                deployment.stop()
        if model is not None:
            model.close()
    from config import embedded_db

    embedded_db.stop()
    print(f"\ncapacity: load average {os.getloadavg()[0]:.1f} at the end")
    if missed:
        print("capacity: messages lost or doubled — " + "; ".join(missed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
