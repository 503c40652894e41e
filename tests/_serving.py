"""Small HTTP servers of the tests' own: a request handler served on a free port of 127.0.0.1
from a thread, for a ``with`` block.

The serving loop checks for shutdown every 10 ms, not the standard library's 500 ms: leaving
the ``with`` block would otherwise wait up to half a second, in every test that starts one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["serving", "url_of"]


@contextmanager
def serving(
    handler: type[BaseHTTPRequestHandler],
    server_class: type[ThreadingHTTPServer] = ThreadingHTTPServer,
) -> Iterator[ThreadingHTTPServer]:
    """``handler`` served on 127.0.0.1 (a free port) until the block ends."""
    server = server_class(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def url_of(server: ThreadingHTTPServer) -> str:
    """The server's address, as ``http://127.0.0.1:PORT``."""
    return f"http://127.0.0.1:{server.server_address[1]}"
