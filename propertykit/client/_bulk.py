"""Lookups of many ids: batches run a few at a time, resumable, and priced before they run.

:func:`run_batches` sends the batches of one ``client.properties(...)`` / ``client.sources(...)``
call with at most ``max_in_flight`` requests on their way at once (threads sharing the client's
session), updates a progress bar, and keeps the records in batch order whatever order they
arrive in.

Checkpoints are the HTTP cache. Batch boundaries depend only on the ids and the settings, so
calling the same lookup again after an interruption (a daily cap, a restarted kernel) answers
every finished batch, and every finished page of a batch, from the cache for free, and sends
only what is left: nothing is paid for twice. When a batch fails, the runner stops starting new
ones, lets those on their way finish, and raises the first failure with ``.partial``: every
record fetched so far and the ids still to fetch (see :class:`~propertykit.client.PartialResult`).

:class:`DryRun` is what ``dry_run=True`` returns: how many requests (and billable requests) the
call would send given what is already cached, found by asking the cache only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from typing import Any

from propertykit.client._partial import PartialResult
from propertykit.errors import PropertyKitError

#: Requests on their way at once, unless ``pk.Client(max_in_flight=...)`` says otherwise.
DEFAULT_MAX_IN_FLIGHT = 4

Record = dict[str, Any]


@dataclass(frozen=True)
class Batch:
    """One request's worth of ids (``index`` is its place in the call) and its path."""

    index: int
    ids: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class PagePlan:
    """What one batch would cost: answers in the cache, and requests to send (at least/most)."""

    cached: int
    to_send: int
    to_send_at_most: int | None


@dataclass(frozen=True, repr=False)
class DryRun:
    """What a lookup would send, given what is already cached. Nothing was sent to find out.

    Attributes
    ----------
    endpoint
        ``"properties"`` or ``"sources"``.
    ids, batches
        Distinct ids asked for, and the requests (batches) they make.
    requests
        Requests that would go over the network. For sources, a batch not yet cached is
        counted as one page: how many pages it has is known only once it is fetched.
    requests_at_most
        An upper bound (at most one record per id, ``page_size`` per page); ``None`` when the
        page size is the service's default, which the service does not state.
    billable_requests, billable_requests_at_most
        The same for billable endpoints (what ``budget`` caps); 0 when the endpoint is free.
    cached
        Answers the cache already holds (free).
    budget_left
        Billable requests the client's ``budget`` still allows (``None``: no budget).

    Examples
    --------
    >>> DryRun("properties", ids=120, batches=3, requests=1, requests_at_most=1,
    ...        billable_requests=1, billable_requests_at_most=1, cached=2, budget_left=None)
    <DryRun properties: 120 ids in 3 batches; 1 request to send (1 billable), 2 cached (free)>
    """

    endpoint: str
    ids: int
    batches: int
    requests: int
    requests_at_most: int | None
    billable_requests: int
    billable_requests_at_most: int | None
    cached: int
    budget_left: int | None

    @property
    def exact(self) -> bool:
        """Whether ``requests`` is exact (no page count left unknown)."""
        return self.requests_at_most == self.requests

    @property
    def fits_budget(self) -> bool | None:
        """Whether the billable requests surely fit the budget (``None``: no budget)."""
        if self.budget_left is None:
            return None
        most = self.billable_requests_at_most
        return most is not None and most <= self.budget_left

    def __repr__(self) -> str:
        count = f"{self.requests:,}"
        if not self.exact:
            most = "?" if self.requests_at_most is None else f"{self.requests_at_most:,}"
            count = f"{count} to {most}"
        plural = "" if self.requests == 1 and self.exact else "s"
        text = (
            f"<DryRun {self.endpoint}: {self.ids:,} ids in {self.batches:,} batches; "
            f"{count} request{plural} to send ({self.billable_requests:,} billable), "
            f"{self.cached:,} cached (free)"
        )
        if self.budget_left is not None:
            text += f"; budget left {self.budget_left:,}"
        return text + ">"


def plan(
    batches: Sequence[Batch],
    probe: Callable[[Batch], PagePlan],
    *,
    endpoint: str,
    billable: bool,
    budget_left: int | None,
) -> DryRun:
    """Add up each batch's :class:`PagePlan` (``probe`` asks the cache only) into a DryRun.

    Examples
    --------
    >>> batches = [Batch(0, ("a", "b"), "/p/a,b"), Batch(1, ("c",), "/p/c")]
    >>> probe = lambda batch: PagePlan(cached=batch.index, to_send=1 - batch.index,
    ...                                to_send_at_most=1 - batch.index)
    >>> plan(batches, probe, endpoint="properties", billable=True, budget_left=None).requests
    1
    """
    plans = [probe(batch) for batch in batches]
    requests = sum(p.to_send for p in plans)
    unknown = any(p.to_send_at_most is None for p in plans)
    at_most = None if unknown else sum(p.to_send_at_most or 0 for p in plans)
    return DryRun(
        endpoint=endpoint,
        ids=sum(len(batch.ids) for batch in batches),
        batches=len(batches),
        requests=requests,
        requests_at_most=at_most,
        billable_requests=requests if billable else 0,
        billable_requests_at_most=at_most if billable else 0,
        cached=sum(p.cached for p in plans),
        budget_left=budget_left,
    )


