"""``pk.Client``: the service's endpoints, with ids checked, batched and paged.

The client knows the service's endpoints and record envelopes; everything about sending (cache,
rate limit, retries, errors, budget, usage) is :mod:`propertykit._http`'s job.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from requests_cache.backends.base import BaseCache

from propertykit._http import CACHE_FILE_NAME, Transport, open_sqlite_cache
from propertykit._policy import RetrySettings
from propertykit.config import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_OFFLINE,
    MAX_URL_LENGTH,
    Endpoints,
    cache_dir,
)
from propertykit.errors import ConfigError, InvalidInput, PartialResult, PropertyKitError
from propertykit.usage import Usage

if TYPE_CHECKING:
    import pandas as pd

    from propertykit.deeds import Purchase

__all__ = ["Client"]

#: Characters kept readable in an encoded id (``provider::id``); everything else reserved or
#: unsafe is percent-encoded.
_SAFE_IN_ID = ":"
_FORBIDDEN_IN_ID = frozenset(",/")
#: Room left in a URL for the query string of a sources page (limit, a large offset, attributes).
_LARGEST_OFFSET = 10**12


class Client:
    """A client of the property-data service for notebooks: cached, budgeted, key-safe.

    Parameters
    ----------
    api_key
        The API key; else ``PROPERTYKIT_API_KEY``. Sent only in the ``x-api-key`` header.
    base_url
        The service's root address; else ``PROPERTYKIT_BASE_URL``.
    cache
        ``True``: a SQLite file in the cache directory (``PROPERTYKIT_CACHE_DIR``); a path (a
        file, or a folder to hold ``http_cache.sqlite``); ``False``: no cache; or a
        requests-cache backend object (e.g. ``RedisCache`` for a team).
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
    progress
        Progress bars on calls spanning several requests (``None``: in notebooks and terminals).
    timeout
        Seconds to wait for the service.
    journal
        Title-deed purchase journal file (default: in the cache directory).

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
        progress: bool | None = None,
        timeout: float = 30.0,
        journal: str | os.PathLike[str] | None = None,
        _sleep: Callable[[float], None] | None = None,
        _clock: Callable[[], datetime] | None = None,
        _rng: random.Random | None = None,
    ) -> None:
        key = _setting(api_key, ENV_API_KEY, "API key", "api_key")
        if any(ch.isspace() or not ch.isprintable() for ch in key):
            raise ConfigError("The API key contains whitespace or control characters")
        url = _setting(base_url, ENV_BASE_URL, "service address", "base_url")
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must start with http:// or https://, got {url!r}")
        if offline is None:
            offline = os.environ.get(ENV_OFFLINE, "").strip().lower() in {"1", "true", "yes"}
        _check_number("max_retries", max_retries, minimum=0, integer=True)
        _check_number("max_wait", max_wait, minimum=0)
        _check_number("timeout", timeout, minimum=0, exclusive=True)
        if budget is not None:
            _check_number("budget", budget, minimum=0, integer=True)
        self.endpoints = endpoints or Endpoints()
        self.offline = bool(offline)
        self.progress = progress
        self.journal = Path(journal).expanduser() if journal is not None else None
        backend, owned = _open_cache(cache)
        self._cache_label = _describe_cache_setting(cache, backend)
        extra: dict[str, Any] = {}
        if _sleep is not None:
            extra["sleep"] = _sleep
        if _clock is not None:
            extra["wall_clock"] = _clock
        if _rng is not None:
            extra["rng"] = _rng
        self._transport = Transport(
            api_key=key,
            base_url=url,
            cache=backend,
            expire_after=expire_after,
            offline=self.offline,
            endpoints=self.endpoints,
            retry=RetrySettings(max_retries=max_retries, max_wait=float(max_wait)),
            budget=budget,
            timeout=float(timeout),
            close_cache=owned,
            **extra,
        )

    # -- housekeeping -----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The service's root address."""
        return self._transport.base_url

    @property
    def usage(self) -> Usage:
        """Requests sent, cache hits and billable requests so far, per endpoint.

        Examples
        --------
        >>> client.usage.requests_sent  # doctest: +SKIP
        3
        """
        return self._transport.usage

    def cache_info(self) -> dict[str, Any]:
        """Entries, size on disk (bytes), oldest and newest entry, and path of the cache.

        Examples
        --------
        >>> client.cache_info()["entries"]  # doctest: +SKIP
        40
        """
        return self._transport.cache_info()

    def clear_cache(self) -> None:
        """Delete every cached answer (the next lookups are paid for again).

        Examples
        --------
        >>> client.clear_cache()  # doctest: +SKIP
        """
        self._transport.clear_cache()

    def close(self) -> None:
        """Release connections and the cache file."""
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        # Never the key, not even a part of it.
        return (
            f"Client(base_url={self.base_url!r}, cache={self._cache_label!r}, "
            f"offline={self.offline}, budget={self._transport.budget}, api_key='***')"
        )

    # -- endpoints --------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """Ask the health endpoint (never cached); verifies the key.

        Examples
        --------
        >>> client.health()  # doctest: +SKIP
        {'success': True, ...}
        """
        body = self._transport.fetch_json(
            self.endpoints.health_path, endpoint="health", billable=self._billable("health")
        )
        return body if isinstance(body, dict) else {"result": body}

    def property_records(
        self, location_ids: str | Iterable[str], *, attributes: Iterable[str] | None = None
    ) -> list[dict[str, Any]]:
        """Property records by location id, batched into comma-separated requests.

        Examples
        --------
        >>> records = client.property_records(["L1", "L2"])  # doctest: +SKIP
        """
        ids = _clean_ids(location_ids, source=False)
        params = _attribute_params(self.endpoints, attributes)
        batches = list(self._batches(ids, self.endpoints.properties_path, "{locationIds}", params))
        records: list[dict[str, Any]] = []
        with self._progress_bar(len(batches), "properties") as bar:
            for index, (_batch, path) in enumerate(batches):
                try:
                    body = self._transport.fetch_json(
                        path,
                        endpoint="properties",
                        params=params,
                        billable=self._billable("properties"),
                    )
                except PropertyKitError as exc:
                    remaining = [i for b, _ in batches[index:] for i in b]
                    exc.partial = PartialResult(records=records, remaining_ids=remaining)
                    raise
                records.extend(_records_of(body))
                bar.update(1)
        return records

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
        >>> records = client.source_records(["zoopla::123"], page_size=50)  # doctest: +SKIP
        """
        ids = _clean_ids(source_ids, source=True)
        if page_size is not None:
            _check_number("page_size", page_size, minimum=1, integer=True, error=InvalidInput)
        if max_results is not None:
            _check_number("max_results", max_results, minimum=0, integer=True, error=InvalidInput)
        base_params = _attribute_params(self.endpoints, attributes)
        reserve = dict(base_params)
        reserve[self.endpoints.offset_param] = _LARGEST_OFFSET
        reserve[self.endpoints.limit_param] = page_size or max_results or 0
        batches = list(self._batches(ids, self.endpoints.sources_path, "{sourceIds}", reserve))
        records: list[dict[str, Any]] = []
        with self._progress_bar(len(batches), "sources") as bar:
            for index, (_batch, path) in enumerate(batches):
                cursor = _Cursor()
                try:
                    self._fetch_pages(path, base_params, page_size, max_results, records, cursor)
                except PropertyKitError as exc:
                    remaining = [i for b, _ in batches[index:] for i in b]
                    exc.partial = PartialResult(
                        records=records, remaining_ids=remaining, resume_offset=cursor.offset
                    )
                    raise
                bar.update(1)
                if max_results is not None and len(records) >= max_results:
                    break
        return records

    def properties(
        self, location_ids: str | Iterable[str], *, attributes: Iterable[str] | None = None
    ) -> pd.DataFrame:
        """Property records by location id, as a DataFrame (see :func:`propertykit.frame`).

        Examples
        --------
        >>> df = client.properties(["L1", "L2"])  # doctest: +SKIP
        """
        return _to_frame(self.property_records(location_ids, attributes=attributes))

    def sources(
        self,
        source_ids: str | Iterable[str],
        *,
        attributes: Iterable[str] | None = None,
        page_size: int | None = None,
        max_results: int | None = None,
    ) -> pd.DataFrame:
        """Property records by source id, as a DataFrame (see :meth:`source_records`).

        Examples
        --------
        >>> df = client.sources(["zoopla::1"], attributes=["address", "epc"])  # doctest: +SKIP
        """
        records = self.source_records(
            source_ids, attributes=attributes, page_size=page_size, max_results=max_results
        )
        return _to_frame(records)

    def suggest(self, query: str, **params: str | int) -> list[dict[str, Any]]:
        """Search-suggest (rate limited per minute on the client; answers are cached).

        Examples
        --------
        >>> client.suggest("Mill Lane")  # doctest: +SKIP
        [{'displayAddress': ...}, ...]
        """
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("suggest() needs a non-empty query string")
        body = self._transport.fetch_json(
            self.endpoints.suggest_path,
            endpoint="suggest",
            params={self.endpoints.suggest_query_param: query, **params},
            billable=self._billable("suggest"),
        )
        records = _records_of(body)
        return records if records or not isinstance(body, list) else list(body)

    def buy_title_deed(
        self, title_number: str, *, buy_again: bool = False, **payload: Any
    ) -> Purchase:
        """Buy a title deed, charged at most once (see :mod:`propertykit.deeds`).

        Every attempt carries the same ``Idempotency-Key``; the intent is written to the journal
        before sending and the outcome after. A title already bought (per the journal or per
        purchase-status) is returned as the earlier :class:`~propertykit.deeds.Purchase` with
        ``previously_bought=True`` instead of being bought again.

        Parameters
        ----------
        title_number
            The title to buy.
        buy_again
            Buy even when the title was bought before (open intents are still resolved first).
        **payload
            JSON fields of the purchase request.

        Returns
        -------
        Purchase
            ``status`` ``"delivered"`` or ``"delivering"`` (poll with ``.refresh()`` /
            ``.wait()``), ``money_state`` ``"charged"``.

        Raises
        ------
        ApiError
            With ``money_state`` ``"charged"`` (do not buy again) or ``"not_charged"``.
        PurchaseUncertain
            The outcome could not be established; call again later (it asks first).

        Examples
        --------
        >>> purchase = client.buy_title_deed("NGL123456")  # doctest: +SKIP
        >>> purchase.status, purchase.money_state  # doctest: +SKIP
        ('delivered', 'charged')
        """
        from propertykit import deeds

        return deeds.buy_title_deed(
            deeds.HttpPurchaseTransport(self._transport, self.endpoints),
            deeds.Journal(self.journal),
            title_number,
            payload,
            policy=deeds.RetryPolicy(self._transport.retry, self._transport.rng),
            buy_again=buy_again,
            sleep=self._transport.sleep,
        )

    def purchase_status(self, title_number: str) -> dict[str, Any]:
        """The raw purchase-status answer for a title (never cached).

        Its shape is not specified by the service; ``money_state`` is read from wherever it is
        with :func:`propertykit.deeds.read_money_state`.

        Examples
        --------
        >>> client.purchase_status("NGL123456")["result"]["money_state"]  # doctest: +SKIP
        'charged'
        """
        from propertykit import deeds

        transport = deeds.HttpPurchaseTransport(self._transport, self.endpoints)
        return deeds.purchase_status(transport, title_number)

    # -- helpers ----------------------------------------------------------------------------------

    def _billable(self, endpoint: str) -> bool:
        return endpoint in self.endpoints.billable_endpoints

    def _batches(
        self, ids: list[str], template: str, placeholder: str, params: Mapping[str, Any]
    ) -> Iterator[tuple[list[str], str]]:
        """Split ids into requests of at most ``batch_size`` ids and a URL under the limit."""
        query = urlencode(params)
        room = MAX_URL_LENGTH - 1 - len(self.base_url) - len(template) + len(placeholder)
        room -= len(query) + 1 if query else 0
        batch: list[str] = []
        length = 0
        for item in ids:
            encoded = quote(item, safe=_SAFE_IN_ID)
            extra = len(encoded) + (1 if batch else 0)
            if batch and (len(batch) >= self.endpoints.batch_size or length + extra > room):
                yield batch, template.replace(placeholder, _join(batch))
                batch, length, extra = [], 0, len(encoded)
            if extra > room:
                raise InvalidInput(f"Id {item!r} is too long for one request URL")
            batch.append(item)
            length += extra
        if batch:
            yield batch, template.replace(placeholder, _join(batch))

    def _fetch_pages(
        self,
        path: str,
        base_params: Mapping[str, Any],
        page_size: int | None,
        max_results: int | None,
        records: list[dict[str, Any]],
        cursor: _Cursor,
    ) -> None:
        """Append pages to ``records`` while ``hasMore``; ``cursor`` holds the offset asked."""
        while True:
            params = dict(base_params)
            params[self.endpoints.offset_param] = cursor.offset
            limit = page_size
            if max_results is not None:
                left = max_results - len(records)
                if left <= 0:
                    return
                limit = min(limit, left) if limit is not None else left  # pay for no more
            if limit is not None:
                params[self.endpoints.limit_param] = limit
            body = self._transport.fetch_json(
                path, endpoint="sources", params=params, billable=self._billable("sources")
            )
            page = _records_of(body)
            records.extend(page)
            if not (isinstance(body, dict) and body.get("hasMore")):
                return
            next_offset = body.get("nextOffset")
            if not isinstance(next_offset, int) or isinstance(next_offset, bool):
                next_offset = cursor.offset + len(page)
            if next_offset <= cursor.offset or not page:
                return  # the service would send the same page again
            cursor.offset = next_offset

    def _progress_bar(self, total: int, what: str) -> Any:
        from tqdm.auto import tqdm

        show = self.progress if self.progress is not None else _interactive()
        return tqdm(total=total, desc=what, unit="request", disable=not show or total < 2)


