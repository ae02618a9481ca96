#!/usr/bin/env python
"""WhatsApp webhook acknowledgement under load: p50/p95/p99 at a fixed rate, every message stored once.

    .venv/bin/python bench/webhook.py [--rate 200] [--seconds 60] [--redeliveries 0.05]
                                      [--processes N] [--threads 16] [--connections 16]
                                      [--new-connection-per-request] [--broker URL] [--keep]

Three processes, as in production: this one (setup and verification), the app served by a real
WSGI server in a subprocess, and the load generator in a second subprocess.

* Server: the TraceDesk WSGI application (DEBUG off) behind the standard library's HTTP server:
  one worker process per CPU (at most 4, `--processes`) forked on a shared listening socket,
  each with a fixed pool of threads (socketserver + Django's keep-alive request handler), so a
  thread keeps its database connection between requests the way a gunicorn gthread or waitress
  worker does. No third-party server is needed.
* Queue: CELERY_BROKER_URL points at Redis database 14 (`--broker`), so every stored message's
  turn is really published, as in production, and no worker consumes it: the turn never runs.
  The queued task messages are counted and their message ids checked for duplicates afterwards.
* Database: its own, `tracedesk_bench_webhook` on the embedded server (or `<name>_bench_webhook`
  on the server of DATABASE_URL), created and migrated at every run, dropped at the end
  unless --keep.
* Load: open loop. Request i is due at start + i/rate whatever happened before; latency is
  measured from that due time, so a slow server cannot hide its queueing (no coordinated
  omission). Bodies are real Cloud API webhooks (text 92 %, image 5 %, reaction 3 %, from 2,000
  senders), signed with the app secret, with unique wamids; a share (`--redeliveries`) are
  byte-identical redeliveries of a recent body, some of them still in flight.
* Baseline, same run, same server, same rate: the GET verification handshake (middleware and
  view, no signature, no database). The ratio webhook p95 / baseline p95 is printed.

The target: p95 ≤ 30 ms at 200 messages/s for 60 s, every message stored exactly once.
Exit status 1 when a message is missing, stored twice or queued twice; latency is reported, not asserted.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import random
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

BASE_DIR = Path(__file__).resolve().parent.parent
if str(BASE_DIR) not in sys.path:
    sys.path.insert(0, str(BASE_DIR))

BENCH_DB_SUFFIX = "_bench_webhook"
EMBEDDED_BENCH_DB = "tracedesk" + BENCH_DB_SUFFIX
APP_SECRET = "bench-app-secret"
VERIFY_TOKEN = "bench-verify-token"
PATH = "/webhooks/whatsapp/"
TARGET_P95_MS = 30.0
SENDERS = 2_000


# --------------------------------------------------------------------------------------------
# Server process
# --------------------------------------------------------------------------------------------

def serve(port: int, threads: int, processes: int) -> None:
    """Serve the app on 127.0.0.1:port from `processes` forked workers with a fixed thread pool each.

    Print 'READY <port> <pid …>' once every worker listens. The workers share one listening
    socket, as gunicorn's do; no database connection exists before the fork.
    """
    import django

    django.setup()
    from django.core.servers.basehttp import WSGIRequestHandler, WSGIServer
    from django.core.wsgi import get_wsgi_application

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, *args):  # one log line per request would be measured too
            pass

    class PooledWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
        # ThreadingMixIn only so Django's handler allows keep-alive; requests go to the pool below.
        request_queue_size = 256
        daemon_threads = True

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="wsgi")

        def process_request(self, request, client_address):
            self.pool.submit(self._serve_connection, request, client_address)

        def _serve_connection(self, request, client_address):
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    class Listener(WSGIServer):
        request_queue_size = 256

    listener = Listener(("127.0.0.1", port), QuietHandler)
    application = get_wsgi_application()
    pids = []
    for _ in range(processes):
        pid = os.fork()
        if pid == 0:
            server = PooledWSGIServer(("127.0.0.1", 0), QuietHandler, bind_and_activate=False)
            server.socket.close()
            server.socket = listener.socket  # accept() on the shared socket
            server.server_address = listener.server_address
            server.server_name, server.server_port = listener.server_name, listener.server_port
            server.base_environ = dict(listener.base_environ)
            server.set_app(application)
            try:
                server.serve_forever(poll_interval=0.1)
            finally:
                os._exit(0)
        pids.append(pid)
    print(f"READY {listener.server_address[1]} {' '.join(map(str, pids))}", flush=True)
    import signal

    def stop(*_):
        for child in pids:
            os.kill(child, signal.SIGTERM)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    for _ in pids:
        os.wait()


# --------------------------------------------------------------------------------------------
# Load generator process
# --------------------------------------------------------------------------------------------

def _webhook_requests(*, count: int, redeliveries: float, run_id: str, seed: int) -> tuple[list, dict]:
    """Return `count` signed webhook requests and what they contain (unique wamids, kinds)."""
    from desk.whatsapp import signature_header
    from tests.support.fake_graph import change_value, inbound_message, webhook_body

    rng = random.Random(seed)
    senders = [f"58412{n:07d}" for n in range(SENDERS)]
    requests, unique, silent = [], [], 0
    for i in range(count):
        if unique and rng.random() < redeliveries:
            # A byte-identical redelivery of one of the last 50 bodies: some are still in flight.
            requests.append(requests[rng.randrange(max(0, len(requests) - 50), len(requests))])
            continue
        wa_id = rng.choice(senders)
        wamid = f"wamid.BENCH{run_id}{len(unique):08d}"
        roll = rng.random()
        sent = {"wa_id": wa_id, "wamid": wamid, "timestamp": int(time.time())}
        if roll > 0.97:
            message = inbound_message("reaction", **sent,
                                      reaction={"message_id": f"wamid.OUT{i}", "emoji": "\U0001F44D"})
            silent += 1
        elif roll > 0.92:
            message = inbound_message("image", **sent, image={"id": str(10**15 + i), "mime_type": "image/jpeg",
                                                               "sha256": "a" * 44, "caption": "mi comprobante"})
        else:
            message = inbound_message(
                **sent, text={"body": f"Hola, ¿cuál es el saldo de mi factura de este mes? ({i})"})
        body = webhook_body(change_value(messages=[message]))
        raw = json.dumps(body, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "facebookexternalua",
                   "X-Hub-Signature-256": signature_header(raw, APP_SECRET)}
        requests.append(("POST", PATH, raw, headers, wamid))
        unique.append(wamid)
    return requests, {"unique": unique, "silent": silent}


def _handshake_requests(count: int) -> list:
    def query(i: int) -> str:
        return urlencode({"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": str(i)})

    return [("GET", f"{PATH}?{query(i)}", None, {}, None) for i in range(count)]


def run_load(*, port: int, requests: list, rate: float, connections: int, keepalive: bool) -> dict:
    """Send the requests open-loop at `rate`/s over `connections` client threads; return latencies."""
    total = len(requests)
    results: list = [None] * total
    counter = iter(range(total))
    lock = threading.Lock()
    start = time.perf_counter() + 0.2

    def client():
        conn = None
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            due = start + i / rate
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            method, path, body, headers, _ = requests[i]
            sent = time.perf_counter()
            status = -1
            for _ in range(2):  # a keep-alive connection the server closed is reopened once
                try:
                    if conn is None:
                        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    conn.request(method, path, body=body, headers=headers)
                    response = conn.getresponse()
                    response.read()
                    status = response.status
                    if not keepalive or response.getheader("Connection", "").lower() == "close":
                        conn.close()
                        conn = None
                    break
                except (OSError, http.client.HTTPException):
                    if conn is not None:
                        conn.close()
                    conn = None
            done = time.perf_counter()
            results[i] = (status, done - due, done - sent, done)
        if conn is not None:
            conn.close()

    workers = [threading.Thread(target=client) for _ in range(connections)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    finished = max(r[3] for r in results)
    latencies = sorted(r[1] * 1000 for r in results)
    service = sorted(r[2] * 1000 for r in results)
    acknowledged = [requests[i][4] for i, r in enumerate(results) if r[0] == 200 and requests[i][4]]
    window = max(1, int(rate * 10))  # p95 per 10 s of due times: shows interference from other work
    windows = [_percentiles(sorted(r[1] * 1000 for r in results[n:n + window]))["p95"]
               for n in range(0, total, window)]
    return {
        "requests": total, "seconds": finished - start, "achieved_rate": total / (finished - start),
        "non_200": sum(1 for r in results if r[0] != 200),
        "status_counts": {str(code): sum(1 for r in results if r[0] == code)
                          for code in sorted({r[0] for r in results})},
        "latency_ms": _percentiles(latencies), "service_ms": _percentiles(service),
        "acknowledged": sorted(set(acknowledged)),
        "p95_by_10s": windows,
    }


def _percentiles(sorted_ms: list[float]) -> dict:
    def at(q: float) -> float:
        return sorted_ms[min(len(sorted_ms) - 1, int(q * len(sorted_ms)))]

    return {"p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": sorted_ms[-1],
            "mean": statistics.fmean(sorted_ms)}


def load(args) -> None:
    """Run one load phase and write its JSON result to args.out."""
    count = int(args.rate * args.seconds)
    info: dict = {}
    if args.phase == "handshake":
        requests = _handshake_requests(count)
    else:
        requests, info = _webhook_requests(count=count, redeliveries=args.redeliveries, run_id=args.run_id,
                                           seed=args.seed)
    result = run_load(port=args.port, requests=requests, rate=args.rate, connections=args.connections,
                      keepalive=not args.new_connection_per_request)
    result.update(info)
    Path(args.out).write_text(json.dumps(result))


# --------------------------------------------------------------------------------------------
# Orchestrator
# --------------------------------------------------------------------------------------------

def bench_environment(broker: str) -> dict:
    """Return the environment of the server (and this process): bench database, secrets, broker."""
    env = dict(os.environ)
    url = env.get("DATABASE_URL")
    if url:
        parts = urlsplit(url)
        app_db = parts.path.lstrip("/") or "postgres"
        name = app_db if app_db.endswith(BENCH_DB_SUFFIX) else app_db + BENCH_DB_SUFFIX
        env["DATABASE_URL"] = urlunsplit(parts._replace(path="/" + name))
    else:
        env["EMBEDDED_PG_DATABASE"] = EMBEDDED_BENCH_DB
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "0",  # DEBUG keeps every SQL statement in memory
        "DJANGO_SECRET_KEY": "bench-only-secret-key",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECURE_SSL_REDIRECT": "0",  # plain http on loopback
        "WHATSAPP_APP_SECRET": APP_SECRET,
        "WHATSAPP_VERIFY_TOKEN": VERIFY_TOKEN,
        "CELERY_BROKER_URL": broker,
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    })
    return env


def _admin_connection():
    """Return an autocommit connection to the `postgres` database of the bench database's server."""
    import psycopg

    if os.environ.get("DATABASE_URL"):
        url = urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path="/postgres"))
        return psycopg.connect(url, autocommit=True)
    from config import embedded_db

    return psycopg.connect(**embedded_db.connection_settings(), dbname="postgres", autocommit=True)


