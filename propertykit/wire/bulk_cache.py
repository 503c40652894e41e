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
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import blake2b
from typing import Any

import requests
from requests_cache._utils import encode
from requests_cache.backends.base import BaseCache
from requests_cache.cache_keys import normalize_url

from propertykit.wire.cache_storage import own_connection, storage_kind
from propertykit.wire.derived_cache import (
    CHUNK,
    derived_value,
    expired,
    guarded,
    read_derived,
    unpack,
    write_derived,
)

__all__ = ["CachedAnswer", "cached_answers", "cached_bodies", "store_derived"]

#: Keys per SQLite query (under SQLite's limit of bound parameters).
_CHUNK = CHUNK


@dataclass(frozen=True)
class CachedAnswer:
    """One response the bulk read found: its cache key, the entry as stored, a derived value.

    ``derived`` is the value :mod:`~propertykit.wire.derived_cache` holds for it in the form
    asked for, not yet checked: :meth:`derived_payload` checks it against ``stored``.
    """

    key: str
    stored: bytes
    derived: bytes | None = None

    def body(self, now: datetime, *, offline: bool) -> tuple[bytes, str | None] | None:
        """The body and expiry (ISO 8601 or ``None``), if the session would answer with it."""
        return _usable(self.stored, now, offline)

    def derived_payload(self, now: datetime, *, offline: bool) -> memoryview | None:
        """The derived payload, if made from this very entry and the entry is still usable."""
        return derived_value(self.derived, self.stored, now, offline=offline)


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
    now = datetime.now(UTC)
    usable = (
        None if answer is None else answer.body(now, offline=offline)
        for answer in cached_answers(session, requests_)
    )
    return [None if found is None else found[0] for found in usable]


def cached_answers(
    session: requests.Session,
    requests_: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    derived_form: str | None = None,
) -> list[CachedAnswer | None]:
    """What the cache stores for each ``(url, params)`` GET (``None``: nothing readable in bulk).

    With ``derived_form``, each answer also carries the derived value filed for it in that form.
    Nothing is deserialised here: see :meth:`CachedAnswer.body`.
    """
    missing: list[CachedAnswer | None] = [None] * len(requests_)
    cache = _bulk_cache(session)
    if not requests_ or cache is None:
        return missing
    keys = _cache_keys(session, cache, requests_)
    stored = _read_many(cache, keys)
    if stored is None:
        return missing
    derived: list[bytes | None] = [None] * len(keys)
    if derived_form is not None and any(value is not None for value in stored):
        derived = read_derived(cache, keys, derived_form)
    return [
        None if value is None else CachedAnswer(key, bytes(value), extra)
        for key, value, extra in zip(keys, stored, derived, strict=True)
    ]


def kept_payloads(
    session: requests.Session,
    requests_: Sequence[tuple[str, Mapping[str, Any] | None]],
    *,
    form: str,
    offline: bool,
) -> list[memoryview | None]:
    """For each GET, the payload kept for its cached answer in ``form``, if it may be used.

    That is: made from the response the cache holds now, which the session would answer with
    (:mod:`~propertykit.wire.derived_cache`). SQLite's triggers vouch for the first without
    reading the responses; Redis's responses are read and hashed.
    """
    cache = _bulk_cache(session)
    if not requests_ or cache is None:
        return [None] * len(requests_)
    keys = _cache_keys(session, cache, requests_)
    values = read_derived(cache, keys, form)
    now = datetime.now(UTC)
    if guarded(cache):
        return [
            None if found is None else found[1]
            for found in (unpack(value, now, offline=offline) for value in values)
        ]
    if all(value is None for value in values):
        return [None] * len(keys)
    stored = _read_many(cache, keys) or [None] * len(keys)
    return [
        None
        if value is None or response is None
        else derived_value(value, bytes(response), now, offline=offline)
        for value, response in zip(values, stored, strict=True)
    ]


def store_derived(
    session: requests.Session,
    derived: Sequence[tuple[CachedAnswer, str | None, bytes]],
    form: str,
) -> None:
    """File a derived value for each ``(answer, its expiry, payload)``, beside the responses."""
    cache = _bulk_cache(session)
    if cache is not None:
        entries = [(a.key, a.stored, expires, payload) for a, expires, payload in derived]
        write_derived(cache, entries, form)


def _bulk_cache(session: requests.Session) -> BaseCache | None:
    """The session's cache, when it is one the bulk read understands (else ``None``)."""
    cache: BaseCache | None = getattr(session, "cache", None)
    settings = getattr(session, "settings", None)
    if cache is None or settings is None or settings.disabled:
        return None
    if (
        str(getattr(cache.responses, "serializer", None))
        != "SerializerPipeline(name=pickle, n_stages=2)"
    ):
        return None
    return cache


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
    kind = storage_kind(responses)
    if kind == "SQLiteDict":
        found: dict[str, Any] = {}
        with own_connection(responses) as connection:
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


def _usable(value: bytes, now: datetime, offline: bool) -> tuple[bytes, str | None] | None:
    """Body and expiry of one stored response, when the session would answer with it as it is."""
    try:
        entry = pickle.loads(value)  # the cache's own format
    except Exception:  # an entry we cannot read: the normal path decides
        return None
    if not isinstance(entry, dict) or entry.get("status_code") != 200:
        return None
    content, headers = entry.get("_content"), entry.get("headers")
    if not isinstance(content, bytes) or not isinstance(headers, dict):
        return None
    if any(name.lower() == "vary" for name in headers):
        return None
    expires = entry.get("expires")
    if expires is not None and not isinstance(expires, str):
        return None
    if not offline and expired(expires, now) is not False:
        return None
    return content, expires