# -- module helpers -------------------------------------------------------------------------------


class _Cursor:
    """Offset of the page being asked for (where to resume when it fails)."""

    def __init__(self) -> None:
        self.offset = 0


def _setting(value: str | None, env: str, what: str, argument: str) -> str:
    if value is None:
        value = os.environ.get(env)
    if value is None or not isinstance(value, str) or not value.strip():
        raise ConfigError(f"No {what}: pass {argument}= or set the {env} environment variable")
    return value.strip()


def _check_number(
    name: str,
    value: object,
    *,
    minimum: float,
    integer: bool = False,
    exclusive: bool = False,
    error: type[PropertyKitError] = ConfigError,
) -> None:
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if ok:
        number = float(value)  # type: ignore[arg-type]
        ok = number > minimum if exclusive else number >= minimum
    if not ok:
        sign = ">" if exclusive else ">="
        kind = "an integer" if integer else "a number"
        raise error(f"{name} must be {kind} {sign} {minimum:g}, got {value!r}")


def _open_cache(cache: object) -> tuple[BaseCache | None, bool]:
    """(backend, whether the client owns and closes it)."""
    if cache is False or cache is None:
        return None, True
    if cache is True:
        return open_sqlite_cache(cache_dir() / CACHE_FILE_NAME), True
    if isinstance(cache, BaseCache):
        return cache, False
    if isinstance(cache, str | os.PathLike):
        path = Path(cache).expanduser()
        if path.is_dir() or str(cache).endswith(("/", os.sep)):
            path = path / CACHE_FILE_NAME
        return open_sqlite_cache(path), True
    raise ConfigError(
        f"cache must be True, False, a path or a requests-cache backend, got {type(cache).__name__}"
    )


