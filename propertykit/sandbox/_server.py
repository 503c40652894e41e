"""The sandbox's HTTP layer: a stdlib ``ThreadingHTTPServer`` speaking HTTP/1.1 with keep-alive.

It reads each request whole, applies latency and pending faults, asks
:class:`~propertykit.sandbox._routes.Router` for the answer, logs it, and writes it (or drops the
connection, or truncates the body, when a fault says so).
"""

from __future__ import annotations

import socket
import struct
import sys
import time
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from propertykit.sandbox._replies import Reply, Request, json_reply
from propertykit.sandbox._routes import Router
from propertykit.sandbox._state import Fault, RequestRecord, SandboxState

_ERROR_NAMES = {500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable",
                504: "Gateway Timeout"}  # fmt: skip


def fault_reply(fault: Fault) -> Reply:
    """The 5xx answer of an ``error`` fault, in the body shape it asks for."""
    name = _ERROR_NAMES.get(fault.status, "Server Error")
    if fault.body == "object":
        code = name.lower().replace(" ", "_")
        payload = {
            "success": False,
            "error": {"code": code, "message": f"{name}; try again later."},
        }
        return json_reply(fault.status, payload)
    if fault.body == "string":
        return json_reply(fault.status, {"success": False, "error": f"{name}; try again later."})
    if fault.body == "text":
        return Reply(fault.status, name.encode(), "text/plain; charset=utf-8")
    if fault.body == "html":
        html = (
            f"<html><head><title>{fault.status} {name}</title></head><body>"
            f"<center><h1>{fault.status} {name}</h1></center><hr>"
            "<center>nginx</center></body></html>"
        )
        return Reply(fault.status, html.encode(), "text/html")
    return Reply(fault.status, b"", None)


class _Handler(BaseHTTPRequestHandler):
    server: SandboxServer
    protocol_version = "HTTP/1.1"
    timeout = 120  # idle keep-alive connections close after this long

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle's algorithm and the
        # client's delayed ACK add ~40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: the request log is ``Sandbox.requests``."""

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The ``Date`` header follows the sandbox clock, as Retry-After and the daily cap do."""
        return format_datetime(self.server.state.clock.now(), usegmt=True)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def do_PUT(self) -> None:
        self._answer()

    def do_PATCH(self) -> None:
        self._answer()

    def do_DELETE(self) -> None:
        self._answer()

    def _answer(self) -> None:
        state = self.server.state
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        if state.latency > 0:
            time.sleep(state.latency)
        fault = state.take_fault(path, kinds=("error", "reset", "slow", "truncate"))
        if fault is not None and fault.kind == "slow":
            time.sleep(fault.delay)
        if fault is not None and fault.kind == "error":
            reply = fault_reply(fault)
        elif fault is not None and fault.kind == "reset":
            reply = Reply(0, action="reset")
        elif not path.startswith("/v1/"):
            reply = Reply(404, b"Not Found", "text/plain; charset=utf-8")
        else:
            request = Request(self.command, path, query, self.headers, body)  # type: ignore[arg-type]
            reply = self.server.router.dispatch(request)
        if fault is not None and fault.kind == "truncate" and reply.action == "send":
            reply.action = "truncate"
        state.log_request(
            RequestRecord(
                method=self.command,
                path=path,
                query=query,
                status=0 if reply.action == "reset" else reply.status,
                headers=_headers_seen(self.headers),
            )
        )
        if reply.delay > 0:  # charged and logged; the answer is held back
            time.sleep(reply.delay)
        self._write(reply)

    def _write(self, reply: Reply) -> None:
        if reply.action == "reset":
            # SO_LINGER 0: close with a TCP reset, as a dropped connection looks to a client.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            return
        self.send_response(reply.status)
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        declared = len(reply.body)
        if reply.action == "truncate":
            declared += max(64, len(reply.body) // 2)
            self.close_connection = True
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        self.wfile.write(reply.body)
        self.wfile.flush()


def _headers_seen(headers: Any) -> tuple[tuple[str, str], ...]:
    """The request's headers as a request record keeps them (the key's value left out)."""
    return tuple(
        (name.lower(), "" if name.lower() == "x-api-key" else str(value))
        for name, value in headers.items()
    )


class SandboxServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 that answers with the sandbox's router."""

    daemon_threads = True

    def __init__(self, port: int, state: SandboxState, router: Router) -> None:
        self.state = state
        self.router = router
        super().__init__(("127.0.0.1", port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeout, reset) is normal here; anything else is reported."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError | TimeoutError):
            super().handle_error(request, client_address)
