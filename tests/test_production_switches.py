"""The web chat and the billing simulator where they belong: on in the demo and the tests, off in production
unless a setting asks, and never the simulator with its public default token in production."""

import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from config.dev_env import DEVELOPMENT

pytestmark = pytest.mark.django_db
PRODUCTION = {"DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "k" * 50}
PROBE = """
import django; django.setup()
from django.conf import settings
from django.urls import Resolver404, resolve
try:
    resolve("/sim/billing/health"); mounted = True
except Resolver404:
    mounted = False
print(settings.WEBCHAT_ENABLED, mounted)
"""


def boot(**env) -> subprocess.CompletedProcess:
    """Load the settings and the URLs in a fresh process with only this environment (and PATH)."""
    clean = {"DJANGO_SETTINGS_MODULE": "config.settings", "PATH": "/usr/bin:/bin", **env}
    return subprocess.run([sys.executable, "-c", PROBE], env=clean, cwd=django_settings.BASE_DIR,
                          capture_output=True, text=True, timeout=60)


def test_production_has_neither_the_web_chat_nor_the_simulator_unless_asked():
    assert boot(**DEVELOPMENT).stdout.split() == ["True", "True"]  # the demo and the tests
    assert boot(**PRODUCTION).stdout.split() == ["False", "False"]
    asked = boot(**PRODUCTION, WEBCHAT_ENABLED="1", BILLING_SIM_MOUNTED="1", BILLING_API_TOKEN="a-secret-token")
    assert asked.stdout.split() == ["True", "True"], asked.stderr


@pytest.mark.parametrize("env, says", [
    ({"BILLING_SIM_MOUNTED": "1"}, "the billing simulator mounted at /sim/billing/"),
    ({"BILLING_API_BASE_URL": "https://billing.example.com/v1"}, "a billing API at https://billing.example.com/v1"),
    ({"BILLING_SIM_MOUNTED": "1", "BILLING_API_TOKEN": "sim-token"}, "Set BILLING_API_TOKEN"),
])
def test_production_with_the_default_billing_token_refuses_to_start(env, says):
    done = boot(**PRODUCTION, **env)
    assert done.returncode != 0
    assert "BILLING_API_TOKEN is the public default 'sim-token' with DJANGO_DEBUG off" in done.stderr
    assert says in done.stderr


def test_production_with_its_own_billing_token_starts():
    done = boot(**PRODUCTION, BILLING_API_BASE_URL="https://billing.example.com/v1", BILLING_API_TOKEN="t0k")
    assert done.returncode == 0, done.stderr


@pytest.fixture
def production_chat(settings):
    settings.WEBCHAT_ANONYMOUS = False  # what DJANGO_DEBUG=0 sets
    settings.WEBCHAT_ENABLED = True
    return settings


def test_in_production_the_web_chat_is_for_signed_in_staff_only(client, production_chat, make_staff,
                                                                 django_user_model):
    anonymous = client.get(reverse("desk:chat"))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("login"))
    assert client.post(reverse("desk:chat"), {"customer_id": "C-1001"}).status_code == 302
    assert client.post(reverse("desk:chat_reset")).status_code == 302
    assert not client.session.get("webchat_conversation_id")  # nothing was started

    client.force_login(django_user_model.objects.create_user("norole", password="pw-for-tests-1"))
    assert client.get(reverse("desk:chat")).status_code == 403

    client.force_login(make_staff("ana", "agent"))
    page = client.get(reverse("desk:chat"))
    assert page.status_code == 200 and "C-1001" in page.content.decode()
    assert 'href="/chat/"' in client.get(reverse("home")).content.decode()  # offered in the navigation


def test_switched_off_the_web_chat_is_not_there_and_not_offered(client, settings, make_staff):
    settings.WEBCHAT_ENABLED = False
    assert client.get(reverse("desk:chat")).status_code == 404
    client.force_login(make_staff("ana", "agent"))
    assert client.get(reverse("desk:chat")).status_code == 404
    assert client.post(reverse("desk:chat_reset")).status_code == 404
    assert 'href="/chat/"' not in client.get(reverse("home")).content.decode()


def test_in_the_demo_anyone_may_chat(client):
    assert client.get(reverse("desk:chat")).status_code == 200
