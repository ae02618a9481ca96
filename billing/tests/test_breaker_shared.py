"""The breaker's state is shared by OS processes: Redis (REDIS_URL) and PostgreSQL (default) stores.

Each worker is a separate Python process (subprocess) that builds its own store and breaker
with a fixed injected time, waits on a stdin barrier so they all start together, and reports
what it was allowed to do. No sleep anywhere: time is passed in, the barrier is a pipe.
"""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from billing.api.breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreaker, CircuitOpen, CircuitState, Policy, Ticket

REDIS_URL = "redis://127.0.0.1:6379/15"
ROOT = Path(__file__).resolve().parents[2]

WORKER = r"""
import json, os, sys
config = json.loads(sys.argv[1])
if config["store"] == "database":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    django.setup()
    from django.conf import settings
    settings.DATABASES["default"]["NAME"] = config["db_name"]  # the test database, before any connection
    from billing.api.breaker_store import DatabaseStore
    store = DatabaseStore()
else:
    from billing.api.breaker_store import RedisStore
    store = RedisStore.from_url(config["redis_url"], prefix=config["prefix"])
from billing.api.breaker import CircuitBreaker, CircuitOpen, Policy, Ticket
ids = iter(config["probe_ids"])
clock = {"t": 0.0}
breaker = CircuitBreaker(config["name"], store, Policy(config["threshold"], config["cooldown"]),
                         now=lambda: clock["t"], new_probe_id=lambda: next(ids))
print("ready", flush=True)
sys.stdin.readline()  # the barrier: every worker starts when the parent writes a line
results = []
for op in config["ops"]:
    clock["t"] = op["now"]
    if op["op"] == "admit":
        try:
            ticket = breaker.admit()
            results.append({"admitted": True, "probe_id": ticket.probe_id})
        except CircuitOpen as exc:
            results.append({"admitted": False, "state": exc.state.state})
    elif op["op"] == "failure":
        results.append({"state": breaker.record_failure(Ticket(op.get("probe_id"))).state})
    elif op["op"] == "success":
        results.append({"state": breaker.record_success(Ticket(op.get("probe_id"))).state})
    elif op["op"] == "load":
        results.append({"state": breaker.state().state, "failures": breaker.state().failures})
print(json.dumps(results), flush=True)
"""


def run_workers(configs: list[dict]) -> list[list[dict]]:
    """Start one process per config, release them together, return each one's results."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(config)],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for config in configs
    ]
    for proc in procs:
        line = proc.stdout.readline()
        assert line.strip() == "ready", proc.stderr.read()
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def redis_reachable() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


@pytest.fixture(params=["redis", "database"])
def shared(request):
    """Yield (store kind, a store in this process, the worker config base) for a fresh breaker name."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    if request.param == "redis":
        if not redis_reachable():
            pytest.skip(f"Redis is not reachable at {REDIS_URL}; the Redis store cannot be exercised")
        from billing.api.breaker_store import RedisStore

        prefix = f"tracedesk-test:{uuid.uuid4().hex[:8]}:"
        store = RedisStore.from_url(REDIS_URL, prefix=prefix)
        yield request.param, store, {"store": "redis", "redis_url": REDIS_URL, "prefix": prefix, "name": name}
        store.forget(name)
    else:
        request.getfixturevalue("db")  # test database; the store writes on its own committed connection
        from django.db import connection

        from billing.api.breaker_store import DatabaseStore

        store = DatabaseStore()
        yield (
            request.param,
            store,
            {"store": "database", "db_name": connection.settings_dict["NAME"], "name": name},
        )
        store.forget(name)
        store.close()


def config(base: dict, ops: list[dict], *, threshold=3, cooldown=30.0, probe_ids=None) -> dict:
    return {
        **base,
        "threshold": threshold,
        "cooldown": cooldown,
        "ops": ops,
        "probe_ids": probe_ids or [f"{base['name']}-p{n}" for n in range(50)],
    }


