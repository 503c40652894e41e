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
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import requests
from requests_cache.backends.base import BaseCache

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
    if str(getattr(cache.responses, "serializer", None)) != "SerializerPipeline(name=pickle, n_stages=2)":
        return missing
    url = requests_[0][0]
    verify = session.merge_environment_settings(url, {}, None, None, None)["verify"]
    keys = [
        cache.create_key(
            session.prepare_request(requests.Request("GET", u, params=dict(p or {}))),
            verify=verify,
        )
        for u, p in requests_
    ]
    stored = _read_many(cache, keys)
    if stored is None:
        return missing
    now = datetime.now(UTC)
    return [_usable_body(value, now, offline) for value in stored]


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
        entry = pickle.loads(bytes(value))  # noqa: S301  (the cache's own format)
    except Exception:  # noqa: BLE001  (an entry we cannot read: the normal path decides)
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
