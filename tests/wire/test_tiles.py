"""A tile server is a party outside: every tile fetched over real HTTP, from servers of our own
on 127.0.0.1 that misbehave on purpose, is bounded in bytes, pixels and time, refused when it is
not a tile, and never stored unless it decoded."""

from __future__ import annotations

import io
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import propertykit as pk
from propertykit.config import ENV_CACHE_DIR, ENV_OFFLINE, MAX_TILE_BYTES
from propertykit.wire import fetch_tile
from propertykit.wire._tiles import tile_problem
from tests.views.tile_server import BOMB_SIDE, HUGE_BYTES, TileServer, bomb_png, tile_png

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def server() -> Iterator[TileServer]:
    with TileServer() as running:
        yield running


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_OFFLINE, raising=False)


def _url(server: TileServer, x: int = 1) -> str:
    return server.template.format(z=2, x=x, y=1)


def _pixels(png: bytes) -> np.ndarray:
    """The RGB pixels of a PNG, to compare with the image :func:`fetch_tile` hands over."""
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


def _asked_again(server: TileServer, url: str) -> bool:
    """Is ``url`` sent to the server again once it answers honestly (i.e. nothing was kept)?"""
    asked = len(server.requests)
    server.mode = "tiles"
    fetch_tile(url)
    return len(server.requests) == asked + 1


def test_an_honest_tile_is_fetched_once_and_then_served_from_the_cache(
    server: TileServer,
) -> None:
    url = _url(server)
    first, again = fetch_tile(url), fetch_tile(url)
    assert first.mode == "RGB" and first.size == (256, 256)  # checked and decoded, once here
    assert (np.asarray(first) == _pixels(tile_png(2, 1, 1))).all()
    assert (np.asarray(again) == np.asarray(first)).all()
    assert len(server.requests) == 1


def test_a_slow_but_honest_server_still_delivers(server: TileServer) -> None:
    server.delay, server.pause = 0.3, 0.6  # held back, then half the body, a pause, the rest
    assert (np.asarray(fetch_tile(_url(server))) == _pixels(tile_png(2, 1, 1))).all()


def test_a_decompression_bomb_is_refused_from_its_header_and_not_kept(
    server: TileServer,
) -> None:
    server.mode = "bomb"
    assert len(bomb_png()) < 100_000  # small on the wire, 16,000 x 16,000 pixels inside
    url = _url(server)
    assert BOMB_SIDE**2 > 2 * Image.MAX_IMAGE_PIXELS  # Pillow's own check refuses its header
    with pytest.raises(pk.BadResponse, match="a decompression bomb"):
        fetch_tile(url)
    assert _asked_again(server, url)


def test_a_bomb_under_pillows_limit_is_refused_from_its_header_by_its_size() -> None:
    bomb = bomb_png(5_000)  # 25 million pixels: under Pillow's own limit, far over a tile's
    tracemalloc.start()
    try:
        problem = tile_problem(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert problem == (
        "an image of 5,000 x 5,000 pixels (a tile is square, at most 1,024 pixels a side)"
    )
    assert peak < 1_000_000  # never decoded: 75 MB once decoded to RGB


def test_a_huge_body_is_cut_off_at_the_cap_without_holding_it(server: TileServer) -> None:
    server.mode = "huge"
    url = _url(server)
    tracemalloc.start()
    try:
        with pytest.raises(pk.ResponseTooLarge, match="larger than 2 MB"):
            fetch_tile(url)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * MAX_TILE_BYTES  # read in chunks up to the cap: never the 200 MB
    assert server.sent < HUGE_BYTES // 4  # the connection was dropped, not drained
    assert _asked_again(server, url)


def test_html_said_to_be_a_png_is_refused_and_not_kept(server: TileServer) -> None:
    server.mode = "html_as_png"
    url = _url(server)
    with pytest.raises(pk.BadResponse, match="not a PNG or JPEG image") as caught:
        fetch_tile(url)
    assert "script" not in str(caught.value)  # the server's page is not repeated
    assert _asked_again(server, url)


def test_a_damaged_image_is_refused_and_not_kept(server: TileServer) -> None:
    whole = tile_png(0, 0, 0)
    assert tile_problem(whole[: len(whole) // 2]) == "a damaged image"
    assert tile_problem(whole) is None


def test_a_trickle_is_cut_off_by_the_time_the_tile_has(server: TileServer) -> None:
    server.mode = "trickle"
    with pytest.raises(pk.NetworkError, match="too slow") as caught:
        fetch_tile(_url(server), seconds=0.5)
    assert caught.value.kind == "timeout"
    assert server.sent < 20  # a byte every half second, for about half a second


def test_a_redirect_to_another_host_is_not_followed(server: TileServer) -> None:
    with TileServer() as elsewhere:
        server.mode = "redirect"
        server.redirect_to = f"http://localhost:{elsewhere.address.split(':')[1]}"
        with pytest.raises(pk.NetworkError, match="redirected to another host") as caught:
            fetch_tile(_url(server))
        assert elsewhere.requests == []
    assert "localhost" not in str(caught.value)  # where it pointed is the server's text


def test_a_redirect_on_the_same_server_is_followed(server: TileServer) -> None:
    server.mode = "redirect"
    server.redirect_to = f"http://{server.address}/moved"
    with pytest.raises(pk.NetworkError, match="has no such tile"):
        fetch_tile(_url(server))  # followed to /moved/tiles/..., which this server has not
    assert [path for path, _ in server.requests] == ["/tiles/2/1/1.png", "/moved/tiles/2/1/1.png"]


def test_a_redirect_to_another_port_is_another_server(server: TileServer) -> None:
    with TileServer() as elsewhere:
        server.mode = "redirect"
        server.redirect_to = f"http://{elsewhere.address}"
        with pytest.raises(pk.NetworkError, match="another host"):
            fetch_tile(_url(server))
        assert elsewhere.requests == []


def test_server_errors_are_refused_at_once_and_not_kept(server: TileServer) -> None:
    server.mode = "error"
    url = _url(server)
    with pytest.raises(pk.NetworkError, match="failed") as caught:
        fetch_tile(url)
    assert "500" not in str(caught.value) and "Internal" not in str(caught.value)
    assert len(server.requests) == 1  # not retried: a map has other tiles to ask for
    assert _asked_again(server, url)


def test_a_jpeg_tile_is_read_from_its_header_too() -> None:
    out = io.BytesIO()
    Image.new("RGB", (512, 512), "#c0c0c0").save(out, "JPEG", progressive=True)
    assert tile_problem(out.getvalue()) is None
    out = io.BytesIO()
    Image.new("RGB", (1200, 1200), "#c0c0c0").save(out, "JPEG")
    assert tile_problem(out.getvalue()) == (
        "an image of 1,200 x 1,200 pixels (a tile is square, at most 1,024 pixels a side)"
    )


def test_without_pillow_no_tile_is_fetched_and_the_error_says_what_to_install(
    server: TileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if Pillow were not installed
    with pytest.raises(
        pk.errors.ConfigError, match=r"need Pillow: pip install 'propertykit\[export\]'"
    ):
        fetch_tile(_url(server))
    assert server.requests == []  # nothing sent, nothing kept
