"""A street-tile server of our own on 127.0.0.1: ``/tiles/{z}/{x}/{y}.png``, generated PNGs.

Each tile is one flat colour that says which tile it is (:func:`tile_colour`), with a dark
cross through its middle, so a test can read back, from a baked map, which tile lies under a
given place. The server records every request (path and User-Agent). ``mode`` makes it
misbehave: ``"html"`` answers 200 with an HTML page, ``"missing"`` answers 404; ``delay`` (in
seconds) holds every answer back, like a tile server across the internet; ``busy`` draws
streets and names on the tiles (for realistic sizes).
Used by ``tests/views/test_tiles.py`` and ``benchmarks/maps.py``.
"""

from __future__ import annotations

import io
import random
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from PIL import Image, ImageDraw

#: The dark cross drawn through every tile.
CROSS = (60, 60, 60)
_PATH = re.compile(r"/tiles/(\d+)/(\d+)/(\d+)\.png")


def tile_colour(z: int, x: int, y: int) -> tuple[int, int, int]:
    """The flat colour of tile ``z/x/y``: light, and far (>= 20 a channel) from the colours of
    the tiles around it."""
    return (100 + (x % 8) * 20, 100 + (y % 6) * 28, 180 + ((x + y + z) % 3) * 30)


def tile_png(z: int, x: int, y: int, size: int = 256, *, busy: bool = False) -> bytes:
    """Tile ``z/x/y`` as PNG bytes; ``busy``: with streets and names drawn over it (random but
    fixed per tile), about as hard to compress as a real street tile."""
    image = Image.new("RGB", (size, size), tile_colour(z, x, y))
    draw = ImageDraw.Draw(image)
    if busy:
        chance = random.Random(f"{z}/{x}/{y}")
        colours = [(255, 255, 255), (250, 220, 160), (230, 160, 140), (200, 200, 200)]
        for _ in range(40):
            points = [(chance.randrange(size), chance.randrange(size)) for _ in range(4)]
            draw.line(points, fill=chance.choice(colours), width=chance.choice((2, 3, 5)))
        for _ in range(6):
            where = (chance.randrange(size - 60), chance.randrange(size - 12))
            draw.text(where, f"Street {chance.randrange(999)}", fill=(70, 70, 70))
    draw.line([(0, size // 2), (size, size // 2)], fill=CROSS, width=3)
    draw.line([(size // 2, 0), (size // 2, size)], fill=CROSS, width=3)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


class TileServer:
    """``with TileServer() as tiles:`` ``tiles.template`` for ``tiles=``; ``tiles.requests``."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.mode = "tiles"
        self.delay = 0.0
        self.busy = False
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append((self.path, self.headers.get("User-Agent", "")))
                time.sleep(owner.delay)
                match = _PATH.fullmatch(self.path)
                if owner.mode == "missing" or match is None:
                    self._answer(404, "text/plain", b"Not Found")
                elif owner.mode == "html":
                    self._answer(200, "text/html", b"<html><body>Sign in</body></html>")
                else:
                    z, x, y = (int(v) for v in match.groups())
                    self._answer(200, "image/png", tile_png(z, x, y, busy=owner.busy))

            def _answer(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    @property
    def template(self) -> str:
        return f"http://{self.address}/tiles/{{z}}/{{x}}/{{y}}.png"

    def __enter__(self) -> TileServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