def database_recreate() -> str:
    """Drop and create the bench database, then migrate it; return its name."""
    from django.core.management import call_command
    from django.db import connection, connections

    name = connection.settings_dict["NAME"]
    assert name.endswith(BENCH_DB_SUFFIX), name
    connections.close_all()
    with _admin_connection() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    call_command("migrate", interactive=False, verbosity=0)
    return name


def database_drop(name: str) -> None:
    from django.db import connections

    assert name.endswith(BENCH_DB_SUFFIX), name
    connections.close_all()
    with _admin_connection() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def queue_clear(broker: str) -> None:
    import redis

    client = redis.Redis.from_url(broker)
    client.delete("celery", "_kombu.binding.celery")


def queued_message_ids(broker: str) -> list[int]:
    """Return the message id of every handle_inbound task waiting in the broker's `celery` queue."""
    import redis

    client = redis.Redis.from_url(broker)
    ids = []
    for raw in client.lrange("celery", 0, -1):
        envelope = json.loads(raw)
        if envelope.get("headers", {}).get("task") != "bot.handle_inbound":
            continue
        args, _kwargs, _embed = json.loads(base64.b64decode(envelope["body"]))
        ids.append(int(args[0]))
    return ids


def start_server(env: dict, threads: int, processes: int) -> tuple[subprocess.Popen, int, list[int]]:
    """Start the server subprocess; return it, its port and the pids of its workers."""
    server = subprocess.Popen([sys.executable, __file__, "serve", "--threads", str(threads),
                               "--processes", str(processes)], cwd=BASE_DIR, env=env, stdout=subprocess.PIPE,
                              text=True)
    line = server.stdout.readline()
    if not line.startswith("READY "):
        server.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    _, port, *pids = line.split()
    return server, int(port), [int(p) for p in pids]


