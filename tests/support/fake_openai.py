"""A local HTTP server that speaks the OpenAI REST protocol, so the real `openai` client runs in tests.

Embeddings are deterministic hash-seeded unit vectors; chat completions are scripted per test:
each queued reply is either a dict (sent as the assistant message content, JSON-encoded), a
string (sent raw as content), an int (an HTTP error status), or HANG (the server holds the request
until the test ends, so the client's own timeout fires). Every request body is recorded.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG = "__hang__"


class FakeOpenAI:
    def __init__(self, *, dimensions: int = 8):
        self.released = threading.Event()
        self.dimensions = dimensions
        self.requests: list[dict] = []
        self.chat_script: list = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()

    def vector(self, text: str) -> list[float]:
        rng = random.Random(hashlib.sha256(text.encode()).digest())
        raw = [rng.gauss(0, 1) for _ in range(self.dimensions)]
        norm = math.sqrt(sum(x * x for x in raw))
        return [x / norm for x in raw]

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, payload) -> None:
                body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append({"path": self.path, "body": request})
                if self.path.endswith("/embeddings"):
                    inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
                    data = [
                        {"object": "embedding", "index": i, "embedding": fake.vector(text)}
                        for i, text in enumerate(inputs)
                    ]
                    self._send(200, {"object": "list", "data": data, "model": request.get("model"),
                                     "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                    return
                if self.path.endswith("/chat/completions"):
                    step = fake.chat_script.pop(0) if fake.chat_script else 500
                    if callable(step):  # a reply that depends on what was asked (the evidence offered, say)
                        step = step(request)
                    if step == HANG:
                        fake.released.wait()  # a server that never answers in time
                        return
                    if isinstance(step, int):
                        self._send(step, {"error": {"message": "scripted failure", "type": "server_error"}})
                        return
                    content = step if isinstance(step, str) else json.dumps(step)
                    self._send(200, {
                        "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
                        "model": request.get("model", "test-model"),
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    })
                    return
                self._send(404, {"error": {"message": "not found"}})

        return Handler
