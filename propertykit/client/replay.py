"""Re-running a lookup from a warm cache: cached bodies read in bulk, framed as bytes by Arrow.

``client.properties(ids)`` and ``client.sources(ids)`` (without ``max_results``) come here. Every
batch's first-page answer is looked up in the cache at once
(:func:`propertykit.wire.bulk_cache.cached_bodies`); a body the fast path can vouch for is
counted as a cache hit (as the normal path would count it) and handed, undecoded, to
:func:`propertykit.frame`'s bytes route (Arrow's JSON reader, GIL released): no request object, no
deserialised response, no Python dict per record.

It vouches only for what the normal path would accept unchanged: a fresh 200 (offline: any age)
whose body is one JSON object with a list of records, not ``success: false``, and, for sources,
not ``hasMore: true`` (paging is followed by the normal path). Every entry written by propertykit
passed :func:`~propertykit.client.envelope.check_envelope` before it was stored; the byte checks
here are a second, conservative guard (a false alarm only costs the normal path).

Everything else (misses, expired entries, paged first pages) goes down the normal path
(:mod:`propertykit.client.lookups`, run by :func:`~propertykit.client.bulk.run_batches`), so
budgets, single flight, retries and ``.partial`` are unchanged. When some batches take the normal
path, the cached bodies are decoded into records there too, so the frame is built the same way as
before; only an all-cached call skips decoding.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from propertykit.client.arguments import attribute_params, check_paging
from propertykit.client.bulk import Batch, run_batches
from propertykit.client.envelope import RECORD_KEYS, read_page
from propertykit.client.ids import validate_ids
from propertykit.client.progress import progress_bar
from propertykit.errors import BadResponse, PropertyKitError
from propertykit.frames import frame
from propertykit.jsonio import Record, loads
from propertykit.wire.bulk_cache import cached_bodies

if TYPE_CHECKING:
    import pandas as pd

    from propertykit.client.client import Client
    from propertykit.client.lookups import Lookups

__all__ = ["properties_frame", "sources_frame", "vouched"]

_FAILED = re.compile(rb'"success"\s*:\s*false')
_MORE = re.compile(rb'"hasMore"\s*:\s*true')
_LAST = re.compile(rb'"hasMore"\s*:\s*false')
_RESULT = re.compile(rb'"result"\s*:\s*\[')
#: Other lists of records (the bytes route reads ``result`` only): their presence anywhere sends
#: a body down the normal path.
_OTHER_LISTS = tuple(key.encode() for key in RECORD_KEYS if key != "result")
_KEY = re.compile(rb'"[^"]*"\s*:')


def vouched(body: bytes) -> bool:
    """Whether ``body`` surely holds a usable, single page the normal path would read as it is.

    Usable: one JSON object, not ``success: false``, with a ``result`` list. Single: ``hasMore``
    false, or neither ``hasMore`` nor a ``total`` to page by. Any doubt says no.

    Examples
    --------
    >>> vouched(b'{"success":true,"result":[{"propertyId":"P1"}],"hasMore":false}')
    True
    >>> vouched(b'{"success":true,"result":[],"hasMore":true,"nextOffset":50}')
    False
    >>> vouched(b'{"success":false,"error":"maintenance","result":[]}')
    False
    >>> vouched(b'{"result":[{"propertyId":"P1"}],"total":40,"offset":0}')
    False
    """
    if body.lstrip()[:1] != b"{" or _found(body, b'"success"', _FAILED):
        return False
    if not _RESULT.search(body) or _found(body, b'"hasMore"', _MORE):
        return False
    if any(_found(body, b'"' + key + b'"', _KEY) for key in _OTHER_LISTS):
        return False
    return _found(body, b'"hasMore"', _LAST) or not _found(body, b'"total"', _KEY)


def _found(body: bytes, name: bytes, pattern: re.Pattern[bytes]) -> bool:
    """Whether ``pattern`` matches where ``name`` occurs (``bytes.find`` skips ahead quickly)."""
    at = body.find(name)
    while at >= 0:
        if pattern.match(body, at):
            return True
        at = body.find(name, at + 1)
    return False


@dataclass(frozen=True, slots=True)
class _Cached:
    """A vouched body standing in for its batch's records until the frame is built."""

    body: bytes

    def records(self) -> list[Record]:
        return read_page(loads(self.body)).records


def properties_frame(
    client: Client, location_ids: str | Iterable[str], attributes: Iterable[str] | None
) -> pd.DataFrame:
    """``client.properties(location_ids, attributes=...)``: cached bodies first, then the rest."""
    ids = validate_ids(location_ids, source=False)
    params = attribute_params(client.endpoints, attributes)
    lookups = client._lookups
    batches = lookups.property_batches(ids, params)
    return _replayed(
        client,
        batches,
        lambda batch: params,
        lambda batch: lookups.fetch_properties(batch, params),
        endpoint="properties",
    )


def sources_frame(
    client: Client,
    source_ids: str | Iterable[str],
    attributes: Iterable[str] | None,
    page_size: int | None,
) -> pd.DataFrame:
    """``client.sources(source_ids, ...)`` without ``max_results``: cached first pages first."""
    ids = validate_ids(source_ids, source=True)
    check_paging(page_size, None)
    base = attribute_params(client.endpoints, attributes)
    lookups: Lookups = client._lookups
    batches = lookups.source_batches(ids, base, page_size, None)
    first = lookups.page_params(base, 0, page_size, None, 0) or {}
    return _replayed(
        client,
        batches,
        lambda batch: first,
        lambda batch: lookups.fetch_sources(batch, base, page_size, None),
        endpoint="sources",
    )


def _replayed(
    client: Client,
    batches: list[Batch],
    params_of: Callable[[Batch], Mapping[str, Any]],
    fetch: Callable[[Batch], list[Record]],
    *,
    endpoint: str,
) -> pd.DataFrame:
    transport = client._transport
    money_unit = client.endpoints.money_unit
    bodies = cached_bodies(
        transport.session,
        [(transport.base_url + batch.path, params_of(batch)) for batch in batches],
        offline=transport.offline,
    )
    ready = {
        batch.index: body
        for batch, body in zip(batches, bodies, strict=True)
        if body is not None and vouched(body)
    }
    with progress_bar(len(batches), endpoint, show=client.progress) as bar:
        if ready and len(ready) == len(batches):
            for _ in batches:
                transport.usage.record_cache_hit(endpoint)
            bar.update(len(batches))
            return frame([ready[batch.index] for batch in batches], money_unit=money_unit)

        def fetch_or_replay(batch: Batch) -> list[Any]:
            body = ready.get(batch.index)
            if body is None:
                return fetch(batch)
            transport.usage.record_cache_hit(endpoint)  # when the normal path would count it
            return [_Cached(body)]

        try:
            rows = run_batches(
                batches, fetch_or_replay, max_in_flight=client.max_in_flight, progress=bar
            )
        except PropertyKitError as exc:
            if exc.partial is not None:
                exc.partial.records = _records(exc.partial.records, endpoint, transport.usage)
            raise
    return frame(_records(rows, endpoint, transport.usage), money_unit=money_unit)


def _records(rows: list[Any], endpoint: str, usage: Any) -> list[Record]:
    """Records, the cached bodies among ``rows`` decoded (as the normal path decodes them)."""
    records: list[Record] = []
    for row in rows:
        if not isinstance(row, _Cached):
            records.append(row)
            continue
        try:
            records.extend(row.records())
        except (ValueError, BadResponse) as exc:  # vouched, so only a corrupt entry gets here
            usage.record_error(endpoint)
            raise BadResponse(f"A cached answer cannot be used: {exc}") from None
    return records
