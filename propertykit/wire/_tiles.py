"""Street-map tiles for maps made at build time (reports, static export): fetched within bounds,
kept in a cache of their own.

:func:`fetch_tile` is the fetch function maps use by default (named in propertykit's package
metadata and found when a map asks, see :func:`propertykit.views._tile_source.default_fetcher`;
views never import ``wire``). This is the one place a tile is checked: the views draw the RGB image
it hands them as it is. A tile server is a party outside, so every tile is bounded before it can
cost anything:

- in bytes: the body is read in chunks and reading stops past :data:`MAX_TILE_BYTES`
  (:class:`~propertykit.wire._bounded.BoundedAdapter`, the cap every answer of the service has);
- in pixels: Pillow reads the PNG or JPEG header alone first (``Image.open`` is lazy); a tile
  is square and at most :data:`MAX_TILE_SIDE` pixels a side, and only then decoded (a 16,000 x
  16,000 "decompression bomb" of 32 KB is refused from its header, by Pillow's own bomb check);
- in time: :data:`TILE_TIMEOUT` to connect and per read, and the whole tile within
  ``seconds`` (the time its map has left) and at most :data:`TILE_SECONDS`; a server that
  trickles a byte every half second is cut off;
- in where it comes from: a redirect is followed only on the same host (``http`` to ``https``
  allowed); one to another host is refused unsent, and 4xx/5xx answers are refused.

Tiles are not property data, so they get a session and a cache file of their own:

- one requests-cache SQLite file, ``tiles.sqlite`` in the cache directory
  (``PROPERTYKIT_CACHE_DIR`` first), apart from the property cache; a tile is kept 30 days
  and, when the server cannot be reached, an older copy is used rather than none;
- only a 200 answer whose body is a tile that decoded is stored (a refused answer never is, so
  it is not replayed for free); a tile is fetched once, however many maps and builds use it;
- every request names propertykit in its ``User-Agent`` (tile servers such as OpenStreetMap's
  refuse anonymous bulk clients); nothing of the data or the API key is sent;
- ``PROPERTYKIT_OFFLINE=1``: answers only from the cache, sends nothing (a miss raises
  :class:`~propertykit.errors.NotCached`).

Without Pillow (the ``export`` extra) no tile can be drawn, so none is fetched:
:class:`~propertykit.errors.ConfigError`, before anything is sent.

Messages name the tile host (from the address template the user gave) and never repeat what
the server sent (its pages, headers or redirect targets).
"""

from __future__ import annotations

import io
import threading
import time
import warnings
from datetime import timedelta
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import requests
from requests_cache import CachedSession

from propertykit.config import (
    ENV_OFFLINE,
    MAX_TILE_BYTES,
    MAX_TILE_SIDE,
    PILLOW_FOR_TILES,
    TILE_SECONDS,
    VERSION,
    cache_dir,
    env_flag,
)
from propertykit.errors import BadResponse, ConfigError, NetworkError, NotCached, ResponseTooLarge
from propertykit.wire._bounded import BoundedAdapter, CallLimits, DeadlinePassed, call_limits
from propertykit.wire._session import describe_cache

if TYPE_CHECKING:
    from PIL import Image

#: File name of the tile cache inside the cache directory.
TILE_CACHE_FILE = "tiles.sqlite"
#: How long a stored tile is used without asking the server again.
TILE_EXPIRE_AFTER = timedelta(days=30)
#: Seconds to connect, and to wait for each read.
TILE_TIMEOUT = (5.0, 10.0)
#: Redirects followed (on the same host) before giving up.
MAX_REDIRECTS = 3
#: Sent with every tile request.
USER_AGENT = f"propertykit/{VERSION} (static maps; python-requests)"

_REFUSALS = {
    401: "refused the request (it asks for a key)",
    403: "refused the request (access denied)",
    404: "has no such tile",
    429: "asked to be sent fewer requests",
}


