"""Derived entries: a cached response kept in a form quicker to use, beside the response itself.

A warm re-run of a lookup spends most of its time parsing the cached bodies again. The caller
may keep, for each cached response, a *derived* value (for the frames, the records already read
into Arrow) in the same backend as the response cache, so a team's Redis or a shared SQLite file
shares it too:

- SQLite: table :data:`FRAMES_TABLE` in the cache's own file (``key``, ``value``);
- Redis: keys ``<namespace>-frames:<form>:<cache key>``, outside the responses' ``<namespace>:``
  (so requests-cache never takes one for a response), living as long as their response's key.

A derived entry can never disagree with the response cache. It is filed under the response's
cache key *and* the ``form`` (what the value is: the caller's format and schema, so another
version never reads it), and it carries the SHA-1 of the response exactly as stored (the
serialised entry, so a re-fetched, re-validated or otherwise rewritten response no longer
matches) and that response's expiry (checked as the response's own would be: offline, any age).
It is only ever written for a response the bulk read would answer with (a fresh 200 without
``Vary``), from that very stored value; whatever does not match is ignored, then overwritten.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import struct
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from requests_cache.backends.base import BaseCache

__all__ = [
    "FRAMES_TABLE",
    "clear_derived",
    "derived_value",
    "expired",
    "fingerprint",
    "read_derived",
    "storage_kind",
    "write_derived",
]

#: The SQLite table of derived entries, in the response cache's file.
FRAMES_TABLE = "propertykit_frames"
#: Keys per SQLite query or Redis command (under SQLite's limit of bound parameters).
CHUNK = 500

logger = logging.getLogger(__name__)

_MAGIC = b"PKD1"
_HEAD = struct.Struct("<4s20sH")  # magic, SHA-1 of the stored response, length of its expiry


def fingerprint(stored: bytes) -> bytes:
    """The SHA-1 of a response as the cache stores it (not for security: for change)."""
    return hashlib.sha1(stored, usedforsecurity=False).digest()


def expired(expires: Any, now: datetime) -> bool | None:
    """Whether a stored response's ``expires`` (ISO 8601 text or ``None``) has passed at ``now``.

    ``None`` when the value cannot be read (the caller then does not use the response).
    """
    if expires is None:
        return False
    try:
        moment = datetime.fromisoformat(expires)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return now >= moment


def derived_value(
    value: bytes | None, stored: bytes, now: datetime, *, offline: bool
) -> memoryview | None:
    """The payload of a derived ``value``, when it was made from ``stored`` and is still fresh.

    Examples
    --------
    >>> stored = b"the response as stored"
    >>> value = _pack(stored, None, b"payload")
    >>> bytes(derived_value(value, stored, datetime.now(UTC), offline=False))
    b'payload'
    >>> derived_value(value, b"re-fetched", datetime.now(UTC), offline=False) is None
    True
    """
    if value is None or len(value) < _HEAD.size:
        return None
    magic, digest, length = _HEAD.unpack_from(value)
    if magic != _MAGIC or digest != fingerprint(stored):
        return None
    start = _HEAD.size + length
    if not offline:
        expires = value[_HEAD.size : start].decode() if length else None
        if expired(expires, now) is not False:
            return None
    return memoryview(value)[start:]


def _pack(stored: bytes, expires: str | None, payload: bytes) -> bytes:
    moment = (expires or "").encode()
    return b"".join([_HEAD.pack(_MAGIC, fingerprint(stored), len(moment)), moment, payload])


def read_derived(cache: BaseCache, keys: Sequence[str], form: str) -> list[bytes | None]:
    """The derived values filed for ``keys`` in ``form`` (unchecked), ``None`` each where absent."""
    responses: Any = cache.responses
    kind = storage_kind(responses)
    absent: list[bytes | None] = [None] * len(keys)
    if kind == "SQLiteDict":
        found: dict[str, bytes] = {}
        prefix = f"{form}:"
        with responses.connection() as connection:
            try:
                for start in range(0, len(keys), CHUNK):
                    chunk = [prefix + key for key in keys[start : start + CHUNK]]
                    marks = ",".join("?" * len(chunk))
                    rows = connection.execute(
                        f"SELECT key, value FROM {FRAMES_TABLE} WHERE key IN ({marks})", chunk
                    )
                    found.update(rows.fetchall())
            except Exception:  # no table yet, or one we cannot read: nothing derived
                return absent
        return [found.get(prefix + key) for key in keys]
    if kind == "RedisDict":
        values: list[bytes | None] = []
        names = _redis_keys(responses, keys, form)
        for start in range(0, len(names), CHUNK):
            values.extend(responses.connection.mget(names[start : start + CHUNK]))
        return values
    return absent


def write_derived(
    cache: BaseCache,
    entries: Sequence[tuple[str, bytes, str | None, bytes]],
    form: str,
) -> None:
    """File derived values: ``(cache key, stored response, its expiry, payload)`` each.

    Written only while the response is still stored exactly so (SQLite: checked in the same
    transaction; Redis: in a transaction watching the response keys), so a response re-fetched
    in the meantime never gets a value made from the one before. SQLite also drops entries whose
    response is gone.
    """
    if not entries:
        return
    responses: Any = cache.responses
    kind = storage_kind(responses)
    try:
        if kind == "SQLiteDict":
            _write_sqlite(responses, entries, form)
        elif kind == "RedisDict":
            _write_redis(responses, entries, form)
    except Exception as exc:  # a read-only file, a full disk, Redis gone: only speed is lost
        logger.debug("derived entries not written: %s", type(exc).__name__)


def _write_sqlite(
    responses: Any, entries: Sequence[tuple[str, bytes, str | None, bytes]], form: str
) -> None:
    table = responses.table_name
    rows = [  # made before the transaction: nothing but SQLite can fail inside it
        (f"{form}:{key}", _pack(stored, expires, payload), key, stored)
        for key, stored, expires, payload in entries
    ]
    with responses.connection(commit=True) as connection:
        try:
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {FRAMES_TABLE} (key TEXT PRIMARY KEY, value BLOB)"
            )
            connection.executemany(  # only while the response is still stored exactly so
                f"INSERT OR REPLACE INTO {FRAMES_TABLE} (key, value) "
                f"SELECT ?, ? FROM {table} WHERE key = ? AND value = ?",
                rows,
            )
            connection.execute(  # entries of responses since deleted (expired, or cleared)
                f"DELETE FROM {FRAMES_TABLE} WHERE substr(key, instr(key, ':') + 1) "
                f"NOT IN (SELECT key FROM {table})"
            )
        except sqlite3.Error:  # never leave requests-cache's connection inside a transaction
            connection.rollback()
            raise


def _write_redis(
    responses: Any, entries: Sequence[tuple[str, bytes, str | None, bytes]], form: str
) -> None:
    import redis

    connection = responses.connection
    names = _redis_keys(responses, [key for key, *_ in entries], form)
    for start in range(0, len(entries), CHUNK):
        chunk = entries[start : start + CHUNK]
        watched = responses._bkeys([key for key, *_ in chunk])
        with connection.pipeline(transaction=True) as pipe:
            try:
                pipe.watch(*watched)  # from here until EXEC, a change to one aborts the write
                current = pipe.mget(watched)
                lifetimes = [pipe.pttl(name) for name in watched]
                pipe.multi()
                for (_, stored, expires, payload), name, now, ttl in zip(
                    chunk, names[start : start + CHUNK], current, lifetimes, strict=True
                ):
                    if now == stored:  # lives as long as its response
                        pipe.set(name, _pack(stored, expires, payload), px=ttl if ttl > 0 else None)
                pipe.execute()
            except redis.WatchError:  # a response changed meanwhile: left to a later run
                continue


def clear_derived(cache: BaseCache) -> None:
    """Drop every derived entry beside ``cache`` (when the cache itself is cleared)."""
    responses: Any = cache.responses
    kind = storage_kind(responses)
    if kind == "SQLiteDict":
        with responses.connection(commit=True) as connection:
            connection.execute(f"DROP TABLE IF EXISTS {FRAMES_TABLE}")
    elif kind == "RedisDict":
        names = list(responses.connection.scan_iter(f"{responses.namespace}-frames:*"))
        for start in range(0, len(names), CHUNK):
            responses.connection.delete(*names[start : start + CHUNK])


def storage_kind(responses: Any) -> str | None:
    """``"SQLiteDict"`` or ``"RedisDict"`` for requests-cache's storages and their subclasses
    (propertykit's own Redis storage is one), else ``None``."""
    for kind in type(responses).__mro__:
        if kind.__module__.startswith("requests_cache.") and kind.__name__ in (
            "SQLiteDict",
            "RedisDict",
        ):
            return kind.__name__
    return None


def _redis_keys(responses: Any, keys: Sequence[str], form: str) -> list[bytes]:
    prefix = f"{responses.namespace}-frames:{form}:"
    return [f"{prefix}{key}".encode() for key in keys]
