"""WhatsApp Cloud API webhooks as data: signature check, reading and parsing, no Django.

`read_webhook` turns the raw bytes of a signed delivery into the messages and statuses it
carries. The bytes are read with limits (size, nesting depth, number literals) so no body can
make the reader raise anything but `BodyRefused`. Each message and each status is then checked
on its own against the schema of its kind: one that fails is reported in `errors` with the
reason and skipped, and the good ones around it are kept, so a partial body never loses a
customer's message. Only a body that cannot be read at all (too large, not JSON, nested deeper
than any Meta body, or not a WhatsApp Business Account webhook) is refused as a whole.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from desk.channel import MEDIA_KINDS, InboundMessage
from desk.satisfaction_rules import is_satisfaction_button
from desk.storable import identifier_problem, storable_json, storable_text

WEBHOOK_OBJECT = "whatsapp_business_account"

# Limits of a body. Meta's bodies are a few kilobytes and about ten levels deep; a text message is
# at most 4,096 characters. Django itself refuses bodies over 2.5 MB (DATA_UPLOAD_MAX_MEMORY_SIZE),
# so this cap answers first and says why.
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_NESTING = 64
# Inside one message, what lies deeper than this is not kept in the stored copy of Meta's message.
MESSAGE_DEPTH = 16
# Meta's numbers are Unix times, prices, coordinates: never more than 20 digits.
MAX_INT_DIGITS = 20
MAX_FLOAT_CHARS = 40
# Identifiers, as long as the columns that hold them (desk.models; a test keeps them equal).
WAMID_MAX = 128
WA_ID_MAX = 32
USER_ID_MAX = 160
KIND_MAX = 20

# `played`: a voice message the business sent was played (applied as `read`).
STATUS_VALUES = frozenset({"sent", "delivered", "read", "played", "failed"})


@dataclass(frozen=True)
class StatusUpdate:
    wamid: str
    status: str  # sent | delivered | read | played | failed
    timestamp: datetime
    recipient_id: str
    phone_number_id: str
    error_code: int | None = None
    error_title: str = ""
    error_detail: str = ""

    @property
    def error(self) -> str:
        """Return Meta's first error as one line for the desk ('' when there is none)."""
        if self.error_code is None and not self.error_title:
            return ""
        text = self.error_title or "error"
        if self.error_code is not None:
            text = f"{text} (code {self.error_code})"
        if self.error_detail and self.error_detail != self.error_title:
            text = f"{text}: {self.error_detail}"
        return text


@dataclass
class WebhookBatch:
    messages: list[InboundMessage] = field(default_factory=list)
    statuses: list[StatusUpdate] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # one per skipped piece, with the reason
    # Changes of other subscribed fields (templates, account updates, …): valid, not ours.
    ignored_fields: list[str] = field(default_factory=list)
    numbers_dropped: int = 0  # NaN, ±Infinity or oversized literals, read as null


class BodyRefused(ValueError):
    """The body cannot be read at all; nothing in it is stored."""


class _Malformed(Exception):
    """One piece of the body cannot be read; reported, then skipped."""


