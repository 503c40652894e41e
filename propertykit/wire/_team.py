"""One cache and one search-suggest limit for a whole team, in Redis.

``pk.Client(cache="redis://host:6379/0")`` opens propertykit's Redis cache backend there (or pass
one you built with :func:`redis_cache`). Every kernel pointing at the same Redis then shares the
answers: nobody pays for a record a colleague already fetched. The search-suggest limit of
``Endpoints.suggest_per_minute`` is counted in the same Redis (pyrate-limiter's ``RedisBucket``,
one bucket per service host), so the kernels together stay within the account's limit.

Key safety is the same as for the SQLite file: what requests-cache stores is redacted of every
spelling of the key header, cache keys ignore it, and the limiter's bucket is named after the
host, never the key.

Needs the ``redis`` package: ``pip install 'propertykit[team]'``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from propertykit.errors import ConfigError
from propertykit.wire._redis_storage import RedisAnswers

if TYPE_CHECKING:
    from redis import Redis
    from requests_cache.backends.base import BaseCache

#: Prefix of every key propertykit's cache writes in Redis.
REDIS_NAMESPACE = "propertykit"

_SCHEMES = ("redis://", "rediss://", "unix://")


def is_redis_url(value: object) -> bool:
    """Whether ``value`` is a Redis address (``redis://``, ``rediss://`` or ``unix://``).

    Examples
    --------
    >>> is_redis_url("redis://localhost:6379/0"), is_redis_url("/tmp/cache.sqlite")
    (True, False)
    """
    return isinstance(value, str) and value.lower().startswith(_SCHEMES)


def redis_cache(
    connection: str | Redis, *, namespace: str = REDIS_NAMESPACE, **kwargs: Any
) -> RedisAnswers:
    """A requests-cache Redis backend for ``pk.Client(cache=...)``, shared by a team.

    Parameters
    ----------
    connection
        A Redis URL (``redis://[:password@]host:6379/0``) or a ``redis.Redis`` connection.
    namespace
        Prefix of the keys written (two teams may share one Redis under two namespaces).
    **kwargs
        Passed to :class:`~propertykit.wire._redis_storage.RedisAnswers` (``ttl_offset``).

    Examples
    --------
    >>> import propertykit as pk
    >>> from propertykit.wire._team import redis_cache
    >>> client = pk.Client(cache=redis_cache("redis://localhost:6379/0"))  # doctest: +SKIP
    """
    redis = _require_redis()
    if isinstance(connection, str):
        if not is_redis_url(connection):
            raise ConfigError("A Redis cache needs a redis://, rediss:// or unix:// address")
        connection = redis.Redis.from_url(connection)
    return RedisAnswers(connection, namespace=namespace, **kwargs)


def redis_connection_of(cache: BaseCache | None) -> Redis | None:
    """The Redis connection behind a requests-cache backend, or ``None`` for other backends.

    Examples
    --------
    >>> redis_connection_of(None) is None
    True
    """
    responses = getattr(cache, "responses", None)
    connection = getattr(responses, "connection", None)
    if connection is None or type(connection).__module__.split(".")[0] != "redis":
        return None
    found: Redis = connection
    return found


def describe_redis(connection: Redis) -> str:
    """``redis://host:port/db`` of a connection: never a user name or password.

    Examples
    --------
    >>> import redis
    >>> describe_redis(redis.Redis.from_url("redis://:secret@cache:6380/2"))
    'redis://cache:6380/2'
    """
    settings = connection.connection_pool.connection_kwargs
    if "path" in settings:
        return f"unix://{settings['path']}?db={settings.get('db', 0)}"
    host, port, db = (
        settings.get("host", "localhost"),
        settings.get("port", 6379),
        settings.get("db"),
    )
    return f"redis://{host}:{port}/{db or 0}"


def shared_limiter_settings(connection: Redis, base_url: str) -> dict[str, Any]:
    """requests-ratelimiter settings that count the suggest limit in Redis, per service host.

    Every client built with the same Redis and service address draws from one bucket, so
    kernels together keep within the account's per-minute limit.

    Examples
    --------
    >>> import redis
    >>> settings = shared_limiter_settings(redis.Redis(), "https://api.example")
    >>> settings["bucket_kwargs"]["bucket_key"]
    'propertykit:suggest:api_example'
    """
    from pyrate_limiter import RedisBucket

    host = urlsplit(base_url).netloc or base_url
    bucket_key = f"{REDIS_NAMESPACE}:suggest:{re.sub(r'[^A-Za-z0-9_]', '_', host)}"
    return {
        "bucket_class": RedisBucket,
        "bucket_kwargs": {"redis": connection, "bucket_key": bucket_key},
    }


def _require_redis() -> Any:
    try:
        import redis
    except ImportError as exc:
        raise ConfigError(
            "A Redis cache needs the redis package: pip install 'propertykit[team]'"
        ) from exc
    return redis
