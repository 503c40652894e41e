"""What the client's ``cache=`` argument opens, and how it is described in reprs and reports.

A cache that cannot be used is found here, before anything is sent: a SQLite file that is not a
database or is damaged, or a Redis server that does not answer a ``PING``, raises
:class:`~propertykit.errors.CacheUnavailable` (see :mod:`propertykit.wire._cache_faults`). The file
is left as it is: :func:`remove_cache_file` removes it when the user asks
(``propertykit cache clear``).
"""

from __future__ import annotations

import os
from pathlib import Path

from requests_cache.backends.base import BaseCache

from propertykit.config import cache_dir
from propertykit.errors import ConfigError
from propertykit.wire import _team
from propertykit.wire._cache_faults import raising_cache_unavailable
from propertykit.wire._session import CACHE_FILE_NAME, open_sqlite_cache


def open_cache(cache: object) -> tuple[BaseCache | None, bool]:
    """(backend, whether the client owns and closes it)."""
    if cache is False or cache is None:
        return None, True
    if cache is True:
        return open_cache_file(cache_dir() / CACHE_FILE_NAME), True
    if isinstance(cache, BaseCache):
        return _answering(cache), False
    if _team.is_redis_url(cache):
        return _answering(_team.redis_cache(str(cache))), True
    if isinstance(cache, str | os.PathLike):
        path = Path(cache).expanduser()
        if path.is_dir() or str(cache).endswith(("/", os.sep)):
            path = path / CACHE_FILE_NAME
        return open_cache_file(path), True
    raise ConfigError(
        "cache must be True, False, a path, a redis:// address or a requests-cache backend, "
        f"got {type(cache).__name__}"
    )


def open_cache_file(path: Path) -> BaseCache:
    """The SQLite cache in ``path`` (made if missing); never replaces a file it cannot read.

    Raises
    ------
    CacheUnavailable
        The file is not a database or is damaged (named, with the fix), or cannot be opened.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> damaged = pathlib.Path(tempfile.mkdtemp()) / "http_cache.sqlite"
    >>> _ = damaged.write_text("not a database " * 100)
    >>> open_cache_file(damaged)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    propertykit.errors.CacheUnavailable: The cache file ... is not a database or is damaged ...
    >>> damaged.read_text()[:15]
    'not a database '
    """
    with raising_cache_unavailable(str(path)):
        return open_sqlite_cache(path)


def remove_cache_file(path: Path) -> list[Path]:
    """Delete a SQLite cache file and its ``-wal``/``-shm`` companions; the paths removed.

    Only for a user who asked (``propertykit cache clear`` on a file that cannot be opened).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> damaged = pathlib.Path(tempfile.mkdtemp()) / "http_cache.sqlite"
    >>> _ = damaged.write_text("not a database")
    >>> [removed.name for removed in remove_cache_file(damaged)]
    ['http_cache.sqlite']
    """
    removed = []
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        if candidate.exists():
            candidate.unlink()
            removed.append(candidate)
    return removed


def _answering(cache: BaseCache) -> BaseCache:
    """``cache``, once its Redis server (if it has one) has answered a ``PING``."""
    redis = _team.redis_connection_of(cache)
    if redis is not None:
        with raising_cache_unavailable(_team.describe_redis(redis)):
            redis.ping()
    return cache


def describe_cache_setting(cache: object, backend: BaseCache | None) -> str:
    """``off``, the Redis server, the SQLite path or the backend's class: for reprs and reports."""
    if backend is None:
        return "off"
    redis = _team.redis_connection_of(backend)
    if redis is not None:
        return _team.describe_redis(redis)
    db_path = getattr(backend, "db_path", None)
    return str(db_path) if db_path is not None else type(backend).__name__
