"""How one client's id lookups become requests: batches, pages, and their price from the cache.

:class:`Lookups` splits ids into batches (comma-separated ids, at most ``batch_size`` each and a
URL under 2,000 characters), fetches one batch (following ``nextOffset`` while ``hasMore`` for
sources), and prices a call for ``dry_run=True`` by asking the cache only. The client runs the
batches with :func:`propertykit.client._bulk.run_batches`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from propertykit.client._bulk import Batch, DryRun, PagePlan, plan
from propertykit.client._envelope import check_envelope, next_offset, read_page
from propertykit.client._ids import encode_id, join_ids
from propertykit.client._partial import PartialResult
from propertykit.config import MAX_URL_LENGTH, Endpoints
from propertykit.errors import (
    InvalidInput,
    PropertyKitError,
)
from propertykit.jsonio import Record
from propertykit.wire import Transport

if TYPE_CHECKING:
    pass


#: Room left in a URL for the query string of a sources page (limit, a large offset, attributes).
_LARGEST_OFFSET = 10**12


class Lookups:
    """Batches, pages and dry-run plans of one client's lookups.

    Parameters
    ----------
    transport
        The client's transport (sends, and answers cache questions).
    endpoints
        Paths, parameter names, ``batch_size`` and which endpoints are billable.

    Examples
    --------
    >>> import propertykit as pk
    >>> with pk.sandbox.serve() as sb, pk.Client(sb.api_key, sb.url, cache=False) as client:
    ...     batches = Lookups(client._transport, client.endpoints).property_batches(
    ...         sb.location_ids[:120], {})
    >>> [len(batch.ids) for batch in batches]
    [50, 50, 20]
    """

    def __init__(self, transport: Transport, endpoints: Endpoints) -> None:
        self.transport = transport
        self.endpoints = endpoints

    # -- batches ----------------------------------------------------------------------------------

    def property_batches(self, ids: list[str], params: Mapping[str, Any]) -> list[Batch]:
        """Batches of location ids for ``GET /v1/property/{locationIds}``."""
        return self._batches(ids, self.endpoints.properties_path, "{locationIds}", params)

    def source_batches(
        self,
        ids: list[str],
        base_params: Mapping[str, Any],
        page_size: int | None,
        max_results: int | None,
    ) -> list[Batch]:
        """Batches of source ids, leaving room in the URL for the paging parameters."""
        reserve = dict(base_params)
        reserve[self.endpoints.offset_param] = _LARGEST_OFFSET
        reserve[self.endpoints.limit_param] = page_size or max_results or 0
        return self._batches(ids, self.endpoints.sources_path, "{sourceIds}", reserve)

    def _batches(
        self, ids: list[str], template: str, placeholder: str, params: Mapping[str, Any]
    ) -> list[Batch]:
        """Split ids into requests of at most ``batch_size`` ids and a URL under the limit.

        The boundaries depend only on the ids and settings: a repeated call makes the same
        requests, so the cache answers the batches already fetched.
        """
        query = urlencode(params)
        room = MAX_URL_LENGTH - 1 - len(self.transport.base_url) - len(template) + len(placeholder)
        room -= len(query) + 1 if query else 0
        groups: list[list[str]] = []
        batch: list[str] = []
        length = 0
        for item in ids:
            encoded = encode_id(item)
            extra = len(encoded) + (1 if batch else 0)
            if batch and (len(batch) >= self.endpoints.batch_size or length + extra > room):
                groups.append(batch)
                batch, length, extra = [], 0, len(encoded)
            if extra > room:
                raise InvalidInput(f"Id {item!r} is too long for one request URL")
            batch.append(item)
            length += extra
        if batch:
            groups.append(batch)
        return [
            Batch(index, tuple(group), template.replace(placeholder, join_ids(group)))
            for index, group in enumerate(groups)
        ]

    # -- fetching ---------------------------------------------------------------------------------

    def fetch_properties(
        self,
        batch: Batch,
        params: Mapping[str, Any],
        *,
        known_missing: bool = False,
        single: set[int] | None = None,
    ) -> list[Record]:
        """The records of one batch of location ids, following pages when the envelope says so.

        ``known_missing``: the caller has just found no first page of it in the cache (see
        :meth:`~propertykit.wire.Transport.fetch_json`). ``single``, when given, gets the
        batch's index if its answer came whole in one page
        (:attr:`~propertykit.client._envelope.Page.whole`): the replay keeps it as read.
        """
        body = self.transport.fetch_json(
            batch.path,
            endpoint="properties",
            params=params,
            billable=self._billable("properties"),
            check=check_envelope,
            known_missing=known_missing,
        )
        page = read_page(body, where=batch.path)
        records = list(page.records)
        most = len(batch.ids)  # a location id is one property
        offset = next_offset(page, 0, where=batch.path, most=most)
        if page.whole and single is not None:
            single.add(batch.index)
        while offset is not None:  # rare: a lookup answered in pages
            body = self.transport.fetch_json(
                batch.path,
                endpoint="properties",
                params={**params, self.endpoints.offset_param: offset},
                billable=self._billable("properties"),
                check=check_envelope,
            )
            page = read_page(body, where=batch.path)
            records.extend(page.records)
            offset = next_offset(page, offset, where=batch.path, most=most)
        return records

    def fetch_sources(
        self,
        batch: Batch,
        base_params: Mapping[str, Any],
        page_size: int | None,
        max_results: int | None,
        *,
        known_missing: bool = False,
        single: set[int] | None = None,
    ) -> list[Record]:
        """Every page of one batch of source ids (at most ``max_results`` records).

        A failure part-way raises with ``.partial``: the pages' records and ``resume_offset``;
        so does paging the service breaks (:func:`~propertykit.client._envelope.next_offset`).
        ``known_missing`` (for the first page) and ``single``: as :meth:`fetch_properties`.
        """
        records: list[Record] = []
        offset = 0
        try:
            while True:
                params = self.page_params(base_params, offset, page_size, max_results, len(records))
                if params is None:
                    return records
                body = self.transport.fetch_json(
                    batch.path,
                    endpoint="sources",
                    params=params,
                    billable=self._billable("sources"),
                    check=check_envelope,
                    known_missing=known_missing and offset == 0,
                )
                page = read_page(body, where=batch.path)
                records.extend(page.records)
                # A source id resolves to at most one record (as dry runs count), so a next
                # page past the ids asked for is the service paging on without end.
                following = next_offset(page, offset, where=batch.path, most=len(batch.ids))
                if following is None:
                    if offset == 0 and page.whole and single is not None:
                        single.add(batch.index)
                    return records
                offset = following
        except PropertyKitError as exc:
            exc.partial = PartialResult(records=records, resume_offset=offset)
            raise

    def page_params(
        self,
        base_params: Mapping[str, Any],
        offset: int,
        page_size: int | None,
        max_results: int | None,
        collected: int,
    ) -> dict[str, Any] | None:
        """Query of the page at ``offset``; ``None`` when ``max_results`` records are in."""
        params = dict(base_params)
        params[self.endpoints.offset_param] = offset
        limit = page_size
        if max_results is not None:
            left = max_results - collected
            if left <= 0:
                return None
            limit = min(limit, left) if limit is not None else left  # pay for no more
        if limit is not None:
            params[self.endpoints.limit_param] = limit
        return params

    # -- dry runs ---------------------------------------------------------------------------------

    def plan_properties(self, batches: list[Batch], params: Mapping[str, Any]) -> DryRun:
        """What fetching ``batches`` would send: one request per batch the cache lacks."""

        def probe(batch: Batch) -> PagePlan:
            hit = self.transport.cached_json(batch.path, params) is not None
            return PagePlan(cached=int(hit), to_send=int(not hit), to_send_at_most=int(not hit))

        return self._plan(batches, probe, "properties")

    def plan_sources(
        self,
        batches: list[Batch],
        base_params: Mapping[str, Any],
        page_size: int | None,
        max_results: int | None,
    ) -> DryRun:
        """What fetching ``batches`` would send: cached pages are followed, the rest counted."""
        collected = 0

        def probe(batch: Batch) -> PagePlan:
            nonlocal collected
            offset = cached = 0
            while True:
                params = self.page_params(base_params, offset, page_size, max_results, collected)
                if params is None:
                    return PagePlan(cached, 0, 0)
                body = self.transport.cached_json(batch.path, params)
                if body is None:
                    break
                try:
                    page = read_page(body, where=batch.path)
                    following = next_offset(page, offset, where=batch.path)
                except PropertyKitError:
                    break  # a cached answer the real call would refuse: count it as to send
                cached += 1
                collected += len(page.records)
                if following is None:
                    return PagePlan(cached, 0, 0)
                offset = following
            left = len(batch.ids) - offset  # at most one record per id
            if max_results is not None:
                left = min(left, max_results - collected)
            collected += max(left, 0)
            per_page = page_size or max_results
            most = None if per_page is None else max(1, -(-left // per_page))
            return PagePlan(cached, 1, most)

        return self._plan(batches, probe, "sources")

    def _plan(self, batches: list[Batch], probe: Any, endpoint: str) -> DryRun:
        return plan(
            batches,
            probe,
            endpoint=endpoint,
            billable=self._billable(endpoint),
            budget_left=self.transport.usage.budget_left,
        )

    def _billable(self, endpoint: str) -> bool:
        return endpoint in self.endpoints.billable_endpoints
