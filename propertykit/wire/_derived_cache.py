"""Values kept beside a cached answer: the answer in a form quicker to use, never a stale one.

A warm re-run of a lookup spends most of its time parsing the cached bodies again. The caller
may keep, beside each cached answer, a value made from it (for the frames: the records already
read into Arrow), in the same backend, so a team's Redis or a shared SQLite file shares it too
(:meth:`~propertykit.wire._sqlite_storage.SQLiteStorage.keep`,
:meth:`~propertykit.wire._redis_storage.RedisStorage.keep`). It is filed under the request
(:func:`request_id`: the GET's URL and parameters, hashed) and a ``form`` (the caller's format
and schema, so another version never reads it), so a re-run finds it without computing a cache
key per request.

A kept value can never disagree with the cache: it names the answer it was made from, by its
cache key and the stamp drawn when that answer was written
(:mod:`propertykit.wire._stored_answer`), and is used only while the entry under that key has
that very stamp and would itself be used (:func:`propertykit.wire._bulk_cache.kept_values`).
Whatever wrote the answer again meanwhile, even with the same bytes, or cleared the cache, the
old value no longer matches. Redis drops kept values when their answer expires, and clearing
the cache drops them: that only saves space.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The SQLite table of kept values, in the cache's file.
FRAMES_TABLE = "propertykit_kept"

_MAGIC = b"PKK2"
_HEAD = struct.Struct("<4s16sH")  # magic, the answer's stamp, length of its cache key


@dataclass(frozen=True)
class Kept:
    """A kept value as read: the answer it was made from (cache key, stamp), and the payload."""

    answer_key: str
    stamp: bytes
    payload: memoryview


def request_id(url: str, params: Mapping[str, Any] | None) -> str:
    """What a value kept for the GET of ``url`` with ``params`` is filed under.

    Examples
    --------
    >>> request_id("https://x/v1/property/L1", {"b": 2, "a": 1}) == request_id(
    ...     "https://x/v1/property/L1", {"a": 1, "b": 2})
    True
    """
    text = repr((url, sorted((params or {}).items())))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def pack_kept(answer_key: str, stamp: bytes, payload: bytes) -> bytes:
    """The value to keep: ``payload``, naming the answer it was made from."""
    key = answer_key.encode()
    return b"".join((_HEAD.pack(_MAGIC, stamp, len(key)), key, payload))


def read_kept(value: bytes | None) -> Kept | None:
    """A kept ``value`` as :func:`pack_kept` packed it (``None``: absent, or not one).

    Examples
    --------
    >>> kept = read_kept(pack_kept("0123abcd", b"s" * 16, b"payload"))
    >>> kept.answer_key, bytes(kept.payload)
    ('0123abcd', b'payload')
    >>> read_kept(b"PKK1" + bytes(20) + b"an older kind") is None
    True
    """
    if value is None or len(value) < _HEAD.size:
        return None
    magic, stamp, size = _HEAD.unpack_from(value)
    start = _HEAD.size + size
    if magic != _MAGIC or len(value) < start:
        return None
    key = bytes(value[_HEAD.size : start]).decode(errors="replace")  # a mangled one matches none
    return Kept(key, stamp, memoryview(value)[start:])


def clear_derived(cache: Any) -> None:
    """Drop every value kept beside ``cache``'s answers (clearing the cache drops them too)."""
    clear = getattr(getattr(cache, "responses", None), "clear_kept", None)
    if clear is not None:
        clear()
