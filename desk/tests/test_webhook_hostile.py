"""Hostile and odd WhatsApp input, validly signed: never a server error, and every good message is stored.

The first tests replay what once made the webhook answer 500 (and Meta redeliver for days); the
property test then posts bodies built from the real payload shapes (tests/support/fake_graph.py) with good,
odd-but-valid and broken messages and statuses mixed in one delivery.
"""

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desk.models import Contact, Message
from tests.support.factories import CUSTOMER
from tests.support.fake_graph import change_value, delivery_status, inbound_message, webhook_body

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("queued")]

# Literals json.dumps will not write (or not this big): placed as strings, swapped into the raw text.
RAW_LITERALS = {
    "@@NAN@@": "NaN",
    "@@INFINITY@@": "-Infinity",
    "@@1E400@@": "1e400",
    "@@5000_DIGITS@@": "9" * 5000,
    "@@NESTED_40@@": "[" * 40 + "]" * 40,
}


def raw(body) -> bytes:
    """Return the body as Meta's bytes, with the raw literals put in place."""
    text = json.dumps(body)  # ensure_ascii: NUL and lone surrogates travel as \u0000 and \ud800
    for placeholder, literal in RAW_LITERALS.items():
        text = text.replace(f'"{placeholder}"', literal)
    return text.encode()


def stored(wamid: str) -> Message | None:
    return Message.objects.filter(provider_message_id=wamid).first()


# What was measured ------------------------------------------------------------------------------

def with_good(hostile: dict) -> bytes:
    """Return a body with the hostile message first and a good one after it."""
    return raw(webhook_body(change_value(messages=[hostile, inbound_message(wamid="wamid.GOOD")])))


def text_message(**changes) -> dict:
    message = inbound_message(wamid="wamid.ODD", text={"body": "hola"})
    message.update(changes)
    return message


KEPT_CLEAN = [  # stored, the text the database cannot hold made storable
    ("NUL in the text", text_message(text={"body": "ho\x00la"}), "hola"),
    ("a lone surrogate in the text", text_message(text={"body": "hola \ud800"}), "hola \ufffd"),
    ("NUL in the reply context", text_message(context={"from": "1555\x00", "id": "wamid.X\x00"}), "hola"),
    ("NaN in a field nobody reads", text_message(extra="@@NAN@@"), "hola"),
    ("a 5,000-digit integer in a field nobody reads", text_message(extra="@@5000_DIGITS@@"), "hola"),
    ("1e400 in a field nobody reads", text_message(extra="@@1E400@@"), "hola"),
]
REFUSED = [  # skipped with the reason, the good message beside it stored
    ("NUL in the wamid", text_message(id="wamid.\x00ODD"), "'id' contains a control character"),
    ("a wamid of 129 characters", text_message(id="w" * 129), "'id' longer than 128 characters"),
    ("NUL in the sender", text_message(**{"from": "58412\x0012345"}), "'from' contains a control character"),
    ("a lone surrogate in the wamid", text_message(id="wamid.\udc00"), "unpaired surrogate"),
    ("a 5,000-digit timestamp", text_message(timestamp="@@5000_DIGITS@@"), "'timestamp' is None"),
    ("a 5,000-digit timestamp string", text_message(timestamp="9" * 5000), "expected Unix seconds"),
    ("Infinity as the timestamp", text_message(timestamp="@@INFINITY@@"), "'timestamp' is None"),
    ("NaN as a latitude", inbound_message("location", wamid="wamid.ODD",
                                          location={"latitude": "@@NAN@@", "longitude": 1.0}), "latitude"),
    ("1e400 as a longitude", inbound_message("location", wamid="wamid.ODD", location={
        "latitude": 1.0, "longitude": "@@1E400@@"}), "longitude"),
]


@pytest.mark.parametrize("case, hostile, text", KEPT_CLEAN, ids=[c[0] for c in KEPT_CLEAN])
def test_odd_but_readable_messages_are_stored_clean_beside_the_good_one(deliver, case, hostile, text):
    response = deliver(raw=with_good(hostile))
    assert response.status_code == 200 and response.json()["stored"] == 2
    assert stored("wamid.ODD").text == text and stored("wamid.GOOD") is not None
    assert "\\u0000" not in json.dumps(stored("wamid.ODD").payload)


