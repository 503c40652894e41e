"""``client.match_addresses(addresses)``: a client's address list to location ids, never a guess.

One straight route: the list is checked (a list or Series of text, else ``InvalidInput`` before
anything is sent) -> blank and non-text rows answered ``unmatched`` -> decisions of earlier
reviews applied (:mod:`propertykit.client._match_decisions`) -> each distinct address read and
given its queries (:func:`~propertykit.client._address_queries.plan_queries`, at most three,
from the text alone) -> in rounds (at most :data:`MOST_REQUESTS`): each unsettled address's next
request, the distinct ones asked of search-suggest one after another, paced by the client's
per-minute limit (shared in Redis by a team), each answer cached like any other, then each
address decided (:func:`~propertykit.client._address_match.decide`) on everything its requests
answered -> one row per input, in order.

An address is settled when it is matched, or ambiguous among addresses shown, or its requests
are spent. Its next request is its next planned query (narrower: words every answer shows; or,
when nothing fits, looser); once they are spent, where one fitting address was on a full page
that may have left out others as good and the service pages (the autocomplete's ``offset``),
the next page. A full page is never by itself a reason to give up.

Resumable: every answer is in the cache as soon as it arrives, so a list interrupted part-way (a
restarted kernel, ``KeyboardInterrupt``, a network failure) sends, the next time, only the
requests not yet answered; a list matched before sends nothing (the rounds replay from the
cache). ``dry_run=True`` counts the first round exactly and the most the later rounds may add
(:class:`MatchDryRun`), asking the cache only. Search-suggest is free; matching buys a record only
to confirm a place the answers cannot show (:mod:`propertykit.client._address_confirm`): after
the rounds, the one fitting suggestion of each such address is looked up, all of them in batches
of the client's ordinary lookup (cached: the same list again sends nothing), unless
``confirm_places=False``; the records are kept in the frame's ``attrs["place_records"]`` so that
fetching the matched properties never buys them again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from propertykit.client._address_confirm import MOST_CONFIRMED, PlaceRecords, confirm_all
from propertykit.client._address_match import (
    MAYBE_MORE,
    Candidate,
    Decision,
    candidates_of,
    decide,
)
from propertykit.client._address_queries import plan_queries
from propertykit.client._addresses import ReadAddress, read_address
from propertykit.client._match_decisions import MatchDecisions, Reviewed, text_key
from propertykit.client._progress import progress_bar
from propertykit.errors import InvalidInput
from propertykit.text import plural
from propertykit.wire import Usage

#: The most requests asked for one address (its queries and their further pages).
MOST_REQUESTS = 3
#: Suggestions on a page of the service's answers (the next page starts there).
PAGE = 10
#: One request: a query and the offset of its page.
Request = tuple[str, int]

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
        Asks the service one query at an offset: its suggestions (through the cache and the
        limit).
    cached
        The suggestions the cache holds for each (query, offset), read in bulk (``None``: not
        cached); nothing is sent and nothing counted.
    pages
        Whether the service pages its answers (an offset parameter): a full page's next page
        can then be asked.
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
    records
        The property records of location ids (the client's ordinary lookup: batched, cached,
        billable where the service charges): to confirm a place an answer cannot show.
        ``None``: never looked up.
    records_billable, batch_size
        Whether a lookup is charged for; ids a lookup request carries at most.
    """

    fetch: Callable[[str, int], list[dict[str, Any]]]
    cached: Callable[[list[Request]], list[list[dict[str, Any]] | None]]
    endpoint: str
    usage: Usage
    per_minute: float | None
    billable: bool
    progress: bool | None
    decisions: MatchDecisions
    pages: bool = False
    records: Callable[[list[str]], list[dict[str, Any]]] | None = None
    records_billable: bool = False
    batch_size: int = 50


