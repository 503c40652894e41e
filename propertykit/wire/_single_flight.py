"""Team-wide exactly-once fetching: one process fetches a batch, the others read the cache.

Two kernels (or two Dask workers) asking for the same uncached batch at the same moment would
both miss the cache and both pay. The session therefore holds a short lock per cache key around
every real send (never around a cache hit), and whoever gets the lock second reads the cache
again before sending (when another process may have stored the answer since it looked: see
below): the first one's answer is there, free.

- With a Redis cache (:class:`RedisFlight`): a Redis lock per key, ``SET NX PX`` with a random
  token and released by compare-and-delete (redis-py's ``Lock``), so every process using that
  Redis, on any machine, takes part. The lock is a *lease*: it lives ``hold_seconds`` (30 s, or
  ``PROPERTYKIT_LOCK_LEASE``) past its holder's last renewal, and the holder renews it every
  third of that while it fetches, however long the fetch takes. A holder that dies (a killed
  kernel) stops renewing: the others wait at most the lease, then one of them fetches. That
  batch is then paid at most twice: once by the dead holder if its request went out, once by
  the one that took its place.
- With the SQLite cache (:class:`FileFlight`): an OS file lock (``filelock``) in a
  ``.propertykit-locks`` folder beside the cache file, for the processes of one machine. The
  lock files are named by a hash of the cache key (1,024 of them at most, reused). The
  operating system frees the lock of a process that dies, at once.

The cache write happens inside the lock (requests-cache stores the answer before the session's
send returns; SQLite commits it), so a waiter that gets the lock always sees it. Lock names hold
requests-cache's cache key, which never includes the API key.

Whoever takes a lock is told whether the cache must be read again (:attr:`Hold.read_again`):
another process may have stored the answer since this one looked (``since``: when it looked,
in nanoseconds since the epoch). A :class:`FileFlight` knows: each lock file has a mark beside
it, ``busy`` while a holder fetches and ``done <time>`` once it let go, its answer stored, so
the cache is read again only when a holder let go at or after the look (less a second, for
clock steps), or died fetching (keys that share a lock file share its mark: another key's fetch
only makes the cache be read again). A :class:`RedisFlight` keeps a mark per key in Redis, read
and written by two small scripts that stamp it with Redis's own clock (``TIME``), and compares
it with the look through the offset between the two clocks measured as the lock is taken: the
kernels' machines need not agree on the time. A kernel of a propertykit before marks leaves
none: kernels of both kinds fetching the same batches at once may pay twice for one.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from propertykit.config import lock_lease

logger = logging.getLogger("propertykit")

#: Lock files of one SQLite cache (keys hash into these; a collision only makes two waits one).
_FILE_STRIPES = 1024
_LOCK_FOLDER = ".propertykit-locks"
_GAVE_UP = "waited %.1f s for another fetch of one batch; sending it"
#: A holder that let go this long before a look still makes the cache be read again (clock steps).
_CLOCK_SLACK_NS = 1_000_000_000
#: How long a Redis mark lives (a look older than that, at a lock taken, is rare; none: no reread).
_MARK_MS = 24 * 3600 * 1000
#: Take a Redis mark: what it said, then ``busy``; and Redis's clock (seconds, microseconds).
_TAKE_MARK = """
local said = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], 'busy', 'PX', ARGV[1])
local now = redis.call('TIME')
return {said or 'none', now[1], now[2]}
"""
#: Let a Redis mark go: ``done <nanoseconds>`` on Redis's clock.
_LET_GO_MARK = """
local now = redis.call('TIME')
local when = 'done ' .. now[1] .. string.format('%06d', tonumber(now[2])) .. '000'
redis.call('SET', KEYS[1], when, 'PX', ARGV[1])
return 1
"""


@dataclass(frozen=True)
class Hold:
    """A lock taken, or not: ``held`` (``False``: gave up waiting), and ``read_again``: whether
    another process may have stored the answer since the cache was looked at."""

    held: bool
    read_again: bool = True


class SingleFlight(Protocol):
    """Holds a lock per cache key while one process sends that request."""

    def hold(
        self, cache_key: str, within: float | None = None, since: int | None = None
    ) -> AbstractContextManager[Hold]:
        """Hold the key's lock; yields whether it is held and whether to read the cache again.

        ``within``: wait no longer than this either (the time left before the request's
        deadline). ``since``: when the cache was looked at (``time.time_ns()``; ``None``: read
        again whatever happened).
        """
        ...


class RedisFlight:
    """Locks in Redis, shared by every process of a team that uses the same Redis.

    Parameters
    ----------
    connection
        The ``redis.Redis`` of the team cache.
    hold_seconds
        The lease: how long a lock lives past its holder's last renewal (a killed kernel's
        lock goes after that). The holder renews it every ``hold_seconds / 3``.
    wait_seconds
        Longest wait for another process's fetch; then this one sends anyway.
    namespace
        Prefix of the lock keys.

    Examples
    --------
    >>> import redis
    >>> flight = RedisFlight(redis.Redis(), hold_seconds=40, wait_seconds=90)
    >>> flight.lock_name("3f2a")
    'propertykit:lock:3f2a'
    """

    def __init__(
        self,
        connection: Any,
        *,
        hold_seconds: float,
        wait_seconds: float,
        namespace: str = "propertykit",
    ) -> None:
        self.connection = connection
        self.hold_seconds = hold_seconds
        self.wait_seconds = wait_seconds
        self.namespace = namespace
        self._take_mark = connection.register_script(_TAKE_MARK)
        self._let_go_mark = connection.register_script(_LET_GO_MARK)

    def lock_name(self, cache_key: str) -> str:
        """The Redis key of the lock for ``cache_key``."""
        return f"{self.namespace}:lock:{cache_key}"

    def mark_name(self, cache_key: str) -> str:
        """The Redis key of the mark beside the lock for ``cache_key``."""
        return f"{self.namespace}:mark:{cache_key}"

    @contextmanager
    def hold(
        self, cache_key: str, within: float | None = None, since: int | None = None
    ) -> Iterator[Hold]:
        lock = self.connection.lock(
            self.lock_name(cache_key), timeout=self.hold_seconds, sleep=0.02, thread_local=False
        )
        wait = _wait(self.wait_seconds, within)
        held = bool(lock.acquire(blocking=True, blocking_timeout=wait))
        if not held:
            logger.warning(_GAVE_UP, wait)
            yield Hold(False)
            return
        stop = threading.Event()
        every = self.hold_seconds / 3  # the first renewal after that: a short fetch needs none
        renewing = threading.Timer(every, _renew, args=(lock, every, stop))
        renewing.name = "propertykit-lease"
        renewing.daemon = True
        renewing.start()
        from redis.exceptions import RedisError

        mark = [self.mark_name(cache_key)]
        try:
            said, seconds, micros = self._take_mark(mark, [_MARK_MS])
            offset = int(seconds) * 10**9 + int(micros) * 1000 - time.time_ns()  # Redis - ours
            said = said.encode() if isinstance(said, str) else bytes(said)  # decode_responses
            found = None if said == b"none" else said
            yield Hold(True, since is None or _let_go_since(found, since + offset))
        finally:
            stop.set()
            renewing.cancel()
            renewing.join()
            try:  # the answer is stored by now; a mark left "busy" only makes others read again
                with suppress(RedisError):
                    self._let_go_mark(mark, [_MARK_MS])
            finally:
                _release_redis_lock(lock)


class FileFlight:
    """OS file locks beside a SQLite cache, shared by the processes of one machine.

    Examples
    --------
    >>> import tempfile
    >>> flight = FileFlight(tempfile.mkdtemp(), wait_seconds=5)
    >>> with flight.hold("3f2a", since=time.time_ns()) as hold:
    ...     hold
    Hold(held=True, read_again=False)
    >>> with flight.hold("3f2a", since=time.time_ns() - 60 * 10**9) as hold:
    ...     hold.read_again  # a holder let go after that look
    True
    """

    def __init__(self, folder: str | Path, *, wait_seconds: float) -> None:
        self.folder = Path(folder)
        self.wait_seconds = wait_seconds

    def lock_path(self, cache_key: str) -> Path:
        """The lock file ``cache_key`` hashes to."""
        digest = hashlib.sha256(cache_key.encode()).digest()
        stripe = int.from_bytes(digest[:4], "big") % _FILE_STRIPES
        return self.folder / f"batch-{stripe:04d}.lock"

    @contextmanager
    def hold(
        self, cache_key: str, within: float | None = None, since: int | None = None
    ) -> Iterator[Hold]:
        from filelock import FileLock, Timeout

        self.folder.mkdir(parents=True, exist_ok=True)
        wait = _wait(self.wait_seconds, within)
        path = self.lock_path(cache_key)
        lock = FileLock(path, timeout=wait, thread_local=False)
        try:
            lock.acquire(poll_interval=0.01)
        except Timeout:
            logger.warning(_GAVE_UP, wait)
            yield Hold(False)
            return
        mark = path.with_suffix(".mark")
        try:
            said = mark.read_bytes() if mark.exists() else None
            mark.write_bytes(b"busy")
            yield Hold(True, since is None or _let_go_since(said, since))
        finally:
            try:  # the answer is stored by now; a mark left "busy" only makes others read again
                with suppress(OSError):
                    mark.write_bytes(b"done %d" % time.time_ns())
            finally:
                lock.release()


def _let_go_since(said: bytes | None, since: int) -> bool:
    """Whether the holder of a lock whose mark ``said`` this let go at or after ``since`` (less
    the slack), or died holding it (``busy``, or a mark it was writing): then the cache is read
    again. No mark (``None``): no holder ever fetched through this lock."""
    if said is None:
        return False
    word, _, when = said.partition(b" ")
    if word != b"done" or not when.isdigit():
        return True
    return int(when) >= since - _CLOCK_SLACK_NS


def single_flight_for(cache: Any, *, timeout: float) -> SingleFlight | None:
    """The lock that suits a requests-cache backend: Redis, a SQLite file, or none (memory).

    ``timeout`` is the client's request timeout: a lock outlives one attempt by a margin.

    Examples
    --------
    >>> single_flight_for(None, timeout=30) is None
    True
    """
    from propertykit.wire._team import redis_connection_of

    hold = timeout + 10.0  # how long another process's fetch may be waited for: 3 * hold
    redis = redis_connection_of(cache)
    if redis is not None:
        namespace = getattr(getattr(cache, "responses", None), "namespace", "propertykit")
        lease = lock_lease()
        return RedisFlight(redis, hold_seconds=lease, wait_seconds=3 * hold, namespace=namespace)
    db_path = getattr(cache, "db_path", None)
    if db_path is not None and str(db_path) != ":memory:":
        return FileFlight(Path(db_path).parent / _LOCK_FOLDER, wait_seconds=3 * hold)
    return None


def _wait(wait_seconds: float, within: float | None) -> float:
    return wait_seconds if within is None else max(0.0, min(wait_seconds, within))


def _renew(lock: Any, every: float, stop: threading.Event) -> None:
    """Renew a held Redis lock's lease now, then every ``every`` seconds until ``stop`` is set."""
    from redis.exceptions import LockError, RedisError

    while not stop.is_set():
        try:
            lock.reacquire()
        except LockError:  # lost (it expired while this process was stalled): nothing to renew
            logger.warning("a batch lock was lost before its fetch ended")
            return
        except RedisError:  # Redis gone: the fetch itself will fail to store, and say so
            return
        stop.wait(every)


def _release_redis_lock(lock: Any) -> None:
    from redis.exceptions import LockError

    try:
        lock.release()
    except LockError:  # it expired (a very slow answer) and maybe another holds it now
        logger.warning("a batch lock expired before its fetch ended")


def stored_response(cache: Any, cache_key: str) -> Any:
    """The response ``cache`` holds for ``cache_key`` now, or ``None``, by public means only.

    propertykit's SQLite backend reads on a connection per thread, so a read under way in one
    thread never pins the view this one gets; its :meth:`~propertykit.wire._sqlite_storage.
    SQLiteStorage.read_afresh` also opens a connection of its own, in case this very thread
    has a read open.
    """
    afresh = getattr(cache.responses, "read_afresh", None)
    if afresh is not None:
        return afresh(cache_key)
    return cache.get_response(cache_key)
