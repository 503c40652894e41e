"""Pay once: a batch is bought at most once by all the kernels that share a cache.

**The promise.** Kernels (notebooks, Dask workers, machines of a team) that share one cache and
ask for the same batch at the same moment pay for it once: one of them sends it, the others
are answered from the cache, free.

**What is looked at, and when.** A batch is looked up in the cache first (by requests-cache
before a send, or by the replay's bulk read for many batches at once). When the cache holds no
answer, the send takes a lock per cache key (:meth:`SingleFlight.hold`), and then, under the
lock, **the cache is read again** (:func:`read_again`, :func:`usable_answer`): whatever another
kernel stored between the look and the lock is found there and used, and nothing is sent. The
answer is stored before the lock is let go (requests-cache writes it before the session's send
returns), so whoever takes the lock next finds it.

**Why always.** The cache is the one witness every kernel shares; anything else a kernel could
consult to skip that read can lie. Until this module said so, each lock had a *mark* (``done
<time>``) and the cache was read again only when a mark said someone let go since the look.
Each of these made a kernel buy a batch again:

- no mark: deleted between the look and the lock (the locks folder cleaned), expired (a Redis
  mark lived 24 h) or evicted (a cache Redis under ``maxmemory`` with an ``allkeys-*`` policy);
- a kernel of a propertykit from before marks, which writes none;
- clocks that disagree: file marks compared the wall clocks of two processes, with 1 s of slack,
  so a clock stepped back 5 s in the fetching process hid its fetch.

Reading the cache again has none of these cases: it costs one read of one key per batch that is
about to be paid for (never for a cache hit), measured against not reading in
``benchmarks/pay_once.py``. The only answer not read again is one the caller asked to be fetched
anew (requests-cache's ``refresh``/``force_refresh`` given by the caller): that is paid by
design.

**Where a batch can still be paid twice**, each by a choice of the caller or a failure: a holder
killed after its request left (its answer never stored); a waiter that gave up waiting
(``wait_seconds``, three times the request timeout) and sent anyway; an answer the cache failed
to store (counted, see :mod:`propertykit.wire._write_failures`) or that expired.

**The locks.**

- With a Redis cache (:class:`RedisFlight`): a Redis lock per key, ``SET NX PX`` with a random
  token and released by compare-and-delete (redis-py's ``Lock``), so every process using that
  Redis, on any machine, takes part. The lock is a *lease*: it lives ``hold_seconds`` (30 s, or
  ``PROPERTYKIT_LOCK_LEASE``) past its holder's last renewal, and the holder renews it every
  third of that while it fetches (a timer that fires only for a long fetch). A holder that dies
  stops renewing: the others wait at most the lease, then one of them reads the cache again
  and, finding nothing, fetches. A lock evicted from Redis under memory pressure only lets a
  second kernel in early: it still reads the cache again first.
- With the SQLite cache (:class:`FileFlight`): an OS file lock (``filelock``) in a
  ``.propertykit-locks`` folder beside the cache file, for the processes of one machine. The
  lock files are named by a hash of the cache key (1,024 of them at most, reused: two keys that
  share one only wait for each other). The operating system frees the lock of a process that
  dies, at once. (A lock file deleted while held lets a second holder in at once: it reads the
  cache again, and pays only if the first has not stored its answer yet.)

Lock names hold requests-cache's cache key, which never includes the API key.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from propertykit.config import lock_lease

logger = logging.getLogger("propertykit")

#: Lock files of one SQLite cache (keys hash into these; a collision only makes two waits one).
_FILE_STRIPES = 1024
_LOCK_FOLDER = ".propertykit-locks"
_GAVE_UP = "waited %.1f s for another fetch of one batch; sending it"


# -- the decision -----------------------------------------------------------------------------


def read_again(*, asked_fresh: bool) -> bool:
    """Whether to read the cache again under the lock, before paying for a batch.

    ``asked_fresh``: the caller asked for a new answer whatever the cache holds (its own
    ``refresh``/``force_refresh``; not propertykit's "known missing" hint, which only spares
    requests-cache's look). Nothing else counts: neither whether the lock was taken or given up
    on, nor marks, nor clocks (see the module's docstring for why).

    Examples
    --------
    >>> read_again(asked_fresh=False)
    True
    >>> read_again(asked_fresh=True)  # the caller wants a new answer, and pays for it
    False
    """
    return not asked_fresh


def usable_answer(found: Any) -> bool:
    """Whether an answer found by the read again is used instead of sending: one is stored, it
    has not expired, and it does not vary by request headers (requests-cache matches those
    itself, on its own read)."""
    return found is not None and not found.is_expired and "Vary" not in found.headers


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


# -- the locks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hold:
    """A lock taken (``held``), or given up on after the longest wait (the cache is read again
    either way)."""

    held: bool


class SingleFlight(Protocol):
    """Holds a lock per cache key while one process sends that request."""

    def hold(self, cache_key: str, within: float | None = None) -> AbstractContextManager[Hold]:
        """Hold the key's lock; yields whether it is held.

        ``within``: wait no longer than this either (the time left before the request's
        deadline).
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

    def lock_name(self, cache_key: str) -> str:
        """The Redis key of the lock for ``cache_key``."""
        return f"{self.namespace}:lock:{cache_key}"

    @contextmanager
    def hold(self, cache_key: str, within: float | None = None) -> Iterator[Hold]:
        lock = self.connection.lock(
            self.lock_name(cache_key), timeout=self.hold_seconds, sleep=0.02, thread_local=False
        )
        wait = _wait(self.wait_seconds, within)
        if not lock.acquire(blocking=True, blocking_timeout=wait):
            logger.warning(_GAVE_UP, wait)
            yield Hold(held=False)
            return
        stop = threading.Event()
        every = self.hold_seconds / 3  # the first renewal after that: a short fetch needs none
        renewing = threading.Timer(every, _renew, args=(lock, every, stop))
        renewing.name = "propertykit-lease"
        renewing.daemon = True
        renewing.start()
        try:
            yield Hold(held=True)
        finally:
            stop.set()
            renewing.cancel()
            renewing.join()
            _release_redis_lock(lock)


class FileFlight:
    """OS file locks beside a SQLite cache, shared by the processes of one machine.

    Examples
    --------
    >>> import tempfile
    >>> flight = FileFlight(tempfile.mkdtemp(), wait_seconds=5)
    >>> with flight.hold("3f2a") as hold:
    ...     hold
    Hold(held=True)
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
    def hold(self, cache_key: str, within: float | None = None) -> Iterator[Hold]:
        from filelock import FileLock, Timeout

        self.folder.mkdir(parents=True, exist_ok=True)
        wait = _wait(self.wait_seconds, within)
        lock = FileLock(self.lock_path(cache_key), timeout=wait, thread_local=False)
        try:
            lock.acquire(poll_interval=0.01)
        except Timeout:
            logger.warning(_GAVE_UP, wait)
            yield Hold(held=False)
            return
        try:
            yield Hold(held=True)
        finally:
            lock.release()


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
