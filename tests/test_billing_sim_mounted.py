"""The simulator mounted at /sim/billing/ where users are: its fault switch is off, every answer is JSON.

Through HTTP only (the Django test client), so the tests do not depend on where the simulator's code lives.
"""

import re
import subprocess
import sys

import pytest
import yaml
from django.conf import settings as django_settings

pytestmark = pytest.mark.django_db


@pytest.fixture
def bearer(healthy_billing):
    return {"HTTP_AUTHORIZATION": f"Bearer {healthy_billing.token}"}


def switch_fault(client, bearer, fault):
    return client.post("/sim/billing/_sim/fault", {"fault": fault}, content_type="application/json", **bearer)


def test_the_fault_switch_is_refused_when_faults_are_off(client, settings, bearer):
    settings.BILLING_SIM_FAULTS_ENABLED = False
    refused = switch_fault(client, bearer, "503")
    assert refused.status_code == 403 and refused["Content-Type"] == "application/json"
    assert "BILLING_SIM_FAULTS_ENABLED" in refused.json()["error"]["message"]
    assert client.get("/sim/billing/customers/C-1001", **bearer).status_code == 200  # billing still works


def test_the_fault_switch_works_when_faults_are_on(client, settings, bearer):
    settings.BILLING_SIM_FAULTS_ENABLED = True
    assert switch_fault(client, bearer, "503").status_code == 200
    assert client.get("/sim/billing/customers/C-1001", **bearer).status_code == 503
    assert switch_fault(client, bearer, None).status_code == 200
    assert client.get("/sim/billing/customers/C-1001", **bearer).status_code == 200


def faults_enabled(**env) -> str:
    """Return BILLING_SIM_FAULTS_ENABLED as a fresh process with only this environment reads it."""
    code = "import django; django.setup(); from django.conf import settings; print(settings.BILLING_SIM_FAULTS_ENABLED)"
    done = subprocess.run([sys.executable, "-c", code], env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
                          cwd=django_settings.BASE_DIR, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_faults_are_on_by_default_only_in_debug():
    enabled = faults_enabled

    assert enabled(DJANGO_DEBUG="1") == "True"
    assert enabled(DJANGO_DEBUG="0", DJANGO_SECRET_KEY="k" * 50) == "False"
    assert enabled(DJANGO_DEBUG="0", DJANGO_SECRET_KEY="k" * 50, BILLING_SIM_FAULTS_ENABLED="1") == "True"


@pytest.mark.parametrize("path", ["/sim/billing/health%0A", "/sim/billing/%0A", "/sim/billing/no-such-thing",
                                  "/sim/billing/customers/C-1001/invoices/current%0Aextra"])
def test_an_unknown_path_under_the_simulator_is_a_json_error(client, bearer, path):
    response = client.get(path, **bearer)
    assert response.status_code in (400, 404)
    assert response["Content-Type"] == "application/json" and response.json()["error"]["code"]


def test_a_credit_note_of_zero_breaks_the_contract():
    contract = yaml.safe_load((django_settings.BASE_DIR / "billing" / "openapi.yaml").read_text())
    pattern = re.compile(contract["components"]["schemas"]["PositiveMoney"]["properties"]["amount"]["pattern"])
    assert [v for v in ("0.00", "0", "0.0", "000.00") if pattern.search(v)] == []
    assert [v for v in ("0.01", "14.00", "123456789.99") if pattern.search(v)] == ["0.01", "14.00", "123456789.99"]
