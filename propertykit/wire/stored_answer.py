"""How propertykit stores an answer in its cache: a serializer of its own, readable in bulk.

requests-cache stores each response through a serializer (its documented extension point, a
``SerializerPipeline`` of ``Stage``\\ s). Ours, :data:`ANSWER_SERIALIZER` (named
``propertykit-answer-1``), writes a small head of our own before the rest::

    b"PKA1" | status (u16) | has Vary (u8) | expiry length (u16) | rest length (u32)
    | expiry (ISO 8601, UTC; empty: never) | rest | body

``rest`` is the response without its body, written by requests-cache's own ``pickle``
serializer and read back only by it. So the bulk read (:mod:`propertykit.wire.bulk_cache`)
decides from the head alone whether the session would answer with an entry as it stands, and
takes its body without deserialising anything (:func:`read_answer`).

An entry written before (by requests-cache's ``pickle`` serializer) is still read, by it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from requests_cache.models.response import CachedResponse
from requests_cache.serializers import SerializerPipeline, Stage, pickle_serializer

__all__ = ["ANSWER_SERIALIZER", "AnswerFormat", "StoredAnswer", "read_answer"]

_MAGIC = b"PKA1"
_HEAD = struct.Struct("<4sHBHI")


@dataclass(frozen=True)
class StoredAnswer:
    """What the head of a stored answer says, and its body (not copied)."""

    status_code: int
    varies: bool
    expires: datetime | None
    body: memoryview

    def usable(self, now: datetime, *, offline: bool) -> bool:
        """Whether the session would answer with it as it stands: a 200 without ``Vary``, fresh
        (offline: any age, as ``stale_if_error`` allows there)."""
        if self.status_code != 200 or self.varies:
            return False
        return offline or self.expires is None or now < self.expires


class AnswerFormat:
    """A requests-cache ``Stage``: a ``CachedResponse`` to and from the bytes described above."""

    def dumps(self, response: CachedResponse) -> bytes:
        body = response.content or b""
        rest: Any = pickle_serializer.dumps(CachedResponse.from_response(response, content=b""))
        expires = response.expires.astimezone(UTC).isoformat() if response.expires else ""
        moment = expires.encode()
        varies = any(name.lower() == "vary" for name in response.headers)
        head = _HEAD.pack(_MAGIC, response.status_code, varies, len(moment), len(rest))
        return b"".join((head, moment, rest, body))

    def loads(self, data: bytes) -> CachedResponse:
        if bytes(data[:4]) != _MAGIC:  # an entry written by requests-cache's own pickle
            earlier: CachedResponse = pickle_serializer.loads(data)
            return earlier
        _, _, _, moment, size = _HEAD.unpack_from(data)
        start = _HEAD.size + moment
        rest: CachedResponse = pickle_serializer.loads(data[start : start + size])
        return CachedResponse.from_response(rest, content=bytes(data[start + size :]))


#: The serializer of propertykit's cache backends.
ANSWER_SERIALIZER = SerializerPipeline(
    [Stage(AnswerFormat())], name="propertykit-answer-1", is_binary=True
)


def read_answer(value: Any) -> StoredAnswer | None:
    """The head and body of a value :data:`ANSWER_SERIALIZER` wrote (``None``: not one).

    Examples
    --------
    >>> value = ANSWER_SERIALIZER.dumps(CachedResponse(status_code=200, content=b"{}"))
    >>> answer = read_answer(value)
    >>> answer.status_code, bytes(answer.body), answer.expires
    (200, b'{}', None)
    """
    if value is None or len(value) < _HEAD.size:
        return None
    magic, status, varies, moment, size = _HEAD.unpack_from(value)
    if magic != _MAGIC:
        return None
    view = memoryview(value)
    start = _HEAD.size + moment
    text = bytes(view[_HEAD.size : start]).decode()
    expires = datetime.fromisoformat(text) if text else None
    return StoredAnswer(status, bool(varies), expires, view[start + size :])
