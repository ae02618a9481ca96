"""In-process transport to the simulator: `httpx.WSGITransport` with real timeout and reset semantics.

Why in-process: with BILLING_API_BASE_URL empty the bot still speaks real HTTP to the contract
(status codes, headers, JSON bodies, the same client code path), without a socket, a port or a
second server to start — and a web request never calls back into its own server, which would
deadlock a single-threaded runserver. WSGITransport runs the app synchronously, so an httpx
timeout would never fire; this transport hands the app a deadline (the request's read timeout)
and turns the simulator's `SimulatedTimeout` / `SimulatedReset` into the `httpx.ReadTimeout` /
`httpx.ReadError` a socket would raise.
"""

from __future__ import annotations

import time

import httpx

from billing.simulator.app import DEADLINE_KEY, SimulatedReset, SimulatedTimeout


class InProcessTransport(httpx.BaseTransport):
    def __init__(self, app, *, read_timeout_s: float):
        self.app = app
        self.read_timeout_s = read_timeout_s

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        read_timeout = (request.extensions.get("timeout") or {}).get("read") or self.read_timeout_s
        deadline = time.monotonic() + read_timeout
        app = self.app

        def with_deadline(environ, start_response):
            environ[DEADLINE_KEY] = deadline
            return app(environ, start_response)

        try:
            return httpx.WSGITransport(app=with_deadline).handle_request(request)
        except SimulatedTimeout as exc:
            raise httpx.ReadTimeout(str(exc), request=request) from exc
        except SimulatedReset as exc:
            raise httpx.ReadError(
                "[Errno 104] Connection reset by peer (simulated)", request=request
            ) from exc
