"""How propertykit stores an answer in its cache: a serializer of its own, readable in bulk.

requests-cache stores each response through a serializer (its documented extension point, a
``SerializerPipeline`` of ``Stage``\\ s). Ours, :data:`ANSWER_SERIALIZER` (named
``propertykit-answer-1``: the name is part of every cache key, so it stays), writes a small head
of our own before the rest::

    b"PKA2" | status (u16) | has Vary (u8) | expiry length (u16) | rest length (u32)
    | stamp (16 bytes) | expiry (ISO 8601, UTC; empty: never) | rest | body

``rest`` is the response without its body, written by requests-cache's own ``pickle``
serializer and read back only by it. So the bulk read (:mod:`propertykit.wire._bulk_cache`)
decides from the head alone whether the session would answer with an entry as it stands, and
takes its body without deserialising anything (:func:`read_answer`). The ``stamp`` is random,
drawn anew for every write: a value kept beside an answer names it
(:mod:`propertykit.wire._derived_cache`), so whether the answer is still the one it was made
from is told by the first bytes of the entry alone (:data:`HEAD_BYTES`, :func:`read_head`).

A storage remembers the stamp of each answer it has just written (:class:`Written`), so a value
made from a body fetched and stored now names that very write, without reading the entry back:
if another process stores the same request meanwhile, the value names the answer it replaced,
and is never used.

Entries written before are still read: by an earlier propertykit (``b"PKA1"``, the same head
without a stamp: nothing kept is ever taken for one), or by requests-cache's ``pickle``
serializer.
"""

from __future__ import annotations

import os
import struct
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from requests_cache.models.response import CachedResponse
from requests_cache.serializers import SerializerPipeline, Stage, pickle_serializer

_MAGIC = b"PKA2"
_HEAD = struct.Struct("<4sHBHI16s")
_MAGIC_BEFORE = b"PKA1"  # an earlier propertykit: no stamp
_HEAD_BEFORE = struct.Struct("<4sHBHI")
#: Leading bytes of an entry that hold its head (an expiry is 32 characters).
HEAD_BYTES = _HEAD.size + 64
#: How many stamps of answers just written a storage remembers (:class:`Written`).
WRITTEN_KEPT = 20_000


@dataclass(frozen=True)
class AnswerHead:
    """What the head of a stored answer says."""

    status_code: int
    varies: bool
    expires: datetime | None
    stamp: bytes | None  # drawn for this write; None: an entry written before stamps

    def usable(self, now: datetime, *, offline: bool) -> bool:
        """Whether the session would answer with it as it stands: a 200 without ``Vary``, fresh
        (offline: any age, as ``stale_if_error`` allows there)."""
        if self.status_code != 200 or self.varies:
            return False
        return offline or self.expires is None or now < self.expires


@dataclass(frozen=True)
class StoredAnswer:
    """The head of a stored answer, and its body (not copied)."""

    head: AnswerHead
    body: memoryview


class AnswerFormat:
    """A requests-cache ``Stage``: a ``CachedResponse`` to and from the bytes described above."""

    def dumps(self, response: CachedResponse) -> bytes:
        body = response.content or b""
        rest: Any = pickle_serializer.dumps(CachedResponse.from_response(response, content=b""))
        expires = response.expires.astimezone(UTC).isoformat() if response.expires else ""
        moment = expires.encode()
        varies = any(name.lower() == "vary" for name in response.headers)
        stamp = os.urandom(16)
        head = _HEAD.pack(_MAGIC, response.status_code, varies, len(moment), len(rest), stamp)
        return b"".join((head, moment, rest, body))

    def loads(self, data: bytes) -> CachedResponse:
        found = _read(data)
        if found is None:  # an entry written by requests-cache's own pickle
            earlier: CachedResponse = pickle_serializer.loads(data)
            return earlier
        _, start, size = found
        rest: CachedResponse = pickle_serializer.loads(data[start : start + size])
        return CachedResponse.from_response(rest, content=bytes(data[start + size :]))


#: The serializer of propertykit's cache backends.
ANSWER_SERIALIZER = SerializerPipeline(
    [Stage(AnswerFormat())], name="propertykit-answer-1", is_binary=True
)


class Written(OrderedDict[str, bytes]):
    """The stamps of the answers a storage wrote last, by cache key (the latest
    :data:`WRITTEN_KEPT` of them; an older one is forgotten: only speed is lost).

    Only answers the session would answer with as they stand are noted (200, no ``Vary``;
    expiry is checked where a kept value is read). A reader takes a stamp with ``pop``.

    Examples
    --------
    >>> written = Written()
    >>> written.note("key", ANSWER_SERIALIZER.dumps(CachedResponse(status_code=200)))
    >>> len(written.pop("key")), written.pop("key", None)
    (16, None)
    >>> written.note("key", ANSWER_SERIALIZER.dumps(CachedResponse(status_code=404)))
    >>> "key" in written
    False
    """

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()

    def note(self, key: str, stored: Any) -> None:
        """Note the stamp of ``stored``, just written under ``key`` (anything else: nothing)."""
        found = _read(stored) if isinstance(stored, bytes) else None
        head = None if found is None else found[0]
        with self._lock:
            self.pop(key, None)
            if head is not None and head.stamp and head.status_code == 200 and not head.varies:
                self[key] = head.stamp
                while len(self) > WRITTEN_KEPT:
                    self.popitem(last=False)


def read_head(value: Any) -> AnswerHead | None:
    """The head of a value :data:`ANSWER_SERIALIZER` wrote, from its first bytes at least
    (``None``: not one, or cut short before its head ends).

    Examples
    --------
    >>> value = ANSWER_SERIALIZER.dumps(CachedResponse(status_code=200, content=b"{}"))
    >>> head = read_head(value[:HEAD_BYTES])
    >>> head.status_code, head.expires, len(head.stamp)
    (200, None, 16)
    >>> read_head(ANSWER_SERIALIZER.dumps(CachedResponse())).stamp != head.stamp
    True
    """
    found = _read(value)
    return None if found is None else found[0]


def read_answer(value: Any) -> StoredAnswer | None:
    """The head and body of a value :data:`ANSWER_SERIALIZER` wrote (``None``: not one).

    Examples
    --------
    >>> value = ANSWER_SERIALIZER.dumps(CachedResponse(status_code=200, content=b"{}"))
    >>> answer = read_answer(value)
    >>> answer.head.status_code, bytes(answer.body)
    (200, b'{}')
    """
    found = _read(value)
    if found is None:
        return None
    head, start, size = found
    return StoredAnswer(head, memoryview(value)[start + size :])


def _read(value: Any) -> tuple[AnswerHead, int, int] | None:
    """The head, where ``rest`` starts and its length; ``None`` when not (wholly) there."""
    if value is None or len(value) < _HEAD_BEFORE.size:
        return None
    magic = bytes(value[:4])
    if magic == _MAGIC and len(value) >= _HEAD.size:
        _, status, varies, moment, size, stamp = _HEAD.unpack_from(value)
        fixed: int = _HEAD.size
    elif magic == _MAGIC_BEFORE:
        _, status, varies, moment, size = _HEAD_BEFORE.unpack_from(value)
        fixed, stamp = _HEAD_BEFORE.size, None
    else:
        return None
    start = fixed + moment
    if len(value) < start:
        return None
    text = bytes(value[fixed:start]).decode()
    expires = datetime.fromisoformat(text) if text else None
    return AnswerHead(status, bool(varies), expires, stamp), start, size
