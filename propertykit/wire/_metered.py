"""The one seam for real sends: an ``HTTPAdapter`` mounted on the session.

requests-cache answers hits itself; only a request that really goes to the network reaches the
session's adapters. So everything that must happen exactly then happens in
:class:`MeteredAdapter`, in this order:

1. with a team cache, the cache key's lock is taken (:mod:`propertykit.wire._single_flight`), and
   the cache read again: another process may have stored the answer while we waited (then it is
   returned, free, and nothing is sent);
2. a billable request takes its place in the budget (this client's, or the one shared by name,
   :mod:`propertykit.wire._shared_budget`); none left: :class:`~propertykit.errors.BudgetExceeded`,
   nothing sent;
3. the request is sent (and its body read within bounds, :class:`~propertykit.wire._bounded.
   BoundedAdapter`), and counted in ``usage``: ``requests_sent`` always, ``billable_requests``
   only for an answer the service charges (2xx of a billable endpoint). A 4xx/5xx answer gives
   the budget place back; so does a request that never left (refused connection, deadline passed
   before sending). A billable request that left but got no answer keeps its place and is counted
   billable: the service may have charged it.

The transport opens one :func:`one_attempt` around each ``session.request``; the lock is held until
that ends, after requests-cache has stored the answer, so a waiter always finds it. A redirect
hop is part of its first request's attempt: no second lock, place or count. A send outside an
attempt (the session used directly) is its own attempt, counted under :data:`UNSCOPED` and held
to the budget as billable. requests-cache's ``stale_while_revalidate`` sends from a thread of its
own, after the call returned: the transport refuses it with
:class:`~propertykit.errors.ConfigError`.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import requests

from propertykit.errors import BudgetExceeded
from propertykit.wire._bounded import (
    DEFAULT_MAX_BODY_BYTES,
    BoundedAdapter,
    DeadlinePassed,
    time_left,
)
from propertykit.wire._failures import never_connected
from propertykit.wire._shared_budget import SharedBudget
from propertykit.wire._single_flight import SingleFlight, stored_response
from propertykit.wire._usage import Usage

#: The endpoint name a send is counted under when the session is used directly.
UNSCOPED = "other"


class LocalBudget:
    """This client's own ``budget``: places taken by requests on their way or charged.

    A thread finding every place taken by requests still on their way waits for them: one that
    is not charged gives its place back.

    Examples
    --------
    >>> budget = LocalBudget(1)
    >>> budget.take()  # a request on its way holds the one place
    True
    >>> budget.give_back()  # its answer was not charged (a 503)
    >>> budget.take()
    True
    >>> budget.keep()  # this one was charged: the place stays taken
    >>> budget.take()
    False
    """

    name: str | None = None

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.taken = 0
        self.pending = 0
        self._changed = threading.Condition()

    def take(self) -> bool:
        """Take one place; ``False`` (nothing taken) when every place is charged."""
        with self._changed:
            while self.pending and self.taken >= self.limit:
                self._changed.wait()
            if self.taken >= self.limit:
                return False
            self.taken += 1
            self.pending += 1
            return True

    def keep(self) -> None:
        """The request holding a place was charged (or may have been): it stays taken."""
        with self._changed:
            self.pending -= 1
            self._changed.notify_all()

    def give_back(self) -> None:
        """The request holding a place was not charged: the place is free again."""
        with self._changed:
            self.pending -= 1
            self.taken -= 1
            self._changed.notify_all()


Budget = LocalBudget | SharedBudget


@dataclass
class Attempt:
    """One attempt of the transport: what it is, and what the adapter did for it."""

    endpoint: str
    billable: bool
    shared: bool = False
    reserved: LocalBudget | None = None
    sent: bool = False
    settled: bool = False
    placed: Budget | None = None
    locks: ExitStack = field(default_factory=ExitStack)


_ATTEMPT: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar(
    "propertykit_attempt", default=None
)


@contextmanager
def one_attempt(
    endpoint: str, *, billable: bool, shared: bool, budget: object = None
) -> Iterator[Attempt]:
    """One attempt through the session: the adapter's lock is released when it ends.

    ``shared``: a read other processes may ask for too (it takes the cache key's lock). With a
    :class:`LocalBudget`, a billable attempt reserves its place now, so the threads of a bulk
    lookup are served in the order they asked; a cache hit gives it back.
    """
    current = Attempt(endpoint, billable, shared)
    if billable and isinstance(budget, LocalBudget) and budget.take():
        current.reserved = budget
    token = _ATTEMPT.set(current)
    try:
        with current.locks:
            yield current
    finally:
        _ATTEMPT.reset(token)
        if current.reserved is not None:  # never sent: answered from the cache
            current.reserved.give_back()
        _settle_place(current, charged=False)  # left with no final answer (redirects...)


def _settle_place(current: Attempt, *, charged: bool) -> None:
    """Keep the attempt's place in its budget (charged), or give it back."""
    budget, current.placed = current.placed, None
    if budget is None:
        return
    if not charged:
        budget.give_back()
    elif isinstance(budget, LocalBudget):
        budget.keep()


class MeteredAdapter(BoundedAdapter):
    """The session's adapter: lock, budget place and counts for every real send.

    Parameters
    ----------
    usage
        Where sends and charged answers are counted.
    max_body_bytes, **kwargs
        As :class:`~propertykit.wire._bounded.BoundedAdapter`.

    Attributes
    ----------
    cache
        The session's cache (read again after waiting for a lock), or ``None``.
    flight
        One fetch per cache key across processes, or ``None``.
    budget
        The budget billable sends take places in, or ``None``.
    """

    def __init__(
        self, usage: Usage, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, **kwargs: Any
    ) -> None:
        super().__init__(max_body_bytes, **kwargs)
        self.usage = usage
        self.cache: Any = None
        self.flight: SingleFlight | None = None
        self.budget: Budget | None = None

    def send(  # type: ignore[override]
        self, request: requests.PreparedRequest, stream: bool = False, **kwargs: Any
    ) -> requests.Response:
        current = _ATTEMPT.get()
        if current is None:  # the session used directly: held to the budget as billable
            with one_attempt(UNSCOPED, billable=True, shared=True, budget=self.budget):
                return self.send(request, stream=stream, **kwargs)
        if current.sent:  # a redirect hop: its first request's lock and place cover it
            return super().send(request, stream=stream, **kwargs)
        if self.flight is not None and self.cache is not None and current.shared:
            refresh = _asks_fresh(request)
            key = self.cache.create_key(request, verify=kwargs.get("verify", True))
            current.locks.enter_context(self.flight.hold(key, time_left()))
            fresh = None if refresh else stored_response(self.cache, key)  # stored meanwhile?
            if fresh is not None and not fresh.is_expired and "Vary" not in fresh.headers:
                return fresh  # type: ignore[no-any-return]
        budget = self.budget if current.billable else None
        if current.reserved is not None:
            current.reserved, current.placed = None, self.budget
        elif budget is not None:
            if not budget.take():
                raise _spent(budget, request)
            current.placed = budget
        try:
            return super().send(request, stream=stream, **kwargs)
        except DeadlinePassed as exc:
            self._ended_without_answer(current, sent=exc.sent)
            raise
        except requests.exceptions.ConnectionError as exc:
            self._ended_without_answer(current, sent=not never_connected(exc))
            raise
        except requests.exceptions.RequestException:
            self._ended_without_answer(current, sent=True)
            raise

    def answered(self, response: requests.Response) -> None:
        """Count an answer as soon as its status is known (before its body is read)."""
        current = _ATTEMPT.get()
        if current is None or current.settled:
            return
        if not current.sent:
            current.sent = True
            self.usage.record_sent(current.endpoint, billable=False)
        if 300 <= response.status_code < 400 and response.is_redirect:
            return  # the hop it leads to is answered next
        charged = current.billable and 200 <= response.status_code < 300
        if charged:
            self.usage.record_charged(current.endpoint)
        self._settle(current, charged)

    def _ended_without_answer(self, current: Attempt, *, sent: bool) -> None:
        if current.settled:
            return  # answered already (e.g. a body cut off after its 200)
        if not sent:
            self._settle(current, False)
            return
        if not current.sent:
            current.sent = True
            self.usage.record_sent(current.endpoint, billable=False)
        if current.billable:  # it left and got no answer: the service may have charged it
            self.usage.record_charged(current.endpoint)
        self._settle(current, current.billable)

    def _settle(self, current: Attempt, charged: bool) -> None:
        current.settled = True
        _settle_place(current, charged=charged)


def _asks_fresh(request: requests.PreparedRequest) -> bool:
    """Whether the request asks for a new answer whatever is cached (requests-cache's
    ``force_refresh``/``refresh``, documented as these ``Cache-Control`` directives)."""
    directives = str(request.headers.get("Cache-Control") or "").replace(" ", "").split(",")
    return "no-cache" in directives or "must-revalidate" in directives


def _spent(budget: Budget, request: requests.PreparedRequest) -> BudgetExceeded:
    path = (request.path_url or "").split("?")[0]
    whose = "Budget" if budget.name is None else f"Shared budget {budget.name!r}"
    return BudgetExceeded(
        f"{whose} of {budget.limit} billable requests is spent and {path} is not in the cache; "
        "nothing was sent. Raise budget= to continue"
    )
