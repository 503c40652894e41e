"""Many cached answers read at once: the raw bodies a warm cache holds for a list of GETs.

The session answers a cache hit by deserialising one stored ``CachedResponse`` per request, behind
``requests``' per-request overhead (environment lookups, hooks, adapters). Re-running a notebook
from a warm cache is mostly that. :func:`cached_bodies` reads the same entries in bulk instead:

- each request's cache key is the one the session computes (``cache.create_key`` on the request
  the session would prepare; the key never includes the API key, an ignored parameter);
- the entries are fetched in one query per chunk (SQLite: ``SELECT ... WHERE key IN (...)``;
  Redis: ``MGET``), and only unpickled, never structured into a ``CachedResponse``;
- an entry is used only when the session would answer with it as it stands: status 200, no
  ``Vary``, and fresh (offline: any age, as ``stale_if_error`` allows there). Anything else is
  ``None``, and the caller sends that request down the normal path.

Only the stock ``pickle`` serializer of the SQLite and Redis backends is read this way; any other
backend or serializer answers ``None`` for every request (the normal path serves them).
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from hashlib import blake2b
from typing import Any

import requests
from requests_cache._utils import encode
from requests_cache.backends.base import BaseCache
from requests_cache.cache_keys import normalize_url

__all__ = ["cached_bodies"]

#: Keys per SQLite query (under SQLite's limit of bound parameters).
_CHUNK = 500


def cached_bodies(
    session: requests.Session,
    requests_: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    offline: bool,
) -> list[bytes | None]:
    """The body the cache would answer each ``(url, params)`` GET with, or ``None``.

    Nothing is sent and nothing is counted; the caller counts the hits it uses.

    Examples
    --------
    >>> import propertykit as pk
    >>> with pk.sandbox.serve() as sb, pk.Client(sb.api_key, sb.url, cache=False) as client:
    ...     cached_bodies(client._transport.session, [(sb.url + "/v1/health", None)],
    ...                   offline=False)
    [None]
    """
    missing: list[bytes | None] = [None] * len(requests_)
    cache: BaseCache | None = getattr(session, "cache", None)
    settings = getattr(session, "settings", None)
    if not requests_ or cache is None or settings is None or settings.disabled:
        return missing
    if (
        str(getattr(cache.responses, "serializer", None))
        != "SerializerPipeline(name=pickle, n_stages=2)"
    ):
        return missing
    keys = _cache_keys(session, cache, requests_)
    stored = _read_many(cache, keys)
    if stored is None:
        return missing
    now = datetime.now(UTC)
    return [_usable_body(value, now, offline) for value in stored]


def _cache_keys(
    session: requests.Session, cache: BaseCache, requests_: Sequence[tuple[str, Any]]
) -> list[str]:
    """The key the session's cache would file each GET under.

    Exactly ``cache.create_key`` on the request the session prepares. That costs a prepared
    request and a URL normalisation each; when the requests differ only in a plain path (nothing
    a URL normaliser would change) and the same query, the normalised URL of the first is reused
    with each path put in place, and hashed as requests-cache hashes it; the first and the last
    keys are computed both ways and must agree, or every key is computed the slow way.
    """
    verify = session.merge_environment_settings(requests_[0][0], {}, None, None, None)["verify"]

    def exact(url: str, params: Any) -> str:
        prepared = requests.PreparedRequest()
        prepared.prepare(method="GET", url=url, params=dict(params or {}))
        return cache.create_key(prepared, verify=verify)

    quick = _quick_keys(cache, requests_, verify)
    if quick is not None:
        ends = (0, len(requests_) - 1)
        if all(quick[i] == exact(*requests_[i]) for i in ends):
            return quick
    return [exact(url, params) for url, params in requests_]


_PLAIN_PATH = re.compile(r"/[A-Za-z0-9_.~:,/-]*")


def _quick_keys(
    cache: BaseCache, requests_: Sequence[tuple[str, Any]], verify: Any
) -> list[str] | None:
    """Keys by substituting each plain path into the first normalised URL (``None``: cannot)."""
    settings = cache._settings
    if settings.key_fn is not None or settings.match_headers:
        return None
    first_url, first_params = requests_[0]
    base, paths = _split(first_url), []
    for url, params in requests_:
        path = url[len(base) :] if url.startswith(base) else ""
        if params != first_params or not _PLAIN_PATH.fullmatch(path) or "/." in path:
            return None
        paths.append(path)
    prepared = requests.PreparedRequest()
    prepared.prepare(method="GET", url=first_url, params=dict(first_params or {}))
    normal = normalize_url(prepared.url or "", settings.ignored_parameters)
    before, found, after = normal.partition(paths[0])
    if not found or paths[0] in after:
        return None
    tail = b"".join(encode(part) for part in (bool(verify), str(cache.responses.serializer)))
    keys = []
    for path in paths:
        key = blake2b(b"GET", digest_size=8)
        key.update(f"{before}{path}{after}".encode())
        key.update(tail)
        keys.append(key.hexdigest())
    return keys


def _split(url: str) -> str:
    """The scheme and authority of ``url`` (everything before its path)."""
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


def _read_many(cache: BaseCache, keys: list[str]) -> list[Any] | None:
    """The stored (serialised) values of ``keys``, ``None`` each where absent."""
    responses: Any = cache.responses
    kind = type(responses).__name__
    if kind == "SQLiteDict":
        found: dict[str, Any] = {}
        with responses.connection() as connection:
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT key, value FROM {responses.table_name} WHERE key IN ({marks})", chunk
                )
                found.update(rows.fetchall())
        return [found.get(key) for key in keys]
    if kind == "RedisDict":
        values: list[Any] = []
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            values.extend(responses.connection.mget(responses._bkeys(chunk)))
        return values
    return None


def _usable_body(value: Any, now: datetime, offline: bool) -> bytes | None:
    """The body of one stored response, when the session would answer with it as it stands."""
    if value is None:
        return None
    try:
        entry = pickle.loads(bytes(value))  # the cache's own format
    except Exception:  # an entry we cannot read: the normal path decides
        return None
    if not isinstance(entry, dict) or entry.get("status_code") != 200:
        return None
    content, headers = entry.get("_content"), entry.get("headers")
    if not isinstance(content, bytes) or not isinstance(headers, dict):
        return None
    if any(name.lower() == "vary" for name in headers):
        return None
    if not offline:
        expires = entry.get("expires")
        if expires is not None:
            try:
                moment = datetime.fromisoformat(expires)
            except (TypeError, ValueError):
                return None
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            if now >= moment:
                return None
    return content