def fetch_tile(url: str, *, seconds: float | None = None, fresh: bool = False) -> Image.Image:
    """The tile at ``url``, checked and decoded to RGB: from the cache, else from the server
    (then kept). It is a :class:`~propertykit.views._tile_source.FetchTile`.

    Parameters
    ----------
    url
        The tile's ``http(s)`` address.
    seconds
        The longest the whole tile may take (the time its map has left); at most
        :data:`TILE_SECONDS`.
    fresh
        Ask the server even when the tile is cached (the basemap's question "does the tile
        server answer now?").

    Raises
    ------
    propertykit.errors.ConfigError
        Pillow is not installed (nothing is sent).
    propertykit.errors.NotCached
        Offline (``PROPERTYKIT_OFFLINE``) and the tile is not in the cache.
    propertykit.errors.NetworkError
        The tile server could not be reached, was too slow, refused, or redirected elsewhere.
    propertykit.errors.BadResponse, propertykit.errors.ResponseTooLarge
        The answer is not a tile (see :func:`tile_problem`), or bigger than
        :data:`MAX_TILE_BYTES`.

    Examples
    --------
    >>> try:
    ...     fetch_tile("http://127.0.0.1:9/0/0/0.png", seconds=1)  # nothing listens there
    ... except pk.errors.NetworkError as error:
    ...     print(error)
    the tile server 127.0.0.1:9 could not be reached
    """
    _pillow()
    offline = env_flag(ENV_OFFLINE)
    host = urlsplit(url).netloc
    # The basemap's question ("does the server answer now?") stores nothing and makes no file in
    # the user's cache folder; a tile for a map goes through the tile cache.
    session = _session("probe", "memory") if fresh else _session(str(cache_dir() / TILE_CACHE_FILE))
    limit = TILE_SECONDS if seconds is None else max(min(seconds, TILE_SECONDS), 0.0)
    limits = CallLimits(deadline=time.monotonic() + limit, max_body_bytes=MAX_TILE_BYTES)
    with call_limits(limits):
        for _ in range(MAX_REDIRECTS + 1):
            response = _get(session, url, host, offline=offline, fresh=fresh)
            if not response.is_redirect:
                break
            url = _same_host(url, response.headers["Location"], host)
        else:
            raise NetworkError(f"the tile server {host} kept redirecting", url=url)
    if offline and response.status_code != 200:  # requests-cache's 504: not cached
        raise NotCached("Offline, and the tile is not in the tile cache (nothing was sent)")
    if response.status_code != 200:
        raise NetworkError(f"the tile server {host} {_refusal(response.status_code)}", url=url)
    if not _says_image(response):
        raise BadResponse(
            f"the tile server {host} sent something that is not an image",
            url=url,
            status_code=200,
            body_start=response.content[:200].decode("utf-8", "replace"),
        )
    tile = _decoded(response.content)
    if isinstance(tile, str):
        raise BadResponse(f"the tile server {host} sent {tile}", url=url, status_code=200)
    return tile.copy()  # the caller's own: the decoded tile is kept for the cache's filter


def tile_problem(body: bytes) -> str | None:
    """What is wrong with ``body`` as a map tile, in plain words; ``None`` if it is a tile.

    Pillow reads the header alone first, and nothing larger than :data:`MAX_TILE_SIDE` pixels a
    side (or not square) is decoded; then the image is decoded whole.

    Examples
    --------
    >>> import io
    >>> from PIL import Image
    >>> out = io.BytesIO(); Image.new("RGB", (2048, 2048)).save(out, "PNG")
    >>> tile_problem(out.getvalue())
    'an image of 2,048 x 2,048 pixels (a tile is square, at most 1,024 pixels a side)'
    >>> tile_problem(b"<html>Sign in</html>")
    'something that is not a PNG or JPEG image'
    """
    tile = _decoded(body)
    return tile if isinstance(tile, str) else None


def tile_cache_info() -> dict[str, Any] | None:
    """:func:`~propertykit.wire._session.describe_cache` of the tile cache (entries are tiles);
    ``None`` when there is none yet.

    Examples
    --------
    >>> info = tile_cache_info()
    >>> info is None or "entries" in info
    True
    """
    path = cache_dir() / TILE_CACHE_FILE
    return describe_cache(_session(str(path)).cache) if path.exists() else None


