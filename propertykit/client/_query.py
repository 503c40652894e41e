"""``client.query(area=..., **filters)``: properties by area over ``POST /v1/property/query``.

The body is the service's own (Vepler's documented shape)::

    {"area": [{"type": "postcode", "value": "SW1A 1AA"}],
     "query": {"priceMin": 30000000, "beds": [2, 3]},
     "limit": 25, "offset": 0, "sortBy": "price", "sortOrder": "desc",
     "attributes": ["address", "pricing"]}

``query`` may instead be the list of condition groups the service's own SDK sends
(:mod:`propertykit.client._query_conditions`), passed as ``client.query(area, query=[...])``.

Inputs are checked before anything is sent (:mod:`propertykit.client._query_input`). Pages are
followed as for sources (``hasMore``/``nextOffset``, or ``total``/``offset``), with the same
guards against paging that never ends (:mod:`propertykit.client._envelope`); every page is a
read, cached like the lookups with its body as part of the cache key (the key never is), counted
as the ``query`` endpoint, billable unless ``Endpoints.billable_endpoints`` says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from propertykit.client._arguments import check_paging
from propertykit.client._envelope import check_envelope, next_offset, read_page
from propertykit.client._partial import PartialResult
from propertykit.client._query_conditions import check_conditions
from propertykit.client._query_input import check_area, check_filters, check_sort_field
from propertykit.config import Endpoints
from propertykit.errors import InvalidInput, PropertyKitError
from propertykit.frames import frame
from propertykit.jsonio import Record
from propertykit.wire import Transport

if TYPE_CHECKING:
    import pandas as pd

_SORT_ORDERS = ("asc", "desc")


def query_body(
    area: object,
    filters: dict[str, Any],
    *,
    sort_by: str | None = None,
    sort_order: str | None = None,
    attributes: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The request body without paging; :class:`InvalidInput` for anything malformed.

    Examples
    --------
    >>> query_body({"type": "outcode", "value": "SW1A"}, {"beds": [2]}, sort_by="price")
    {'area': [{'type': 'outcode', 'value': 'SW1A'}], 'query': {'beds': [2]}, 'sortBy': 'price'}
    >>> beds = {"field": "roomDetails.beds", "comparator": "in", "value": (2, 3)}
    >>> query_body({"type": "outcode", "value": "SW1A"},
    ...            {"query": [{"operator": "OR", "groups": [{"conditions": [beds]}]}]})["query"]
    [{'operator': 'OR', 'groups': [{'conditions': [{'field': 'roomDetails.beds', \
'comparator': 'in', 'value': [2, 3]}]}]}]
    """
    for reserved in ("limit", "offset"):
        if reserved in filters:
            raise InvalidInput(
                f"{reserved} is set by propertykit's paging: use page_size= and max_results="
            )
    body: dict[str, Any] = {"area": check_area(area), "query": _query(filters)}
    if sort_by is not None:
        body["sortBy"] = check_sort_field(sort_by)
    if sort_order is not None:
        if sort_order not in _SORT_ORDERS:
            raise InvalidInput(f"sortOrder must be 'asc' or 'desc', got {sort_order!r}")
        body["sortOrder"] = sort_order
    if attributes is not None:
        names = [attributes] if isinstance(attributes, str) else list(attributes)
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise InvalidInput(f"attributes must be non-empty names, got {names!r}")
        body["attributes"] = names
    return body


def _query(filters: dict[str, Any]) -> dict[str, Any] | list[dict[str, Any]]:
    """The body's ``query``: the SDK's condition groups (``query=[...]``) or named filters."""
    if "query" not in filters:
        return check_filters(filters)
    named = sorted(name for name in filters if name != "query")
    if named:
        raise InvalidInput(
            f"Give filters by name ({', '.join(named)}) or as condition groups (query=[...]), "
            "not both: the service takes one of them"
        )
    return check_conditions(filters["query"])


