"""A local HTTP server speaking the WhatsApp Cloud API send-message and media protocols, for the real sender
and the media download in tests.

`POST /{version}/{phone_number_id}/messages` with a Bearer token and the documented JSON body: text, template
(its shape checked as Meta does: name, language.code, components of body parameters of type text; against
`templates` when a test registers them) and image/document by media id or link.
`POST /{version}/{phone_number_id}/media` (multipart: messaging_product, type, file) stores an upload and answers
its id. `GET /{version}/{media_id}` answers the JSON with a short-lived `url` for a file in `media`; `GET` that url
with the token answers the bytes (`media_delay_s` makes it slow, for timeouts).
Replies are scripted per test: each queued step is a `Reply` (status, JSON body, headers,
optional delay); with an empty script every valid request is accepted with a fresh wamid.
Requests that Meta would refuse (no or wrong token, another phone number id, a body without
messaging_product, to or recipient, text.body) get Meta's error objects whatever the script says. Every
request is recorded (path, headers, JSON body).
"""

from __future__ import annotations

import email
import email.policy
import hashlib
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int
    body: dict
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0


def graph_error(code: int, message: str, *, title: str = "", details: str = "",
                kind: str = "OAuthException") -> dict:
    """Return a Graph API error body shaped like Meta's."""
    error = {"message": message, "type": kind, "code": code, "fbtrace_id": "AbCdEfFakeTrace"}
    if details or title:
        error["error_data"] = {"messaging_product": "whatsapp", "details": details or title}
    return {"error": error}


