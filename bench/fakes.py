"""The services the bench's deployment talks to instead of Meta and a hosted model, as local HTTP servers.

- `GraphRecorder`: the Graph API's send endpoint; accepts every valid send and records when each arrived.
- `FakeModel`: an OpenAI-compatible chat-completions server answering after a delay.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GRAPH_TOKEN = "bench-graph-token"
PHONE_NUMBER_ID = "106540352242922"


class GraphRecorder:
    """The Graph API's send endpoint: accepts every valid send and records (arrival time, recipient, text)."""

    def __init__(self):
        self.sends: dict[str, list[float]] = defaultdict(list)
        self.texts: dict[str, list[str]] = defaultdict(list)
        self.lock = threading.Lock()
        self.count = 0
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                arrived = time.time()
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                ok = (self.headers.get("Authorization") == f"Bearer {GRAPH_TOKEN}"
                      and self.path.endswith(f"/{PHONE_NUMBER_ID}/messages"))
                recipient = body.get("to") or body.get("recipient") or ""
                if ok:
                    with recorder.lock:
                        recorder.sends[recipient].append(arrived)
                        recorder.texts[recipient].append((body.get("text") or {}).get("body", ""))
                        recorder.count += 1
                payload = ({"messaging_product": "whatsapp", "contacts": [{"input": recipient, "wa_id": recipient}],
                            "messages": [{"id": f"wamid.BENCH{uuid.uuid4().hex}"}]} if ok
                           else {"error": {"message": "refused by the bench's Graph API", "code": 190}})
                raw = json.dumps(payload).encode()
                self.send_response(200 if ok else 401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v21.0"

    def replies(self, wa_id: str) -> list[float]:
        with self.lock:
            return list(self.sends.get(wa_id, ()))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class FakeModel:
    """An OpenAI-compatible chat-completions server that answers after `delay_s`, as a hosted model would.

    The answer restates the first evidence item and every key figure the prompt asks for, each cited, so the
    verifier usually accepts it; a draft it rejects costs a rewrite (another call), as with a real model.
    """

    EVIDENCE = re.compile(r"^\[(E\d+)\] (.+?)(?: — (.+))?$", re.M)
    KEY = re.compile(r"^- (.+?) \((.+?)\) \[(E\d+)\]$", re.M)

    def __init__(self, delay_s: float):
        self.delay_s = delay_s
        self.calls = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                time.sleep(model.delay_s)
                model.calls += 1
                raw = json.dumps(model.completion(request)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def completion(self, request: dict) -> dict:
        system = request["messages"][0]["content"]
        evidence = self.EVIDENCE.findall(system)
        keys = self.KEY.findall(system)
        parts = []
        if evidence:
            eid, text, value = evidence[0]
            sentence = text.split(". ")[0].rstrip(".")
            parts.append(f"{sentence} [{eid}].")
        parts += [f"{name}: {figure} [{eid}]." for figure, name, eid in keys]
        answer = {"customer_message": " ".join(parts) or "Una persona le ayuda.",
                  "internal_note": " ".join(parts) or "No evidence.",
                  "evidence_ids": sorted({e[0] for e in evidence[:1]} | {k[2] for k in keys}),
                  "needs_human": not parts}
        return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
                "model": request.get("model", "fake"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": json.dumps(answer)}}],
                "usage": {"prompt_tokens": len(system) // 4, "completion_tokens": 60,
                          "total_tokens": len(system) // 4 + 60}}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
