"""What a client has spent and saved: requests sent, cache hits, billable requests, per endpoint."""

from __future__ import annotations

import html
import threading
from dataclasses import dataclass, fields

import pandas as pd


@dataclass
class _Counts:
    requests_sent: int = 0
    cache_hits: int = 0
    billable_requests: int = 0
    retries: int = 0
    errors: int = 0
    answers_not_stored: int = 0


class Usage:
    """Counts of one client's traffic, overall and per endpoint.

    ``requests_sent`` counts requests that went over the network (every attempt, retries
    included); ``cache_hits`` answers served from the cache, which cost nothing;
    ``billable_requests`` answers the service charges: 2xx answers of billable endpoints
    (property lookups and purchases; a 4xx/5xx is not charged), and requests to them that left
    but got no answer (the service may have charged those); the number a ``budget`` caps.
    ``by_endpoint`` is the same as a table.
    Safe to update from several threads: ``lock`` guards every count.

    Examples
    --------
    >>> usage = Usage()
    >>> usage.record_sent("properties", billable=True)
    >>> usage.record_cache_hit("properties")
    >>> print(usage)
    1 request sent (1 billable), 1 cache hit (50% of answers free), 0 retries, 0 errors
    """

    def __init__(self, budget: int | None = None) -> None:
        self.budget = budget
        self.lock = threading.RLock()
        self._by_endpoint: dict[str, _Counts] = {}

    # -- recording (called by the transport) ------------------------------------------------------

    def record_sent(self, endpoint: str, *, billable: bool) -> None:
        """Count one request sent over the network."""
        with self.lock:
            counts = self._counts(endpoint)
            counts.requests_sent += 1
            if billable:
                counts.billable_requests += 1

    def record_charged(self, endpoint: str) -> None:
        """Count one answer the service charges (a 2xx of a billable endpoint)."""
        with self.lock:
            self._counts(endpoint).billable_requests += 1

    def record_not_stored(self, endpoint: str) -> None:
        """Count one answer paid for that the cache could not store."""
        with self.lock:
            self._counts(endpoint).answers_not_stored += 1

    def record_cache_hit(self, endpoint: str) -> None:
        """Count one answer served from the cache."""
        with self.lock:
            self._counts(endpoint).cache_hits += 1

    def record_retry(self, endpoint: str) -> None:
        """Count one retry decided after a failure."""
        with self.lock:
            self._counts(endpoint).retries += 1

    def record_error(self, endpoint: str) -> None:
        """Count one call that ended in an error."""
        with self.lock:
            self._counts(endpoint).errors += 1

    # -- reading ----------------------------------------------------------------------------------

    @property
    def requests_sent(self) -> int:
        """Requests that went over the network, retries included."""
        return self._total("requests_sent")

    @property
    def cache_hits(self) -> int:
        """Answers served from the cache (free)."""
        return self._total("cache_hits")

    @property
    def billable_requests(self) -> int:
        """Charged answers of billable endpoints (what ``budget`` caps)."""
        return self._total("billable_requests")

    @property
    def retries(self) -> int:
        """Retries after 5xx answers, short 429s and network failures."""
        return self._total("retries")

    @property
    def errors(self) -> int:
        """Calls that ended in an error."""
        return self._total("errors")

    @property
    def answers_not_stored(self) -> int:
        """Answers paid for that the cache could not store (disk full...): asking again pays."""
        return self._total("answers_not_stored")

    @property
    def budget_left(self) -> int | None:
        """Billable requests still allowed by ``budget`` (``None``: no budget)."""
        if self.budget is None:
            return None
        return max(0, self.budget - self.billable_requests)

    @property
    def by_endpoint(self) -> pd.DataFrame:
        """One row per endpoint used, one column per count, plus a ``total`` row.

        Examples
        --------
        >>> usage = Usage()
        >>> usage.record_sent("health", billable=False)
        >>> usage.by_endpoint.loc["health", "requests_sent"]
        np.int64(1)
        """
        names = [f.name for f in fields(_Counts)]
        with self.lock:
            rows = {
                endpoint: [getattr(counts, name) for name in names]
                for endpoint, counts in sorted(self._by_endpoint.items())
            }
            rows["total"] = [self._total(name) for name in names]
        table = pd.DataFrame.from_dict(rows, orient="index", columns=names, dtype="int64")
        table.index.name = "endpoint"
        return table

    def __str__(self) -> str:
        sent, hits = self.requests_sent, self.cache_hits
        answers = sent + hits
        share = f" ({hits / answers:.0%} of answers free)" if answers else ""
        text = (
            f"{sent} request{'s' if sent != 1 else ''} sent ({self.billable_requests} billable), "
            f"{hits} cache hit{'s' if hits != 1 else ''}{share}, "
            f"{self.retries} retr{'ies' if self.retries != 1 else 'y'}, "
            f"{self.errors} error{'s' if self.errors != 1 else ''}"
        )
        if self.answers_not_stored:
            text += f", {self.answers_not_stored} not stored in the cache"
        if self.budget is not None:
            text += f"; budget {self.billable_requests}/{self.budget} billable requests"
        return text

    def __repr__(self) -> str:
        return f"<Usage: {self}>"

    def _repr_html_(self) -> str:
        table = self.by_endpoint.to_html(border=0)
        return (
            f"<div><p><strong>propertykit usage</strong>: {html.escape(str(self))}</p>{table}</div>"
        )

    def _total(self, name: str) -> int:
        with self.lock:
            return sum(getattr(counts, name) for counts in self._by_endpoint.values())

    def _counts(self, endpoint: str) -> _Counts:
        return self._by_endpoint.setdefault(endpoint, _Counts())
