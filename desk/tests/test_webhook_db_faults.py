"""The webhook while the database fails, on the real database: a passing fault answers 503 and leaves nothing
half-stored, Meta's redelivery stores every message once and each is answered once; a problem of one message
answers 200 with that message rejected.

The faults are PostgreSQL's own: a trigger on the message table terminates the request's connection
(`pg_terminate_backend`, what `pg_ctl restart -m fast` does to every backend), or raises a deadlock, a
serialization failure or a value too long. A sequence counts the inserts (a sequence is not rolled back).
"""

from __future__ import annotations

import json
import uuid

import pytest
from django.db import connection

from desk.models import Contact, Message
from tests.support.factories import WEBHOOK_URL, sign
from traces.models import Trace
from tests.support.fake_graph import change_value, inbound_message, webhook_body

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("whatsapp_settings")]

SENDERS = ["584120000001", "584120000002", "584120000003"]
ASKS_FOR_A_PERSON = "quiero hablar con una persona"  # routed to a person: one notice, no KB needed


def three_customers_body(prefix: str) -> tuple[dict, list[str]]:
    wamids = [f"wamid.{prefix}{n}" for n in range(3)]
    messages = [inbound_message(wa_id=wa_id, wamid=wamid, text={"body": ASKS_FOR_A_PERSON})
                for wa_id, wamid in zip(SENDERS, wamids, strict=True)]
    return webhook_body(change_value(messages=messages)), wamids


def post(client, body: dict):
    raw = json.dumps(body).encode()
    return client.post(WEBHOOK_URL, data=raw, content_type="application/json", HTTP_X_HUB_SIGNATURE_256=sign(raw))


@pytest.fixture
def message_insert_fault():
    """Install a fault on the message table: `install(body_sql, when_sql)` runs body_sql on the inserts for which
    when_sql (over `n`, the insert's number, and NEW) holds. Return the number of inserts tried so far."""
    name = f"fault_{uuid.uuid4().hex[:8]}"

    def install(body_sql: str, when_sql: str):
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE SEQUENCE {name}")
            cursor.execute(f"""
                CREATE FUNCTION {name}() RETURNS trigger AS $$
                DECLARE n bigint := nextval('{name}');
                BEGIN
                    IF {when_sql} THEN {body_sql}; END IF;
                    RETURN NEW;
                END $$ LANGUAGE plpgsql""")
            cursor.execute(f"CREATE TRIGGER {name} BEFORE INSERT ON desk_message "
                           f"FOR EACH ROW EXECUTE FUNCTION {name}()")

    def inserts_tried() -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT last_value FROM {name}")
            return cursor.fetchone()[0]

    install.inserts_tried = inserts_tried
    yield install
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER IF EXISTS {name} ON desk_message")
        cursor.execute(f"DROP FUNCTION IF EXISTS {name}()")
        cursor.execute(f"DROP SEQUENCE IF EXISTS {name}")


def answers_per_message(wamids: list[str]) -> dict[str, tuple[int, int]]:
    """Return, per inbound wamid, (its stored rows, the bot's sent messages in its conversation)."""
    result = {}
    for wamid in wamids:
        rows = Message.objects.filter(provider_message_id=wamid)
        conversation_ids = list(rows.values_list("conversation_id", flat=True))
        sent = Message.objects.filter(conversation_id__in=conversation_ids, direction=Message.Direction.OUTBOUND,
                                      author=Message.Author.BOT, status=Message.Status.SENT).count()
        result[wamid] = (rows.count(), sent)
    return result


def test_a_connection_lost_mid_body_answers_503_and_the_redelivery_is_stored_and_answered_once(
        client, message_insert_fault, caplog):
    # The second message's insert loses the connection, as every backend does when the server restarts.
    message_insert_fault("PERFORM pg_terminate_backend(pg_backend_pid())", "n = 2")
    body, wamids = three_customers_body("LOST")

    first = post(client, body)

    assert first.status_code == 503 and first["Retry-After"]
    assert "deliver this again" in first.content.decode()
    # Nothing half-stored: not the first message, not its contact.
    assert not Message.objects.exists() and not Contact.objects.exists()
    assert "answered 503 so Meta delivers the body again" in caplog.text

    again = post(client, body)  # Meta's redelivery, on a new connection

    assert again.status_code == 200 and again.json()["stored"] == 3
    assert answers_per_message(wamids) == {wamid: (1, 1) for wamid in wamids}
    assert Trace.objects.filter(message__provider_message_id__in=wamids).count() == 3

    late = post(client, body)  # one redelivery too many changes nothing

    assert late.status_code == 200 and (late.json()["stored"], late.json()["duplicates"]) == (0, 3)
    assert answers_per_message(wamids) == {wamid: (1, 1) for wamid in wamids}


def test_a_deadlock_is_run_again_and_the_body_stored_once(client, message_insert_fault):
    message_insert_fault("RAISE EXCEPTION 'injected deadlock' USING ERRCODE = 'deadlock_detected'", "n = 1")
    body, wamids = three_customers_body("DEADLOCK")

    response = post(client, body)

    assert response.status_code == 200 and response.json()["stored"] == 3
    assert answers_per_message(wamids) == {wamid: (1, 1) for wamid in wamids}


def test_a_serialization_failure_that_outlasts_its_retries_answers_503_with_nothing_stored(
        client, message_insert_fault):
    message_insert_fault("RAISE EXCEPTION 'injected' USING ERRCODE = 'serialization_failure'", "TRUE")
    body, _ = three_customers_body("SERIAL")

    response = post(client, body)

    assert response.status_code == 503
    assert not Message.objects.exists()
    assert message_insert_fault.inserts_tried() == 3  # one insert per attempt: three attempts, then 503


def test_a_message_the_database_finds_too_long_is_rejected_and_its_batch_kept(client, message_insert_fault, caplog):
    message_insert_fault("RAISE EXCEPTION 'value too long' USING ERRCODE = 'string_data_right_truncation'",
                         "NEW.provider_message_id = 'wamid.BAD1'")
    body, wamids = three_customers_body("BAD")

    response = post(client, body)

    assert response.status_code == 200
    assert (response.json()["stored"], response.json()["rejected"]) == (2, 1)
    assert answers_per_message(wamids) == {"wamid.BAD0": (1, 1), "wamid.BAD1": (0, 0), "wamid.BAD2": (1, 1)}
    assert "wamid.BAD1 not stored: the database refused it" in caplog.text
