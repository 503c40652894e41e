"""The one requests session: requests-cache, then the search-suggest limit, then ``requests``.

requests-cache comes first so hits are free and never count against the limit; the key is never
stored or sent cross-origin.

:mod:`propertykit.wire._transport` (the transport) and this module are the only modules that know
about ``requests``, the cache and the rate limiter: this one builds the session and the cache, the
transport sends through it (each attempt by :func:`~propertykit.wire._attempt.send_once`).

Key safety: the key travels only in the ``x-api-key`` header. It is listed (in every spelling
sent) in requests-cache's ``ignored_parameters``, so it is neither part of a cache key nor stored;
it is dropped when a redirect leaves the origin; and it is scrubbed from redirect history before a
response is stored.

Caching: only a complete 200 answer to a ``GET`` (or to the area query's ``POST``) is stored
(see :func:`~propertykit.wire._attempt.is_complete_answer`); health (every service's), purchases
and purchase status are never cached. The SQLite cache is opened in WAL mode so several kernels
can share one file. The connection pool holds ``pool_size`` connections. With a
Redis ``limiter_redis`` connection, the search-suggest limit is counted in Redis, shared by every
client (and kernel) using it.
"""

from __future__ import annotations

import re
import sqlite3
import time
from pathlib import Path
from typing import Any

import requests
from requests_cache import DO_NOT_CACHE, CacheMixin
from requests_cache.backends.base import BaseCache
from requests_cache.backends.sqlite import SQLiteCache
from requests_cache.policy import DEFAULT_IGNORED_PARAMS
from requests_ratelimiter import LimiterMixin

from propertykit.config import DEFAULT_EXPIRE_AFTER, Endpoints
from propertykit.wire._attempt import is_complete_answer
from propertykit.wire._bounded import DEFAULT_MAX_BODY_BYTES
from propertykit.wire._metered import MeteredAdapter
from propertykit.wire._sqlite_storage import SQLiteAnswers
from propertykit.wire._usage import Usage

#: Every spelling of the key header propertykit sends or requests-cache knows.
API_KEY_HEADERS = ("x-api-key", "X-API-Key", "X-Api-Key")
_KEY_HEADER = API_KEY_HEADERS[0]

#: File name of the default SQLite cache inside the cache directory.
CACHE_FILE_NAME = "http_cache.sqlite"

#: Milliseconds a kernel waits for another kernel's write to the shared SQLite file.
_SQLITE_BUSY_MS = 30_000


class _PathLimiterMixin(LimiterMixin):
    """requests-ratelimiter's limiter, applied only to URLs of the ``limited_paths`` (full URLs
    without their query: search-suggest, and the profile's address autocomplete, which the
    service counts together).

    Sits between the cache mixin and ``requests.Session``: cache hits never get here, so they
    are free and never count against the limit.
    """

    limited_paths: frozenset[str] = frozenset()

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        url = request.url or ""
        if url.split("?", 1)[0] in self.limited_paths:
            response = super().send(request, **kwargs)
        else:
            response = requests.Session.send(self, request, **kwargs)
        # Redirect history is stored with the response: keep the key out of it.
        for earlier in response.history:
            for name in API_KEY_HEADERS:
                earlier.request.headers.pop(name, None)
        return response


class CachedLimiterSession(CacheMixin, _PathLimiterMixin, requests.Session):
    """requests-cache first (hits are free), then the suggest rate limit, then ``requests``.

    Also drops the API key header on a redirect to another origin: ``requests`` strips only
    ``Authorization`` there, never custom headers. A cache miss about to be sent reaches the
    mounted :class:`~propertykit.wire._metered.MeteredAdapter`: lock, budget and counts.
    """

    #: The adapter every real send passes (see :mod:`propertykit.wire._metered`).
    metered: MeteredAdapter

    def rebuild_auth(
        self, prepared_request: requests.PreparedRequest, response: requests.Response
    ) -> None:
        super().rebuild_auth(prepared_request, response)  # type: ignore[no-untyped-call,unused-ignore]
        old_url = response.request.url or ""
        new_url = prepared_request.url or ""
        if self.should_strip_auth(old_url, new_url):  # type: ignore[no-untyped-call,unused-ignore]
            for name in API_KEY_HEADERS:
                prepared_request.headers.pop(name, None)