def run_batches(
    batches: Sequence[Batch],
    fetch: Callable[[Batch], list[Record]],
    *,
    max_in_flight: int,
    progress: Callable[[], Any],
    stop: Callable[[], bool] | None = None,
) -> list[Record]:
    """Fetch every batch, at most ``max_in_flight`` at once; the records in batch order.

    Parameters
    ----------
    batches
        The call's batches, in order.
    fetch
        Fetches one batch (called from worker threads). A failure part-way may carry
        ``.partial`` with the records of the pages fetched and ``resume_offset``.
    max_in_flight
        Most batches on their way at once; 1 runs them one after another in this thread.
    progress
        Opens the call's bar (a tqdm-like context manager, e.g. ``partial(progress_bar, ...)``):
        opened, moved on by one per batch done, and closed here, in one place.
    stop
        Asked before starting each batch; ``True`` starts no more (e.g. ``max_results`` met).

    Raises
    ------
    PropertyKitError
        The failure of the earliest failed batch, with ``.partial``: the records of every
        batch (and page) fetched, ``remaining_ids`` of every batch not finished, in order, and
        ``resume_offset`` of the first of them.

    Examples
    --------
    >>> batches = [Batch(i, (str(i),), f"/p/{i}") for i in range(5)]
    >>> class Bar:
    ...     def __enter__(self): return self
    ...     def __exit__(self, *exc_info): pass
    ...     def update(self, n): pass
    >>> run_batches(batches, lambda b: [{"id": b.ids[0]}], max_in_flight=2, progress=Bar)[-1]
    {'id': '4'}
    """
    done: dict[int, list[Record]] = {}
    failed: dict[int, PropertyKitError] = {}
    with progress() as bar:
        if max_in_flight <= 1 or len(batches) <= 1:
            for batch in batches:
                if stop is not None and stop():
                    break
                if not _settle(batch, partial(fetch, batch), done, failed):
                    break
                bar.update(1)
        else:
            _run_pooled(batches, fetch, max_in_flight, bar, stop, done, failed)
    if failed:
        raise _with_partial(batches, done, failed)
    return [record for index in sorted(done) for record in done[index]]


def _run_pooled(
    batches: Sequence[Batch],
    fetch: Callable[[Batch], list[Record]],
    max_in_flight: int,
    progress: Any,
    stop: Callable[[], bool] | None,
    done: dict[int, list[Record]],
    failed: dict[int, PropertyKitError],
) -> None:
    waiting = iter(batches)
    running: dict[Future[list[Record]], Batch] = {}
    with ThreadPoolExecutor(max_workers=max_in_flight, thread_name_prefix="propertykit") as pool:

        def start_more() -> None:
            while len(running) < max_in_flight and not failed:
                if stop is not None and stop():
                    return
                batch = next(waiting, None)
                if batch is None:
                    return
                running[pool.submit(fetch, batch)] = batch

        try:
            start_more()
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    batch = running.pop(future)
                    if _settle(batch, future.result, done, failed):
                        progress.update(1)
                start_more()
        except BaseException:
            # An interrupted kernel: start nothing more; what is on its way lands in the cache.
            for future in running:
                future.cancel()
            raise


def _settle(
    batch: Batch,
    result: Callable[[], list[Record]],
    done: dict[int, list[Record]],
    failed: dict[int, PropertyKitError],
) -> bool:
    """File a batch's records or its failure; ``True`` when it succeeded."""
    try:
        done[batch.index] = result()
    except PropertyKitError as exc:
        failed[batch.index] = exc
        return False
    return True


def _with_partial(
    batches: Sequence[Batch],
    done: dict[int, list[Record]],
    failed: dict[int, PropertyKitError],
) -> PropertyKitError:
    first = min(failed)
    error = failed[first]
    records: list[Record] = []
    remaining: list[str] = []
    for batch in batches:
        if batch.index in done:
            records.extend(done[batch.index])
            continue
        remaining.extend(batch.ids)
        partial = failed[batch.index].partial if batch.index in failed else None
        if partial is not None:
            records.extend(partial.records)  # pages fetched before the batch failed
    offset = error.partial.resume_offset if error.partial is not None else None
    error.partial = PartialResult(records=records, remaining_ids=remaining, resume_offset=offset)
    return error
