"""desk.whatsapp: signatures and webhook parsing, pure (no database, no Django)."""

import copy
from datetime import UTC, datetime

import pytest

from desk.whatsapp import parse_webhook, signature_header, verify_signature
from tests.support.fake_graph import (
    BUSINESS_PHONE_NUMBER_ID,
    change_value,
    delivery_status,
    inbound_message,
    webhook_body,
)

SECRET = "app-secret-for-tests"
RAW = b'{"object":"whatsapp_business_account","entry":[]}'


# Signatures ----------------------------------------------------------------------------------

def test_a_signature_made_with_the_secret_over_the_raw_bytes_verifies():
    assert verify_signature(RAW, signature_header(RAW, SECRET), SECRET)


@pytest.mark.parametrize("header", [
    None,
    "",
    "sha256=",
    "sha1=" + signature_header(RAW, SECRET).split("=")[1],
    signature_header(RAW, "another-secret"),
    signature_header(RAW + b" ", SECRET),  # same JSON, other bytes: the raw body is what is signed
    "sha256=" + "0" * 64,
    "sha256=ñandú",
    signature_header(RAW, SECRET).split("=")[1],  # digest without the scheme
])
def test_a_forged_missing_or_malformed_signature_does_not_verify(header):
    assert not verify_signature(RAW, header, SECRET)


def test_the_header_scheme_and_hex_case_do_not_matter():
    digest = signature_header(RAW, SECRET).split("=")[1]
    assert verify_signature(RAW, f"SHA256={digest.upper()}", SECRET)


def test_without_an_app_secret_nothing_verifies():
    assert not verify_signature(RAW, signature_header(RAW, ""), "")


# Not a WhatsApp webhook at all ---------------------------------------------------------------

@pytest.mark.parametrize("body, fragment", [
    ([], "JSON list"),
    ("hello", "JSON str"),
    ({"object": "page", "entry": []}, "'page'"),
    ({"entry": []}, "'object' is None"),
    ({"object": "whatsapp_business_account"}, "'entry'"),
    ({"object": "whatsapp_business_account", "entry": {}}, "'entry'"),
])
def test_a_body_that_is_not_a_whatsapp_webhook_raises_a_clear_value_error(body, fragment):
    with pytest.raises(ValueError, match="not a WhatsApp webhook") as raised:
        parse_webhook(body)
    assert fragment in str(raised.value)


# Messages -------------------------------------------------------------------------------------

def test_a_text_message_carries_sender_name_business_ids_and_time():
    message = inbound_message(wa_id="584121234567", wamid="wamid.ABC", timestamp=1739321024,
                              text={"body": "¿Cuánto debo?"})
    batch = parse_webhook(webhook_body(change_value(messages=[message])))
    assert batch.errors == [] and batch.statuses == []
    (parsed,) = batch.messages
    assert (parsed.wamid, parsed.kind, parsed.text) == ("wamid.ABC", "text", "¿Cuánto debo?")
    assert (parsed.wa_id, parsed.user_id, parsed.name) == ("584121234567", "VE.584121234567", "Cliente 4567")
    assert parsed.timestamp == datetime(2025, 2, 12, 0, 43, 44, tzinfo=UTC)
    assert parsed.phone_number_id == BUSINESS_PHONE_NUMBER_ID
    assert parsed.payload["raw"] == message and parsed.wants_turn