def signature_header(raw_body: bytes, app_secret: str) -> str:
    """Return the X-Hub-Signature-256 value Meta would send for this body."""
    digest = hmac.new(app_secret.encode(), raw_body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify_signature(raw_body: bytes, header: str | None, app_secret: str) -> bool:
    """Return True when header is `sha256=<hex>` of HMAC-SHA256(app_secret, raw_body)."""
    if not app_secret or not header:
        return False
    scheme, _, received = header.strip().partition("=")
    if scheme.strip().lower() != "sha256" or not received:
        return False
    expected = signature_header(raw_body, app_secret).partition("=")[2]
    # Bytes on both sides: compare_digest refuses non-ASCII str, and a forged header may hold any.
    return hmac.compare_digest(expected.encode(), received.strip().lower().encode("utf-8", "replace"))


# Reading the bytes ----------------------------------------------------------------------------

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def read_webhook(raw_body: bytes) -> WebhookBatch:
    """Return the messages and statuses of a raw webhook body; raise BodyRefused if it cannot be read."""
    if len(raw_body) > MAX_BODY_BYTES:
        raise BodyRefused(f"the body is larger than {MAX_BODY_BYTES:,} bytes")
    try:
        text = raw_body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyRefused(f"invalid JSON body: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if _nesting(text) > MAX_NESTING:
        # json.loads would recurse once per level (RecursionError near 1,000); no Meta body comes close.
        raise BodyRefused(f"invalid JSON body: nested deeper than {MAX_NESTING} levels")
    dropped = 0

    def drop(_literal) -> None:
        """Count a literal a Meta body never holds; it reads as null."""
        nonlocal dropped
        dropped += 1

    def parse_int(literal: str):
        # int() of 5,000 digits raises ValueError (Python's conversion limit); no Meta number is that long.
        return drop(literal) if len(literal.lstrip("-")) > MAX_INT_DIGITS else int(literal)

    def parse_float(literal: str):
        value = float(literal) if len(literal) <= MAX_FLOAT_CHARS else math.inf
        return value if math.isfinite(value) else drop(literal)  # 1e400 reads as infinity

    try:
        # NaN and ±Infinity are not JSON (RFC 8259) and jsonb refuses them: parse_constant drops them.
        body = json.loads(text, parse_int=parse_int, parse_float=parse_float, parse_constant=drop)
    except (ValueError, RecursionError) as exc:
        raise BodyRefused(f"invalid JSON body: {exc}") from None
    batch = parse_webhook(body)
    batch.numbers_dropped = dropped
    return batch


def _nesting(text: str) -> int:
    """Return how deep the JSON text nests (strings ignored), stopping once past MAX_NESTING."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return 0  # cannot nest deeper than it has brackets
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                break
    return deepest


# Parsing the body ------------------------------------------------------------------------------

def parse_webhook(body) -> WebhookBatch:
    """Return the messages and statuses of a parsed webhook body; raise BodyRefused if it is not one."""
    if not isinstance(body, dict):
        raise BodyRefused(f"not a WhatsApp webhook: the body is a JSON {type(body).__name__}, not an object")
    if body.get("object") != WEBHOOK_OBJECT:
        raise BodyRefused(
            f"not a WhatsApp webhook: 'object' is {_shown(body.get('object'))}, expected {WEBHOOK_OBJECT!r}"
        )
    entries = body.get("entry")
    if not isinstance(entries, list):
        raise BodyRefused("not a WhatsApp webhook: 'entry' is missing or not a list")

    batch = WebhookBatch()
    for e, entry in enumerate(entries):
        changes = entry.get("changes") if isinstance(entry, dict) else None
        if not isinstance(changes, list):
            batch.errors.append(f"entry[{e}]: 'changes' is missing or not a list")
            continue
        for c, change in enumerate(changes):
            where = f"entry[{e}].changes[{c}]"
            if not isinstance(change, dict):
                batch.errors.append(f"{where}: not an object")
                continue
            if change.get("field", "messages") != "messages":
                batch.ignored_fields.append(storable_text(_plain(change.get("field"))[:80]))
                continue
            _parse_value(change.get("value"), where=f"{where}.value", batch=batch)
    return batch


def _parse_value(value, *, where: str, batch: WebhookBatch) -> None:
    if not isinstance(value, dict):
        batch.errors.append(f"{where}: not an object")
        return
    product = value.get("messaging_product", "whatsapp")
    if product != "whatsapp":
        batch.errors.append(f"{where}: messaging_product is {_shown(product)}, expected 'whatsapp'")
        return
    metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    phone_number_id = storable_text(_plain(metadata.get("phone_number_id"))[:64])
    for n, error in enumerate(_list(value.get("errors"))):
        # Errors of the change itself (not of one message): Meta could not deliver something to us.
        if isinstance(error, dict):
            batch.errors.append(f"{where}.errors[{n}]: Meta reported {_error_text(error)}")

    contacts = _contacts_by_id(_list(value.get("contacts")))
    for n, raw in enumerate(_list(value.get("messages"))):
        try:
            batch.messages.append(_message(raw, contacts=contacts, phone_number_id=phone_number_id))
        except _Malformed as exc:
            batch.errors.append(f"{where}.messages[{n}]: {exc}")
    for n, raw in enumerate(_list(value.get("statuses"))):
        try:
            batch.statuses.append(_status(raw, phone_number_id=phone_number_id))
        except _Malformed as exc:
            batch.errors.append(f"{where}.statuses[{n}]: {exc}")


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _plain(value) -> str:
    """Return a string or integer field as text, anything else as ''."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return ""


def _shown(value) -> str:
    """Return a value for a log line, never longer than a line."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def _contacts_by_id(contacts: list) -> dict[str, dict]:
    """Index the contacts array by wa_id and by user_id (messages point at either)."""
    index: dict[str, dict] = {}
    for contact in contacts:
        if not isinstance(contact, dict):
            continue
        for key in ("wa_id", "user_id"):
            if _plain(contact.get(key)):
                index[_plain(contact[key])] = contact
    return index


def _identifier(raw: dict, key: str, *, max_length: int, required: bool = False) -> str:
    """Return the identifier under `key` as Meta sent it ('' when absent); refuse one that is not an id."""
    value = raw.get(key)
    if value is None or value == "":
        if required:
            raise _Malformed(f"missing {key!r}")
        return ""
    text = _plain(value).strip()
    if not text:
        raise _Malformed(f"missing {key!r}" if required else f"{key!r} is not a string")
    problem = identifier_problem(text, max_length=max_length)
    if problem:
        raise _Malformed(f"{key!r} {problem}")
    return text


def _timestamp(raw: dict) -> datetime:
    value = raw.get("timestamp")
    try:
        seconds = int(_plain(value))
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise _Malformed(f"'timestamp' is {_shown(value)}, expected Unix seconds") from None


def _object(raw: dict, key: str) -> dict:
    value = raw.get(key)
    if not isinstance(value, dict):
        raise _Malformed(f"type is {key!r} but the {key!r} object is missing")
    return value


def _message(raw, *, contacts: dict[str, dict], phone_number_id: str) -> InboundMessage:
    if not isinstance(raw, dict):
        raise _Malformed("not an object")
    wamid = _identifier(raw, "id", max_length=WAMID_MAX, required=True)
    kind = _identifier(raw, "type", max_length=KIND_MAX, required=True)
    timestamp = _timestamp(raw)
    wa_id = _identifier(raw, "from", max_length=WA_ID_MAX)
    user_id = _identifier(raw, "from_user_id", max_length=USER_ID_MAX)
    if not wa_id and not user_id:
        raise _Malformed(f"message {wamid} has neither 'from' nor 'from_user_id'")
    contact = contacts.get(wa_id) or contacts.get(user_id) or {}
    if not user_id and contact:
        try:
            user_id = _identifier(contact, "user_id", max_length=USER_ID_MAX)
        except _Malformed:
            pass  # the contacts array only adds to the message: a bad id there is left out, not fatal
    profile = contact.get("profile") if isinstance(contact.get("profile"), dict) else {}

    errors = [e for e in _list(raw.get("errors")) if isinstance(e, dict)]
    if errors and kind not in _OBJECTLESS and not isinstance(raw.get(kind), dict):
        # Meta could not deliver what the customer sent (e.g. 131000 on an interactive reply): stored
        # as `unsupported`, so the bot escalates it, with Meta's error as the text the agent reads.
        content = _Content(_undelivered(errors), {"meta_type": kind}, kind="unsupported")
    else:
        content = _READERS.get(kind, _other)(raw, kind)

    payload = {"type": content.kind or kind, **content.details}
    for key in ("context", "referral", "errors"):
        if raw.get(key):
            payload[key] = raw[key]
    payload["timestamp"] = timestamp.isoformat()
    payload["raw"] = raw
    return InboundMessage(
        wamid=wamid, kind=content.kind or kind, wa_id=wa_id, user_id=user_id,
        name=storable_text(_plain(profile.get("name"))), timestamp=timestamp,
        text=storable_text(content.text), payload=storable_json(payload, max_depth=MESSAGE_DEPTH),
        phone_number_id=phone_number_id, **content.extra,
    )


# One schema per message kind: each reader checks its kind's object and returns what the desk keeps.

@dataclass
class _Content:
    text: str
    details: dict = field(default_factory=dict)
    kind: str = ""  # when stored under another kind than Meta's
    extra: dict = field(default_factory=dict)  # InboundMessage fields of this kind


def _text(raw: dict, kind: str) -> _Content:
    body = _object(raw, "text").get("body")
    if not isinstance(body, str):
        raise _Malformed("text message without 'text.body'")
    return _Content(body)


def _media(raw: dict, kind: str) -> _Content:
    media = _object(raw, kind)
    media_id = _identifier(media, "id", max_length=WAMID_MAX)
    if not media_id:
        raise _Malformed(f"{kind} message without a media 'id'")
    details = {"media_id": media_id}
    details.update({k: media[k] for k in ("mime_type", "sha256", "caption", "filename")
                    if isinstance(media.get(k), str)})
    details.update({k: media[k] for k in ("animated", "voice") if isinstance(media.get(k), bool)})
    return _Content(details.get("caption", ""), details)


def _coordinate(value, limit: float):
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) \
            and abs(value) <= limit:
        return value
    raise _Malformed("location message without a valid latitude/longitude")


def _location(raw: dict, kind: str) -> _Content:
    location = _object(raw, "location")
    details = {"latitude": _coordinate(location.get("latitude"), 90),
               "longitude": _coordinate(location.get("longitude"), 180)}
    details.update({k: location[k] for k in ("name", "address", "url") if isinstance(location.get(k), str)})
    label = ", ".join(details[k] for k in ("name", "address") if details.get(k))
    return _Content(label or f"{details['latitude']}, {details['longitude']}", details)


def _reaction(raw: dict, kind: str) -> _Content:
    reaction = _object(raw, "reaction")
    reacted = _identifier(reaction, "message_id", max_length=WAMID_MAX)
    if not reacted:
        raise _Malformed("reaction without 'reaction.message_id'")
    emoji = storable_text(_plain(reaction.get("emoji"))[:32])  # '' means the reaction was removed
    details = {"emoji": emoji, "reacted_message_id": reacted}
    return _Content(emoji, details, extra=dict(details))


def _interactive(raw: dict, kind: str) -> _Content:
    interactive = _object(raw, "interactive")
    reply_type = _plain(interactive.get("type"))
    reply = interactive.get(reply_type) if isinstance(interactive.get(reply_type), dict) else {}
    if reply_type == "call_permission_reply":  # may the business call? No question to answer.
        details = {k: reply[k] for k in ("response", "response_source") if isinstance(reply.get(k), str)}
        details.update({k: reply[k] for k in ("is_permanent", "expiration_timestamp") if k in reply})
        return _Content("", {"reply_type": reply_type, **details}, kind="call_permission")
    details = {"reply_type": reply_type, "reply_id": _plain(reply.get("id"))}
    if reply_type == "button_reply" and is_satisfaction_button(details["reply_id"]):
        # A tap on the satisfaction question's buttons: an answer to store, never a question for the bot.
        return _Content(_plain(reply.get("title")), details, kind="satisfaction")
    if reply_type == "nfm_reply":  # a WhatsApp Flow's answer
        details["response_json"] = _plain(reply.get("response_json"))
        return _Content(_plain(reply.get("body")), details)
    if isinstance(reply.get("description"), str):
        details["description"] = reply["description"]
    return _Content(_plain(reply.get("title")), details)


def _button(raw: dict, kind: str) -> _Content:  # quick-reply button of a template
    button = _object(raw, "button")
    return _Content(_plain(button.get("text")), {"button_payload": _plain(button.get("payload"))})


def _system(raw: dict, kind: str) -> _Content:
    system = _object(raw, "system")
    system_type = _plain(system.get("type"))
    # Meta's reference names the new id `wa_id`; older payloads and SDKs call it `new_wa_id`.
    new_wa_id = (_identifier(system, "wa_id", max_length=WA_ID_MAX)
                 or _identifier(system, "new_wa_id", max_length=WA_ID_MAX))
    new_user_id = (_identifier(system, "user_id", max_length=USER_ID_MAX)
                   or _identifier(system, "new_user_id", max_length=USER_ID_MAX))
    return _Content(_plain(system.get("body")), {"system_type": system_type},
                    extra={"system_type": system_type, "new_wa_id": new_wa_id, "new_user_id": new_user_id})


def _contacts(raw: dict, kind: str) -> _Content:
    shared = [c for c in _list(raw.get("contacts")) if isinstance(c, dict)]
    names = [_plain(c["name"].get("formatted_name")) for c in shared if isinstance(c.get("name"), dict)]
    return _Content(", ".join(n for n in names if n), {"contacts": shared})


def _order(raw: dict, kind: str) -> _Content:
    order = _object(raw, "order")
    items = [i for i in _list(order.get("product_items")) if isinstance(i, dict)]
    return _Content(_plain(order.get("text")), {"order": order, "order_items": len(items)})


def _revoke(raw: dict, kind: str) -> _Content:
    original = _identifier(_object(raw, "revoke"), "original_message_id", max_length=WAMID_MAX, required=True)
    return _Content("", {"original_message_id": original}, extra={"original_message_id": original})


def _edit(raw: dict, kind: str) -> _Content:
    edit = _object(raw, "edit")
    original = _identifier(edit, "original_message_id", max_length=WAMID_MAX, required=True)
    edited = edit.get("message")
    if not isinstance(edited, dict):
        raise _Malformed("edit without the edited 'message'")
    edited_kind = _plain(edited.get("type")) or "text"
    if edited_kind == "text":
        text = _text(edited, edited_kind).text
    elif edited_kind in MEDIA_KINDS:
        text = _plain(_object(edited, edited_kind).get("caption"))
    else:
        raise _Malformed(f"edit of a {_shown(edited_kind)} message, which has no text")
    return _Content(text, {"original_message_id": original, "edited_type": edited_kind},
                    extra={"original_message_id": original})


def _unsupported(raw: dict, kind: str) -> _Content:
    errors = [e for e in _list(raw.get("errors")) if isinstance(e, dict)]
    return _Content(_undelivered(errors) if errors else "")


def _other(raw: dict, kind: str) -> _Content:
    """'request_welcome', 'unknown' and kinds Meta adds later: stored with Meta's message."""
    return _Content("")


_READERS: dict[str, Callable[[dict, str], _Content]] = {
    "text": _text, **dict.fromkeys(MEDIA_KINDS, _media), "location": _location, "reaction": _reaction,
    "interactive": _interactive, "button": _button, "system": _system, "contacts": _contacts,
    "order": _order, "revoke": _revoke, "edit": _edit, "unsupported": _unsupported,
}
# Kinds whose content is not an object named after the kind.
_OBJECTLESS = frozenset({"contacts", "unsupported", "request_welcome"})


def _undelivered(errors: list[dict]) -> str:
    reasons = "; ".join(_error_text(e) for e in errors[:3])
    return storable_text(f"WhatsApp could not deliver what the customer sent: {reasons}")


def _status(raw, *, phone_number_id: str) -> StatusUpdate:
    if not isinstance(raw, dict):
        raise _Malformed("not an object")
    wamid = _identifier(raw, "id", max_length=WAMID_MAX, required=True)
    status = raw.get("status")
    if status not in STATUS_VALUES:
        raise _Malformed(f"status {_shown(status)} of {wamid} is not one of "
                         f"{', '.join(sorted(STATUS_VALUES))}")
    errors = [e for e in _list(raw.get("errors")) if isinstance(e, dict)]
    first = errors[0] if errors else {}
    details = first.get("error_data") if isinstance(first.get("error_data"), dict) else {}
    return StatusUpdate(
        wamid=wamid, status=status, timestamp=_timestamp(raw),
        recipient_id=storable_text((_plain(raw.get("recipient_id")) or _plain(raw.get("recipient_user_id")))
                                   [:USER_ID_MAX]),
        phone_number_id=phone_number_id,
        error_code=_error_code(first.get("code")),
        error_title=storable_text((_plain(first.get("title")) or _plain(first.get("message")))[:500]),
        error_detail=storable_text((_plain(details.get("details")) or _plain(first.get("message")))[:1000]),
    )


def _error_code(code) -> int | None:
    text = _plain(code)
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 12 else None


def _error_text(error: dict) -> str:
    title = _plain(error.get("title")) or _plain(error.get("message")) or "an error"
    return f"{storable_text(title[:200])} (code {_error_code(error.get('code'))})"
