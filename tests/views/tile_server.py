"""A street-tile server of our own on 127.0.0.1: ``/tiles/{z}/{x}/{y}.png``, generated PNGs.

Each tile is one flat colour that says which tile it is (:func:`tile_colour`), with a dark
cross through its middle, so a test can read back, from a baked map, which tile lies under a
given place. The server records every request (path and User-Agent). ``mode`` makes it
misbehave, as a broken or hostile tile server would (:data:`HOSTILE`):

- ``"html"``: 200 with an HTML page, said to be HTML; ``"html_as_png"``: the same page, said to
  be ``image/png``;
- ``"missing"``: 404; ``"error"``: 500;
- ``"bomb"``: a valid PNG of 16,000 x 16,000 pixels in about 32 KB (a decompression bomb);
- ``"huge"``: a 200 MB body said to be ``image/png``;
- ``"trickle"``: a true tile, one byte every half second;
- ``"redirect"``: a 302 to the same tile on ``redirect_to`` (another host: ``localhost``);
- ``"slow"``: honest but slow: each tile after ``delay`` seconds, its body in two halves
  ``pause`` seconds apart.

``delay`` (in seconds) holds every answer back, like a tile server across the internet;
``busy`` draws streets and names on the tiles (for realistic sizes); ``sent`` counts the body
bytes written. Used by ``tests/views/test_tiles.py``, ``tests/wire/test_tiles.py``,
``benchmarks/maps.py`` and ``benchmarks/hostile.py``.
"""

from __future__ import annotations

import io
import random
import re
import struct
import time
import zlib
from contextlib import ExitStack
from functools import cache, lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

from PIL import Image, ImageDraw

from tests._serving import serving

#: The dark cross drawn through every tile.
CROSS = (60, 60, 60)
_PATH = re.compile(r"/tiles/(\d+)/(\d+)/(\d+)\.png")
#: The modes of a hostile or broken tile server, each refused with the outline kept.
HOSTILE = ("bomb", "huge", "html_as_png", "trickle", "redirect", "error")
#: Size of the ``"huge"`` body.
HUGE_BYTES = 200 * 2**20
BOMB_SIDE = 16_000
PAGE = b"<html><body><script>alert(1)</script>Sign in</body></html>"


def tile_colour(z: int, x: int, y: int) -> tuple[int, int, int]:
    """The flat colour of tile ``z/x/y``: light, and far (>= 20 a channel) from the colours of
    the tiles around it."""
    return (100 + (x % 8) * 20, 100 + (y % 6) * 28, 180 + ((x + y + z) % 3) * 30)


@lru_cache(maxsize=4096)
def tile_png(z: int, x: int, y: int, size: int = 256, *, busy: bool = False) -> bytes:
    """Tile ``z/x/y`` as PNG bytes; ``busy``: with streets and names drawn over it (random but
    fixed per tile), about as hard to compress as a real street tile. Each tile is drawn once
    per process (the same bytes each time it is asked for)."""
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


@cache
def bomb_png(side: int = BOMB_SIDE) -> bytes:
    """A valid black-and-white PNG of ``side`` x ``side`` pixels: a few bytes a row once
    compressed, gigabytes once decoded to RGB."""
    row = b"\0" * (1 + (side + 7) // 8)  # filter byte, then one bit a pixel
    data = _zlib_of_rows(row, side)

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
    )


def _zlib_of_rows(row: bytes, count: int, *, rows_a_block: int = 1000) -> bytes:
    """``zlib.compress(row * count, 9)``'s equal (the same bytes once decompressed), made in a
    tenth of the time: a block of rows is deflated once, ended with a full flush (which makes
    the next block independent of it), and repeated; the zlib header and checksum are written
    around it."""
    block = row * min(rows_a_block, count)
    blocks, rest = divmod(count, min(rows_a_block, count))
    pack = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: no header, no checksum
    repeated = pack.compress(block) + pack.flush(zlib.Z_FULL_FLUSH)
    last = pack.compress(row * rest) + pack.flush()
    checksum = 1
    for _ in range(blocks):
        checksum = zlib.adler32(block, checksum)
    checksum = zlib.adler32(row * rest, checksum)
    return b"\x78\xda" + repeated * blocks + last + struct.pack(">I", checksum)


class TileServer:
    """``with TileServer() as tiles:`` ``tiles.template`` for ``tiles=``; ``tiles.requests``."""

    _server: ThreadingHTTPServer  # while the ``with`` block runs

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.mode = "tiles"
        self.delay = 0.0
        self.pause = 0.5
        self.busy = False
        self.redirect_to = ""
        self.sent = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # answers written in pieces leave at once

            def do_GET(self) -> None:
                owner.requests.append((self.path, self.headers.get("User-Agent", "")))
                time.sleep(owner.delay)
                match = _PATH.fullmatch(self.path)
                mode = owner.mode
                if mode == "missing" or match is None:
                    self._answer(404, "text/plain", b"Not Found")
                    return
                z, x, y = (int(v) for v in match.groups())
                try:
                    if mode == "html":
                        self._answer(200, "text/html", PAGE)
                    elif mode == "html_as_png":
                        self._answer(200, "image/png", PAGE)
                    elif mode == "error":
                        self._answer(500, "text/html", b"<h1>Internal Server Error</h1>")
                    elif mode == "bomb":
                        self._answer(200, "image/png", bomb_png())
                    elif mode == "huge":
                        self._huge()
                    elif mode == "trickle":
                        self._answer(200, "image/png", tile_png(z, x, y), every=0.5)
                    elif mode == "redirect":
                        self.send_response(302)
                        self.send_header("Location", f"{owner.redirect_to}{self.path}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                    elif mode == "slow":
                        self._answer(200, "image/png", tile_png(z, x, y), halves=owner.pause)
                    else:
                        self._answer(200, "image/png", tile_png(z, x, y, busy=owner.busy))
                except OSError:  # the client hung up: the point of most hostile modes
                    self.close_connection = True

            def _answer(
                self,
                status: int,
                kind: str,
                body: bytes,
                *,
                every: float = 0.0,
                halves: float = 0.0,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if every:
                    for byte in body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        owner.sent += 1
                        time.sleep(every)
                    return
                if halves:
                    middle = len(body) // 2
                    self.wfile.write(body[:middle])
                    self.wfile.flush()
                    time.sleep(halves)
                    body = body[middle:]
                self.wfile.write(body)
                owner.sent += len(body)

            def _huge(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(HUGE_BYTES))
                self.end_headers()
                piece = tile_png(0, 0, 0)[:64].ljust(2**16, b"\0")
                for _ in range(HUGE_BYTES // len(piece)):
                    self.wfile.write(piece)
                    owner.sent += len(piece)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._handler = Handler
        self._running = ExitStack()

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    @property
    def template(self) -> str:
        return f"http://{self.address}/tiles/{{z}}/{{x}}/{{y}}.png"

    def __enter__(self) -> TileServer:
        self._server = self._running.enter_context(serving(self._handler))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._running.close()
