"""`manage.py billing_call`: the ToolResult as JSON, and an outage opening the shared breaker."""

import json
import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from billing.api.breaker_store import close_stores
from billing.api.client import billing_breaker
from billing.simulator import build_dataset
from billing.simulator.mounted import reset_shared_simulator
from core import clock

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = "redis://127.0.0.1:6379/15"


@pytest.fixture
def in_process(settings, db):
    """The bundled simulator in-process, the breaker on the (test) database, threshold 3."""
    settings.BILLING_API_BASE_URL = ""
    settings.BILLING_API_TOKEN = "sim-token"
    settings.BILLING_SIM_FAULT = ""
    settings.CLOCK_TODAY = "2026-10-20"
    settings.REDIS_URL = ""
    settings.BILLING_BREAKER_FAILURES = 3
    settings.BILLING_BREAKER_COOLDOWN_S = 300.0
    reset_shared_simulator()
    close_stores()
    billing_breaker().reset()
    yield
    billing_breaker().reset()
    close_stores()
    reset_shared_simulator()


def run(*args) -> str:
    out = StringIO()
    call_command("billing_call", *args, stdout=out)
    return out.getvalue()


def test_json_output_is_the_tool_result_with_evidence(in_process):
    payload = json.loads(run("invoice_change", "--customer", "C-1031", "--json", "--today", "2026-10-20"))
    assert set(payload) == {"capability", "ok", "should_escalate", "error", "evidence", "key_figures", "data"}
    assert (payload["capability"], payload["ok"], payload["should_escalate"]) == (
        "invoice_change",
        True,
        False,
    )
    delta = next(fact for fact in payload["evidence"] if fact["kind"] == "invoice_delta")
    assert delta == {
        "text": "Diferencia factura 2026-10 vs 2026-09 = Bs. 324,80 (descuento promocional terminó: 280,00; "
        "impuestos: 44,80)",
        "value": "324.80",
        "currency": "VES",
        "kind": "invoice_delta",
        "derivation": delta["derivation"],
    }
    assert delta["derivation"].startswith("total(F-1031-202610) - total(F-1031-202609) = 1624.00 - 1299.20")
    # the promotion that ended explains the whole change: the delta and the discount that stopped
    assert payload["key_figures"] == [
        {"evidence_id": "F3", "value": "324.80", "role": "primary", "name": "delta"},
        {"evidence_id": "F7", "value": "280.00", "role": "primary", "name": "discount_ended"},
    ]
    assert payload["evidence"][6]["kind"] == "promotion_value"


def test_readable_output_lists_facts_and_key_figures(in_process):
    output = run("invoice_change", "--customer", "C-1031", "--today", "2026-10-20")
    assert "   F3 [invoice_delta] 324.80 VES — Diferencia factura 2026-10 vs 2026-09 = Bs. 324,80" in output
    assert "   key figure (primary) discount_ended = 280.00 in F7" in output


def test_outage_shows_the_breaker_opening_and_the_simulator_count_freezing(in_process):
    output = run("account_summary", "--customer", "C-1031", "--fault", "503", "--repeat", "6")
    calls = output.split("\n#")
    counts = [int(n) for n in re.findall(r"simulator requests served: (\d+)", output)]
    assert counts == [1, 2, 3, 3, 3, 3]
    assert "closed (1/3 consecutive failures)" in calls[0]
    assert "OPEN" in calls[2]
    assert all("circuit_open" in call and "HTTP calls made: 0" in call for call in calls[3:])
    assert output.count("infrastructure error http_503 → escalate") == 3


def test_business_answer_is_reported_as_such(in_process):
    output = run("account_summary", "--customer", "C-9999")
    assert "business answer customer_not_found (no escalation)" in output
    assert "closed (0/3 consecutive failures)" in output


def test_find_customer_by_phone_and_argument_errors(in_process):
    phone = build_dataset(as_of=clock.today()).accounts["C-1002"].customer.phone  # people do not depend on the anchor date
    payload = json.loads(run("find_customer", "--phone", phone, "--json"))
    assert payload["ok"] and payload["evidence"][0]["value"] == "C-1002"
    with pytest.raises(CommandError):
        run("find_customer", "--phone", phone, "--national-id", "V-1")
    with pytest.raises(CommandError):
        run("invoices")
    with pytest.raises(CommandError):
        run("invoices", "--customer", "C-1001", "--fault", "explode")


def redis_reachable() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=0.5).ping())
    except redis.RedisError:
        return False


def test_separate_processes_share_the_breaker_through_redis():
    if not redis_reachable():
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    env = {
        **os.environ,
        "REDIS_URL": REDIS_URL,
        "BILLING_API_BASE_URL": "",
        "BILLING_SIM_FAULT": "",
        "BILLING_BREAKER_FAILURES": "2",
        "BILLING_BREAKER_COOLDOWN_S": "300",
    }

    def manage(*args):
        done = subprocess.run(
            [sys.executable, "manage.py", "billing_call", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            check=False,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    try:
        outage = manage(
            "invoices", "--customer", "C-1001", "--fault", "503", "--repeat", "2", "--reset-breaker"
        )
        assert "OPEN" in outage.split("\n#")[1]
        later = manage("invoices", "--customer", "C-1001")  # a new process, and no fault any more
        assert "circuit_open" in later
        assert "simulator requests served: 0 (in-process simulator)" in later
    finally:
        manage("invoices", "--customer", "C-1001", "--reset-breaker", "--json")
