"""``client.match_addresses(addresses)``: a client's address list to location ids, never a guess.

One straight route: the list is checked (a list or Series of text, else ``InvalidInput`` before
anything is sent) -> blank and non-text rows answered ``unmatched`` -> decisions of earlier
reviews applied (:mod:`propertykit.client._match_decisions`) -> each distinct address read and
given its queries (:func:`~propertykit.client._address_match.plan_queries`, at most three, from
the text alone) -> the distinct queries asked of search-suggest, one after another, paced by the
client's per-minute limit (shared in Redis by a team), each answer cached like any other -> each
address decided (:func:`~propertykit.client._address_match.decide`) -> one row per input, in order.

Resumable: every answer is in the cache as soon as it arrives, so a list interrupted part-way (a
restarted kernel, ``KeyboardInterrupt``, a network failure) sends, the next time, only the
queries not yet answered; a list matched before sends nothing. Since the queries depend on the
text alone, ``dry_run=True`` counts exactly what would be sent (:class:`MatchDryRun`), asking
the cache only. Search-suggest is free: matching buys no property records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from propertykit.client._address_match import Candidate, Decision, candidates_of, decide
from propertykit.client._address_queries import plan_queries
from propertykit.client._addresses import ReadAddress, read_address
from propertykit.client._match_decisions import MatchDecisions, Reviewed, text_key
from propertykit.client._progress import progress_bar
from propertykit.errors import InvalidInput
from propertykit.text import plural
from propertykit.wire import Usage

#: The columns of ``match_addresses``' frame, in order.
COLUMNS = [
    "input",
    "status",
    "locationId",
    "matched_address",
    "score",
    "candidates",
    "candidate_addresses",
    "reason",
]


@dataclass(frozen=True)
class AddressSearch:
    """What matching needs of a client, and nothing more.

    Attributes
    ----------
    fetch
        Asks the service one query: its suggestions (through the cache and the limit).
    cached
        The suggestions the cache holds for each query, read in bulk (``None``: not cached);
        nothing is sent and nothing counted.
    endpoint
        The endpoint's name in the client's usage counts (``suggest``, ``autocomplete``).
    usage
        The client's usage counts (requests sent, cache hits, billable requests).
    per_minute
        The client's per-minute limit on the endpoint (``None``: none).
    billable
        Whether the endpoint is charged for.
    progress
        Progress bars: ``True``, ``False`` or ``None`` (in notebooks and terminals).
    decisions
        Review decisions to apply.
    """

    fetch: Callable[[str], list[dict[str, Any]]]
    cached: Callable[[list[str]], list[list[dict[str, Any]] | None]]
    endpoint: str
    usage: Usage
    per_minute: float | None
    billable: bool
    progress: bool | None
    decisions: MatchDecisions


@dataclass(frozen=True, repr=False)
class MatchDryRun:
    """What ``match_addresses`` would send, given the cache and the decisions. Nothing was sent.

    Attributes
    ----------
    addresses, distinct, decided, blank
        Rows given, distinct address texts among them, texts a review decided already, and
        blank or non-text rows (answered without asking).
    queries, requests, cached
        Distinct queries the addresses need; those to send; those the cache answers (free).
    per_minute
        The per-minute limit sending is paced at (``None``: no limit).
    seconds
        About how long sending takes at that pace (at most).
    credits
        Billable requests among them (0: search-suggest is free; no property is bought).

    Examples
    --------
    >>> dry = MatchDryRun(addresses=3, distinct=2, decided=0, blank=1, queries=4, requests=3,
    ...                   cached=1, per_minute=30.0, seconds=6.0, credits=0)
    >>> repr(dry).split("; ")[1]
    '3 requests to send at 30 a minute (about 6 s), 1 cached (free)'
    """

    addresses: int
    distinct: int
    decided: int
    blank: int
    queries: int
    requests: int
    cached: int
    per_minute: float | None
    seconds: float
    credits: int

    def __repr__(self) -> str:
        pace = f" at {self.per_minute:g} a minute" if self.per_minute else ""
        return (
            f"<MatchDryRun: {plural(self.addresses, 'address', 'addresses')} "
            f"({self.distinct:,} distinct, {self.decided:,} decided in review, "
            f"{self.blank:,} blank); {plural(self.requests, 'request')} to send{pace} "
            f"(about {_duration(self.seconds)}), {self.cached:,} cached (free); "
            f"{plural(self.credits, 'credit')}>"
        )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def check_addresses(addresses: object) -> list[Any]:
    """The rows of ``addresses`` (a list, tuple or pandas Series), else ``InvalidInput``.

    Examples
    --------
    >>> check_addresses(["4 Mill Lane"])
    ['4 Mill Lane']
    >>> check_addresses("4 Mill Lane")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: match_addresses() takes a list ... got one str: wrap it...
    """
    if isinstance(addresses, str | bytes):
        raise InvalidInput(
            "match_addresses() takes a list or pandas Series of address texts, "
            f"got one {type(addresses).__name__}: wrap it in a list"
        )
    if isinstance(addresses, pd.Series | pd.Index):
        return list(addresses.array)
    if isinstance(addresses, list | tuple):
        return list(addresses)
    raise InvalidInput(
        "match_addresses() takes a list or pandas Series of address texts, "
        f"got {type(addresses).__name__}"
    )


@dataclass
class _Plan:
    """Every row's text (or why it has none), the decisions found, and the queries needed."""

    rows: list[str | None]
    blank_reasons: dict[int, str]
    reviewed: dict[str, Reviewed]
    read: dict[str, ReadAddress]
    queries: dict[str, list[str]]

    @property
    def distinct_queries(self) -> list[str]:
        return list(dict.fromkeys(q for qs in self.queries.values() for q in qs))