def fetch_query(
    transport: Transport,
    endpoints: Endpoints,
    body: dict[str, Any],
    *,
    page_size: int | None,
    max_results: int | None,
) -> list[Record]:
    """Every page of one query (at most ``max_results`` records).

    A failure part-way raises with ``.partial``: the records fetched and ``resume_offset``.
    """
    records: list[Record] = []
    offset = 0
    billable = "query" in endpoints.billable_endpoints
    try:
        while True:
            limit = page_size
            if max_results is not None:
                left = max_results - len(records)
                if left <= 0:
                    return records[:max_results]
                limit = min(limit, left) if limit is not None else left
            payload = {**body, endpoints.offset_param: offset}
            if limit is not None:
                payload[endpoints.limit_param] = limit
            answer = transport.fetch_json(
                endpoints.query_path,
                endpoint="query",
                method="POST",
                json_body=payload,
                billable=billable,
                check=check_envelope,
            )
            page = read_page(answer)
            records.extend(page.records)
            following = next_offset(page, offset, where=endpoints.query_path)
            if following is None:
                return records if max_results is None else records[:max_results]
            offset = following
    except PropertyKitError as exc:
        exc.partial = PartialResult(records=records, resume_offset=offset)
        raise


class QueryMixin:
    """``query`` and ``query_records`` for :class:`~propertykit.Client`."""

    _transport: Transport
    endpoints: Endpoints

    def query_records(
        self,
        area: object,
        *,
        page_size: int | None = None,
        max_results: int | None = None,
        sortBy: str | None = None,
        sortOrder: str | None = None,
        attributes: Iterable[str] | None = None,
        **filters: Any,
    ) -> list[Record]:
        """Property records in ``area`` matching ``filters``, every page (see :meth:`query`).

        Examples
        --------
        >>> homes = client.query_records({"type": "outcode", "value": "SE11"}, max_results=3)
        >>> len(homes)
        3
        """
        check_paging(page_size, max_results)
        body = query_body(
            area, filters, sort_by=sortBy, sort_order=sortOrder, attributes=attributes
        )
        return fetch_query(
            self._transport, self.endpoints, body, page_size=page_size, max_results=max_results
        )

    def query(
        self,
        area: object,
        *,
        page_size: int | None = None,
        max_results: int | None = None,
        sortBy: str | None = None,
        sortOrder: str | None = None,
        attributes: Iterable[str] | None = None,
        **filters: Any,
    ) -> pd.DataFrame:
        """Properties in an area, filtered by the service's own names, as a DataFrame.

        Parameters
        ----------
        area
            One dict in the service's shape: ``{"type": "postcode", "value": "SW1A 1AA"}``,
            ``{"type": "outcode", "value": "SW1A"}``, ``{"type": "point", "coordinates": [lng,
            lat], "radius": metres}`` or ``{"type": "polygon", "coordinates": [[[lng, lat],
            ...]]}`` (a list of them is sent as given).
        page_size, max_results
            Records per page (the service's default when ``None``), and most records in all.
        sortBy, sortOrder
            Sent as given (``sortOrder`` ``"asc"`` or ``"desc"``).
        attributes
            Record attributes to return (all when ``None``).
        **filters
            ``priceMin``, ``priceMax``, ``rentMin``, ``rentMax`` (in the service's money unit:
            pence for the ``vepler`` profile), ``beds``, ``baths`` (lists of int),
            ``propertyType``, ``epcRating``, ``tenure``, ``councilTaxBand``, ``saleStatus``,
            ``rentStatus`` (lists of str), ``tags`` (dict of bool), ``yearBuiltMin/Max``,
            ``floorAreaMin/Max``. Sent in the body's ``query`` object as given. Or, instead of
            these, ``query=[...]``: the condition groups of the service's own SDK
            (:mod:`propertykit.client._query_conditions`), sent as the body's ``query`` list.

        Raises
        ------
        InvalidInput
            An unknown filter, field or comparator, a value of the wrong kind, named filters
            and ``query=`` together, or a malformed area; nothing is sent.

        Examples
        --------
        >>> df = client.query({"type": "outcode", "value": "SE11"}, beds=[2, 3], max_results=5)
        >>> len(df) <= 5, set(df["roomDetails.beds"]) <= {2, 3}
        (True, True)
        >>> big = {"field": "floorAreaSqM", "comparator": "gte", "value": 120}
        >>> df = client.query({"type": "outcode", "value": "SE11"}, max_results=5,
        ...                   query=[{"operator": "AND", "groups": [{"conditions": [big]}]}])
        >>> bool(df["floorAreaSqM"].ge(120).all())
        True
        """
        records = self.query_records(
            area,
            page_size=page_size,
            max_results=max_results,
            sortBy=sortBy,
            sortOrder=sortOrder,
            attributes=attributes,
            **filters,
        )
        return frame(records, money_unit=self.endpoints.money_unit)
