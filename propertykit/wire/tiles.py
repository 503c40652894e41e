"""Street-map tiles for maps made at build time (reports, static export): their own cache.

:func:`fetch_tile` is the fetch function :mod:`propertykit.views.street` uses by default
(:mod:`propertykit` hands it over on import; views never import ``wire``). Tiles are not
property data, so they get a session and a cache file of their own:

- one requests-cache SQLite file, ``tiles.sqlite`` in the cache directory
  (``PROPERTYKIT_CACHE_DIR`` first), apart from the property cache; a tile is kept 30 days
  and, when the server cannot be reached, an older copy is used rather than none;
- only complete 200 answers that are images are stored; a tile is fetched once, however many
  maps and builds use it;
- every request names propertykit in its ``User-Agent`` (tile servers such as OpenStreetMap's
  refuse anonymous bulk clients); nothing of the data or the API key is sent;
- ``PROPERTYKIT_OFFLINE=1``: answers only from the cache, sends nothing (a miss raises
  :class:`~propertykit.NotCached`);
- a tile body over 4 MiB is refused; a connection gets 5 seconds, an answer 20.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import requests
from requests_cache import CachedSession

from propertykit.config import ENV_OFFLINE, VERSION, cache_dir, env_flag
from propertykit.errors import BadResponse, NetworkError, NotCached, ResponseTooLarge
from propertykit.wire.session import describe_cache

__all__ = [
    "MAX_TILE_BYTES",
    "TILE_CACHE_FILE",
    "TILE_EXPIRE_AFTER",
    "USER_AGENT",
    "fetch_tile",
    "tile_cache_info",
]

#: File name of the tile cache inside the cache directory.
TILE_CACHE_FILE = "tiles.sqlite"
#: How long a stored tile is used without asking the server again.
TILE_EXPIRE_AFTER = timedelta(days=30)
#: Largest tile body accepted.
MAX_TILE_BYTES = 4 * 2**20
#: Sent with every tile request.
USER_AGENT = f"propertykit/{VERSION} (static maps; python-requests)"
_TIMEOUT = (5.0, 20.0)


def fetch_tile(url: str) -> bytes:
    """The bytes of the tile image at ``url``: from the cache, else from the server (then kept).

    Raises
    ------
    propertykit.NotCached
        Offline (``PROPERTYKIT_OFFLINE``) and the tile is not in the cache.
    propertykit.NetworkError
        The tile server could not be reached or did not answer 200.
    propertykit.BadResponse, propertykit.ResponseTooLarge
        The answer is not an image, or bigger than :data:`MAX_TILE_BYTES`.

    Examples
    --------
    >>> import os
    >>> os.environ["PROPERTYKIT_OFFLINE"] = "1"
    >>> try:
    ...     fetch_tile("https://tile.openstreetmap.org/0/0/0.png")
    ... except pk.errors.NotCached as error:
    ...     print(error)
    ... finally:
    ...     del os.environ["PROPERTYKIT_OFFLINE"]
    Offline, and the tile is not in the tile cache (nothing was sent)
    """
    offline = env_flag(ENV_OFFLINE)
    host = urlsplit(url).netloc
    session = _session(str(cache_dir() / TILE_CACHE_FILE))
    try:
        response = session.get(url, timeout=_TIMEOUT, only_if_cached=offline)
    except requests.RequestException as error:
        raise NetworkError(
            f"the tile server {host} could not be reached ({type(error).__name__})",
            kind="connect" if isinstance(error, requests.ConnectionError) else None,
        ) from error
    if offline and response.status_code != 200:  # requests-cache's 504: not cached
        raise NotCached("Offline, and the tile is not in the tile cache (nothing was sent)")
    if response.status_code != 200:
        raise NetworkError(f"the tile server {host} answered {response.status_code}")
    kind = response.headers.get("Content-Type", "")
    if not kind.startswith("image/"):
        raise BadResponse(
            f"the tile server {host} sent {kind or 'no Content-Type'}, not an image",
            status_code=200,
            body_start=response.text[:200],
        )
    if len(response.content) > MAX_TILE_BYTES:
        raise ResponseTooLarge(
            f"a tile from {host} is larger than {MAX_TILE_BYTES:,} bytes", limit=MAX_TILE_BYTES
        )
    return response.content


def tile_cache_info() -> dict[str, Any] | None:
    """:func:`~propertykit.wire.session.describe_cache` of the tile cache (entries are tiles);
    ``None`` when there is none yet."""
    path = cache_dir() / TILE_CACHE_FILE
    return describe_cache(_session(str(path)).cache) if path.exists() else None


@cache
def _session(path: str) -> CachedSession:
    """One cached session per tile-cache file (so a changed cache directory gets its own)."""
    session = CachedSession(
        path,
        backend="sqlite",
        expire_after=TILE_EXPIRE_AFTER,
        allowable_codes=(200,),
        allowable_methods=("GET",),
        filter_fn=_is_image,
        stale_if_error=True,
    )
    session.headers["User-Agent"] = USER_AGENT
    return session


def _is_image(response: requests.Response) -> bool:
    return bool(response.headers.get("Content-Type", "").startswith("image/"))