@pytest.mark.parametrize("kind, content, text, details", [
    ("image", {"image": {"id": "MEDIA1", "mime_type": "image/jpeg", "sha256": "h", "caption": "mi factura"}},
     "mi factura", {"media_id": "MEDIA1", "mime_type": "image/jpeg", "caption": "mi factura"}),
    ("audio", {"audio": {"id": "MEDIA2", "mime_type": "audio/ogg; codecs=opus", "voice": True}},
     "", {"media_id": "MEDIA2", "voice": True}),
    ("document", {"document": {"id": "MEDIA3", "mime_type": "application/pdf", "filename": "recibo.pdf"}},
     "", {"media_id": "MEDIA3", "filename": "recibo.pdf"}),
    ("video", {"video": {"id": "MEDIA4", "mime_type": "video/mp4"}}, "", {"media_id": "MEDIA4"}),
    ("sticker", {"sticker": {"id": "MEDIA5", "mime_type": "image/webp", "animated": False}},
     "", {"media_id": "MEDIA5", "animated": False}),
    ("location",
     {"location": {"latitude": 10.49, "longitude": -66.88, "name": "Oficina", "address": "Caracas"}},
     "Oficina, Caracas", {"latitude": 10.49, "longitude": -66.88}),
    ("location", {"location": {"latitude": 10.49, "longitude": -66.88}}, "10.49, -66.88", {}),
    ("interactive",
     {"interactive": {"type": "button_reply", "button_reply": {"id": "pay", "title": "Pagar"}}},
     "Pagar", {"reply_type": "button_reply", "reply_id": "pay"}),
    ("interactive", {"interactive": {"type": "list_reply",
                                     "list_reply": {"id": "inv", "title": "Facturas", "description": "Ver"}}},
     "Facturas", {"reply_type": "list_reply", "reply_id": "inv", "description": "Ver"}),
    ("button", {"button": {"text": "Sí, contactarme", "payload": "YES"}}, "Sí, contactarme",
     {"button_payload": "YES"}),
    ("unsupported", {"errors": [{"code": 131051, "title": "Message type unknown"}]},
     "WhatsApp could not deliver what the customer sent: Message type unknown (code 131051)", {}),
    ("order", {"order": {"catalog_id": "C1", "text": "dos routers",
                         "product_items": [{"product_retailer_id": "R1", "quantity": 2}]}},
     "dos routers", {"order_items": 1}),
    ("order", {"order": {"catalog_id": "C1", "product_items": []}}, "", {"order_items": 0}),
])
def test_non_text_messages_are_read_with_the_details_the_desk_needs(kind, content, text, details):
    batch = parse_webhook(webhook_body(change_value(messages=[inbound_message(kind, **content)])))
    assert batch.errors == []
    (parsed,) = batch.messages
    assert (parsed.kind, parsed.text) == (kind, text)
    assert details.items() <= parsed.payload.items()
    assert parsed.wants_turn  # the bot answers or escalates every one of them


def test_a_reaction_names_the_emoji_and_the_reacted_message_and_wants_no_turn():
    reaction = inbound_message("reaction", reaction={"message_id": "wamid.OUT1", "emoji": "👍"})
    (parsed,) = parse_webhook(webhook_body(change_value(messages=[reaction]))).messages
    assert (parsed.kind, parsed.emoji, parsed.reacted_message_id) == ("reaction", "👍", "wamid.OUT1")
    assert parsed.payload["emoji"] == "👍" and parsed.payload["reacted_message_id"] == "wamid.OUT1"
    assert not parsed.wants_turn


@pytest.mark.parametrize("system", [
    {"body": "User A changed from 584121234567 to 584249876543", "wa_id": "584249876543",
     "type": "user_changed_number"},
    {"body": "User A changed from 584121234567 to 584249876543", "new_wa_id": "584249876543",
     "type": "user_changed_number"},
])
def test_a_number_change_names_the_new_number_under_either_key(system):
    message = inbound_message("system", wa_id="584121234567", system=system)
    (parsed,) = parse_webhook(webhook_body(change_value(messages=[message], contacts=[]))).messages
    assert (parsed.kind, parsed.system_type, parsed.new_wa_id) == (
        "system", "user_changed_number", "584249876543")
    assert parsed.wa_id == "584121234567" and parsed.name == ""  # system messages come without contacts
    assert not parsed.wants_turn


def test_a_welcome_request_is_stored_but_wants_no_turn():
    body = webhook_body(change_value(messages=[inbound_message("request_welcome")]))
    (parsed,) = parse_webhook(body).messages
    assert parsed.kind == "request_welcome" and not parsed.wants_turn


def test_a_username_only_sender_is_known_by_its_business_scoped_id():
    message = inbound_message(wa_id="")
    del message["from"]
    message["from_user_id"] = "VE.1410018717833190"
    contacts = [{"profile": {"name": "Ana"}, "user_id": "VE.1410018717833190"}]
    (parsed,) = parse_webhook(webhook_body(change_value(messages=[message], contacts=contacts))).messages
    assert (parsed.wa_id, parsed.user_id, parsed.name) == ("", "VE.1410018717833190", "Ana")


def test_several_entries_changes_and_messages_are_all_read_in_order():
    first = change_value(messages=[inbound_message(wamid="wamid.1"), inbound_message(wamid="wamid.2",
                                                                                     wa_id="584140000001")])
    second = change_value(messages=[inbound_message(wamid="wamid.3")],
                          statuses=[delivery_status("wamid.O", "read")])
    body = webhook_body(first, second)
    body["entry"][1]["changes"].append({"field": "messages", "value": change_value(
        messages=[inbound_message(wamid="wamid.4")])})
    batch = parse_webhook(body)
    assert [m.wamid for m in batch.messages] == ["wamid.1", "wamid.2", "wamid.3", "wamid.4"]
    assert batch.messages[1].name == "Cliente 0001"
    assert [(s.wamid, s.status) for s in batch.statuses] == [("wamid.O", "read")]