class FakeGraph:
    API_VERSION = "v21.0"

    def __init__(self, *, access_token: str = "test-token", phone_number_id: str = "106540352242922"):
        self.access_token = access_token
        self.phone_number_id = phone_number_id
        self.requests: list[dict] = []
        self.script: list[Reply] = []
        # Approved templates Meta knows: (name, language code) -> number of body parameters. Empty: any name.
        self.templates: dict[tuple[str, str], int] = {}
        self.media: dict[str, tuple[bytes, str]] = {}  # media id -> (bytes, declared MIME type)
        self.media_delay_s = 0.0
        self.uploads: dict[str, dict] = {}  # media id -> {"content", "type", "filename"}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/{self.API_VERSION}"

    def __enter__(self) -> FakeGraph:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    # Scripted replies -------------------------------------------------------------------------

    @staticmethod
    def accepted(wamid: str | None = None) -> Reply:
        return Reply(200, {"messaging_product": "whatsapp", "contacts": [{"input": "", "wa_id": ""}],
                           "messages": [{"id": wamid or FakeGraph.new_wamid()}]})

    @staticmethod
    def too_many_requests(retry_after: float | None = None, code: int = 130429) -> Reply:
        headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
        return Reply(429, graph_error(code, f"(#{code}) Rate limit hit",
                                      details="Cloud API message throughput has been reached."), headers)

    @staticmethod
    def error(status: int, code: int, message: str, *, details: str = "") -> Reply:
        return Reply(status, graph_error(code, message, details=details))

    @staticmethod
    def server_error(status: int = 500) -> Reply:
        return Reply(status, graph_error(
            2, "An unexpected error has occurred. Please retry your request later.", kind="OAuthException"))

    @staticmethod
    def slow(delay_s: float) -> Reply:
        reply = FakeGraph.accepted()
        reply.delay_s = delay_s
        return reply

    @staticmethod
    def new_wamid() -> str:
        return f"wamid.FAKE{uuid.uuid4().hex.upper()}"

    # Server ----------------------------------------------------------------------------------

    def _refusal(self, path: str, headers, body) -> Reply | None:
        """Return Meta's answer to a request the real API would refuse, or None for a valid one."""
        if headers.get("Authorization") != f"Bearer {self.access_token}":
            return Reply(401, graph_error(190, "Invalid OAuth access token - Cannot parse access token"))
        if path != f"/{self.API_VERSION}/{self.phone_number_id}/messages":
            return Reply(400, graph_error(
                100, f"Unsupported post request. Object with ID '{path}' does not exist",
                kind="GraphMethodException"))
        if not isinstance(body, dict) or body.get("messaging_product") != "whatsapp":
            return Reply(400, graph_error(100, "(#100) The parameter messaging_product is required."))
        if not body.get("to") and not body.get("recipient"):
            # A phone number in `to`, or a business-scoped user id (BSUID) in `recipient`.
            return Reply(400, graph_error(100, "(#100) The parameter to is required."))
        kind = body.get("type", "text")
        if kind == "text" and not (body.get("text") or {}).get("body"):
            return Reply(400, graph_error(100, "(#100) The parameter text['body'] is required."))
        if kind == "interactive":
            return _interactive_refusal(body.get("interactive"))
        if kind == "template":
            return self._template_refusal(body.get("template"))
        if kind in ("image", "document", "audio", "video", "sticker"):
            media = body.get(kind)
            if not isinstance(media, dict) or not (media.get("id") or media.get("link")):
                return Reply(400, graph_error(100, f"(#100) The parameter {kind}['id'] or {kind}['link'] is "
                                                   "required."))
            if media.get("id") and media["id"] not in self.uploads and media["id"] not in self.media:
                return Reply(400, graph_error(131053, "Media upload error", details=f"Unknown media id {media['id']}"))
        return None

    def _template_refusal(self, template) -> Reply | None:
        """Return Meta's refusal of a malformed template message, or None when its shape is right."""
        def invalid(message: str, code: int = 100) -> Reply:
            return Reply(400, graph_error(code, message, details=message))

        if not isinstance(template, dict):
            return invalid("(#100) The parameter template is required.")
        name, language = template.get("name"), template.get("language")
        if not isinstance(name, str) or not name:
            return invalid("(#100) The parameter template['name'] is required.")
        if not isinstance(language, dict) or not isinstance(language.get("code"), str) or not language["code"]:
            return invalid("(#100) The parameter template['language']['code'] is required.")
        components = template.get("components", [])
        if not isinstance(components, list):
            return invalid("(#100) Param template['components'] must be an array.")
        parameters = []
        for component in components:
            if not isinstance(component, dict) or component.get("type") not in ("header", "body", "button"):
                return invalid("(#100) Invalid parameter: a component's type must be header, body or button.")
            if component["type"] != "body":
                continue
            for parameter in component.get("parameters", []):
                if not isinstance(parameter, dict) or parameter.get("type") != "text" \
                        or not isinstance(parameter.get("text"), str) or not parameter["text"].strip():
                    return invalid("(#100) Invalid parameter: each body parameter is {type: text, text: …}.")
                if "\n" in parameter["text"] or "\t" in parameter["text"] or "     " in parameter["text"]:
                    return invalid("Param text cannot have new-line/tab characters or more than 4 consecutive "
                                   "spaces", 132018)
                parameters.append(parameter["text"])
        if self.templates:
            expected = self.templates.get((name, language["code"]))
            if expected is None:
                return invalid(f"(#132001) Template name does not exist in the translation: {name} "
                               f"({language['code']})", 132001)
            if expected != len(parameters):
                return invalid(f"(#132000) Number of parameters does not match the expected number of params: "
                               f"expected {expected}, got {len(parameters)}", 132000)
        return None

    def _upload(self, raw: bytes, headers) -> Reply:
        """Store a multipart upload as Meta's /media endpoint does and answer its id."""
        content_type = headers.get("Content-Type", "")
        if not content_type.startswith("multipart/form-data"):
            return Reply(400, graph_error(100, "(#100) The parameter file is required."))
        message = email.message_from_bytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw,
                                           policy=email.policy.HTTP)
        fields, file = {}, None
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if part.get_filename() is not None:
                file = {"content": part.get_payload(decode=True), "type": part.get_content_type(),
                        "filename": part.get_filename()}
            elif name:
                fields[name] = part.get_content().strip()
        if fields.get("messaging_product") != "whatsapp":
            return Reply(400, graph_error(100, "(#100) The parameter messaging_product is required."))
        if file is None or not file["content"]:
            return Reply(400, graph_error(100, "(#100) The parameter file is required."))
        media_id = f"{len(self.uploads) + 1000000000000001}"
        self.uploads[media_id] = {**file, "declared": fields.get("type", "")}
        return Reply(200, {"id": media_id})

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

            def _authorized(self) -> bool:
                if self.headers.get("Authorization") == f"Bearer {fake.access_token}":
                    return True
                self._send(Reply(401, graph_error(190, "Invalid OAuth access token - Cannot parse access token")))
                return False

            def do_GET(self):
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": None,
                                      "method": "GET"})
                if not self._authorized():
                    return
                prefix = f"/{FakeGraph.API_VERSION}/"
                if self.path.startswith("/download/"):
                    self._download(self.path.removeprefix("/download/").split("?")[0])
                    return
                media_id = self.path.removeprefix(prefix).split("?")[0]
                if media_id not in fake.media:
                    self._send(Reply(404, graph_error(
                        100, f"Unsupported get request. Object with ID '{media_id}' does not exist",
                        kind="GraphMethodException")))
                    return
                content, mime = fake.media[media_id]
                host, port = fake._server.server_address[:2]
                self._send(Reply(200, {"messaging_product": "whatsapp", "id": media_id, "mime_type": mime,
                                       "sha256": hashlib.sha256(content).hexdigest(), "file_size": len(content),
                                       "url": f"http://{host}:{port}/download/{media_id}?ext=1"}))

            def _download(self, media_id: str) -> None:
                if media_id not in fake.media:
                    self._send(Reply(404, {"error": "not found"}))
                    return
                if fake.media_delay_s:
                    time.sleep(fake.media_delay_s)
                content, mime = fake.media[media_id]
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", mime)
                    self.send_header("Content-Length", str(len(content)))
                    self.end_headers()
                    self.wfile.write(content)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path == f"/{FakeGraph.API_VERSION}/{fake.phone_number_id}/media":
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": None,
                                          "method": "POST"})
                    if self._authorized():
                        self._send(fake._upload(raw, self.headers))
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = None
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                refusal = fake._refusal(self.path, self.headers, body)
                if refusal is not None:
                    self._send(refusal)
                    return
                reply = fake.script.pop(0) if fake.script else FakeGraph.accepted()
                if reply.status == 200 and "contacts" in reply.body:
                    # Meta answers with wa_id for a send to a number, user_id for a send to a BSUID.
                    reply.body["contacts"] = [{"input": body["to"], "wa_id": body["to"].lstrip("+")}
                                              if body.get("to") else
                                              {"input": body["recipient"], "user_id": body["recipient"]}]
                self._send(reply)

        return Handler