def local_breaker(store, base, threshold=3, cooldown=30.0, now=0.0):
    return CircuitBreaker(base["name"], store, Policy(threshold, cooldown), now=lambda: now)


def test_a_breaker_opened_by_one_process_rejects_calls_in_another(shared):
    _kind, store, base = shared
    (opener,) = run_workers(
        [config(base, [{"op": "admit", "now": 100.0}, {"op": "failure", "now": 100.0}] * 3)]
    )
    assert [r.get("state") for r in opener if "state" in r] == [CLOSED, CLOSED, OPEN]
    assert store.load(base["name"]).state == OPEN
    (other,) = run_workers([config(base, [{"op": "admit", "now": 110.0}, {"op": "load", "now": 110.0}])])
    assert other == [{"admitted": False, "state": OPEN}, {"state": OPEN, "failures": 3}]
    # and this process (a third one) agrees
    with pytest.raises(CircuitOpen):
        local_breaker(store, base, now=120.0).admit()


def test_after_cooldown_exactly_one_process_gets_the_probe_and_its_success_closes_for_all(shared):
    _kind, store, base = shared
    local_breaker(store, base).reset()
    store.update(base["name"], lambda s: (CircuitState(state=OPEN, failures=3, opened_at=100.0), None))
    contenders = [
        config(base, [{"op": "admit", "now": 131.0}], probe_ids=[f"{base['name']}-w{n}"]) for n in range(6)
    ]
    results = [r[0] for r in run_workers(contenders)]
    probes = [r["probe_id"] for r in results if r["admitted"]]
    assert len(probes) == 1, results
    assert sorted(r.get("state") for r in results if not r["admitted"]) == [HALF_OPEN] * 5
    assert store.load(base["name"]) == CircuitState(
        state=HALF_OPEN, failures=3, opened_at=100.0, probe_id=probes[0], probe_started_at=131.0
    )
    (closer,) = run_workers(
        [
            config(
                base, [{"op": "success", "now": 132.0, "probe_id": probes[0]}, {"op": "admit", "now": 132.0}]
            )
        ]
    )
    assert closer == [{"state": CLOSED}, {"admitted": True, "probe_id": None}]
    assert store.load(base["name"]) == CircuitState()


def test_a_failed_probe_in_one_process_reopens_for_every_process(shared):
    _kind, store, base = shared
    store.update(
        base["name"],
        lambda s: (
            CircuitState(
                state=HALF_OPEN, failures=3, opened_at=100.0, probe_id="the-probe", probe_started_at=131.0
            ),
            None,
        ),
    )
    (prober,) = run_workers([config(base, [{"op": "failure", "now": 133.0, "probe_id": "the-probe"}])])
    assert prober == [{"state": OPEN}]
    assert store.load(base["name"]).opened_at == 133.0
    with pytest.raises(CircuitOpen):
        local_breaker(store, base, now=160.0).admit()  # 27 s after the failed probe: still cooling down


def test_concurrent_failures_from_many_processes_are_all_counted(shared):
    _kind, store, base = shared
    ops = [{"op": "failure", "now": 100.0}] * 25
    run_workers([config(base, ops, threshold=10_000) for _ in range(4)])
    assert store.load(base["name"]) == CircuitState(failures=100)


def test_store_semantics_match_the_memory_store_in_process(shared):
    _kind, store, base = shared
    clock = {"t": 1000.0}
    ids = iter(["a", "b", "c", "d", "e"])
    breaker = CircuitBreaker(
        base["name"], store, Policy(2, 30.0), now=lambda: clock["t"], new_probe_id=lambda: next(ids)
    )
    breaker.record_failure(breaker.admit())
    breaker.record_failure(breaker.admit())
    assert breaker.state().state == OPEN
    clock["t"] += 30
    probe = breaker.admit()
    assert probe == Ticket("c")
    with pytest.raises(CircuitOpen):
        breaker.admit()
    breaker.record_success(probe)
    assert breaker.state() == CircuitState()
