"""Small HTTP servers on 127.0.0.1 that misbehave on purpose, each counting what it receives.

A :class:`Hostile` server runs ``behaviour(handler, seen)`` for every request in its own thread:
``handler`` is the ``BaseHTTPRequestHandler`` (write anything to ``handler.wfile``, raw bytes
included), ``seen`` the requests so far (this one last). Helpers below write the usual answers.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests._serving import serving, url_of

KEY = "pk_live_hostile_secret_key_0123456789"


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""


Behaviour = Callable[[BaseHTTPRequestHandler, list[Seen]], None]


@dataclass
class Hostile:
    """A running hostile server: ``url``, and ``requests`` received so far."""

    url: str
    requests: list[Seen] = field(default_factory=list)

    def paths(self, method: str | None = None) -> list[str]:
        return [r.path for r in self.requests if method is None or r.method == method]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client hanging up on a hostile server is the point of these tests


@contextmanager
def hostile(behaviour: Behaviour) -> Iterator[Hostile]:
    """Serve ``behaviour`` on a free port of 127.0.0.1 for the ``with`` block."""
    seen: list[Seen] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # answers written in pieces leave at once

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            with lock:
                seen.append(Seen(self.command, self.path, dict(self.headers.items()), body))
                so_far = list(seen)
            behaviour(self, so_far)

        do_GET = do_POST = do_PUT = do_DELETE = _any

    with serving(Handler, _Server) as server:
        yield Hostile(url_of(server), seen)


# -- answers ---------------------------------------------------------------------------------------


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes | str | Any,
    *,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
    length: int | None = None,
) -> None:
    """Answer with ``body`` (JSON-encoded unless bytes/str); ``length`` overrides Content-Length."""
    data = (
        body
        if isinstance(body, bytes)
        else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
    )
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(data) if length is None else length))
    if length is not None and length != len(data):
        handler.close_connection = True
    handler.end_headers()
    handler.wfile.write(data)
    handler.wfile.flush()


def reset(handler: BaseHTTPRequestHandler) -> None:
    """Drop the connection with a TCP reset, answering nothing."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True


def trickle(handler: BaseHTTPRequestHandler, body: bytes, every: float) -> None:
    """Announce ``body`` whole, then send it one byte every ``every`` seconds."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.flush()
    try:
        for byte in body:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(every)
    except OSError:
        handler.close_connection = True


#: An affine map on 32-bit CRC registers: the images of each bit (its linear part), then of 0.
_Affine = tuple[tuple[int, ...], int]


def _apply(step: _Affine, crc: int) -> int:
    columns, constant = step
    for bit, column in enumerate(columns):
        if crc >> bit & 1:
            constant ^= column
    return constant


def _then(first: _Affine, second: _Affine) -> _Affine:
    """``first``, then ``second``, as one map."""
    linear = (second[0], 0)
    return tuple(_apply(linear, column) for column in first[0]), _apply(second, first[1])


def _crc32_repeated(chunk: bytes, times: int) -> int:
    """``zlib.crc32(chunk * times)``, without reading ``chunk`` ``times`` times.

    A CRC is linear in its register: reading ``chunk`` from register ``c`` gives
    ``L(c) ^ crc32(chunk, 0)``. ``L`` is read off ``zlib.crc32`` itself (one call per bit), and the
    map is composed ``times`` times by squaring: 33 readings of 1 MiB instead of 512 for a bomb
    of 512 MiB.
    """
    zero = zlib.crc32(chunk, 0)
    step: _Affine = (tuple(zlib.crc32(chunk, 1 << bit) ^ zero for bit in range(32)), zero)
    total: _Affine = (tuple(1 << bit for bit in range(32)), 0)  # reading nothing
    while times:
        if times & 1:
            total = _then(total, step)
        step = _then(step, step)
        times >>= 1
    return _apply(total, 0)


def gzip_bomb(decoded_mb: int) -> bytes:
    """A gzip body of zeros that inflates to ``decoded_mb`` MiB (about 1 KB per MiB on the wire).

    One MiB is deflated once, ending in a full flush (so the next block refers to nothing before
    it), and that block repeated: a valid stream with its true CRC and length, built in a fraction
    of the time deflating every MiB takes.
    """
    chunk = b"\0" * 2**20
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)  # -15: raw deflate, no header
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    last = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty final block
    crc = _crc32_repeated(chunk, decoded_mb)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # gzip, deflate, no name or time
    trailer = struct.pack("<II", crc, (decoded_mb * 2**20) & 0xFFFFFFFF)
    return header + block * decoded_mb + last + trailer


def envelope(records: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"success": True, "result": records, **fields}


def records(offset: int, count: int) -> list[dict[str, Any]]:
    return [{"propertyId": f"P{offset + i}", "locationId": f"L{offset + i}"} for i in range(count)]


def records_for(path: str) -> list[dict[str, Any]]:
    """One record per location id a ``/v1/property/{ids}`` path asks for."""
    asked = unquote(urlsplit(path).path.rsplit("/", 1)[-1]).split(",")
    return [{"propertyId": f"P-{name}", "locationId": name} for name in asked]


def offset_of(path: str) -> int:
    values = parse_qs(urlsplit(path).query).get("offset", ["0"])
    return int(values[0])
