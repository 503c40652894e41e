"""Derived entries: a cached response kept in a form quicker to use, beside the response itself.

A warm re-run of a lookup spends most of its time parsing the cached bodies again. The caller
may keep, for each cached response, a *derived* value (for the frames, the records already read
into Arrow) in the same backend as the response cache, so a team's Redis or a shared SQLite file
shares it too:

- SQLite: table :data:`FRAMES_TABLE` in the cache's own file (``key``, ``form``, ``value``);
- Redis: keys ``<namespace>-frames:<form>:<cache key>``, outside the responses' ``<namespace>:``
  (so requests-cache never takes one for a response), living as long as their response's key.

A derived entry can never disagree with the response cache. It is filed under the response's
cache key and the ``form`` (what the value is: the caller's format and schema, so another
version never reads it), and carries the response's expiry (checked as the response's own would
be: offline, any age) and the SHA-1 of the response exactly as stored (the serialised entry). It
is only written for a response the bulk read would answer with (a fresh 200 without ``Vary``),
from that very stored value, and only while the cache still holds that value (SQLite: checked in
the writing transaction; Redis: ``WATCH`` on the response keys). After that:

- SQLite: triggers on the responses table (:data:`TRIGGERS`, created with the table) delete a
  response's derived entries in the same transaction that stores it again, changes or deletes
  it, whichever program does so. Reading derived entries needs no look at the responses (which
  are twice their size), only that the triggers exist, checked in the same statement. Entries
  found without them (the responses table was dropped, so were its triggers) are all deleted
  before any is written again. Triggers left without their table (dropped by hand) would make
  every store of a response fail, so they are dropped when the cache is opened (:func:`heal`)
  or read.
- Redis has no triggers: each entry's SHA-1 is compared with the stored response's on reading.
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

from propertykit.wire.cache_storage import own_connection, storage_kind

__all__ = [
    "FRAMES_TABLE",
    "TRIGGERS",
    "clear_derived",
    "derived_value",
    "expired",
    "fingerprint",
    "guarded",
    "heal",
    "read_derived",
    "unpack",
    "write_derived",
]

#: The SQLite table of derived entries, in the response cache's file.
FRAMES_TABLE = "propertykit_kept"
#: SQLite triggers on the responses table that drop a response's derived entries whenever the
#: response is stored again, changed or deleted, by whatever program writes it.
TRIGGERS = {
    "propertykit_kept_on_insert": "AFTER INSERT ON {table} BEGIN "
    "DELETE FROM {kept} WHERE key = NEW.key; END",
    "propertykit_kept_on_update": "AFTER UPDATE ON {table} BEGIN "
    "DELETE FROM {kept} WHERE key = OLD.key OR key = NEW.key; END",
    "propertykit_kept_on_delete": "AFTER DELETE ON {table} BEGIN "
    "DELETE FROM {kept} WHERE key = OLD.key; END",
}
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
    found = unpack(value, now, offline=offline)
    if found is None or found[0] != fingerprint(stored):
        return None
    return found[1]


def unpack(value: bytes | None, now: datetime, *, offline: bool) -> tuple[bytes, memoryview] | None:
    """The fingerprint a derived ``value`` was made from, and its payload, if fresh at ``now``.

    Whether the fingerprint is the stored response's is left to the caller.
    """
    if value is None or len(value) < _HEAD.size:
        return None
    magic, digest, length = _HEAD.unpack_from(value)
    if magic != _MAGIC:
        return None
    start = _HEAD.size + length
    if not offline:
        expires = value[_HEAD.size : start].decode() if length else None
        if expired(expires, now) is not False:
            return None
    return digest, memoryview(value)[start:]


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
        names = list(TRIGGERS)
        guarded = (  # in the same statement, so in the same snapshot as the entries read
            "(SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? "
            f"AND name IN ({','.join('?' * len(names))})) = {len(names)}"
        )
        with own_connection(responses) as connection:
            try:
                for start in range(0, len(keys), CHUNK):
                    chunk = list(keys[start : start + CHUNK])
                    marks = ",".join("?" * len(chunk))
                    rows = connection.execute(
                        f"SELECT key, value FROM {FRAMES_TABLE} WHERE form = ? "
                        f"AND key IN ({marks}) AND {guarded}",
                        [form, *chunk, responses.table_name, *names],
                    )
                    found.update(rows.fetchall())
            except sqlite3.OperationalError:  # no table yet: nothing derived
                found = {}
                missing_table = True
            else:
                missing_table = False
        if missing_table:
            _drop_orphan_triggers(responses)
        return [found.get(key) for key in keys]
    if kind == "RedisDict":
        values: list[bytes | None] = []
        filed = _redis_keys(responses, keys, form)
        for start in range(0, len(filed), CHUNK):
            values.extend(responses.connection.mget(filed[start : start + CHUNK]))
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
        (key, form, _pack(stored, expires, payload), key, stored)
        for key, stored, expires, payload in entries
    ]
    with own_connection(responses, write=True) as connection:
        try:
            present = {
                name
                for (name,) in connection.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                    (table,),
                )
            }
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {FRAMES_TABLE} (key TEXT NOT NULL, "
                "form TEXT NOT NULL, value BLOB, PRIMARY KEY (key, form))"
            )
            if not set(TRIGGERS) <= present:  # entries no trigger watched: none can be trusted
                connection.execute(f"DELETE FROM {FRAMES_TABLE}")
                for name, body in TRIGGERS.items():
                    sql = body.format(table=table, kept=FRAMES_TABLE)
                    connection.execute(f"CREATE TRIGGER IF NOT EXISTS {name} {sql}")
            connection.executemany(  # only while the response is still stored exactly so
                f"INSERT OR REPLACE INTO {FRAMES_TABLE} (key, form, value) "
                f"SELECT ?, ?, ? FROM {table} WHERE key = ? AND value = ?",
                rows,
            )
        except sqlite3.Error:  # rolled back by own_connection; the caller logs it
            raise


def heal(cache: BaseCache) -> None:
    """Drop triggers left without their table, if any (when a cache is opened)."""
    if storage_kind(cache.responses) == "SQLiteDict":
        _drop_orphan_triggers(cache.responses)


def _drop_orphan_triggers(responses: Any) -> None:
    """Triggers left without their table (dropped by hand) would make every store of a response
    fail: drop them. Nothing to do when the table exists or there are no triggers."""
    with own_connection(responses) as connection:
        names = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE "
                "'propertykit_kept_%'"
            )
        ]
        exists = connection.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FRAMES_TABLE,)
        ).fetchone()
    if names and not exists:
        with own_connection(responses, write=True) as connection:
            for name in names:
                connection.execute(f"DROP TRIGGER IF EXISTS {name}")


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
        with own_connection(responses, write=True) as connection:
            for name in TRIGGERS:  # first: they write to the table
                connection.execute(f"DROP TRIGGER IF EXISTS {name}")
            connection.execute(f"DROP TABLE IF EXISTS {FRAMES_TABLE}")
    elif kind == "RedisDict":
        names = list(responses.connection.scan_iter(f"{responses.namespace}-frames:*"))
        for start in range(0, len(names), CHUNK):
            responses.connection.delete(*names[start : start + CHUNK])


def guarded(cache: BaseCache) -> bool:
    """Whether the backend itself drops derived entries when their response changes (SQLite,
    by :data:`TRIGGERS`), so that reading them needs no look at the responses."""
    return storage_kind(cache.responses) == "SQLiteDict"


def _redis_keys(responses: Any, keys: Sequence[str], form: str) -> list[bytes]:
    prefix = f"{responses.namespace}-frames:{form}:"
    return [f"{prefix}{key}".encode() for key in keys]
