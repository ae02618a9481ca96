"""Production: Django's deployment check passes, and `make serve` (collectstatic, migrate, gunicorn) boots.

Both get what a deployment sets — debug off, a long random secret key, its host — and nothing else,
so every HTTPS setting keeps its production default. It listens on plain http on loopback; the requests
that should be treated as HTTPS say so the way the TLS proxy in front of a deployment does
(X-Forwarded-Proto with DJANGO_SECURE_PROXY_SSL_HEADER), so the SSL redirect stays on and is checked too.
"""

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from django.conf import settings
from django.db import connection

from config.dev_env import DEVELOPMENT

pytestmark = pytest.mark.django_db
BOOT_DEADLINE_S = 120  # collectstatic compresses every static file first; a loaded 2-core machine is slow
HTTPS = {"X-Forwarded-Proto": "https"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def production_environment(**deployment) -> dict:
    """Return this process's environment without the development values, plus what a deployment sets."""
    # DJANGO_ALLOW_ASYNC_UNSAFE is the browser tests' (Playwright's sync API), set while their Chromium is up.
    env = {name: value for name, value in os.environ.items()
           if name not in DEVELOPMENT and name != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update({
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),  # 67 random characters
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "EMBEDDED_PG_DATABASE": connection.settings_dict["NAME"],  # the test database, already migrated
        **deployment,
    })
    return env


def deploy_check(env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120)


def test_the_deployment_check_finds_nothing_with_production_values():
    done = deploy_check(production_environment())
    assert done.returncode == 0, done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout


def test_the_deployment_check_fails_with_the_development_values():
    """The check above can fail: the development values are what it warns about."""
    done = deploy_check({**production_environment(), **DEVELOPMENT})
    assert done.returncode == 1
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016", "security.W018"):
        assert warning in done.stderr


def wait_until_serving(server: subprocess.Popen, url: str) -> None:
    """Poll the server until it answers, failing at once if it exits and at the deadline if it never answers."""
    deadline = time.monotonic() + BOOT_DEADLINE_S
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1.0)
            return
        except httpx.TransportError:
            pass
        try:  # waits on the process, not the clock: an exit (a broken recipe) ends the wait at once
            server.wait(timeout=0.25)
        except subprocess.TimeoutExpired:
            continue
        output = server.stdout.read()
        pytest.fail(f"make serve exited with {server.returncode}:\n{output[-3000:]}")
    pytest.fail(f"make serve did not answer at {url} within {BOOT_DEADLINE_S} s")


def test_make_serve_boots_gunicorn_that_serves_pages_and_hashed_static_files(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # -o install: the test environment is installed already; the rest is the recipe as a deployment runs it.
    server = subprocess.Popen(["make", "-o", "install", "serve", "HOST=127.0.0.1", f"PORT={port}"],
                              cwd=settings.BASE_DIR, env=production_environment(
                                  DJANGO_SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
                                  DJANGO_STATIC_ROOT=str(tmp_path / "static"), WEB_CONCURRENCY="1"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              start_new_session=True)  # its own process group: make, gunicorn and workers
    try:
        wait_until_serving(server, f"{base}/login/")

        plain = httpx.get(f"{base}/login/")
        assert plain.status_code == 301 and plain.headers["location"] == f"https://127.0.0.1:{port}/login/"

        login = httpx.get(f"{base}/login/", headers=HTTPS)
        assert login.status_code == 200 and "Log in" in login.text, login.text[:300]
        assert "script-src 'self'" in login.headers["content-security-policy"]
        assert login.headers["strict-transport-security"] == "max-age=31536000; includeSubDomains; preload"
        csrf_cookie = login.headers["set-cookie"]
        assert csrf_cookie.startswith("csrftoken=") and "Secure" in csrf_cookie

        stylesheet = re.search(r'href="(/static/css/app\.[0-9a-f]{12}\.css)"', login.text).group(1)
        css = httpx.get(base + stylesheet, headers={**HTTPS, "Accept-Encoding": "gzip"})
        assert css.status_code == 200 and ".stage-bar" in css.text
        assert "immutable" in css.headers["cache-control"] and css.headers.get("content-encoding") == "gzip"
        assert (tmp_path / "static" / "staticfiles.json").exists()

        # Demo and test tools stay out of a production server: no simulator, no web chat.
        assert httpx.get(f"{base}/sim/billing/health", headers=HTTPS).status_code == 404
        assert httpx.get(f"{base}/chat/", headers=HTTPS).status_code == 404
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