def _get(
    session: CachedSession, url: str, host: str, *, offline: bool, fresh: bool
) -> requests.Response:
    """One GET (redirects not followed), with the library's errors mapped to plain words."""
    try:
        return session.get(
            url,
            timeout=TILE_TIMEOUT,
            allow_redirects=False,
            only_if_cached=offline,
            force_refresh=fresh and not offline,
        )
    except ResponseTooLarge as error:
        raise ResponseTooLarge(
            f"a tile from {host} was larger than {MAX_TILE_BYTES // 2**20} MB, "
            "far more than a tile can be; reading stopped",
            url=url,
            limit=MAX_TILE_BYTES,
        ) from error
    except (DeadlinePassed, requests.Timeout) as error:
        raise NetworkError(
            f"the tile server {host} was too slow (a tile did not arrive in time)",
            url=url,
            kind="timeout",
        ) from error
    except requests.RequestException as error:
        raise NetworkError(
            f"the tile server {host} could not be reached",
            url=url,
            kind="connect" if isinstance(error, requests.ConnectionError) else None,
        ) from error


def _same_host(url: str, location: str, host: str) -> str:
    """The redirect's target, if it is on the same host (``http`` -> ``https`` allowed)."""
    target = urljoin(url, location)
    old, new = urlsplit(url), urlsplit(target)
    same = new.hostname == old.hostname and new.scheme in (old.scheme, "https")
    if not same or (new.scheme == old.scheme and new.port != old.port):
        raise NetworkError(
            f"the tile server {host} redirected to another host (not followed)", url=url
        )
    return target


def _refusal(status: int) -> str:
    if status in _REFUSALS:
        return _REFUSALS[status]
    if status >= 500:
        return "failed (a server error)"
    return "refused the request"


def _says_image(response: requests.Response) -> bool:
    return bool(response.headers.get("Content-Type", "").startswith("image/"))


def _is_tile(response: requests.Response) -> bool:
    """What the cache keeps: a 200 image that is a tile and decoded (see :func:`tile_problem`)."""
    return (
        response.status_code == 200
        and _says_image(response)
        and not isinstance(_decoded(response.content), str)
    )


def _pillow() -> Any:
    """Pillow's ``Image`` module; without it no tile can be drawn, so none is fetched."""
    try:
        from PIL import Image
    except ImportError as error:
        raise ConfigError(PILLOW_FOR_TILES) from error
    return Image


#: Held while Pillow reads a header: the warnings filter that makes its bomb warning an error
#: is process-wide, and two tiles are fetched at once.
_HEADER_LOCK = threading.Lock()


@lru_cache(maxsize=4)  # the cache's filter and fetch_tile ask about the same body in turn
def _decoded(body: bytes) -> Image.Image | str:
    """The tile as an RGB image, or what is wrong with it (decoded only once its header says it
    is square and at most :data:`MAX_TILE_SIDE` pixels a side)."""
    pil = _pillow()
    try:
        with _HEADER_LOCK, warnings.catch_warnings():
            warnings.simplefilter("error", pil.DecompressionBombWarning)
            image = pil.open(io.BytesIO(body), formats=("PNG", "JPEG"))  # the header only
    except (pil.DecompressionBombWarning, pil.DecompressionBombError):
        return (
            f"a decompression bomb (an image of over {pil.MAX_IMAGE_PIXELS:,} pixels; "
            f"a tile is square, at most {MAX_TILE_SIDE:,} pixels a side)"
        )
    except Exception:  # Pillow's UnidentifiedImageError, or a header cut short
        return "something that is not a PNG or JPEG image"
    with image:
        width, height = image.size
        if width != height or not 0 < width <= MAX_TILE_SIDE:
            return (
                f"an image of {width:,} x {height:,} pixels "
                f"(a tile is square, at most {MAX_TILE_SIDE:,} pixels a side)"
            )
        try:
            rgb: Image.Image = image.convert("RGB")  # decodes the whole image
        except Exception:  # anything Pillow raises on a damaged image: refused, never cached
            return "a damaged image"
    return rgb


@cache
def _session(path: str, backend: str = "sqlite") -> CachedSession:
    """One cached session per tile-cache file (so a changed cache directory gets its own)."""
    session = CachedSession(
        path,
        backend=backend,
        expire_after=TILE_EXPIRE_AFTER,
        allowable_codes=(200,),
        allowable_methods=("GET",),
        filter_fn=_is_tile,
        stale_if_error=True,
    )
    adapter = BoundedAdapter(MAX_TILE_BYTES, pool_maxsize=4)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    return session
