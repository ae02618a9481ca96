"""Serve the simulator on a real socket: threaded wsgiref, with a true TCP reset for the `reset` fault.

`serve_in_thread(app)` is the test helper (port 0 → a free port); `python -m billing.simulator`
uses `make_sim_server` in the foreground.
"""

from __future__ import annotations

import io
import socket
import struct
import sys
import threading
from contextlib import contextmanager
from socketserver import ThreadingMixIn
from wsgiref.simple_server import ServerHandler, WSGIRequestHandler, WSGIServer, make_server

from billing.simulator.app import BillingSimulator, SimulatedReset


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a hanging `timeout` request never blocks shutdown
    allow_reuse_address = True


class _SimServerHandler(ServerHandler):
    http_version = "1.1"  # the app always sends Content-Length, so connections can be kept alive

    def handle_error(self):
        if isinstance(sys.exc_info()[1], SimulatedReset):
            # SO_LINGER 0 + close sends RST instead of FIN: the client sees "connection reset by peer".
            connection = self.request_handler.connection
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()
            self.request_handler.close_connection = True
            return
        super().handle_error()


class _SimRequestHandler(WSGIRequestHandler):
    protocol_version = (
        "HTTP/1.1"  # keep-alive, like a real API behind a proxy; wsgiref alone closes every time
    )
    wbufsize = -1  # buffer the status line, headers and body into one send per response

    def setup(self):
        super().setup()
        # Without this, a kept-alive connection meets Nagle + delayed ACK: ~40 ms per request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self):
        self.close_connection = True
        self.handle_one_request()
        while not self.close_connection:
            self.handle_one_request()

    def handle_one_request(self):  # wsgiref's handle(), once per request, with our ServerHandler
        self.raw_requestline = self.rfile.readline(65537)
        if not self.raw_requestline:
            self.close_connection = True
            return
        if len(self.raw_requestline) > 65536:
            self.requestline = self.request_version = self.command = ""
            self.send_error(414)
            return
        if not self.parse_request():
            return
        # Read exactly the body now, so an app that ignores it cannot desynchronize a kept-alive connection.
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if self.headers.get("Transfer-Encoding"):
            self.close_connection = True  # chunked request bodies are not supported; do not reuse the stream
        body = io.BytesIO(self.rfile.read(length) if length > 0 else b"")
        handler = _SimServerHandler(body, self.wfile, self.get_stderr(), self.get_environ(), multithread=True)
        handler.request_handler = self
        handler.run(self.server.get_app())

    def log_message(self, format, *args):
        pass  # quiet: tests and benches hit it thousands of times


def make_sim_server(app: BillingSimulator, host: str = "127.0.0.1", port: int = 0) -> WSGIServer:
    """Return a threaded WSGI server for `app` bound to host:port (0 picks a free port)."""
    return make_server(host, port, app, server_class=_ThreadingWSGIServer, handler_class=_SimRequestHandler)


class RunningSimulator:
    def __init__(self, app: BillingSimulator, server: WSGIServer, thread: threading.Thread):
        self.app, self.server, self.thread = app, server, thread
        host, port = server.server_address[:2]
        self.base_url = f"http://{host}:{port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@contextmanager
def serve_in_thread(app: BillingSimulator | None = None, host: str = "127.0.0.1", port: int = 0):
    """Serve `app` (a fresh default simulator when None) on a background thread; yield a RunningSimulator."""
    app = app or BillingSimulator()
    server = make_sim_server(app, host, port)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    running = RunningSimulator(app, server, thread)
    try:
        yield running
    finally:
        running.close()
