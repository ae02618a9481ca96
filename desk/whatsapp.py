"""WhatsApp Cloud API webhooks as data: signature check and parsing, no Django.

`parse_webhook` takes a body exactly as Meta posts it and returns the inbound messages and
the delivery statuses it carries. One malformed message or status is reported in `errors`
and skipped; the good ones around it are kept, so a partial body never loses a customer's
message. A body that is not a WhatsApp Business Account webhook at all raises ValueError.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from datetime import UTC, datetime

WEBHOOK_OBJECT = "whatsapp_business_account"

# Kinds that never get a bot turn: a reaction is an acknowledgement, a system message comes
# from WhatsApp, not from the customer, and `request_welcome` (a user opening the chat for the
# first time) carries no question to answer or escalate. Every other kind (text, media,
# location, button and list replies, contacts, unsupported, …) is answered or escalated.
SILENT_KINDS = frozenset({"reaction", "system", "request_welcome"})

MEDIA_KINDS = ("image", "audio", "video", "document", "sticker")
STATUS_VALUES = frozenset({"sent", "delivered", "read", "failed"})


@dataclass(frozen=True)
class InboundMessage:
    wamid: str
    kind: str
    wa_id: str  # sender's WhatsApp id (phone digits); empty for a username-only user
    user_id: str  # business-scoped user id (BSUID), when Meta sends one
    name: str  # profile name from the contacts array
    timestamp: datetime
    text: str
    payload: dict
    phone_number_id: str  # the business number that received it
    reacted_message_id: str = ""
    emoji: str = ""
    system_type: str = ""
    new_wa_id: str = ""
    new_user_id: str = ""

    @property
    def wants_turn(self) -> bool:
        """Return True when the bot must answer (or escalate) this message."""
        return self.kind not in SILENT_KINDS


@dataclass(frozen=True)
class StatusUpdate:
    wamid: str
    status: str  # sent | delivered | read | failed
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
    errors: list[str] = field(default_factory=list)
    # Changes of other subscribed fields (templates, account updates, …): valid, not ours.
    ignored_fields: list[str] = field(default_factory=list)


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


def parse_webhook(body: dict) -> WebhookBatch:
    """Return the messages and statuses of a WhatsApp webhook body; raise ValueError if it is not one."""
    if not isinstance(body, dict):
        raise ValueError(f"not a WhatsApp webhook: the body is a JSON {type(body).__name__}, not an object")
    if body.get("object") != WEBHOOK_OBJECT:
        raise ValueError(
            f"not a WhatsApp webhook: 'object' is {body.get('object')!r}, expected {WEBHOOK_OBJECT!r}"
        )
    entries = body.get("entry")
    if not isinstance(entries, list):
        raise ValueError("not a WhatsApp webhook: 'entry' is missing or not a list")

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
                batch.ignored_fields.append(str(change.get("field")))
                continue
            _parse_value(change.get("value"), where=f"{where}.value", batch=batch)
    return batch


def _parse_value(value, *, where: str, batch: WebhookBatch) -> None:
    if not isinstance(value, dict):
        batch.errors.append(f"{where}: not an object")
        return
    product = value.get("messaging_product", "whatsapp")
    if product != "whatsapp":
        batch.errors.append(f"{where}: messaging_product is {product!r}, expected 'whatsapp'")
        return
    metadata = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
    phone_number_id = str(metadata.get("phone_number_id") or "")
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


def _contacts_by_id(contacts: list) -> dict[str, dict]:
    """Index the contacts array by wa_id and by user_id (messages point at either)."""
    index: dict[str, dict] = {}
    for contact in contacts:
        if not isinstance(contact, dict):
            continue
        for key in ("wa_id", "user_id"):
            if contact.get(key):
                index[str(contact[key])] = contact
    return index


def _required_str(raw: dict, key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str | int) or isinstance(value, bool) or str(value).strip() == "":
        raise _Malformed(f"missing {key!r}")
    return str(value).strip()


def _timestamp(raw: dict) -> datetime:
    value = raw.get("timestamp")
    try:
        seconds = int(str(value))
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        raise _Malformed(f"'timestamp' is {value!r}, expected Unix seconds") from None


def _object(raw: dict, key: str) -> dict:
    value = raw.get(key)
    if not isinstance(value, dict):
        raise _Malformed(f"type is {key!r} but the {key!r} object is missing")
    return value


def _message(raw, *, contacts: dict[str, dict], phone_number_id: str) -> InboundMessage:
    if not isinstance(raw, dict):
        raise _Malformed("not an object")
    wamid = _required_str(raw, "id")
    kind = _required_str(raw, "type")
    timestamp = _timestamp(raw)
    wa_id = str(raw.get("from") or "").strip()
    user_id = str(raw.get("from_user_id") or "").strip()
    if not wa_id and not user_id:
        raise _Malformed(f"message {wamid} has neither 'from' nor 'from_user_id'")
    contact = contacts.get(wa_id) or contacts.get(user_id) or {}
    user_id = user_id or str(contact.get("user_id") or "")
    profile = contact.get("profile") if isinstance(contact.get("profile"), dict) else {}

    text, details = _content(raw, kind)
    extra: dict[str, str] = {}
    if kind == "reaction":
        # '' emoji means the reaction was removed
        extra.update(reacted_message_id=details["reacted_message_id"], emoji=details["emoji"])
    elif kind == "system":
        system = _object(raw, "system")
        extra["system_type"] = details["system_type"]
        # Meta's reference names the new id `wa_id`; older payloads and SDKs call it `new_wa_id`.
        extra["new_wa_id"] = str(system.get("wa_id") or system.get("new_wa_id") or "")
        extra["new_user_id"] = str(system.get("user_id") or system.get("new_user_id") or "")

    payload = {"type": kind, **details}
    for key in ("context", "referral", "errors"):
        if raw.get(key):
            payload[key] = raw[key]
    payload["timestamp"] = timestamp.isoformat()
    payload["raw"] = raw
    return InboundMessage(
        wamid=wamid, kind=kind, wa_id=wa_id, user_id=user_id, name=str(profile.get("name") or ""),
        timestamp=timestamp, text=text, payload=payload, phone_number_id=phone_number_id, **extra,
    )


def _content(raw: dict, kind: str) -> tuple[str, dict]:
    """Return the message's readable text and the details the desk and the bot need."""
    if kind == "text":
        body = _object(raw, "text").get("body")
        if not isinstance(body, str):
            raise _Malformed("text message without 'text.body'")
        return body, {}
    if kind in MEDIA_KINDS:
        media = _object(raw, kind)
        if not media.get("id"):
            raise _Malformed(f"{kind} message without a media 'id'")
        details = {"media_id": str(media["id"])}
        for key in ("mime_type", "sha256", "caption", "filename", "animated", "voice"):
            if key in media:
                details[key] = media[key]
        return str(media.get("caption") or ""), details
    if kind == "location":
        location = _object(raw, "location")
        if "latitude" not in location or "longitude" not in location:
            raise _Malformed("location message without latitude/longitude")
        keys = ("latitude", "longitude", "name", "address", "url")
        details = {k: location[k] for k in keys if k in location}
        label = ", ".join(str(location[k]) for k in ("name", "address") if location.get(k))
        return label or f"{location['latitude']}, {location['longitude']}", details
    if kind == "reaction":
        reaction = _object(raw, "reaction")
        if not reaction.get("message_id"):
            raise _Malformed("reaction without 'reaction.message_id'")
        return str(reaction.get("emoji") or ""), {
            "emoji": str(reaction.get("emoji") or ""), "reacted_message_id": str(reaction["message_id"]),
        }
    if kind == "interactive":
        interactive = _object(raw, "interactive")
        reply_type = str(interactive.get("type") or "")
        reply = interactive.get(reply_type) if isinstance(interactive.get(reply_type), dict) else {}
        details = {"reply_type": reply_type, "reply_id": str(reply.get("id") or "")}
        if reply_type == "nfm_reply":  # a WhatsApp Flow's answer
            details["response_json"] = reply.get("response_json")
            return str(reply.get("body") or ""), details
        text = str(reply.get("title") or "")
        if reply.get("description"):
            details["description"] = reply["description"]
        return text, details
    if kind == "button":  # quick-reply button of a template
        button = _object(raw, "button")
        return str(button.get("text") or ""), {"button_payload": button.get("payload")}
    if kind == "system":
        system = _object(raw, "system")
        return str(system.get("body") or ""), {"system_type": str(system.get("type") or "")}
    if kind == "contacts":
        shared = _list(raw.get("contacts"))
        names = [str((c.get("name") or {}).get("formatted_name") or "")
                 for c in shared if isinstance(c, dict)]
        return ", ".join(n for n in names if n), {"contacts": shared}
    if kind == "order":
        order = raw.get("order") if isinstance(raw.get("order"), dict) else {}
        return str(order.get("text") or ""), {"order": order}
    # 'unsupported', 'unknown', 'request_welcome' and kinds Meta adds later: stored, the bot escalates.
    return "", {}


def _status(raw, *, phone_number_id: str) -> StatusUpdate:
    if not isinstance(raw, dict):
        raise _Malformed("not an object")
    wamid = _required_str(raw, "id")
    status = _required_str(raw, "status")
    if status not in STATUS_VALUES:
        raise _Malformed(f"status {status!r} of {wamid} is not one of sent, delivered, read, failed")
    errors = [e for e in _list(raw.get("errors")) if isinstance(e, dict)]
    first = errors[0] if errors else {}
    code = first.get("code")
    details = first.get("error_data") if isinstance(first.get("error_data"), dict) else {}
    return StatusUpdate(
        wamid=wamid, status=status, timestamp=_timestamp(raw),
        recipient_id=str(raw.get("recipient_id") or raw.get("recipient_user_id") or ""),
        phone_number_id=phone_number_id,
        error_code=int(code) if isinstance(code, int | str) and str(code).isdigit() else None,
        error_title=str(first.get("title") or first.get("message") or ""),
        error_detail=str(details.get("details") or first.get("message") or ""),
    )


def _error_text(error: dict) -> str:
    return f"{error.get('title') or error.get('message') or 'an error'} (code {error.get('code')})"