def _interactive_refusal(interactive) -> Reply | None:
    """Return Meta's refusal of a reply-buttons message the real API would refuse (its documented limits)."""
    def bad(message: str) -> Reply:
        return Reply(400, graph_error(131009, f"(#131009) Parameter value is not valid: {message}"))

    if not isinstance(interactive, dict) or interactive.get("type") != "button":
        return bad("interactive.type must be button")
    text = (interactive.get("body") or {}).get("text")
    if not isinstance(text, str) or not 0 < len(text) <= 1024:
        return bad("interactive.body.text is required, at most 1024 characters")
    buttons = (interactive.get("action") or {}).get("buttons")
    if not isinstance(buttons, list) or not 1 <= len(buttons) <= 3:
        return bad("interactive.action.buttons must hold 1 to 3 buttons")
    ids, titles = set(), set()
    for button in buttons:
        reply = button.get("reply") if isinstance(button, dict) and button.get("type") == "reply" else None
        if not isinstance(reply, dict):
            return bad("each button is {type: reply, reply: {id, title}}")
        button_id, title = reply.get("id"), reply.get("title")
        if not isinstance(button_id, str) or not 0 < len(button_id) <= 256 or button_id in ids:
            return bad("a button id is required, unique, at most 256 characters")
        if not isinstance(title, str) or not 0 < len(title) <= 20 or title in titles:
            return bad("a button title is required, unique, at most 20 characters")
        ids.add(button_id)
        titles.add(title)
    return None