@pytest.mark.parametrize("case, hostile, reason", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_broken_message_is_skipped_with_its_reason_and_the_good_one_stored(deliver, caplog, case, hostile,
                                                                            reason):
    response = deliver(raw=with_good(hostile))
    assert response.status_code == 200
    assert (response.json()["stored"], response.json()["rejected"]) == (1, 1)
    assert list(Message.objects.values_list("provider_message_id", flat=True)) == ["wamid.GOOD"]
    assert reason in caplog.text


def test_nul_and_surrogates_in_the_profile_name_are_cleaned(deliver):
    body = webhook_body(change_value(messages=[inbound_message(wamid="wamid.N")], contacts=[
        {"profile": {"name": "Ma\x00ría \udbff"}, "wa_id": CUSTOMER, "user_id": f"VE.{CUSTOMER}"}]))
    assert deliver(raw=raw(body)).status_code == 200
    assert Contact.objects.get().name == "María \ufffd"


def test_a_broken_status_is_skipped_and_the_good_one_applied(deliver):
    broken = delivery_status("wamid.\x00", "read", timestamp=1)
    huge = delivery_status("wamid.OUT", "read")
    huge["timestamp"] = "@@5000_DIGITS@@"
    body = webhook_body(change_value(statuses=[broken, huge, delivery_status("wamid.NOBODY", "delivered")]))
    response = deliver(raw=raw(body))
    assert response.status_code == 200 and response.json()["rejected"] == 2
    assert response.json()["statuses"]["unknown"] == 1


@pytest.mark.parametrize("body, reason", [
    (b"[" * 1000 + b"]" * 1000, b"nested deeper than 64 levels"),
    (b'{"object": "whatsapp_business_account", "entry": ' + b"[" * 100 + b"]" * 100 + b"}",
     b"nested deeper than 64 levels"),
    (b'{"object": "whatsapp_business_account", "entry": [}', b"invalid JSON body"),
    (b"\xff\xfe{}", b"not UTF-8"),
    (b"NaN", b"not a WhatsApp webhook"),
])
def test_a_signed_body_that_cannot_be_read_at_all_is_refused_with_400(deliver, body, reason):
    response = deliver(raw=body)
    assert response.status_code == 400 and reason in response.content
    assert not Message.objects.exists()


def test_a_body_over_two_megabytes_is_refused_before_it_is_read(deliver):
    huge = webhook_body(change_value(messages=[inbound_message(text={"body": "a" * (2 * 1024 * 1024)})]))
    response = deliver(raw=raw(huge))
    assert response.status_code == 413 and not Message.objects.exists()


# Property: mixed deliveries built from the real shapes -----------------------------------------

HOSTILE_CHARACTERS = ["\x00", "\ud800", "\udfff", "\ufeff", "\u202e", "\x7f", "\\", '"', "\n", "\U0001F600"]
hostile_text = st.text(st.one_of(st.characters(exclude_categories=()), st.sampled_from(HOSTILE_CHARACTERS)),
                       max_size=40)
SENDERS = [("584120000001", ""), ("584120000002", ""), ("", "VE.9990001")]
_ids = itertools.count()


def _content(kind: str, text: str) -> dict:
    """Return the content of a valid message of `kind`, shaped as Meta sends it, carrying `text`."""
    return {
        "text": {"text": {"body": text}},
        "image": {"image": {"id": "MEDIA1", "mime_type": "image/jpeg", "caption": text}},
        "audio": {"audio": {"id": "MEDIA2", "mime_type": "audio/ogg", "voice": True}},
        "location": {"location": {"latitude": 10.5, "longitude": -66.9, "name": text}},
        "reaction": {"reaction": {"message_id": "wamid.SOMETHING", "emoji": text[:2]}},
        "interactive": {"interactive": {"type": "button_reply",
                                        "button_reply": {"id": "pay", "title": text}}},
        "button": {"button": {"text": text, "payload": text}},
        "contacts": {"contacts": [{"name": {"formatted_name": text}, "phones": [{"phone": "+58 412"}]}]},
        "order": {"order": {"catalog_id": "C1", "text": text, "product_items": [{"quantity": 1}]}},
        "revoke": {"revoke": {"original_message_id": "wamid.SOMETHING"}},
        "edit": {"edit": {"original_message_id": "wamid.SOMETHING",
                          "message": {"type": "text", "text": {"body": text}}}},
        "unsupported": {"errors": [{"code": 131051, "title": text}]},
        "request_welcome": {},
    }[kind]


ODD_BUT_VALID = {  # a change a reader must survive; the message stays valid
    "none": lambda m: None,
    "nan field": lambda m: m.update(extra="@@NAN@@"),
    "infinity field": lambda m: m.update(extra="@@INFINITY@@"),
    "1e400 field": lambda m: m.update(extra="@@1E400@@"),
    "5000-digit field": lambda m: m.update(extra="@@5000_DIGITS@@"),
    "nested field": lambda m: m.update(extra="@@NESTED_40@@"),
    "long field": lambda m: m.update(extra="x" * 20_000),
    "hostile context": lambda m: m.update(context={"from": "\x00\ud800", "id": "wamid.\x00"}),
    "integer timestamp": lambda m: m.update(timestamp=int(m["timestamp"])),
}
BREAKING = {  # a change that makes the message invalid: it must be skipped, never crash the body
    "no id": lambda m: m.pop("id"),
    "id is an object": lambda m: m.update(id={"x": 1}),
    "nan timestamp": lambda m: m.update(timestamp="@@NAN@@"),
    "5000-digit timestamp": lambda m: m.update(timestamp="@@5000_DIGITS@@"),
    "timestamp past year 9999": lambda m: m.update(timestamp=str(10**15)),
    "word timestamp": lambda m: m.update(timestamp="ayer"),
    "no sender": lambda m: m.update({"from": None}),
    "sender is a list": lambda m: m.update({"from": ["584120000001"]}),
    "nul sender": lambda m: m.update({"from": "5841\x00"}),
    "no type": lambda m: m.pop("type"),
    "type is a list": lambda m: m.update(type=["text"]),
    "nul type": lambda m: m.update(type="te\x00xt"),
    "text without body": lambda m: m.update(type="text", text={"caption": "?"}),
    "text body is a number": lambda m: m.update(type="text", text={"body": 7}),
    "infinite latitude": lambda m: m.update(type="location", location={"latitude": "@@INFINITY@@",
                                                                       "longitude": 1}),
    "revoke of nothing": lambda m: m.update(type="revoke", revoke={"original_message_id": "\x00"}),
}


@st.composite
def deliveries(draw):
    """Draw a delivery: good (possibly odd) and broken messages and statuses, in one body."""
    good, broken, pieces = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        wamid = f"wamid.GOOD{next(_ids)}"
        wa_id, user_id = draw(st.sampled_from(SENDERS))
        message = inbound_message(draw(st.sampled_from(KINDS)), wa_id=wa_id, wamid=wamid)
        message = {k: v for k, v in message.items() if k not in ("text",)} | _content(message["type"],
                                                                                     draw(hostile_text))
        if user_id:
            message["from_user_id"] = user_id
        ODD_BUT_VALID[draw(st.sampled_from(sorted(ODD_BUT_VALID)))](message)
        good.append(wamid)
        pieces.append(message)
    for _ in range(draw(st.integers(0, 3))):
        wamid = f"wamid.BROKEN{next(_ids)}"
        message = inbound_message(wamid=wamid, text={"body": draw(hostile_text)})
        BREAKING[draw(st.sampled_from(sorted(BREAKING)))](message)
        broken.append(wamid)
        pieces.append(message)
    pieces = draw(st.permutations(pieces))
    statuses = [delivery_status(f"wamid.S{next(_ids)}", draw(st.sampled_from(["sent", "read", "played"])))
                for _ in range(draw(st.integers(0, 2)))]
    if statuses and draw(st.booleans()):
        statuses[0]["timestamp"] = draw(st.sampled_from(["@@NAN@@", "@@5000_DIGITS@@", "x"]))
    names = draw(st.lists(hostile_text, min_size=2, max_size=2))
    contacts = [{"profile": {"name": name}, "wa_id": wa_id, "user_id": f"VE.{wa_id}"}
                for name, (wa_id, _) in zip(names, SENDERS[:2], strict=True)]
    body = webhook_body(change_value(messages=pieces, statuses=statuses, contacts=contacts))
    return raw(body), good, broken


KINDS = ["text", "image", "audio", "location", "reaction", "interactive", "button", "contacts", "order",
         "revoke", "edit", "unsupported", "request_welcome"]
FUZZ_EXAMPLES = 400


@settings(max_examples=FUZZ_EXAMPLES, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(delivery=deliveries())
def test_any_mixed_delivery_is_acknowledged_and_every_valid_message_stored(deliver, delivery):
    body, good, broken = delivery
    response = deliver(raw=body)
    assert response.status_code == 200, response.content[:300]
    assert response.json()["rejected"] >= len(broken)
    kept = set(Message.objects.filter(provider_message_id__in=good + broken)
               .values_list("provider_message_id", flat=True))
    assert kept == set(good)
    for message in Message.objects.filter(provider_message_id__in=good):
        assert len(message.text) <= 4096


def test_an_error_code_in_non_ascii_digits_is_read_as_no_code(deliver):
    """'²'.isdigit() is True but int('²') raises: such a code must not cost the body."""
    failed = delivery_status("wamid.NOBODY", "failed", errors=[{"code": "²", "title": "Odd"}])
    response = deliver(raw=raw(webhook_body(change_value(statuses=[failed]))))
    assert response.status_code == 200