@dataclass(frozen=True, repr=False)
class MatchDryRun:
    """What ``match_addresses`` would send, given the cache and the decisions. Nothing was sent.

    Attributes
    ----------
    addresses, distinct, decided, blank
        Rows given, distinct address texts among them, texts a review decided already, and
        blank or non-text rows (answered without asking).
    queries, requests, cached
        Distinct first queries of the addresses; those to send; those the cache answers (free).
    later
        The most requests later rounds may add (narrower queries, further pages), asked only
        where an answer calls for one.
    per_minute
        The per-minute limit sending is paced at (``None``: no limit).
    seconds
        About how long sending takes at that pace (at most).
    credits
        Billable requests among them (0: search-suggest is free).
    lookups, lookup_requests, lookup_credits
        The most property records looked up to confirm a place the answers cannot show (an
        address typed with a postcode the answer does not carry; none where its cached first
        answer shows postcodes), the most lookup requests they take, and the most credits they
        cost where lookups are billable (a credit a record, as the sandbox charges); all 0 with
        ``confirm_places=False``. The cache may answer some.

    Examples
    --------
    >>> dry = MatchDryRun(addresses=3, distinct=2, decided=0, blank=1, queries=4, requests=3,
    ...                   cached=1, per_minute=30.0, seconds=6.0, credits=0, later=2)
    >>> for part in repr(dry).split("; ")[1].split(", "):
    ...     print(part)
    3 requests to send at 30 a minute (about 6 s)
    1 cached (free)
    at most 2 more if answers call for them
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
    later: int = 0
    lookups: int = 0
    lookup_requests: int = 0
    lookup_credits: int = 0

    def __repr__(self) -> str:
        pace = f" at {self.per_minute:g} a minute" if self.per_minute else ""
        return (
            f"<MatchDryRun: {plural(self.addresses, 'address', 'addresses')} "
            f"({self.distinct:,} distinct, {self.decided:,} decided in review, "
            f"{self.blank:,} blank); {plural(self.requests, 'request')} to send{pace} "
            f"(about {_duration(self.seconds)}), {self.cached:,} cached (free), at most "
            f"{self.later:,} more if answers call for them; {plural(self.credits, 'credit')}"
            f"{self._lookups_said()}>"
        )

    def _lookups_said(self) -> str:
        if not self.lookups:
            return ""
        return (
            f" (at most {plural(self.lookups, 'record')} looked up in at most "
            f"{plural(self.lookup_requests, 'request')}, {plural(self.lookup_credits, 'credit')}, "
            "to confirm a postcode or town the answers do not show)"
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
    def first_requests(self) -> list[Request]:
        return list(dict.fromkeys((qs[0], 0) for qs in self.queries.values() if qs))


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
    search: AddressSearch, addresses: object, *, dry_run: bool = False, confirm_places: bool = True
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
    if dry_run:
        return _dry_run(search, plan, len(values), confirm_places)
    usage = search.usage
    sent, hits, billed = usage.requests_sent, usage.cache_hits, usage.billable_requests
    answers: dict[Request, list[Candidate]] = {}
    left_out = 0
    asked: dict[str, list[Request]] = {key: [] for key in plan.read}
    decided: dict[str, Decision] = {}
    pending = {key: _next_request(search, plan.queries[key], [], None, {}) for key in plan.read}
    most = sum(min(MOST_REQUESTS, len(qs) if not search.pages else MOST_REQUESTS)
               for qs in plan.queries.values() if qs)  # fmt: skip
    with progress_bar(most, "address queries (at most)", show=search.progress) as bar:
        for _ in range(MOST_REQUESTS):
            wanted = {key: request for key, request in pending.items() if request is not None}
            if not wanted:
                break
            left_out += _ask(search, list(dict.fromkeys(wanted.values())), answers, bar)
            for key, request in wanted.items():
                asked[key].append(request)
            pending = {}
            for key in wanted:
                found = [c for request in asked[key] for c in answers[request]]
                decided[key] = decide(plan.read[key], found)
                pending[key] = _next_request(
                    search, plan.queries[key], asked[key], decided[key], answers
                )
    for key, typed in plan.read.items():
        if key not in decided:  # nothing to ask (no postcode, no street)
            decided[key] = decide(typed, [])
    records: dict[str, dict[str, Any]] = {}
    looked_up = lookup_requests = 0
    if confirm_places and search.records is not None:
        suggested = {key: [c for request in asked[key] for c in answers[request]] for key in asked}
        before = usage.requests_sent
        records, looked_up = confirm_all(search.records, plan.read, suggested, decided)
        lookup_requests = usage.requests_sent - before
    frame = _frame(values, plan, decided, index)
    frame.attrs.update(
        {
            "requests_sent": usage.requests_sent - sent,
            "from_cache": usage.cache_hits - hits,
            "charged": usage.billable_requests - billed,
            "decisions_applied": sum(1 for row in plan.rows if row in plan.reviewed),
            "decisions_where": search.decisions.where,
            "book": search.decisions.book,
            "queries": len(answers),
            "suggestions_left_out": left_out,
            "records_looked_up": looked_up,
            "lookup_requests_sent": lookup_requests,
            "place_records": PlaceRecords(records),
            "counts": frame["status"].value_counts().to_dict(),
        }
    )
    return frame


def _ask(
    search: AddressSearch,
    requests: list[Request],
    answers: dict[Request, list[Candidate]],
    bar: Any,
) -> int:
    """Answer ``requests`` (the cache first, read in bulk; then the service, one after another);
    the suggestions left out as unusable."""
    left_out = 0
    requests = [request for request in requests if request not in answers]
    for request, found in zip(requests, search.cached(requests), strict=True):
        if found is not None:  # a warm cache read in bulk, counted as the normal path would
            answers[request] = candidates_of(found, request[0])
            left_out += len(found) - len(answers[request])
            search.usage.record_cache_hit(search.endpoint)
    to_send = [request for request in requests if request not in answers]
    for request in to_send:  # one after another: the per-minute limit paces them
        found = search.fetch(*request)
        answers[request] = candidates_of(found, request[0])
        left_out += len(found) - len(answers[request])
        bar.update(1)
    return left_out


def _next_request(
    search: AddressSearch,
    queries: list[str],
    asked: list[Request],
    decision: Decision | None,
    answers: dict[Request, list[Candidate]],
) -> Request | None:
    """The next request for an address, or ``None`` when it is settled or its budget spent."""
    if len(asked) >= MOST_REQUESTS:
        return None
    if decision is None:
        return (queries[0], 0) if queries else None
    if decision.status == "matched":
        return None
    if decision.status == "ambiguous" and decision.reason != MAYBE_MORE:
        return None
    spent = {query for query, _ in asked}
    remaining = [query for query in queries if query not in spent]
    if remaining:  # a narrower question (or, when nothing fits, a looser one)
        return (remaining[0], 0)
    if decision.reason == MAYBE_MORE and search.pages:
        full = [r for r in asked if len(answers[r]) >= PAGE and (r[0], r[1] + PAGE) not in asked]
        if full:
            query, offset = full[-1]
            return (query, offset + PAGE)
    return None


def _dry_run(search: AddressSearch, plan: _Plan, rows: int, confirm_places: bool) -> MatchDryRun:
    first = plan.first_requests
    answered = dict(zip(first, search.cached(first), strict=True))
    cached = sum(1 for found in answered.values() if found is not None)
    requests = len(first) - cached
    later = sum(min(MOST_REQUESTS, len(qs) if not search.pages else MOST_REQUESTS) - 1
                for qs in plan.queries.values() if qs)  # fmt: skip
    per_minute = search.per_minute
    seconds = 60.0 * requests / per_minute if per_minute else 0.0
    placed = 0  # addresses typed with a place, unless their cached answer shows postcodes
    if confirm_places and search.records is not None:
        placed = sum(1 for key, qs in plan.queries.items()
                      if qs and (plan.read[key].postcode or plan.read[key].places)
                      and not _shows_postcodes(answered.get((qs[0], 0)), qs[0]))  # fmt: skip
    lookups = MOST_CONFIRMED * placed  # the records of each, one a round
    return MatchDryRun(
        addresses=rows,
        distinct=len(plan.read) + len(plan.reviewed),
        decided=len(plan.reviewed),
        blank=len(plan.blank_reasons),
        queries=len(first),
        requests=requests,
        cached=cached,
        per_minute=per_minute,
        seconds=seconds,
        credits=requests if search.billable else 0,
        later=later,
        lookups=lookups,
        lookup_requests=MOST_CONFIRMED * math.ceil(placed / max(search.batch_size, 1)),
        lookup_credits=lookups if search.records_billable else 0,
    )


def _shows_postcodes(found: list[dict[str, Any]] | None, query: str) -> bool:
    """Whether a cached answer shows its suggestions' postcodes (then no record is needed)."""
    return bool(found) and all(c.read.postcode for c in candidates_of(found or [], query))


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
