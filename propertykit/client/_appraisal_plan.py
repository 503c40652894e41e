"""What ``client.appraise(ids, dry_run=True)`` would cost, found by asking the cache only.

The plan walks the book's route without sending: the subjects' lookup batches, then each home's
neighbourhood query and, where its homes are too few to fit, its outcode's. What the cache holds
is followed (free, and it tells what comes next); what it lacks is priced at most: a lookup of
``k`` ids at most ``k`` records, a query at most its ``max_results`` records in pages of
:data:`~propertykit.client._neighbourhood.NEIGHBOURHOOD_PAGE`, and a home whose record is not
cached as if its neighbourhood were thin. Credits follow the cost rule of
:class:`~propertykit.Endpoints`; the service does not publish one, so it is a setting.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from propertykit.client._envelope import next_offset, read_page
from propertykit.client._ids import parse_ids
from propertykit.client._neighbourhood import (
    NEIGHBOURHOOD_MOST,
    NEIGHBOURHOOD_PAGE,
    WIDER_MOST,
    _not_valuable,
    nearby_query,
    outcode_of,
    too_few_to_fit,
)
from propertykit.client._query import query_body
from propertykit.errors import PropertyKitError
from propertykit.frames import frame
from propertykit.jsonio import Record


@dataclass(frozen=True)
class AppraisalPlan:
    """What valuing a book would send, given the cache; nothing was sent to find out.

    Attributes
    ----------
    homes
        Ids asked for.
    billable
        Billable requests, at most (what a client's ``budget`` counts).
    credits
        Credits, at most, by the client's cost rule (``Endpoints.credits_per_record`` and
        ``least_credits_per_request``); ``None`` when that rule is not set.
    exact
        Whether ``billable`` and ``credits`` are exact: every answer is cached, or nothing is
        left whose size only the service knows.
    cached
        Answers the cache already holds (free).

    Examples
    --------
    >>> AppraisalPlan(homes=3, billable=4, credits=120, exact=False, cached=1)
    <AppraisalPlan 3 homes: at most 4 billable requests, at most 120 credits; 1 answer cached>
    """

    homes: int
    billable: int
    credits: float | None
    exact: bool
    cached: int

    def __repr__(self) -> str:
        bound = "" if self.exact else "at most "
        credits = "credits unknown" if self.credits is None else f"{self.credits:,.0f} credits"
        answers = "answer" if self.cached == 1 else "answers"
        homes = "home" if self.homes == 1 else "homes"
        return (
            f"<AppraisalPlan {self.homes:,} {homes}: {bound}{self.billable:,} billable "
            f"requests, {bound}{credits}; {self.cached:,} {answers} cached>"
        )


class _Tally:
    """Requests and credits counted as the plan walks the book."""

    def __init__(self, client: Any) -> None:
        endpoints = client.endpoints
        self.client = client
        self.per_record = endpoints.credits_per_record
        self.least = endpoints.least_credits_per_request
        self.billable_endpoints = endpoints.billable_endpoints
        self.billable = 0
        self.credits = 0.0
        self.exact = True
        self.cached = 0
        self.queries: dict[str, list[Record] | None] = {}

    def charge(self, endpoint: str, requests: int, records: int) -> None:
        """``requests`` to send bringing at most ``records`` records (never exact)."""
        self.exact = False
        if endpoint not in self.billable_endpoints:
            return
        self.billable += requests
        if self.per_record is not None and self.least is not None:
            self.credits += self.least * requests + self.per_record * records

    def query(self, area: dict[str, Any], most: int, conditions: list[Any] | None) -> Any:
        """The records of an area query if the cache holds all its pages, else ``None`` (and
        what is left priced, once per call as the book sends it once)."""
        key = json.dumps([area, most, conditions], sort_keys=True)
        if key in self.queries:
            return self.queries[key]
        endpoints, transport = self.client.endpoints, self.client._transport
        body = query_body(area, {} if conditions is None else {"query": conditions})
        records: list[Record] = []
        offset = 0
        while len(records) < most:
            payload = {**body, endpoints.offset_param: offset}
            payload[endpoints.limit_param] = min(NEIGHBOURHOOD_PAGE, most - len(records))
            answer = transport.cached_json(endpoints.query_path, method="POST", json_body=payload)
            try:
                page = None if answer is None else read_page(answer)
                following = None if page is None else next_offset(page, offset, where="")
            except PropertyKitError:
                page = None  # a cached answer the real call would refuse: fetched again
            if page is None:
                left = most - len(records)
                self.charge("query", math.ceil(left / NEIGHBOURHOOD_PAGE), left)
                self.queries[key] = None
                return None
            self.cached += 1
            records.extend(page.records)
            if following is None:
                break
            offset = following
        self.queries[key] = records[:most]
        return self.queries[key]

    def neighbourhood(self, record: Record | None, radius: float) -> None:
        """Price a home's neighbourhood (its record known, or not: then as if thin)."""
        if record is None:
            self.charge("query", math.ceil(NEIGHBOURHOOD_MOST / NEIGHBOURHOOD_PAGE),
                        NEIGHBOURHOOD_MOST)  # fmt: skip
            self.charge("query", math.ceil(WIDER_MOST / NEIGHBOURHOOD_PAGE), WIDER_MOST)
            return
        own = frame([record])
        if _not_valuable(own) is not None:
            return
        first = own.iloc[0]
        area, conditions = nearby_query(first, radius)
        answer = self.query(area, NEIGHBOURHOOD_MOST, conditions)
        outcode = outcode_of(first)
        if outcode is None:
            return
        if answer is not None:
            nearby = [r for r in answer if r.get("propertyId") != record.get("propertyId")]
            if too_few_to_fit(frame([record, *nearby]), str(first["propertyType"])) is None:
                return
        self.query({"type": "outcode", "value": outcode}, WIDER_MOST, None)


def price_book(client: Any, asked: list[str], radius: float) -> AppraisalPlan:
    """The plan of ``client.appraise(asked, radius_m=radius)``: nothing is sent."""
    tally = _Tally(client)
    lookups, transport = client._lookups, client._transport
    records: dict[str, Record | None] = {}
    location_ids = list(dict.fromkeys(i for i in asked if not parse_ids(i).source_ids))
    for batch in lookups.property_batches(location_ids, {}) if location_ids else []:
        answer = transport.cached_json(batch.path, {})
        if answer is None:
            tally.charge("properties", 1, len(batch.ids))
            records.update(dict.fromkeys(batch.ids))
            continue
        tally.cached += 1
        held = {str(r.get("locationId")): r for r in read_page(answer).records}
        records.update({given: held.get(given, {}) for given in batch.ids})  # {}: no record
    for given in dict.fromkeys(i for i in asked if parse_ids(i).source_ids):
        (batch,) = lookups.source_batches([given], {}, None, None)
        params = lookups.page_params({}, 0, None, None, 0)
        answer = transport.cached_json(batch.path, params)
        if answer is None:
            tally.charge("sources", 1, 1)
            records[given] = None
        else:
            tally.cached += 1
            found = read_page(answer).records
            records[given] = found[0] if found else {}
    for given in dict.fromkeys(asked):
        record = records[given]
        if record == {}:
            continue  # no record: nothing more is fetched for it
        tally.neighbourhood(record, radius)
    credits = tally.credits if tally.per_record is not None and tally.least is not None else None
    return AppraisalPlan(
        homes=len(asked),
        billable=tally.billable,
        credits=None if credits is None else math.ceil(credits),
        exact=tally.exact,
        cached=tally.cached,
    )