def _plan(values: Sequence[Any], decisions: MatchDecisions) -> _Plan:
    rows: list[str | None] = []
    blank: dict[int, str] = {}
    for position, value in enumerate(values):
        reason = _why_not_text(value)
        if reason is not None:
            blank[position] = reason
            rows.append(None)
        else:
            rows.append(text_key(str(value)))
    distinct = list(dict.fromkeys(row for row in rows if row is not None))
    found = decisions.get_many(distinct) if distinct else []
    reviewed = {key: done for key, done in zip(distinct, found, strict=True) if done is not None}
    read = {key: read_address(key) for key in distinct if key not in reviewed}
    queries = {key: plan_queries(typed) for key, typed in read.items()}
    return _Plan(rows, blank, reviewed, read, queries)


def _why_not_text(value: object) -> str | None:
    if isinstance(value, str):
        return None if value.strip() else "blank: no address given"
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return "empty cell: no address given"
    return f"not text ({type(value).__name__}): no address to read"


def match_addresses(
    search: AddressSearch, addresses: object, *, dry_run: bool = False
) -> pd.DataFrame | MatchDryRun:
    """Match a list of address texts to the service's properties (see the module docstring).

    Examples
    --------
    >>> df = client.match_addresses(["Flat 11, 96 Mill Lane, SE11 8TF", ""])
    >>> df["status"].tolist()
    ['matched', 'unmatched']
    """
    values = check_addresses(addresses)
    index = addresses.index if isinstance(addresses, pd.Series) else None
    plan = _plan(values, search.decisions)
    queries = plan.distinct_queries
    if dry_run:
        return _dry_run(search, plan, queries, len(values))
    usage = search.usage
    sent, hits, billed = usage.requests_sent, usage.cache_hits, usage.billable_requests
    answers: dict[str, list[Candidate]] = {}
    left_out = 0
    for query, found in zip(queries, search.cached(queries), strict=True):
        if found is not None:  # a warm cache read in bulk, counted as the normal path would
            answers[query] = candidates_of(found)
            left_out += len(found) - len(answers[query])
            usage.record_cache_hit(search.endpoint)
    to_send = [query for query in queries if query not in answers]
    with progress_bar(len(to_send), "address queries", show=search.progress) as bar:
        for query in to_send:  # one after another: the per-minute limit paces them
            found = search.fetch(query)
            answers[query] = candidates_of(found)
            left_out += len(found) - len(answers[query])
            bar.update(1)
    decided = {
        key: decide(typed, [c for q in plan.queries[key] for c in answers[q]])
        for key, typed in plan.read.items()
    }
    frame = _frame(values, plan, decided, index)
    frame.attrs.update(
        {
            "requests_sent": usage.requests_sent - sent,
            "from_cache": usage.cache_hits - hits,
            "charged": usage.billable_requests - billed,
            "decisions_applied": sum(1 for row in plan.rows if row in plan.reviewed),
            "decisions_where": search.decisions.where,
            "book": search.decisions.book,
            "queries": len(queries),
            "suggestions_left_out": left_out,
            "counts": frame["status"].value_counts().to_dict(),
        }
    )
    return frame


def _dry_run(search: AddressSearch, plan: _Plan, queries: list[str], rows: int) -> MatchDryRun:
    cached = sum(1 for found in search.cached(queries) if found is not None)
    requests = len(queries) - cached
    per_minute = search.per_minute
    seconds = 60.0 * requests / per_minute if per_minute else 0.0
    return MatchDryRun(
        addresses=rows,
        distinct=len(plan.read) + len(plan.reviewed),
        decided=len(plan.reviewed),
        blank=len(plan.blank_reasons),
        queries=len(queries),
        requests=requests,
        cached=cached,
        per_minute=per_minute,
        seconds=seconds,
        credits=requests if search.billable else 0,
    )


def _frame(
    values: list[Any], plan: _Plan, decided: dict[str, Decision], index: pd.Index | None
) -> pd.DataFrame:
    records: list[dict[str, Any]] = []
    for position, (value, key) in enumerate(zip(values, plan.rows, strict=True)):
        given = value if isinstance(value, str) else (None if value is None else str(value))
        if key is None:
            row = _row(given, "unmatched", reason=plan.blank_reasons[position])
        elif key in plan.reviewed:
            row = _reviewed_row(given, plan.reviewed[key])
        else:
            d = decided[key]
            row = _row(given, d.status, d.location_id, d.matched_address, d.score,
                       list(d.candidates), list(d.candidate_addresses), d.reason)  # fmt: skip
        records.append(row)
    frame = pd.DataFrame.from_records(records, columns=COLUMNS)
    frame["score"] = frame["score"].astype("float64")
    if index is not None:
        frame.index = index
    return frame


def _reviewed_row(given: str | None, reviewed: Reviewed) -> dict[str, Any]:
    if reviewed.held:
        return _row(given, "matched", reviewed.location_id, reviewed.matched_address, None,
                    reason=f"picked in review ({reviewed.when})")  # fmt: skip
    return _row(given, "unmatched", reason=f"not held by the service (review, {reviewed.when})")


def _row(
    given: str | None,
    status: str,
    location_id: str | None = None,
    matched_address: str | None = None,
    score: float | None = None,
    candidates: list[str] | None = None,
    candidate_addresses: list[str] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    return {
        "input": given,
        "status": status,
        "locationId": location_id,
        "matched_address": matched_address,
        "score": math.nan if score is None else score,
        "candidates": candidates or [],
        "candidate_addresses": candidate_addresses or [],
        "reason": reason,
    }
