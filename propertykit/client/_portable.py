"""A client that travels without its key: pickling for Dask workers and other processes.

``pickle.dumps(client)`` (and so a Dask task graph holding a client) carries the client's
settings - service address, cache location, endpoints, budget and its name, retries, timeout,
deadline, body cap - and never the API key, the session or the cache connection. The copy is
built anew where it is unpickled, reading the key from that process's ``PROPERTYKIT_API_KEY``
(set it in the workers' environment, or in the secret store of your cluster that fills it).
Without it the copy raises :class:`~propertykit.errors.ConfigError` saying so.

The cache must be something the other process can open: ``True`` (its own cache directory), a
path (a SQLite file on a disk it can reach), a ``redis://`` address, ``False``, or a
requests-cache Redis or SQLite backend (rebuilt from its address or file; a Redis password is
not carried - put it in a ``redis://`` address you pass yourself).
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from propertykit.errors import ConfigError

if TYPE_CHECKING:
    from propertykit.config import Endpoints
    from propertykit.wire import Transport

#: ``pk.Client`` arguments a copy is built from (never the key, nor injected test hooks).
_PORTABLE = (
    "cache",
    "expire_after",
    "max_retries",
    "max_wait",
    "budget",
    "budget_name",
    "timeout",
    "deadline",
    "max_body_bytes",
    "max_in_flight",
    "journal",
)

_naming_lock = threading.Lock()


def portable_settings(arguments: dict[str, Any]) -> dict[str, Any]:
    """The portable arguments among ``pk.Client``'s (called with its ``locals()`` at the top).

    Examples
    --------
    >>> sorted(portable_settings({"api_key": "secret", "budget": 3, "_sleep": print}))
    ['budget']
    """
    return {name: arguments[name] for name in _PORTABLE if name in arguments}


@dataclass(frozen=True)
class ClientRecipe:
    """What a client is built from, without its key: picklable, hashable, safe to show.

    Examples
    --------
    >>> recipe = ClientRecipe((("base_url", "http://127.0.0.1:1"), ("cache", False)))
    >>> recipe.settings["cache"]
    False
    """

    items: tuple[tuple[str, Any], ...]

    @property
    def settings(self) -> dict[str, Any]:
        """The ``pk.Client`` keyword arguments (no key: it comes from the environment)."""
        return dict(self.items)


class Portable:
    """The recipes a copy of ``pk.Client`` is built from (``Client.__reduce__`` pickles one),
    its ``repr`` and :meth:`describe`: none of them shows the key."""

    _settings: dict[str, Any]
    _cache_label: str
    _transport: Transport
    offline: bool
    endpoints: Endpoints

    @property
    def base_url(self) -> str:
        """The service's root address."""
        return self._transport.base_url

    def recipe(self) -> ClientRecipe:
        """The settings a copy of this client is built from elsewhere (never the key).

        Examples
        --------
        >>> client.recipe().settings["base_url"] == sb.url
        True
        """
        settings = dict(self._settings)
        settings["cache"] = _portable_cache(settings.get("cache", True), self._transport.cache)
        settings.update(base_url=self.base_url, offline=self.offline, endpoints=self.endpoints)
        return ClientRecipe(tuple(sorted(settings.items())))

    def cluster_recipe(self) -> ClientRecipe:
        """The recipe for copies that run side by side (Dask workers): one ``budget`` for all.

        A client with ``budget=`` but no ``budget_name=`` gets a name made for it the first time
        (``"shared-"`` and 12 random hex digits, kept by the client and shown by
        :meth:`describe`), so its copies draw from one count in the shared cache: a Redis
        counter, or a file beside the SQLite cache. That count is what the budget had left at
        that moment; this client's own later lookups keep counting on their own.

        Raises
        ------
        ConfigError
            A budget with a cache the copies cannot share (``cache=False``).

        Examples
        --------
        >>> careful = pk.Client(sb.api_key, sb.url, cache="shared.sqlite", budget=5)
        >>> careful.cluster_recipe().settings["budget_name"].startswith("shared-")
        True
        >>> careful.describe()["budget_name"] == careful.cluster_recipe().settings["budget_name"]
        True
        >>> careful.close()
        """
        if self._settings.get("budget") is not None and self._settings.get("budget_name") is None:
            with _naming_lock:
                if self._settings.get("budget_name") is None:
                    self._name_budget()
        return self.recipe()

    def _name_budget(self) -> None:
        from propertykit.wire import redis_connection_of

        cache = self._transport.cache
        shared = redis_connection_of(cache) is not None or (
            str(getattr(cache, "db_path", ":memory:")) != ":memory:"
        )
        if not shared:
            raise ConfigError(
                "A budget on a cluster is shared by the workers through the cache, and this "
                "client has none they can reach: pass cache= as a path or a redis:// address"
            )
        left = max(0, int(self._settings["budget"]) - self._transport.usage.billable_requests)
        self._settings.update(budget=left, budget_name=f"shared-{uuid.uuid4().hex[:12]}")

    def describe(self) -> dict[str, Any]:
        """What this client is, as plain values for a log or a dashboard: never the key.

        Examples
        --------
        >>> client.describe()["api_key"]
        'PROPERTYKIT_API_KEY in each process'
        """
        settings = self.recipe().settings
        return {
            "base_url": self.base_url,
            "cache": self._cache_label,
            "offline": self.offline,
            "budget": settings.get("budget"),
            "budget_name": settings.get("budget_name"),
            "max_in_flight": settings.get("max_in_flight"),
            "api_key": "PROPERTYKIT_API_KEY in each process",
        }

    def __repr__(self) -> str:
        # Never the key, not even a part of it.
        profile = self.endpoints.profile
        named = "" if profile == "spec" else f"profile={profile!r}, "
        return (
            f"Client(base_url={self.base_url!r}, {named}cache={self._cache_label!r}, "
            f"offline={self.offline}, budget={self._transport.budget}, api_key='***')"
        )


def _portable_cache(cache: Any, backend: Any) -> Any:
    """The ``cache=`` argument another process can open to reach the same cache."""
    from pathlib import Path

    from propertykit.wire import describe_cache_setting, redis_connection_of

    if cache is True or cache is False or cache is None:
        return cache  # True: the cache directory of the process that unpickles it
    if redis_connection_of(backend) is not None:
        return cache if isinstance(cache, str) else describe_cache_setting(cache, backend)
    db_path = getattr(backend, "db_path", None)
    if db_path is not None and str(db_path) != ":memory:":
        return str(Path(db_path).expanduser().resolve())
    raise ConfigError(
        f"A client with a {type(cache).__name__} cache cannot be copied to another process: "
        "pass cache= as a path or a redis:// address"
    )
