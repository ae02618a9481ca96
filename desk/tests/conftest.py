"""Fixtures of the desk's channel tests: signed WhatsApp deliveries and the queued turns they leave."""

import json

import pytest
from celery import current_app

from tests.support.factories import SECRET, VERIFY_TOKEN, WEBHOOK_URL, sign


@pytest.fixture
def whatsapp_settings(settings):
    settings.WHATSAPP_APP_SECRET = SECRET
    settings.WHATSAPP_VERIFY_TOKEN = VERIFY_TOKEN
    return settings


@pytest.fixture
def queued(monkeypatch):
    """Record the message ids whose bot turn is queued (the turn itself is not under test here)."""
    ids: list[int] = []
    monkeypatch.setattr(current_app.tasks["bot.handle_inbound"], "delay", ids.append)
    return ids


@pytest.fixture
def deliver(client, whatsapp_settings, django_capture_on_commit_callbacks):
    """POST a body as Meta does (signed raw bytes) and run the on-commit callbacks it registers."""

    def post(body=None, *, raw: bytes | None = None, signature: str | None = "valid"):
        raw = raw if raw is not None else json.dumps(body).encode()
        headers = {}
        if signature is not None:
            headers["HTTP_X_HUB_SIGNATURE_256"] = sign(raw) if signature == "valid" else signature
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(WEBHOOK_URL, data=raw, content_type="application/json", **headers)

    return post
