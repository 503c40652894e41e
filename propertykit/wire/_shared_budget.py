"""One ``budget`` for many processes: billable requests counted in Redis or in a file.

``pk.Client(budget=N, budget_name="q3-portfolio")`` counts its billable requests under that name
in the shared cache's store, so every client with the same name and cache (other kernels, Dask
workers) draws from the same N: a Redis counter (``INCR``, for a Redis cache) or a counter file
under a file lock beside the SQLite cache (for the processes of one machine).

A request takes its place in the count after the cache missed and before it is sent (inside the
batch's single-flight lock; both in :mod:`propertykit.wire._metered`), and gives it back when
nothing went out (refused connection) or the answer is not charged (4xx/5xx). When the count
is full the request is not sent and :class:`~propertykit.errors.BudgetExceeded` is raised.
Counter names are the budget name made safe for a key or a file name; the API key is never part
of them. A client's own ``budget`` (no name given) is a :class:`LocalBudget`, kept here beside
the shared ones.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import Any, Protocol

from propertykit.errors import ConfigError

#: Counters of unused names disappear after this long (seconds) in Redis.
_REDIS_TTL = 30 * 24 * 3600


class SharedBudget(Protocol):
    """A count of billable requests shared by processes."""

    limit: int
    name: str

    def take(self) -> bool:
        """Take one place; ``False`` (and nothing taken) when the budget is spent."""
        ...

    def give_back(self) -> None:
        """Return a place taken for a request that was not sent, or not charged."""
        ...

    def spent(self) -> int:
        """Billable requests counted so far under this name."""
        ...


def check_budget_name(name: object) -> str:
    """A budget name: 1-100 letters, digits, ``_ - . :``.

    Examples
    --------
    >>> check_budget_name("team-q3")
    'team-q3'
    """
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.:\-]{1,100}", name):
        raise ConfigError("budget_name must be 1-100 letters, digits, '_', '-', '.' or ':'")
    return name


class RedisBudget:
    """The count in Redis, under ``<namespace>:budget:<name>``.

    Examples
    --------
    >>> import redis
    >>> RedisBudget(redis.Redis(), "team-q3", 100).key
    'propertykit:budget:team-q3'
    """

    def __init__(self, connection: Any, name: str, limit: int, namespace: str = "propertykit"):
        self.connection = connection
        self.name = name
        self.limit = limit
        self.key = f"{namespace}:budget:{name}"

    def take(self) -> bool:
        pipe = self.connection.pipeline()
        pipe.incr(self.key)
        pipe.expire(self.key, _REDIS_TTL)
        count = int(pipe.execute()[0])
        if count > self.limit:
            self.connection.decr(self.key)
            return False
        return True

    def give_back(self) -> None:
        self.connection.decr(self.key)

    def spent(self) -> int:
        return int(self.connection.get(self.key) or 0)


class FileBudget:
    """The count in a small file beside the SQLite cache, changed under a file lock.

    Examples
    --------
    >>> import tempfile
    >>> budget = FileBudget(tempfile.mkdtemp(), "team-q3", 1)
    >>> budget.take(), budget.take(), budget.spent()
    (True, False, 1)
    """

    def __init__(self, folder: str | Path, name: str, limit: int) -> None:
        self.name = name
        self.limit = limit
        digest = hashlib.sha256(name.encode()).hexdigest()[:24]
        self.path = Path(folder) / f"budget-{digest}.count"

    def take(self) -> bool:
        with self._lock():
            count = self._read()
            if count >= self.limit:
                return False
            self._write(count + 1)
            return True

    def give_back(self) -> None:
        with self._lock():
            self._write(max(0, self._read() - 1))

    def spent(self) -> int:
        with self._lock():
            return self._read()

    def _lock(self) -> Any:
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(self.path.with_suffix(".lock"), timeout=60, thread_local=False)

    def _read(self) -> int:
        try:
            return int(self.path.read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def _write(self, count: int) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(str(count))
        temporary.replace(self.path)


def shared_budget_for(cache: Any, name: str | None, limit: int | None) -> SharedBudget | None:
    """The shared count for ``budget=limit, budget_name=name`` on this cache, or ``None``.

    Raises
    ------
    ConfigError
        A ``budget_name`` without a ``budget``, or with a cache that cannot be shared.

    Examples
    --------
    >>> shared_budget_for(None, None, 10) is None
    True
    """
    if name is None:
        return None
    name = check_budget_name(name)
    if limit is None:
        raise ConfigError("budget_name= names a shared budget: pass budget= too")
    from propertykit.wire._single_flight import FileFlight, RedisFlight, single_flight_for

    flight = single_flight_for(cache, timeout=0)
    if isinstance(flight, RedisFlight):
        return RedisBudget(flight.connection, name, limit, namespace=flight.namespace)
    if isinstance(flight, FileFlight):
        return FileBudget(flight.folder, name, limit)
    raise ConfigError("A shared budget (budget_name=) needs a Redis cache or a SQLite cache file")


class LocalBudget:
    """This client's own ``budget``: places taken by requests on their way or charged.

    A thread finding every place taken by requests still on their way waits for them: one that
    is not charged gives its place back.

    Examples
    --------
    >>> budget = LocalBudget(1)
    >>> budget.take()  # a request on its way holds the one place
    True
    >>> budget.give_back()  # its answer was not charged (a 503)
    >>> budget.take()
    True
    >>> budget.keep()  # this one was charged: the place stays taken
    >>> budget.take()
    False
    """

    name: str | None = None

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken = 0
        self.pending = 0
        self._changed = threading.Condition()

    def take(self) -> bool:
        """Take one place; ``False`` (nothing taken) when every place is charged."""
        with self._changed:
            while self.pending and self.taken >= self.limit:
                self._changed.wait()
            if self.taken >= self.limit:
                return False
            self.taken += 1
            self.pending += 1
            return True

    def keep(self) -> None:
        """The request holding a place was charged (or may have been): it stays taken."""
        with self._changed:
            self.pending -= 1
            self._changed.notify_all()

    def give_back(self) -> None:
        """The request holding a place was not charged: the place is free again."""
        with self._changed:
            self.pending -= 1
            self.taken -= 1
            self._changed.notify_all()


Budget = LocalBudget | SharedBudget
"""This client's own budget, or one shared by name."""