def test_malformed_messages_are_reported_without_losing_the_good_ones():
    good = inbound_message(wamid="wamid.GOOD")
    no_id = inbound_message()
    del no_id["id"]
    bad_time = inbound_message(wamid="wamid.T", timestamp=0)
    bad_time["timestamp"] = "yesterday"
    no_body = inbound_message(wamid="wamid.B", text={"caption": "?"})
    no_media = inbound_message("image", wamid="wamid.I", image={"mime_type": "image/png"})
    no_sender = inbound_message(wamid="wamid.S")
    del no_sender["from"]
    pieces = [no_id, good, bad_time, "garbage", no_body, no_media, no_sender]
    body = webhook_body(change_value(messages=pieces))
    batch = parse_webhook(body)
    assert [m.wamid for m in batch.messages] == ["wamid.GOOD"]
    assert len(batch.errors) == 6
    assert batch.errors[0] == "entry[0].changes[0].value.messages[0]: missing 'id'"
    assert "'yesterday'" in batch.errors[1] and "text.body" in batch.errors[3]
    assert "media 'id'" in batch.errors[4] and "neither 'from'" in batch.errors[5]


def test_broken_entries_and_changes_are_reported_and_the_rest_is_read():
    body = webhook_body(change_value(messages=[inbound_message(wamid="wamid.OK")]))
    body["entry"].insert(0, {"id": "x"})
    body["entry"].append({"id": "y", "changes": ["nope", {"field": "messages", "value": []}]})
    batch = parse_webhook(body)
    assert [m.wamid for m in batch.messages] == ["wamid.OK"]
    assert batch.errors == ["entry[0]: 'changes' is missing or not a list",
                            "entry[2].changes[0]: not an object",
                            "entry[2].changes[1].value: not an object"]


def test_changes_of_other_subscribed_fields_are_ignored_not_errors():
    body = webhook_body(change_value(messages=[inbound_message()]))
    body["entry"][0]["changes"].append({"field": "message_template_status_update",
                                        "value": {"event": "APPROVED", "message_template_id": 1}})
    batch = parse_webhook(body)
    assert len(batch.messages) == 1 and batch.errors == []
    assert batch.ignored_fields == ["message_template_status_update"]


def test_errors_meta_reports_on_the_change_itself_are_surfaced():
    value = change_value()
    value["errors"] = [{"code": 131000, "title": "Something went wrong"}]
    batch = parse_webhook(webhook_body(value))
    assert batch.errors == [
        "entry[0].changes[0].value.errors[0]: Meta reported Something went wrong (code 131000)"]


# Statuses -------------------------------------------------------------------------------------

def test_a_failed_status_carries_the_first_error():
    failed = delivery_status("wamid.OUT", "failed", errors=[
        {"code": 131026, "title": "Message undeliverable",
         "error_data": {"details": "Receiver is incapable of receiving this message"}},
        {"code": 1, "title": "second"}])
    (status,) = parse_webhook(webhook_body(change_value(statuses=[failed]))).statuses
    assert (status.wamid, status.status, status.error_code, status.error_title) == (
        "wamid.OUT", "failed", 131026, "Message undeliverable")
    assert status.error == ("Message undeliverable (code 131026): "
                            "Receiver is incapable of receiving this message")
    assert status.timestamp == datetime.fromtimestamp(1739321100, tz=UTC)
    assert status.recipient_id == "584121234567"


@pytest.mark.parametrize("mutate, fragment", [
    (lambda s: s.pop("id"), "missing 'id'"),
    (lambda s: s.update(status="deleted"), "'deleted'"),
    (lambda s: s.update(timestamp=None), "'timestamp'"),
])
def test_malformed_statuses_are_reported_and_the_good_ones_kept(mutate, fragment):
    bad = delivery_status("wamid.BAD", "delivered")
    mutate(bad)
    batch = parse_webhook(webhook_body(change_value(statuses=[bad, delivery_status("wamid.OK", "sent")])))
    assert [s.wamid for s in batch.statuses] == ["wamid.OK"]
    (error,) = batch.errors
    assert error.startswith("entry[0].changes[0].value.statuses[0]: ") and fragment in error


def test_parsing_does_not_modify_the_body():
    removed_reaction = inbound_message("reaction", reaction={"message_id": "w", "emoji": ""})
    body = webhook_body(change_value(messages=[removed_reaction], statuses=[delivery_status("w", "sent")]))
    before = copy.deepcopy(body)
    parse_webhook(body)
    assert body == before


def test_a_bad_business_scoped_id_in_the_contacts_array_is_left_out_not_fatal():
    contacts = [{"profile": {"name": "Ana"}, "wa_id": "584121234567", "user_id": "VE.\x001"}]
    message = inbound_message(wa_id="584121234567", wamid="wamid.OK")
    (parsed,) = parse_webhook(webhook_body(change_value(messages=[message], contacts=contacts))).messages
    assert (parsed.wamid, parsed.user_id, parsed.name) == ("wamid.OK", "", "Ana")
