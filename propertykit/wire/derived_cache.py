"""Values kept beside a cached answer: the answer in a form quicker to use, never a stale one.

A warm re-run of a lookup spends most of its time parsing the cached bodies again. The caller
may keep, beside each cached answer, a value made from it (for the frames: the records already
read into Arrow), in the same backend, so a team's Redis or a shared SQLite file shares it too
(:meth:`~propertykit.wire.sqlite_storage.SQLiteStorage.keep`,
:meth:`~propertykit.wire.redis_storage.RedisStorage.keep`). It is filed under the answer's
cache key and a ``form`` (the caller's format and schema, so another version never reads it).

A kept value can never disagree with the cache: it carries the SHA-1 of the answer exactly as
stored, and is used only when the answer read in the same bulk read has that very SHA-1 (and
would itself be used). Whatever wrote the answer again meanwhile, or cleared the cache, the old
value no longer matches. The backends also drop kept values when their answer is stored again
or deleted (SQLite) or expires (Redis): that only saves space.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

__all__ = ["FRAMES_TABLE", "clear_derived", "fingerprint", "kept_payload", "pack_kept"]

#: The SQLite table of kept values, in the cache's file.
FRAMES_TABLE = "propertykit_kept"

_MAGIC = b"PKK1"
_HEAD = struct.Struct("<4s20s")  # magic, SHA-1 of the answer as stored


def fingerprint(stored: bytes) -> bytes:
    """The SHA-1 of an answer as the cache stores it (not for security: for change)."""
    return hashlib.sha1(stored, usedforsecurity=False).digest()


def pack_kept(stored: bytes, payload: bytes) -> bytes:
    """The value to keep: ``payload``, marked with the answer it was made from."""
    return _HEAD.pack(_MAGIC, fingerprint(stored)) + payload


def kept_payload(value: bytes | None, stored: bytes) -> memoryview | None:
    """The payload of a kept ``value``, when it was made from ``stored`` (else ``None``).

    Examples
    --------
    >>> value = pack_kept(b"the answer as stored", b"payload")
    >>> bytes(kept_payload(value, b"the answer as stored"))
    b'payload'
    >>> kept_payload(value, b"fetched again") is None
    True
    """
    if value is None or len(value) < _HEAD.size:
        return None
    magic, digest = _HEAD.unpack_from(value)
    if magic != _MAGIC or digest != fingerprint(stored):
        return None
    return memoryview(value)[_HEAD.size :]


def clear_derived(cache: Any) -> None:
    """Drop every value kept beside ``cache``'s answers (clearing the cache drops them too)."""
    clear = getattr(getattr(cache, "responses", None), "clear_kept", None)
    if clear is not None:
        clear()