def process_cpu_seconds(pid: int) -> float | None:
    """Return user + system CPU seconds of a process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def workers_cpu_seconds(pids: list[int]) -> float | None:
    readings = [process_cpu_seconds(pid) for pid in pids]
    return None if not readings or None in readings else sum(readings)


def run_phase(env: dict, port: int, phase: str, args, *, seconds: float, run_id: str,
              server_pids: list[int] = ()) -> dict:
    cpu_before = workers_cpu_seconds(server_pids)
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    command = [sys.executable, __file__, "load", "--port", str(port), "--phase", phase,
               "--rate", str(args.rate), "--seconds", str(seconds), "--connections", str(args.connections),
               "--run-id", run_id, "--redeliveries", str(args.redeliveries), "--seed", str(args.seed),
               "--out", path]
    if args.new_connection_per_request:
        command.append("--new-connection-per-request")
    subprocess.run(command, cwd=BASE_DIR, env=env, check=True)
    result = json.loads(Path(path).read_text())
    os.unlink(path)
    cpu_after = workers_cpu_seconds(server_pids)
    if cpu_before is not None and cpu_after is not None:
        result["server_cpu_ms_per_request"] = 1000 * (cpu_after - cpu_before) / result["requests"]
    return result


def orchestrate(args) -> int:
    env = bench_environment(args.broker)
    os.environ.update({k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "DJANGO_DEBUG", "DJANGO_SECRET_KEY",
                                           "CELERY_BROKER_URL")})
    for key in ("DATABASE_URL", "EMBEDDED_PG_DATABASE"):
        if key in env:
            os.environ[key] = env[key]
    import django

    django.setup()
    from django.db import connection

    from desk.models import Message

    try:
        queue_clear(args.broker)
    except Exception as exc:  # noqa: BLE001 - say what to do instead of a traceback
        raise SystemExit(f"Redis is not reachable at {args.broker} ({exc}); "
                         f"start it or pass --broker URL") from None
    started = time.perf_counter()
    database = database_recreate()
    print(f"bench database {database} created and migrated in {time.perf_counter() - started:.1f} s",
          flush=True)
    connection.close()

    if not args.new_connection_per_request and args.threads < args.connections:
        # A keep-alive connection holds its worker thread between requests.
        print(f"--threads raised from {args.threads} to {args.connections} (one per keep-alive connection)")
        args.threads = args.connections
    load_before = os.getloadavg()
    server, port, worker_pids = start_server(env, args.threads, args.processes)
    try:
        run_phase(env, port, "webhook", args, seconds=max(1.0, min(3.0, args.seconds / 10)), run_id="WARM")
        baseline_seconds = args.baseline_seconds or max(2.0, min(15.0, args.seconds / 4))
        print(f"baseline: GET handshake at {args.rate:g}/s for {baseline_seconds:g} s …", flush=True)
        baseline = run_phase(env, port, "handshake", args, seconds=baseline_seconds, run_id="-",
                             server_pids=worker_pids)
        print(f"webhook: signed POSTs at {args.rate:g}/s for {args.seconds:g} s …", flush=True)
        run_id = uuid.uuid4().hex[:8].upper()
        webhook = run_phase(env, port, "webhook", args, seconds=args.seconds, run_id=run_id,
                            server_pids=worker_pids)
    finally:
        server.terminate()
        server.wait(timeout=30)

    stored = list(Message.objects.filter(provider_message_id__startswith=f"wamid.BENCH{run_id}")
                  .values_list("pk", "provider_message_id"))
    stored_wamids = [w for _, w in stored]
    unique = set(webhook["unique"])
    missing = unique - set(stored_wamids)
    twice = len(stored_wamids) - len(set(stored_wamids))
    stored_ids = {pk for pk, _ in stored}
    queued = [i for i in queued_message_ids(args.broker) if i in stored_ids]
    expected_queued = len(unique) - webhook["silent"]
    queue_clear(args.broker)

    redelivered = webhook["requests"] - len(unique)
    mode = "a new connection per request" if args.new_connection_per_request else "keep-alive"
    print()
    print(f"WhatsApp webhook acknowledgement — {os.cpu_count()} CPUs; server: stdlib HTTP server, "
          f"{args.processes} worker process(es) × {args.threads}-thread pool, DEBUG off, "
          f"Celery → {args.broker}; client: {args.connections} "
          f"connections, {mode}, open loop")
    print(f"load average (1 min) before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} "
          f"(other work on this machine shares the CPUs)")
    print(f"{'':30}{'requests':>9}{'rate/s':>8}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}{'max ms':>8}"
          f"{'non-200':>8}{'cpu ms/req':>11}")
    for label, result in (("baseline GET handshake", baseline), ("webhook POST (signed, stored)", webhook)):
        lat = result["latency_ms"]
        cpu = result.get("server_cpu_ms_per_request")
        print(f"{label:30}{result['requests']:>9}{result['achieved_rate']:>8.1f}{lat['p50']:>8.2f}"
              f"{lat['p95']:>8.2f}{lat['p99']:>8.2f}{lat['max']:>8.1f}{result['non_200']:>8}"
              f"{(f'{cpu:.2f}' if cpu is not None else '-'):>11}")
    for label, result in (("baseline", baseline), ("webhook", webhook)):
        if result["non_200"]:
            print(f"{label} answers by status (-1: no answer within 10 s, or a connection error): "
                  f"{result['status_counts']}")
    print("webhook p95 per 10 s (ms): " + ", ".join(f"{p:.1f}" for p in webhook["p95_by_10s"]))
    ratio = webhook["latency_ms"]["p95"] / baseline["latency_ms"]["p95"]
    print(f"ratio webhook p95 / baseline p95: {ratio:.2f}x  (server time only, webhook p95: "
          f"{webhook['service_ms']['p95']:.2f} ms)")
    print(f"messages: {len(unique)} unique + {redelivered} redeliveries → {len(stored_wamids)} rows; "
          f"missing {len(missing)}, stored twice {twice}")
    print(f"turns queued in the broker: {len(queued)} (expected {expected_queued}: one per stored message "
          f"but reactions), queued twice {len(queued) - len(set(queued))}")
    target_met = (webhook["latency_ms"]["p95"] <= TARGET_P95_MS
                  and webhook["achieved_rate"] >= 0.98 * args.rate and webhook["non_200"] == 0)
    print(f"target p95 ≤ {TARGET_P95_MS:g} ms at {args.rate:g} messages/s: "
          f"{'MET' if target_met else 'NOT MET'} (p95 {webhook['latency_ms']['p95']:.2f} ms, "
          f"{webhook['achieved_rate']:.1f}/s)")
    correct = (not missing and twice == 0 and webhook["non_200"] == 0 and len(queued) == expected_queued
               and len(set(queued)) == len(queued))
    print(f"every message stored exactly once and queued once: {'yes' if correct else 'NO'}")
    if not args.keep:
        database_drop(database)
    return 0 if correct else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    serve_parser = sub.add_parser("serve")
    serve_parser.add_argument("--port", type=int, default=0)
    serve_parser.add_argument("--threads", type=int, default=16)
    serve_parser.add_argument("--processes", type=int, default=1)
    load_parser = sub.add_parser("load")
    load_parser.add_argument("--port", type=int, required=True)
    load_parser.add_argument("--phase", choices=["handshake", "webhook"], required=True)
    load_parser.add_argument("--out", required=True)
    load_parser.add_argument("--run-id", default="X")
    for target in (parser, load_parser):
        target.add_argument("--rate", type=float, default=200.0, help="requests per second")
        target.add_argument("--seconds", type=float, default=60.0)
        target.add_argument("--redeliveries", type=float, default=0.05,
                            help="share of requests that redeliver an earlier body")
        target.add_argument("--connections", type=int, default=16, help="client connections (threads)")
        target.add_argument("--new-connection-per-request", action="store_true")
        target.add_argument("--seed", type=int, default=5)
    parser.add_argument("--threads", type=int, default=16, help="worker threads per server process")
    parser.add_argument("--processes", type=int, default=min(os.cpu_count() or 1, 4),
                        help="server worker processes (default: one per CPU, at most 4)")
    parser.add_argument("--baseline-seconds", type=float, default=0.0)
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--keep", action="store_true", help="keep the bench database for inspection")
    args = parser.parse_args()
    if args.command == "serve":
        serve(args.port, args.threads, args.processes)
        return 0
    if args.command == "load":
        load(args)
        return 0
    return orchestrate(args)


if __name__ == "__main__":
    sys.exit(main())