def open_session(
    *,
    usage: Usage,
    api_key: str,
    base_url: str,
    cache: BaseCache | None,
    expire_after: Any,
    offline: bool,
    endpoints: Endpoints,
    max_wait: float,
    close_cache: bool,
    pool_size: int,
    limiter_redis: Any,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> CachedLimiterSession:
    """The session :class:`~propertykit.wire._transport.Transport` sends through.

    Parameters
    ----------
    usage
        Where the session's adapter counts real sends and charged answers.
    api_key
        Sent in the ``x-api-key`` header only; never part of a cache key, never stored.
    base_url
        The service's root address, without a trailing ``/``.
    cache
        A requests-cache backend, or ``None`` for no caching.
    expire_after
        Freshness of cached property data (``None``: 7 days).
    offline
        Answer from the cache only, even from entries past their expiry.
    endpoints
        Paths of the service (the non-cacheable ones and the rate-limited suggest path).
    max_wait
        Longest wait the suggest limit may impose before it raises instead.
    close_cache
        Close ``cache`` when the session is closed.
    pool_size
        Connections kept open to the service.
    limiter_redis
        A ``redis.Redis`` connection to count the suggest limit in (``None``: in this process).
    max_body_bytes
        Cap on a decoded body (see :mod:`propertykit.wire._bounded`).
    """
    per_minute = endpoints.suggest_per_minute
    session = CachedLimiterSession(
        backend=cache if cache is not None else "memory",
        expire_after=DEFAULT_EXPIRE_AFTER if expire_after is None else expire_after,
        urls_expire_after=_never_cached_patterns(base_url, endpoints),
        allowable_codes=(200,),
        # POST: the area query, a read whose JSON body is part of its cache key; purchases are
        # POSTs too but their paths are never cached (see _never_cached_patterns).
        allowable_methods=("GET", "POST"),
        ignored_parameters=(*DEFAULT_IGNORED_PARAMS, *API_KEY_HEADERS),
        filter_fn=is_complete_answer,
        # Offline replays answer even from entries past their expiry; online, never stale.
        stale_if_error=offline,
        autoclose=close_cache or cache is None,
        per_minute=per_minute or 0,
        max_delay=max_wait,
        **_limiter_backend(limiter_redis, base_url),
    )
    adapter = MeteredAdapter(usage, max_body_bytes, pool_maxsize=max(1, pool_size))
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.metered = adapter
    limited = (endpoints.suggest_path, endpoints.autocomplete_path)
    session.limited_paths = frozenset(base_url + p for p in limited if p and per_minute)
    session.settings.only_if_cached = offline
    session.settings.disabled = cache is None
    session.headers[_KEY_HEADER] = api_key
    session.headers["Accept"] = "application/json"
    return session


def _limiter_backend(limiter_redis: Any, base_url: str) -> dict[str, Any]:
    """Where the suggest limit is counted: in memory, or in the shared Redis."""
    if limiter_redis is None:
        return {}
    from propertykit.wire._team import shared_limiter_settings

    return shared_limiter_settings(limiter_redis, base_url)


def _never_cached_patterns(base_url: str, endpoints: Endpoints) -> dict[str | re.Pattern[Any], Any]:
    """Health (any service's: a path ending in ``/health``), purchases and purchase status:
    never cached, matched exactly."""
    root = re.escape(base_url)
    paths = (endpoints.health_path, endpoints.purchase_path, endpoints.status_path)
    patterns: dict[str | re.Pattern[Any], Any] = {
        re.compile(f"^{root}(?:/[^/?#]+)*/health(?:[?#]|$)"): DO_NOT_CACHE
    }
    for path in paths:
        segments = re.escape(path).replace(re.escape("{titleNumber}"), "[^/?#]+")
        patterns[re.compile(f"^{root}{segments}(?:[?#]|$)")] = DO_NOT_CACHE
    return patterns


def open_sqlite_cache(path: str | Path) -> SQLiteAnswers:
    """Open (creating if needed) the SQLite cache file at ``path``.

    The file is in WAL mode (readers never block the writer) with a busy timeout, so several
    kernels on one machine may share it while they write. Not for network file systems. The
    backend is propertykit's own (:class:`~propertykit.wire._sqlite_storage.SQLiteAnswers`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> cache = open_sqlite_cache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
    >>> len(cache.responses)
    0
    >>> cache.close()
    """
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    _switch_to_wal(path)
    return SQLiteAnswers(path, busy_timeout=_SQLITE_BUSY_MS / 1000)


def _switch_to_wal(path: Path) -> None:
    """Put the file in WAL mode, waiting while another process holds it.

    Switching the journal mode needs a moment of exclusive access, and SQLite answers "database
    is locked" at once rather than waiting out the busy timeout, so two kernels opening one new
    cache together would fail. WAL mode is stored in the file: once it is set, opening is plain.
    """
    deadline = time.monotonic() + _SQLITE_BUSY_MS / 1000
    while True:
        connection = sqlite3.connect(path, timeout=_SQLITE_BUSY_MS / 1000)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() > deadline:
                raise
        finally:
            connection.close()
        time.sleep(0.05)


def describe_cache(cache: BaseCache) -> dict[str, Any]:
    """Entries, size on disk, oldest and newest entry, and path of a cache.

    ``size_bytes`` and ``path`` are ``None`` for backends that are not files (e.g. Redis).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> cache = open_sqlite_cache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
    >>> describe_cache(cache)["entries"]
    0
    >>> cache.close()
    """
    created = [r.created_at for r in cache.responses.values() if r is not None]
    path: Path | None = None
    size: int | None = None
    if isinstance(cache, SQLiteAnswers | SQLiteCache):
        path = Path(cache.db_path)
        size = sum(
            p.stat().st_size
            for p in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal")))
            if p.exists()
        )
    return {
        "entries": len(created),
        "size_bytes": size,
        "oldest": min(created) if created else None,
        "newest": max(created) if created else None,
        "path": str(path) if path else None,
    }
