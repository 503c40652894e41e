"""propertykit's Redis cache: a requests-cache backend of its own, for a team.

Like :mod:`propertykit.wire._sqlite_storage`, a ``BaseCache`` holding ``BaseStorage`` mappings of
our own (requests-cache's documented route for custom backends), so that the warm replay may
read many answers at once (:meth:`RedisStorage.get_many`: ``MGET``), or only their heads
(:meth:`RedisStorage.get_heads`: ``GETRANGE``), and keep values beside them
(:meth:`RedisStorage.keep`; an answer just written by its stamp, noted as it was written), and a
write that fails is counted, not raised.

Keys: answers under ``<namespace>:answer:<cache key>``, redirects under
``<namespace>:redirect:<cache key>``, values kept beside an answer under
``<namespace>-frames:<form>:<request>`` (living as long as their answer). An answer expires
in Redis ``ttl_offset`` seconds after it goes stale (written with ``SET ... EX``), so an offline
replay still finds it meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from requests import Response
from requests_cache.backends.base import BaseCache, BaseStorage

from propertykit.wire._stored_answer import ANSWER_SERIALIZER, HEAD_BYTES, Written
from propertykit.wire._write_failures import answer_not_stored

#: Seconds an answer stays in Redis after it went stale (for offline replays).
DEFAULT_TTL_OFFSET = 3600
#: Keys per Redis command.
_CHUNK = 500


class RedisStorage(BaseStorage):  # type: ignore[type-arg]
    """Keys of one kind (``answer`` or ``redirect``) under a namespace, as a mapping."""

    def __init__(
        self,
        connection: Any,
        namespace: str,
        kind: str,
        *,
        serializer: Any = None,
        ttl_offset: int = DEFAULT_TTL_OFFSET,
    ) -> None:
        super().__init__(serializer=serializer)
        self.connection = connection
        self.namespace = namespace
        self.prefix = f"{namespace}:{kind}:"
        self.kept_prefix = f"{namespace}-frames:"
        self.ttl_offset = ttl_offset
        self.written = Written()  # the stamps of the answers written last

    def _name(self, key: str) -> bytes:
        return f"{self.prefix}{key}".encode()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self.connection.exists(self._name(key)))

    def __getitem__(self, key: str) -> Any:
        value = self.connection.get(self._name(key))
        if value is None:
            raise KeyError(key)
        return self.deserialize(key, value)

    def __setitem__(self, key: str, item: Any) -> None:
        stale_in = getattr(item, "expires_delta", None)
        seconds = None if stale_in is None else int(stale_in) + self.ttl_offset
        stored = self.serialize(item)
        self.connection.set(
            self._name(key), stored, ex=seconds if seconds and seconds > 0 else None
        )
        self.written.note(key, stored)

    def __delitem__(self, key: str) -> None:
        if not self.connection.delete(self._name(key)):
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        start = len(self.prefix)
        for name in self.connection.scan_iter(f"{self.prefix}*"):
            yield name.decode()[start:]

    def __len__(self) -> int:
        return sum(1 for _ in self.connection.scan_iter(f"{self.prefix}*"))

    def bulk_delete(self, keys: Iterable[str]) -> None:
        """Delete ``keys``; missing ones are no error."""
        names = [self._name(key) for key in keys]
        for start in range(0, len(names), _CHUNK):
            self.connection.delete(*names[start : start + _CHUNK])

    def clear(self) -> None:
        """Delete every key of this kind, and every value kept beside the answers."""
        self._delete_matching(f"{self.prefix}*")
        self.clear_kept()

    def clear_kept(self) -> None:
        """Delete every value kept beside the answers."""
        self._delete_matching(f"{self.kept_prefix}*")

    def _delete_matching(self, pattern: str) -> None:
        names = list(self.connection.scan_iter(pattern))
        for start in range(0, len(names), _CHUNK):
            self.connection.delete(*names[start : start + _CHUNK])

    def close(self) -> None:
        """Release the connection's sockets (redis-py opens them again if it is used again)."""
        self.connection.close()

    # -- in bulk ----------------------------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The stored (serialised) values of ``keys``, ``None`` each where absent."""
        return self._mget([self._name(key) for key in keys])

    def get_heads(self, keys: Sequence[str]) -> list[bytes | None]:
        """The first :data:`~propertykit.wire._stored_answer.HEAD_BYTES` of the stored values
        of ``keys``, ``None`` each where absent."""
        heads: list[bytes | None] = []
        for start in range(0, len(keys), _CHUNK):
            with self.connection.pipeline(transaction=False) as pipe:
                for key in keys[start : start + _CHUNK]:
                    pipe.getrange(self._name(key), 0, HEAD_BYTES - 1)
                heads.extend(head or None for head in pipe.execute())
        return heads

    def get_kept(self, requests: Sequence[str], form: str) -> list[bytes | None]:
        """The values kept for ``requests`` in ``form``, ``None`` each where absent."""
        return self._mget(self._kept_names(requests, form))

    def keep(self, entries: Sequence[tuple[str, str, bytes]], form: str) -> None:
        """Keep a value for each ``(request, answer key, value)``, living as long as that
        answer. (Whether the answer is still the one it was made from is checked on reading.)"""
        names = self._kept_names([request for request, _, _ in entries], form)
        with self.connection.pipeline(transaction=False) as pipe:
            for _, key, _ in entries:
                pipe.pttl(self._name(key))
            lifetimes = pipe.execute()
        with self.connection.pipeline(transaction=False) as pipe:
            for (_, _, value), name, left in zip(entries, names, lifetimes, strict=True):
                if left == -1:  # the answer never expires
                    pipe.set(name, value)
                elif left > 0:
                    pipe.set(name, value, px=left)
            pipe.execute()

    def _kept_names(self, requests: Sequence[str], form: str) -> list[bytes]:
        return [f"{self.kept_prefix}{form}:{request}".encode() for request in requests]

    def _mget(self, names: list[bytes]) -> list[bytes | None]:
        values: list[bytes | None] = []
        for start in range(0, len(names), _CHUNK):
            values.extend(self.connection.mget(names[start : start + _CHUNK]))
        return values


class RedisAnswers(BaseCache):
    """propertykit's Redis cache backend: answers and redirects under one namespace.

    Parameters
    ----------
    connection
        A ``redis.Redis`` connection.
    namespace
        Prefix of every key written (two teams may share one Redis under two namespaces).
    ttl_offset
        Seconds an answer stays in Redis after it went stale.
    """

    def __init__(
        self, connection: Any, *, namespace: str, ttl_offset: int = DEFAULT_TTL_OFFSET
    ) -> None:
        super().__init__(cache_name=namespace)
        self.responses: RedisStorage = RedisStorage(
            connection, namespace, "answer", serializer=ANSWER_SERIALIZER, ttl_offset=ttl_offset
        )
        self.redirects: RedisStorage = RedisStorage(connection, namespace, "redirect")

    def save_response(
        self, response: Response, cache_key: str | None = None, expires: Any = None
    ) -> None:
        """Store an answer; one that cannot be written is counted (and warned of), not raised."""
        from redis.exceptions import ResponseError

        try:
            super().save_response(response, cache_key, expires)
        except ResponseError as exc:  # e.g. OOM: maxmemory reached
            answer_not_stored(f"Redis namespace {self.responses.namespace!r}", exc)
