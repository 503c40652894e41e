"""A cache that cannot be reached or read ends in one typed error: ``pk.errors.CacheUnavailable``.

Third-party errors are mapped here, by their types and error codes, never by their message text:

- redis-py's ``ConnectionError`` and ``TimeoutError``: the Redis server is down, went away in the
  middle of a call, or does not answer. The error names ``redis://host:port/db``, never a user
  name or password.
- ``sqlite3.DatabaseError``: the cache file is not a database or is damaged (``SQLITE_NOTADB``,
  ``SQLITE_CORRUPT``), or cannot be used for another reason SQLite names (its
  ``sqlite_errorname``). The error names the file and the fix; the file is never replaced
  without being asked (``propertykit cache clear`` does it, on request).

Nothing more is sent once the cache fails: every send reads the cache first, so the first batch
after the failure raises before it goes out, and the lookup stops starting batches.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from propertykit.errors import CacheUnavailable

#: SQLite's names for a file that is not a database, or one whose pages are damaged.
_DAMAGED = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


def fault_types() -> tuple[type[Exception], ...]:
    """The third-party errors that mean the cache is unavailable (Redis ones if installed).

    Examples
    --------
    >>> sqlite3.DatabaseError in fault_types()
    True
    """
    found: list[type[Exception]] = [sqlite3.DatabaseError]
    try:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError
    except ImportError:  # no team extra: no Redis cache either
        return tuple(found)
    return (*found, RedisConnectionError, RedisTimeoutError)


def cache_unavailable(error: Exception, cache: str) -> CacheUnavailable:
    """The ``CacheUnavailable`` for ``error`` of the cache named ``cache`` (a path or address).

    Examples
    --------
    >>> error = sqlite3.DatabaseError("file is not a database")
    >>> error.sqlite_errorname = "SQLITE_NOTADB"
    >>> print(cache_unavailable(error, "/tmp/http_cache.sqlite"))  # doctest: +NORMALIZE_WHITESPACE
    The cache file /tmp/http_cache.sqlite is not a database or is damaged (SQLITE_NOTADB);
    nothing more was sent. Run `propertykit cache clear --path /tmp/http_cache.sqlite` to start
    it afresh, or move the file away; propertykit does not replace it by itself.
    """
    if isinstance(error, sqlite3.DatabaseError):
        name = getattr(error, "sqlite_errorname", None) or type(error).__name__
        if name in _DAMAGED:
            message = (
                f"The cache file {cache} is not a database or is damaged ({name}); nothing more "
                f"was sent. Run `propertykit cache clear --path {cache}` to start it afresh, or "
                "move the file away; propertykit does not replace it by itself."
            )
        else:
            message = (
                f"The cache file {cache} cannot be used ({name}); nothing more was sent. Check "
                "that its disk is writable and has room, or move the file away."
            )
    else:
        message = (
            f"The Redis cache at {cache} cannot be reached ({type(error).__name__}); nothing more "
            "was sent. Answers it stored before stay free: start Redis again, then run the "
            "same call to fetch only what is missing."
        )
    return CacheUnavailable(message, cache=cache)


@contextmanager
def raising_cache_unavailable(cache: str) -> Iterator[None]:
    """Turn a failure of the cache named ``cache`` into :class:`CacheUnavailable`.

    Examples
    --------
    >>> import propertykit as pk
    >>> try:
    ...     with raising_cache_unavailable("/tmp/http_cache.sqlite"):
    ...         raise sqlite3.OperationalError("disk I/O error")
    ... except pk.errors.CacheUnavailable as error:
    ...     error.cache
    '/tmp/http_cache.sqlite'
    """
    try:
        yield
    except fault_types() as exc:
        raise cache_unavailable(exc, cache) from exc