def button_reply(reply_id: str, title: str, *, wa_id: str = "584121234567", wamid: str | None = None,
                 timestamp: int = 1739321024, context_id: str = "") -> dict:
    """Return an inbound interactive button_reply message, as the Cloud API posts a tap on a reply button."""
    message = {"from": wa_id, "id": wamid or FakeGraph.new_wamid(), "timestamp": str(timestamp),
               "type": "interactive",
               "interactive": {"type": "button_reply", "button_reply": {"id": reply_id, "title": title}}}
    if context_id:
        message["context"] = {"from": BUSINESS_DISPLAY_NUMBER, "id": context_id}
    return message


# Meta's other side: webhook bodies exactly as the Cloud API posts them -------------------------

BUSINESS_PHONE_NUMBER_ID = "106540352242922"
BUSINESS_DISPLAY_NUMBER = "15550783881"
WABA_ID = "102290129340398"


def inbound_message(kind: str = "text", *, wa_id: str = "584121234567", wamid: str | None = None,
                    timestamp: int = 1739321024, **content) -> dict:
    """Return one `messages[]` object; `content` is the type's object (text defaults to a greeting)."""
    message = {"from": wa_id, "id": wamid or FakeGraph.new_wamid(), "timestamp": str(timestamp), "type": kind}
    if kind == "text" and not content:
        content = {"text": {"body": "Hola, ¿cuánto debo?"}}
    message.update(content)
    return message


def delivery_status(wamid: str, status: str, *, recipient_id: str = "584121234567",
                    timestamp: int = 1739321100, errors: list[dict] | None = None) -> dict:
    """Return one `statuses[]` object."""
    update = {"id": wamid, "status": status, "timestamp": str(timestamp), "recipient_id": recipient_id}
    if status != "failed":
        update["conversation"] = {"id": "CONVERSATION_ID", "origin": {"type": "service"}}
        update["pricing"] = {"billable": True, "pricing_model": "PMP", "category": "service"}
    if errors:
        update["errors"] = errors
    return update


def change_value(*, messages: list[dict] = (), statuses: list[dict] = (), contacts: list[dict] | None = None,
                 phone_number_id: str = BUSINESS_PHONE_NUMBER_ID) -> dict:
    """Return one `changes[].value`; contacts default to one per sender, named, with a business-scoped id."""
    value = {"messaging_product": "whatsapp",
             "metadata": {"display_phone_number": BUSINESS_DISPLAY_NUMBER,
                          "phone_number_id": phone_number_id}}
    messages = list(messages)
    if contacts is None:
        senders = dict.fromkeys(m["from"] for m in messages
                                if isinstance(m, dict) and m.get("type") != "system" and m.get("from"))
        contacts = [{"profile": {"name": f"Cliente {w[-4:]}"}, "wa_id": w, "user_id": f"VE.{w}"}
                    for w in senders]
    if contacts:
        value["contacts"] = contacts
    if messages:
        value["messages"] = messages
    if statuses:
        value["statuses"] = list(statuses)
    return value


def webhook_body(*values: dict) -> dict:
    """Return a whole webhook body with one entry (one change) per value."""
    return {"object": "whatsapp_business_account",
            "entry": [{"id": WABA_ID, "changes": [{"value": value, "field": "messages"}]}
                      for value in values]}
