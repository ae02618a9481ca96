"""Outbound channel: send a text, a template or a file to a WhatsApp user through the Cloud API, or record it.

`WhatsAppCloudSender` speaks the documented Graph API JSON with httpx (one endpoint, one body)
and owns its retry policy: rate limits (HTTP 429, codes 4, 80007, 130429, 131056) and server
errors (5xx, code 2) are retried at most `max_attempts` times in all, with exponential backoff
or Meta's Retry-After, through an injected `sleep`; any other 4xx is final. A connection that
never reached Meta is retried; a request that timed out after being sent is not, because Meta
may have delivered it and a retry would send the customer the same reply twice.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Protocol

import httpx

logger = logging.getLogger(__name__)

# Meta's throttling codes: app-level calls, WABA rate, phone-number throughput, pair rate.
RATE_LIMIT_CODES = frozenset({4, 80007, 130429, 131056})
# "Service temporarily unavailable": retried like a 5xx.
TRANSIENT_CODES = frozenset({2})


@dataclass(frozen=True)
class SendResult:
    ok: bool
    provider_message_id: str | None
    status: str  # queued (accepted by Meta; sent/delivered/read follow by webhook) | sent | failed
    error: str = ""
    attempts: int = 1


@dataclass(frozen=True)
class OutgoingFile:
    """A file to send: its bytes, the type they proved (desk.media_types), its name and a caption."""

    content: bytes
    mime: str
    filename: str
    kind: str  # image | document
    caption: str = ""


class Sender(Protocol):
    def send_text(self, *, to: str = "", user_id: str = "", text: str) -> SendResult:
        """Send one text message to a WhatsApp user: by phone number (`to`), else by business-scoped id."""
        ...

    def send_interactive(self, *, to: str = "", user_id: str = "", interactive: dict) -> SendResult:
        """Send one interactive message (reply buttons: the Cloud API's `interactive` object) to a WhatsApp user."""
        ...

    def send_template(self, *, to: str = "", user_id: str = "", name: str, language: str,
                      parameters: list[str]) -> SendResult:
        """Send an approved template with its body's values, in order ({{1}}, {{2}}…)."""
        ...

    def send_file(self, *, to: str = "", user_id: str = "", file: OutgoingFile) -> SendResult:
        """Upload a file to WhatsApp and send it as an image or document message."""
        ...


@dataclass
class RecordingSender:
    """Send nothing; return a synthetic id so the conversation shows the message (web chat, demos, tests)."""

    sent: list[dict] = field(default_factory=list)

    def send_text(self, *, to: str = "", user_id: str = "", text: str) -> SendResult:
        provider_message_id = f"rec-{uuid.uuid4()}"
        self.sent.append({"to": to, "user_id": user_id, "text": text,
                          "provider_message_id": provider_message_id})
        return SendResult(ok=True, provider_message_id=provider_message_id, status="sent", attempts=1)

    def send_interactive(self, *, to: str = "", user_id: str = "", interactive: dict) -> SendResult:
        provider_message_id = f"rec-{uuid.uuid4()}"
        self.sent.append({"to": to, "user_id": user_id, "interactive": interactive,
                          "provider_message_id": provider_message_id})
        return SendResult(ok=True, provider_message_id=provider_message_id, status="sent", attempts=1)

    def send_template(self, *, to: str = "", user_id: str = "", name: str, language: str,
                      parameters: list[str]) -> SendResult:
        provider_message_id = f"rec-{uuid.uuid4()}"
        self.sent.append({"to": to, "user_id": user_id, "template": name, "language": language,
                          "parameters": list(parameters), "provider_message_id": provider_message_id})
        return SendResult(ok=True, provider_message_id=provider_message_id, status="sent", attempts=1)

    def send_file(self, *, to: str = "", user_id: str = "", file: OutgoingFile) -> SendResult:
        provider_message_id = f"rec-{uuid.uuid4()}"
        self.sent.append({"to": to, "user_id": user_id, "file": file.filename, "kind": file.kind,
                          "caption": file.caption, "provider_message_id": provider_message_id})
        return SendResult(ok=True, provider_message_id=provider_message_id, status="sent", attempts=1)


class WhatsAppCloudSender:
    """Send text, template and file messages with the WhatsApp Cloud API (POST {base}/{phone_number_id}/messages)."""

    def __init__(self, *, base_url: str, access_token: str, phone_number_id: str,
                 timeout: httpx.Timeout | None = None, max_attempts: int = 3, backoff_s: float = 1.0,
                 max_wait_s: float = 20.0, sleep: Callable[[float], None] = time.sleep,
                 client: httpx.Client | None = None):
        if not access_token or not phone_number_id:
            raise ValueError("WhatsAppCloudSender needs an access token and a phone number id")
        self.url = f"{base_url.rstrip('/')}/{phone_number_id}/messages"
        self.media_url = f"{base_url.rstrip('/')}/{phone_number_id}/media"
        self.max_attempts = max(1, max_attempts)
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self._client = client or httpx.Client(
            timeout=timeout or httpx.Timeout(10.0, connect=3.0),
            headers={"Authorization": f"Bearer {access_token}"},
        )

    def close(self) -> None:
        self._client.close()

    def send_text(self, *, to: str = "", user_id: str = "", text: str) -> SendResult:
        """Send text to a user; retry rate limits and server errors; return Meta's message id on success.

        A user known by phone number gets `to`; a username-only user, whose number Meta withholds, is
        reached through `recipient` with their business-scoped user id (BSUID). Meta gives `to`
        precedence when both are set and recommends the number when there is one, so only one is sent.
        """
        return self._message(to=to, user_id=user_id, content={
            "type": "text", "text": {"preview_url": False, "body": text}})

    def send_interactive(self, *, to: str = "", user_id: str = "", interactive: dict) -> SendResult:
        """Send an interactive message (reply buttons) with the same recipient rule and retry policy as a text."""
        return self._message(to=to, user_id=user_id, content={"type": "interactive", "interactive": interactive})

    def send_template(self, *, to: str = "", user_id: str = "", name: str, language: str,
                      parameters: list[str]) -> SendResult:
        """Send an approved template (Meta delivers it outside the 24-hour window too).

        The body's values go in one `body` component, each a `text` parameter, in the variables' order.
        """
        components = ([{"type": "body", "parameters": [{"type": "text", "text": value} for value in parameters]}]
                      if parameters else [])
        return self._message(to=to, user_id=user_id, content={
            "type": "template",
            "template": {"name": name, "language": {"code": language}, "components": components}})

    def send_file(self, *, to: str = "", user_id: str = "", file: OutgoingFile) -> SendResult:
        """Upload the file (POST /{phone-number-id}/media), then send a message naming its media id."""
        if not to and not user_id:
            return _no_recipient()
        uploaded = self._retrying(lambda: self._attempt_upload(file))
        if not uploaded.ok:
            return SendResult(ok=False, provider_message_id=None, status="failed", attempts=uploaded.attempts,
                              error=f"upload refused: {uploaded.error}")
        media = {"id": uploaded.provider_message_id}
        if file.caption:
            media["caption"] = file.caption
        if file.kind == "document":
            media["filename"] = file.filename
        return self._message(to=to, user_id=user_id, content={"type": file.kind, file.kind: media})

    def _message(self, *, to: str, user_id: str, content: dict) -> SendResult:
        if not to and not user_id:
            return _no_recipient()
        body = {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            **({"to": to} if to else {"recipient": user_id}),
            **content,
        }
        return self._retrying(lambda: self._attempt(body))

    def _retrying(self, attempt_once: Callable[[], _Attempt]) -> SendResult:
        attempt = 0
        while True:
            attempt += 1
            outcome = attempt_once()
            if outcome.result is not None:
                return _with_attempts(outcome.result, attempt)
            if attempt >= self.max_attempts:
                return SendResult(ok=False, provider_message_id=None, status="failed", attempts=attempt,
                                  error=f"{outcome.error} (gave up after {attempt} attempts)")
            wait = outcome.retry_after
            if wait is None:
                wait = self.backoff_s * 2 ** (attempt - 1)
            if wait > self.max_wait_s:
                # Waiting longer would hold a worker hostage; the caller decides what to do next.
                return SendResult(ok=False, provider_message_id=None, status="failed", attempts=attempt,
                                  error=f"{outcome.error} (WhatsApp asks to wait {wait:g} s; not retried)")
            logger.info("WhatsApp send attempt %s failed (%s); retrying in %.1f s",
                        attempt, outcome.error, wait)
            self.sleep(wait)

    def _attempt_upload(self, file: OutgoingFile) -> _Attempt:
        return self._attempt(None, url=self.media_url, id_of=lambda payload: payload["id"], files={
            "file": (file.filename, file.content, file.mime)},
            data={"messaging_product": "whatsapp", "type": file.mime})

    def _attempt(self, body: dict | None, *, url: str = "", id_of=None, **request) -> _Attempt:
        try:
            response = self._client.post(url or self.url, **({"json": body} if body is not None else request))
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            return _Attempt(error=f"could not connect to the WhatsApp API: {exc}")
        except httpx.TimeoutException as exc:
            return _Attempt(result=SendResult(
                ok=False, provider_message_id=None, status="failed",
                error=f"WhatsApp API timed out after the request was sent ({type(exc).__name__}); "
                      f"not retried, the message may have been delivered"))
        except httpx.HTTPError as exc:
            return _Attempt(result=SendResult(ok=False, provider_message_id=None, status="failed",
                                              error=f"WhatsApp API request failed: {exc}"))

        payload = _json_or_none(response)
        if response.is_success:
            try:
                wamid = str(id_of(payload) if id_of else payload["messages"][0]["id"])
            except (KeyError, IndexError, TypeError):
                return _Attempt(result=SendResult(
                    ok=False, provider_message_id=None, status="failed",
                    error=f"WhatsApp API answered {response.status_code} without "
                          f"{'an id' if id_of else 'messages[0].id'}"))
            # Accepted by Meta; the `sent`/`delivered`/`read` statuses arrive by webhook.
            return _Attempt(result=SendResult(ok=True, provider_message_id=wamid, status="queued"))

        code, message = _graph_error(payload)
        error = f"WhatsApp API {response.status_code}: {message}"
        if code is not None:
            error += f" (code {code})"
        retryable = (response.status_code == 429 or response.status_code >= 500
                     or code in RATE_LIMIT_CODES or code in TRANSIENT_CODES)
        if not retryable:
            return _Attempt(result=SendResult(ok=False, provider_message_id=None, status="failed",
                                              error=error))
        return _Attempt(error=error, retry_after=_retry_after(response.headers.get("Retry-After")))


@dataclass(frozen=True)
class _Attempt:
    result: SendResult | None = None  # final: success, or an error a retry cannot fix
    error: str = ""  # retryable error
    retry_after: float | None = None


def _no_recipient() -> SendResult:
    return SendResult(ok=False, provider_message_id=None, status="failed", attempts=0,
                      error="no recipient: the contact has neither a WhatsApp number nor a user id")


def _with_attempts(result: SendResult, attempts: int) -> SendResult:
    return SendResult(ok=result.ok, provider_message_id=result.provider_message_id, status=result.status,
                      error=result.error, attempts=attempts)


def _json_or_none(response: httpx.Response):
    try:
        return response.json()
    except ValueError:
        return None


def _graph_error(payload) -> tuple[int | None, str]:
    """Return the Graph API error code and its most useful message."""
    error = payload.get("error") if isinstance(payload, dict) else None
    if not isinstance(error, dict):
        return None, "no error details in the response"
    code = error.get("code")
    message = str(error.get("message") or error.get("error_user_msg") or "unknown error")
    data = error.get("error_data")
    if isinstance(data, dict) and data.get("details") and data["details"] not in message:
        message = f"{message} — {data['details']}"
    return (int(code) if isinstance(code, int) else None), message


def _retry_after(value: str | None) -> float | None:
    """Return the seconds a Retry-After header asks for (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


_senders: dict[tuple[str, str, str], WhatsAppCloudSender] = {}
_senders_lock = threading.Lock()


def get_sender() -> Sender:
    """Return the Cloud API sender when its token and phone number id are set, else a RecordingSender."""
    from django.conf import settings

    token, phone_number_id = settings.WHATSAPP_ACCESS_TOKEN, settings.WHATSAPP_PHONE_NUMBER_ID
    if not (token and phone_number_id):
        return RecordingSender()
    key = (settings.WHATSAPP_API_BASE_URL, token, phone_number_id)
    with _senders_lock:
        # One sender (one connection pool) per process and configuration: no TLS handshake per reply.
        if key not in _senders:
            _senders[key] = WhatsAppCloudSender(base_url=key[0], access_token=token,
                                                phone_number_id=phone_number_id)
        return _senders[key]
