"""What the client's ``cache=`` argument opens, and how it is described in reprs and reports."""

from __future__ import annotations

import os
from pathlib import Path

from requests_cache.backends.base import BaseCache

from propertykit.config import cache_dir
from propertykit.errors import ConfigError
from propertykit.wire import team as _team
from propertykit.wire.session import CACHE_FILE_NAME, open_sqlite_cache

__all__ = ["describe_cache_setting", "open_cache"]


def open_cache(cache: object) -> tuple[BaseCache | None, bool]:
    """(backend, whether the client owns and closes it)."""
    if cache is False or cache is None:
        return None, True
    if cache is True:
        return open_sqlite_cache(cache_dir() / CACHE_FILE_NAME), True
    if isinstance(cache, BaseCache):
        return cache, False
    if _team.is_redis_url(cache):
        return _team.redis_cache(str(cache)), True
    if isinstance(cache, str | os.PathLike):
        path = Path(cache).expanduser()
        if path.is_dir() or str(cache).endswith(("/", os.sep)):
            path = path / CACHE_FILE_NAME
        return open_sqlite_cache(path), True
    raise ConfigError(
        "cache must be True, False, a path, a redis:// address or a requests-cache backend, "
        f"got {type(cache).__name__}"
    )


def describe_cache_setting(cache: object, backend: BaseCache | None) -> str:
    """``off``, the Redis server, the SQLite path or the backend's class: for reprs and reports."""
    if backend is None:
        return "off"
    redis = _team.redis_connection_of(backend)
    if redis is not None:
        return _team.describe_redis(redis)
    db_path = getattr(backend, "db_path", None)
    return str(db_path) if db_path is not None else type(backend).__name__
