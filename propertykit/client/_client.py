"""``pk.Client``: the service's endpoints, with ids checked, batched and paged.

The client knows the service's endpoints and record envelopes; everything about sending (cache,
rate limit, retries, errors, budget, usage) is :mod:`propertykit.wire._transport`'s job.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

from requests_cache.backends.base import BaseCache

from propertykit.client._address_search import AddressesMixin
from propertykit.client._appraise import AppraiseMixin
from propertykit.client._arguments import attribute_params, check_paging, check_settings
from propertykit.client._bulk import DEFAULT_MAX_IN_FLIGHT, Batch, DryRun, run_batches
from propertykit.client._context import LookupContext
from propertykit.client._envelope import check_envelope
from propertykit.client._health import HealthMixin
from propertykit.client._ids import validate_ids
from propertykit.client._lookups import Lookups
from propertykit.client._neighbourhood import NeighbourhoodMixin
from propertykit.client._portable import ClientRecipe, Portable, portable_settings
from propertykit.client._profile import resolve_service
from propertykit.client._progress import progress_bar
from propertykit.client._purchases import PurchasesMixin
from propertykit.client._query import QueryMixin
from propertykit.client._replay import properties_frame, sources_frame
from propertykit.config import ENV_OFFLINE, Endpoints, env_flag
from propertykit.errors import ConfigError, InvalidInput
from propertykit.frames import frame
from propertykit.jsonio import records_of
from propertykit.wire import (
    DEFAULT_MAX_BODY_BYTES,
    Clock,
    Transport,
    Usage,
    describe_cache_setting,
    open_cache,
    raising_cache_unavailable,
    redis_connection_of,
)

if TYPE_CHECKING:
    import pandas as pd

_Method = TypeVar("_Method", bound=Callable[..., Any])


def _cache_faults_named(method: _Method) -> _Method:
    """``method``, raising ``CacheUnavailable`` (naming the cache) when the cache fails."""

    @functools.wraps(method)
    def named(self: Client, *args: Any, **kwargs: Any) -> Any:
        with raising_cache_unavailable(self._cache_label):
            return method(self, *args, **kwargs)

    return cast(_Method, named)


class Client(
    HealthMixin,
    QueryMixin,
    AddressesMixin,
    NeighbourhoodMixin,
    AppraiseMixin,
    PurchasesMixin,
    Portable,
):
    """A client of the property-data service for notebooks: cached, budgeted, key-safe.

    Parameters
    ----------
    api_key
        The API key; else ``PROPERTYKIT_API_KEY``. Sent only in the ``x-api-key`` header.
    base_url
        The service's root address; else ``PROPERTYKIT_BASE_URL``.
    cache
        ``True``: a SQLite file in the cache directory (``PROPERTYKIT_CACHE_DIR``); a path (a
        file, or a folder to hold ``http_cache.sqlite``); ``False``: no cache; a Redis address
        (``"redis://host:6379/0"``) or a requests-cache backend object (e.g. ``RedisCache``)
        for a team. With Redis, the search-suggest limit is counted there too, shared by every
        kernel using it.
    expire_after
        How long property data stays fresh (default 7 days); health, purchases and purchase
        status are never cached.
    offline
        Answer from the cache only (expired entries included); a miss raises ``NotCached`` and
        sends nothing. ``None``: on when ``PROPERTYKIT_OFFLINE=1``.
    endpoints
        Paths and parameter names of the service (:class:`~propertykit.Endpoints`).
    max_retries
        Retries after the first attempt (5xx, network errors, short 429s).
    max_wait
        Longest ``Retry-After`` (seconds) the client sleeps through.
    budget
        Most billable requests to send over the network; cache hits are free.
    budget_name
        Share ``budget`` with every client of this name on the same Redis or SQLite cache
        (kernels, Dask workers; see :mod:`propertykit.wire._shared_budget`).
    progress
        Progress bars on calls spanning several requests (``None``: in notebooks and terminals).
    timeout
        Seconds to wait for the service on any one connect or read.
    deadline
        Seconds one request may take in all, retries, waits and body reads included, else
        ``NetworkError`` (default ten times ``timeout``: 300 s; a call of several pages or
        batches gets it for each).
    max_body_bytes
        Cap on a decoded response body (default 256 MiB); past it ``ResponseTooLarge``.
    max_in_flight
        Most requests on their way at once when a lookup spans several batches (default 4);
        1 sends them one after another.
    journal
        Title-deed purchase journal file (default: in the cache directory).
    profile
        ``"vepler"``: follow Vepler's public documentation (the same as
        ``endpoints=pk.Endpoints.vepler()``: its address, prices in pence, the key also from
        ``VEPLER_API_KEY``); ``"spec"``: the neutral defaults. ``None``: ``PROPERTYKIT_PROFILE``.
    clock
        How the client waits, tells the time and draws jitter (:class:`propertykit.client.Clock`;
        default: the system's). Pass one with a fake ``sleep`` to test retries without waiting.

    Examples
    --------
    >>> import propertykit as pk
    >>> with pk.sandbox.serve() as sb, pk.Client(sb.api_key, sb.url, cache=False) as client:
    ...     df = client.properties(sb.location_ids[:3])
    ...     print(client.usage)  # doctest: +ELLIPSIS
    1 request sent (1 billable), 0 cache hits...
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        cache: bool | str | os.PathLike[str] | BaseCache = True,
        expire_after: Any = None,
        offline: bool | None = None,
        endpoints: Endpoints | None = None,
        max_retries: int = 3,
        max_wait: float = 60.0,
        budget: int | None = None,
        budget_name: str | None = None,
        progress: bool | None = None,
        timeout: float = 30.0,
        deadline: float | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        journal: str | os.PathLike[str] | None = None,
        profile: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._settings = portable_settings(locals())  # what a pickled copy is built from
        service = resolve_service(api_key, base_url, profile=profile, endpoints=endpoints)
        endpoints, key, url = service.endpoints, service.api_key, service.base_url
        if any(ch.isspace() or not ch.isprintable() for ch in key):
            raise ConfigError("The API key contains whitespace or control characters")
        if offline is None:
            offline = env_flag(ENV_OFFLINE)
        retry = check_settings(
            max_retries, max_wait, timeout, deadline, max_body_bytes, max_in_flight, budget
        )
        self.endpoints = endpoints
        self.offline = bool(offline)
        self.progress = progress
        self.max_in_flight = max_in_flight
        self.journal = Path(journal).expanduser() if journal is not None else None
        backend, owned = open_cache(cache)
        self._cache_label = describe_cache_setting(cache, backend)
        self._transport = Transport(
            api_key=key,
            base_url=url,
            cache=backend,
            expire_after=expire_after,
            offline=self.offline,
            endpoints=self.endpoints,
            retry=retry,
            budget=budget,
            budget_name=budget_name,
            timeout=float(timeout),
            close_cache=owned,
            pool_size=max(10, max_in_flight),
            max_body_bytes=max_body_bytes,
            limiter_redis=redis_connection_of(backend),
            clock=clock or Clock(),
        )
        self._lookups = Lookups(self._transport, self.endpoints)
        self._decisions = None

    @classmethod
    def from_recipe(cls, recipe: ClientRecipe) -> Client:
        """A new client from a recipe (see :meth:`recipe`); the key from ``PROPERTYKIT_API_KEY``.

        Examples
        --------
        >>> copy = pk.Client.from_recipe(client.recipe())
        >>> copy.base_url == client.base_url
        True
        >>> copy.close()
        """
        return cls(**recipe.settings, progress=False)

    def __reduce__(self) -> tuple[Any, ...]:
        # A pickled client is its recipe: never the key, the session or the cache connection.
        return (Client.from_recipe, (self.recipe(),))

    query = _cache_faults_named(QueryMixin.query)
    match_addresses = _cache_faults_named(AddressesMixin.match_addresses)

    # -- housekeeping -----------------------------------------------------------------------------

    @property
    def usage(self) -> Usage:
        """Requests sent, cache hits and billable requests so far, per endpoint.

        Examples
        --------
        >>> df = client.properties(sb.location_ids[:3])
        >>> client.usage.requests_sent
        1
        """
        return self._transport.usage

    @_cache_faults_named
    def cache_info(self) -> dict[str, Any]:
        """Entries, size on disk (bytes), oldest and newest entry, and path of the cache.

        Examples
        --------
        >>> df = client.properties(sb.location_ids[:3])
        >>> client.cache_info()["entries"]
        1
        """
        return self._transport.cache_info()

    @_cache_faults_named
    def clear_cache(self) -> None:
        """Delete every cached answer (the next lookups are paid for again).

        Examples
        --------
        >>> df = client.properties(sb.location_ids[:3])
        >>> client.clear_cache()
        >>> client.cache_info()["entries"]
        0
        """
        self._transport.clear_cache()

    def close(self) -> None:
        """Release connections and the cache file."""
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- endpoints --------------------------------------------------------------------------------

    @_cache_faults_named
    def property_records(
        self, location_ids: str | Iterable[str], *, attributes: Iterable[str] | None = None
    ) -> list[dict[str, Any]]:
        """Property records by location id, batched into comma-separated requests.

        Examples
        --------
        >>> records = client.property_records(sb.location_ids[:2])
        >>> [record["locationId"] for record in records]
        ['L00000000', 'L00000001']
        """
        ids = validate_ids(location_ids, source=False)
        params = attribute_params(self.endpoints, attributes)
        batches = self._lookups.property_batches(ids, params)
        bar = functools.partial(progress_bar, len(batches), "properties", show=self.progress)
        return run_batches(
            batches,
            lambda batch: self._lookups.fetch_properties(batch, params),
            max_in_flight=self.max_in_flight,
            progress=bar,
        )

    @_cache_faults_named
    def source_records(
        self,
        source_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = None,
        page_size: int | None = None,
        max_results: int | None = None,
    ) -> list[dict[str, Any]]:
        """Property records by ``<provider>::<id>`` source id, batched and paged.

        Pages are followed through ``nextOffset`` while ``hasMore``. A failure part-way raises
        with ``.partial``: the records fetched, the ids left and the offset to resume from.

        Examples
        --------
        >>> records = client.source_records(sb.source_ids[:3], page_size=50)
        >>> [record["locationId"] for record in records]
        ['L00000000', 'L00000001', 'L00000002']
        """
        ids = validate_ids(source_ids, source=True)
        check_paging(page_size, max_results)
        base_params = attribute_params(self.endpoints, attributes)
        batches = self._lookups.source_batches(ids, base_params, page_size, max_results)
        collected = 0

        def fetch(batch: Batch) -> list[dict[str, Any]]:
            nonlocal collected  # only used one batch at a time (max_results set)
            left = None if max_results is None else max_results - collected
            records = self._lookups.fetch_sources(batch, base_params, page_size, left)
            collected += len(records)
            return records

        def enough() -> bool:
            return max_results is not None and collected >= max_results

        # With max_results, batches go one after another so no more is paid for than needed.
        in_flight = self.max_in_flight if max_results is None else 1
        bar = functools.partial(progress_bar, len(batches), "sources", show=self.progress)
        return run_batches(batches, fetch, max_in_flight=in_flight, progress=bar, stop=enough)

    @overload
    def properties(
        self,
        location_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = ...,
        dry_run: Literal[False] = ...,
    ) -> pd.DataFrame: ...

    @overload
    def properties(
        self,
        location_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = ...,
        dry_run: Literal[True],
    ) -> DryRun: ...

    @_cache_faults_named
    def properties(
        self,
        location_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = None,
        dry_run: bool = False,
    ) -> pd.DataFrame | DryRun:
        """Property records by location id, as a DataFrame (see :func:`propertykit.frame`).

        Many ids are batched and sent ``max_in_flight`` at a time; calling again after an
        interruption sends only what the cache does not hold yet (see
        :mod:`propertykit.client._bulk`). ``dry_run=True`` sends nothing and returns a
        :class:`~propertykit.client.DryRun`: the requests (and billable requests) the call
        would send given what is cached.

        Examples
        --------
        >>> df = client.properties(sb.location_ids[:2])
        >>> df["locationId"].tolist()
        ['L00000000', 'L00000001']
        >>> client.properties(sb.location_ids[:300], dry_run=True)
        <DryRun properties: 300 ids in 6 batches; 6 requests to send (6 billable), 0 cached (free)>
        >>> df = client.properties(sb.location_ids[:50])  # the first batch, now cached
        >>> client.properties(sb.location_ids[:300], dry_run=True)
        <DryRun properties: 300 ids in 6 batches; 5 requests to send (5 billable), 1 cached (free)>
        """
        if dry_run:
            params = attribute_params(self.endpoints, attributes)
            ids = validate_ids(location_ids, source=False)
            return self._lookups.plan_properties(
                self._lookups.property_batches(ids, params), params
            )
        return properties_frame(self.lookup_context(), location_ids, attributes)

    @overload
    def sources(
        self,
        source_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = ...,
        page_size: int | None = ...,
        max_results: int | None = ...,
        dry_run: Literal[False] = ...,
    ) -> pd.DataFrame: ...

    @overload
    def sources(
        self,
        source_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = ...,
        page_size: int | None = ...,
        max_results: int | None = ...,
        dry_run: Literal[True],
    ) -> DryRun: ...

    @_cache_faults_named
    def sources(
        self,
        source_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = None,
        page_size: int | None = None,
        max_results: int | None = None,
        dry_run: bool = False,
    ) -> pd.DataFrame | DryRun:
        """Property records by source id, as a DataFrame (see :meth:`source_records`).

        ``dry_run=True`` sends nothing and returns a :class:`~propertykit.client.DryRun`; pages
        not yet cached are counted once each, with an upper bound when ``page_size`` is given.

        Examples
        --------
        >>> df = client.sources(sb.source_ids[:2], attributes=["address", "epc"])
        >>> df["epc.currentEnergyRating"].tolist()
        ['E', 'D']
        """
        if dry_run:
            ids = validate_ids(source_ids, source=True)
            check_paging(page_size, max_results)
            params = attribute_params(self.endpoints, attributes)
            batches = self._lookups.source_batches(ids, params, page_size, max_results)
            return self._lookups.plan_sources(batches, params, page_size, max_results)
        if max_results is None:  # warm cache: bulk, as bytes (see propertykit.client._replay)
            return sources_frame(self.lookup_context(), source_ids, attributes, page_size)
        records = self.source_records(
            source_ids, attributes=attributes, page_size=page_size, max_results=max_results
        )
        return frame(records, money_unit=self.endpoints.money_unit)

    @_cache_faults_named
    def suggest(self, query: str, **params: str | int) -> list[dict[str, Any]]:
        """Search-suggest (rate limited per minute on the client; answers are cached).

        Examples
        --------
        >>> client.suggest("Mill Lane")[0]["displayAddress"]
        '113 Mill Lane, Littleover, Derby, DE23 1EN'
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("suggest() needs a non-empty query string")
        body = self._transport.fetch_json(
            self.endpoints.suggest_path,
            endpoint="suggest",
            params={self.endpoints.suggest_query_param: query, **params},
            billable=self._billable("suggest"),
            check=check_envelope,
        )
        records = records_of(body)
        return records if records or not isinstance(body, list) else list(body)

    # -- helpers ----------------------------------------------------------------------------------

    def lookup_context(self) -> LookupContext:
        """What a lookup needs of this client (see :mod:`propertykit.client._context`)."""
        return LookupContext(
            self._transport, self._lookups, self.endpoints, self.max_in_flight, self.progress
        )

    def _billable(self, endpoint: str) -> bool:
        return endpoint in self.endpoints.billable_endpoints
