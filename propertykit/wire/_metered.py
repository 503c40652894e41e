"""The one seam for real sends: an ``HTTPAdapter`` mounted on the session.

requests-cache answers hits itself; only a request that really goes to the network reaches the
session's adapters. So everything that must happen exactly then happens in
:class:`MeteredAdapter`, in this order:

1. with a team cache, the cache key's lock is taken and the cache read again
   (:mod:`propertykit.wire._single_flight`, which says why always): an answer another process
   stored meanwhile is returned, free, and nothing is sent;
2. a billable request takes its place in the budget (this client's, or the one shared by name,
   :mod:`propertykit.wire._shared_budget`); none left: :class:`~propertykit.errors.BudgetExceeded`,
   nothing sent;
3. the request is sent (its timeout cut to the deadline), counted in ``usage`` as soon as its
   status is in, then its body read within bounds (:mod:`propertykit.wire._bounded`):
   ``requests_sent`` always, ``billable_requests`` only for an answer the service charges (2xx
   of a billable endpoint). A 4xx/5xx answer gives the budget place back; so does a request that
   never left (refused connection, deadline passed before sending). A billable request that left
   but got no answer keeps its place and is counted billable: the service may have charged it.

The transport sends each attempt with :func:`~propertykit.wire._attempt.send_once`, which opens
one :func:`~propertykit.wire._attempt.one_attempt` around ``session.request``; the lock is held
until that ends, after requests-cache has stored the answer, so a waiter always finds it. A
redirect hop is part of its first request's attempt: no second lock, place or count. A send
outside an attempt (the session used directly) is its own attempt, counted under
:data:`~propertykit.wire._attempt.UNSCOPED` and held to the budget as billable. Each step is
called once and returns here: nothing calls back into this module during a send.
requests-cache's ``stale_while_revalidate`` sends from a thread of its own, after the call
returned: the transport refuses it with :class:`~propertykit.errors.ConfigError`.
"""

from __future__ import annotations

from typing import Any

import requests
from requests.adapters import HTTPAdapter

from propertykit.errors import BudgetExceeded
from propertykit.wire._attempt import ATTEMPT, UNSCOPED, Attempt, one_attempt
from propertykit.wire._bounded import (
    DEFAULT_MAX_BODY_BYTES,
    LIMITS,
    BoundedAdapter,
    CallLimits,
    DeadlinePassed,
    read_body,
    within_deadline,
)
from propertykit.wire._failures import never_connected
from propertykit.wire._shared_budget import Budget
from propertykit.wire._single_flight import (
    SingleFlight,
    read_again,
    stored_response,
    usable_answer,
)
from propertykit.wire._usage import Usage


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
        current = ATTEMPT.get()
        if current is None:  # the session used directly: held to the budget as billable
            with one_attempt(UNSCOPED, billable=True, shared=True, budget=self.budget):
                return self.send(request, stream=stream, **kwargs)
        limits = LIMITS.get() or CallLimits(max_body_bytes=self.max_body_bytes)
        if current.sent:  # a redirect hop: its first request's lock and place cover it
            return self._send_within(limits, request, stream, kwargs)
        key = None  # requests-cache's key, made as it made it (before the header goes)
        if self.flight is not None and self.cache is not None and current.shared:
            key = self.cache.create_key(request, verify=kwargs.get("verify", True))
        if current.known_missing:  # the hint spared requests-cache's look; it goes no further
            _restore_cache_control(request, current.caller_cache_control)
        if self.flight is not None and key is not None:
            left = None if limits.deadline is None else limits.deadline - limits.monotonic()
            current.locks.enter_context(self.flight.hold(key, left))
            if read_again(asked_fresh=_asks_fresh(request)):  # stored meanwhile? (pay once)
                found = stored_response(self.cache, key)
                if usable_answer(found):
                    return found  # type: ignore[no-any-return]
        budget = self.budget if current.billable else None
        if current.reserved is not None:
            current.reserved, current.placed = None, self.budget
        elif budget is not None:
            if not budget.take():
                raise _spent(budget, request)
            current.placed = budget
        try:
            return self._send_within(limits, request, stream, kwargs)
        except DeadlinePassed as exc:
            self._ended_without_answer(current, sent=exc.sent)
            raise
        except requests.exceptions.ConnectionError as exc:
            self._ended_without_answer(current, sent=not never_connected(exc))
            raise
        except requests.exceptions.RequestException:
            self._ended_without_answer(current, sent=True)
            raise

    def _send_within(
        self,
        limits: CallLimits,
        request: requests.PreparedRequest,
        stream: bool,
        kwargs: dict[str, Any],
    ) -> requests.Response:
        """Send within ``limits``, count the answer as soon as its status is in, then read its
        body (as :class:`~propertykit.wire._bounded.BoundedAdapter` does, with the count
        between)."""
        kwargs["timeout"] = within_deadline(kwargs.get("timeout"), limits)
        response = HTTPAdapter.send(self, request, stream=True, **kwargs)
        self.answered(response)
        if not stream:
            read_body(response, limits)
        return response

    def answered(self, response: requests.Response) -> None:
        """Count an answer as soon as its status is known (before its body is read)."""
        current = ATTEMPT.get()
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
        current.settle_place(charged=charged)


def _restore_cache_control(request: requests.PreparedRequest, caller: str | None) -> None:
    """Give the request back the ``Cache-Control`` its caller gave it (none: no such header).

    requests-cache's ``force_refresh``, which propertykit passes for a batch the bulk read just
    found missing, is documented as the request directive ``no-cache``, and requests-cache sends
    its request headers on. The service never saw that header from propertykit before: it goes
    here, after requests-cache has decided not to read, before anything leaves."""
    if caller is None:
        request.headers.pop("Cache-Control", None)
    else:
        request.headers["Cache-Control"] = caller


def _asks_fresh(request: requests.PreparedRequest) -> bool:
    """Whether the request asks for a new answer whatever is cached (requests-cache's
    ``force_refresh``/``refresh`` given by the caller, documented as these ``Cache-Control``
    directives)."""
    directives = str(request.headers.get("Cache-Control") or "").replace(" ", "").split(",")
    return "no-cache" in directives or "must-revalidate" in directives


def _spent(budget: Budget, request: requests.PreparedRequest) -> BudgetExceeded:
    path = (request.path_url or "").split("?")[0]
    whose = "Budget" if budget.name is None else f"Shared budget {budget.name!r}"
    return BudgetExceeded(
        f"{whose} of {budget.limit} billable requests is spent and {path} is not in the cache; "
        "nothing was sent. Raise budget= to continue"
    )
