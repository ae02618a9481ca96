"""desk.senders against a local fake of the Graph API: ids, retries, rate limits, final errors."""

import socket

import httpx
import pytest

from desk.senders import RecordingSender, WhatsAppCloudSender, get_sender
from tests.support.fake_graph import FakeGraph


@pytest.fixture
def graph():
    with FakeGraph() as fake:
        yield fake


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def sender(graph, sleeps):
    cloud = WhatsAppCloudSender(base_url=graph.base_url, access_token=graph.access_token,
                                phone_number_id=graph.phone_number_id, sleep=sleeps.append)
    yield cloud
    cloud.close()


def test_a_send_posts_the_documented_body_and_records_metas_message_id(graph, sender, sleeps):
    graph.script = [FakeGraph.accepted("wamid.SENT1")]
    result = sender.send_text(to="584121234567", text="Su saldo es Bs. 1.250,00")
    assert (result.ok, result.provider_message_id, result.status, result.attempts) == (
        True, "wamid.SENT1", "queued", 1)
    (request,) = graph.requests
    assert request["path"] == f"/v21.0/{graph.phone_number_id}/messages"
    assert request["headers"]["Authorization"] == "Bearer test-token"
    assert request["body"] == {"messaging_product": "whatsapp", "recipient_type": "individual",
                               "to": "584121234567", "type": "text",
                               "text": {"preview_url": False, "body": "Su saldo es Bs. 1.250,00"}}
    assert sleeps == []


def test_a_username_only_user_is_sent_to_by_business_scoped_id_in_recipient(graph, sender):
    result = sender.send_text(user_id="VE.1410018717833190", text="Hola")
    assert result.ok
    (request,) = graph.requests
    assert request["body"]["recipient"] == "VE.1410018717833190" and "to" not in request["body"]


def test_a_number_wins_over_the_business_scoped_id_as_meta_recommends(graph, sender):
    sender.send_text(to="584121234567", user_id="VE.584121234567", text="Hola")
    (request,) = graph.requests
    assert request["body"]["to"] == "584121234567" and "recipient" not in request["body"]


def test_a_contact_without_number_or_user_id_is_not_sent_to(graph, sender):
    result = sender.send_text(text="Hola")
    assert not result.ok and "no recipient" in result.error and graph.requests == []


def test_http_429_then_success_waits_what_retry_after_asks(graph, sender, sleeps):
    graph.script = [FakeGraph.too_many_requests(retry_after=2), FakeGraph.accepted("wamid.AFTER")]
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.provider_message_id, result.attempts) == (True, "wamid.AFTER", 2)
    assert sleeps == [2.0]
    assert len(graph.requests) == 2


@pytest.mark.parametrize("code", [130429, 131056, 80007, 4])
def test_metas_rate_limit_codes_are_retried_with_exponential_backoff(graph, sender, sleeps, code):
    graph.script = [FakeGraph.error(400, code, f"(#{code}) Rate limit hit"),
                    FakeGraph.error(400, code, f"(#{code}) Rate limit hit"), FakeGraph.accepted("wamid.OK")]
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.provider_message_id, result.attempts) == (True, "wamid.OK", 3)
    assert sleeps == [1.0, 2.0]


def test_three_server_errors_give_up_after_three_attempts(graph, sender, sleeps):
    graph.script = [FakeGraph.server_error(500), FakeGraph.server_error(502), FakeGraph.server_error(503),
                    FakeGraph.accepted("wamid.NEVER")]
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.provider_message_id, result.status, result.attempts) == (False, None,
                                                                                       "failed", 3)
    assert "503" in result.error and "gave up after 3 attempts" in result.error
    assert len(graph.requests) == 3 and sleeps == [1.0, 2.0]


def test_a_client_error_is_final_and_carries_metas_message(graph, sender, sleeps):
    graph.script = [FakeGraph.error(400, 131030, "(#131030) Recipient phone number not in allowed list",
                                    details="Add recipient phone number to recipient list and try again.")]
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.attempts, result.status) == (False, 1, "failed")
    assert "Recipient phone number not in allowed list" in result.error and "131030" in result.error
    assert "Add recipient phone number" in result.error
    assert sleeps == [] and len(graph.requests) == 1


def test_a_wrong_token_is_refused_by_the_api_and_not_retried(graph, sleeps):
    sender = WhatsAppCloudSender(base_url=graph.base_url, access_token="expired",
                                 phone_number_id=graph.phone_number_id, sleep=sleeps.append)
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.attempts) == (False, 1)
    assert "401" in result.error and "Invalid OAuth access token" in result.error


def test_a_retry_after_longer_than_the_limit_is_not_waited_for(graph, sleeps):
    sender = WhatsAppCloudSender(base_url=graph.base_url, access_token=graph.access_token,
                                 phone_number_id=graph.phone_number_id, sleep=sleeps.append, max_wait_s=20)
    graph.script = [FakeGraph.too_many_requests(retry_after=300)]
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.attempts) == (False, 1)
    assert "wait 300 s" in result.error and sleeps == []


def test_a_success_without_a_message_id_is_a_failure(graph, sender):
    graph.script = [FakeGraph.accepted()]
    graph.script[0].body["messages"] = []
    result = sender.send_text(to="584121234567", text="hola")
    assert not result.ok and "messages[0].id" in result.error


def test_an_unreachable_api_is_retried_then_reported(sleeps):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sender = WhatsAppCloudSender(base_url=f"http://127.0.0.1:{port}/v21.0", access_token="t",
                                 phone_number_id="1", sleep=sleeps.append)
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.attempts) == (False, 3)
    assert "could not connect" in result.error and sleeps == [1.0, 2.0]


def test_a_timeout_after_sending_is_not_retried_so_the_customer_never_gets_a_reply_twice(graph, sleeps):
    sender = WhatsAppCloudSender(base_url=graph.base_url, access_token=graph.access_token,
                                 phone_number_id=graph.phone_number_id, sleep=sleeps.append,
                                 timeout=httpx.Timeout(0.2, connect=1.0))
    graph.script = [FakeGraph.slow(1.0)]
    result = sender.send_text(to="584121234567", text="hola")
    assert (result.ok, result.attempts) == (False, 1)
    assert "timed out" in result.error and len(graph.requests) == 1 and sleeps == []


def test_the_recording_sender_returns_a_synthetic_sent_id_without_a_network():
    recorder = RecordingSender()
    first = recorder.send_text(to="584121234567", text="hola")
    second = recorder.send_text(to="584121234567", text="chao")
    assert first.ok and first.status == "sent" and first.provider_message_id.startswith("rec-")
    assert first.provider_message_id != second.provider_message_id
    assert [m["text"] for m in recorder.sent] == ["hola", "chao"]


def test_get_sender_uses_the_cloud_api_only_when_token_and_phone_number_id_are_set(settings, graph):
    settings.WHATSAPP_ACCESS_TOKEN = ""
    settings.WHATSAPP_PHONE_NUMBER_ID = graph.phone_number_id
    assert isinstance(get_sender(), RecordingSender)
    settings.WHATSAPP_ACCESS_TOKEN = graph.access_token
    settings.WHATSAPP_API_BASE_URL = graph.base_url
    sender = get_sender()
    assert isinstance(sender, WhatsAppCloudSender) and get_sender() is sender
    result = sender.send_text(to="584121234567", text="hola")
    assert result.ok and graph.requests[0]["path"].endswith(f"/{graph.phone_number_id}/messages")