def _describe_cache_setting(cache: object, backend: BaseCache | None) -> str:
    if backend is None:
        return "off"
    db_path = getattr(backend, "db_path", None)
    return str(db_path) if db_path is not None else type(backend).__name__


def _clean_ids(ids: str | Iterable[str], *, source: bool) -> list[str]:
    """Validate ids (before anything is sent) and drop repeats, keeping the first order."""
    if isinstance(ids, str):
        ids = [ids]
    try:
        items = list(ids)
    except TypeError:
        raise InvalidInput(f"Expected an id or a list of ids, got {type(ids).__name__}") from None
    kind = "source id" if source else "location id"
    seen: dict[str, None] = {}
    for item in items:
        if not isinstance(item, str):
            raise InvalidInput(f"Each {kind} must be a string, got {item!r}")
        if not item:
            raise InvalidInput(f"Empty {kind}")
        bad = {ch for ch in item if ch in _FORBIDDEN_IN_ID or ch.isspace() or not ch.isprintable()}
        if bad:
            shown = ", ".join(repr(ch) for ch in sorted(bad))
            raise InvalidInput(f"{kind.capitalize()} {item!r} contains {shown}")
        if source:
            provider, sep, rest = item.partition("::")
            if not sep or not provider or not rest:
                raise InvalidInput(f"Source id {item!r} is not of the form <provider>::<id>")
        seen.setdefault(item, None)
    if not seen:
        raise InvalidInput(f"No {kind}s given")
    return list(seen)


def _join(ids: list[str]) -> str:
    return ",".join(quote(item, safe=_SAFE_IN_ID) for item in ids)


def _attribute_params(endpoints: Endpoints, attributes: Iterable[str] | None) -> dict[str, Any]:
    if attributes is None:
        return {}
    names = [attributes] if isinstance(attributes, str) else list(attributes)
    if not names or not all(isinstance(n, str) and n and "," not in n for n in names):
        raise InvalidInput(f"attributes must be non-empty names without commas, got {names!r}")
    return {endpoints.attributes_param: ",".join(names)}


def _records_of(body: Any) -> list[dict[str, Any]]:
    """The records of an envelope (``result`` a list or one record) or of a bare list."""
    result = body.get("result") if isinstance(body, dict) else body
    if isinstance(result, dict):
        return [result]
    if isinstance(result, list):
        return [item for item in result if isinstance(item, dict)]
    return []


def _to_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    try:
        from propertykit.frames import frame
    except ImportError:  # frames.py (issue 5) not there yet: a plain first version
        import pandas as pd

        return pd.json_normalize(records)
    return frame(records)


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())
