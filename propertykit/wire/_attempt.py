"""One attempt through the session, and what the transport learns from it in one result.

:func:`send_once` is the transport's one call per attempt: it opens the attempt (:func:`
one_attempt`: the budget place a billable read reserves, the single-flight lock the adapter
takes), sends through the session (requests-cache, then the suggest limit, then the
:class:`~propertykit.wire._metered.MeteredAdapter`), and returns a :class:`Sent`: the response,
whether a 200 is whole usable JSON, why not, and the body as parsed.

requests-cache asks :func:`is_complete_answer` (its documented ``filter_fn``) whether to store a
200: only a body that is complete JSON and passes the call's check (:data:`BODY_CHECK`, set by the
transport for the whole call) is stored. It is parsed once, there, and kept on the response.

The attempt ends after requests-cache has stored the answer, so the lock is released only then
and a waiter always finds it. A redirect hop is part of its first request's attempt. A send
outside an attempt (the session used directly) is its own attempt, counted under
:data:`UNSCOPED`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.structures import CaseInsensitiveDict

from propertykit import jsonio as fast_json
from propertykit.errors import BadResponse
from propertykit.wire._shared_budget import Budget, LocalBudget

#: The endpoint name a send is counted under when the session is used directly.
UNSCOPED = "other"
#: Characters of a body quoted in an error about it.
BODY_START_CHARS = 200

BodyCheck = Callable[[Any], None]
"""Checks a parsed body; raises ``ValueError`` (saying why) when it cannot be used."""

#: The check a 200 body must pass to be stored, for the call in progress (set by the transport).
BODY_CHECK: contextvars.ContextVar[BodyCheck | None] = contextvars.ContextVar(
    "propertykit_body_check", default=None
)

_PARSED = "_propertykit_json"
_UNUSABLE = "_propertykit_unusable"
_NOTHING = object()


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
    #: The caller had just found no answer in the cache (in bulk): the session does not look
    known_missing: bool = False
    #: The ``Cache-Control`` header the caller gave the request (``None``: none)
    caller_cache_control: str | None = None

    def settle_place(self, *, charged: bool) -> None:
        """Keep the attempt's place in its budget (charged), or give it back."""
        budget, self.placed = self.placed, None
        if budget is None:
            return
        if not charged:
            budget.give_back()
        elif isinstance(budget, LocalBudget):
            budget.keep()


#: The attempt in progress in this thread (and context), read by the adapter.
ATTEMPT: contextvars.ContextVar[Attempt | None] = contextvars.ContextVar(
    "propertykit_attempt", default=None
)


@contextmanager
def one_attempt(
    endpoint: str, *, billable: bool, shared: bool, budget: object = None
) -> Iterator[Attempt]:
    """One attempt through the session: the adapter's lock is released when it ends.

    ``shared``: a read other processes may ask for too (it takes the cache key's lock). With a
    :class:`~propertykit.wire._shared_budget.LocalBudget`, a billable attempt reserves its place
    now, so the threads of a bulk lookup are served in the order they asked; a cache hit gives
    it back.
    """
    current = Attempt(endpoint, billable, shared)
    if billable and isinstance(budget, LocalBudget) and budget.take():
        current.reserved = budget
    token = ATTEMPT.set(current)
    try:
        with current.locks:
            yield current
    finally:
        ATTEMPT.reset(token)
        if current.reserved is not None:  # never sent: answered from the cache
            current.reserved.give_back()
        current.settle_place(charged=False)  # left with no final answer (redirects...)


@dataclass(frozen=True)
class Sent:
    """What one attempt brought back.

    ``complete``: not a 200 from the network, or a 200 whose body is whole usable JSON (the
    only 200s stored). ``unusable``: why a complete 200 cannot be used (``None``: it can, or it
    was cut off). ``body``: the body as parsed on arrival (when ``parsed``).
    """

    response: requests.Response
    complete: bool
    unusable: str | None
    parsed: bool
    body: Any


def send_once(
    session: Any,
    method: str,
    url: str,
    *,
    endpoint: str,
    billable: bool,
    shared: bool,
    budget: object,
    known_missing: bool = False,
    **request: Any,
) -> Sent:
    """One attempt: ``session.request(method, url, **request)`` within :func:`one_attempt`.

    ``shared``: a read (a ``GET``, or a ``POST`` that only reads), which other processes may
    ask for too; only a read's 200 is judged complete or not. ``known_missing``: the caller
    has just found no answer to it in the cache; the session does not look again
    (requests-cache's ``force_refresh``, whose ``Cache-Control`` header the adapter takes off
    before sending). Under the single-flight lock the cache is read again all the same (see
    :mod:`propertykit.wire._single_flight`).
    """
    if known_missing:
        request["force_refresh"] = True
    with one_attempt(endpoint, billable=billable, shared=shared, budget=budget) as current:
        current.known_missing = known_missing
        current.caller_cache_control = CaseInsensitiveDict(request.get("headers") or {}).get(
            "Cache-Control"
        )
        response = session.request(method, url, **request)
    complete = not shared or is_complete_answer(response)  # a read: whole usable JSON?
    body = getattr(response, _PARSED, _NOTHING)
    unusable = getattr(response, _UNUSABLE, None)
    parsed = body is not _NOTHING
    return Sent(response, complete, unusable, parsed, body if parsed else None)


def is_complete_answer(response: requests.Response) -> bool:
    """requests-cache filter: store a 200 only when its body is whole, usable JSON.

    Usable: it parses, and passes the check in force (:data:`BODY_CHECK`), e.g. an envelope
    with a list of records. The parsed body is kept on the response so it is not parsed twice;
    why a complete body is unusable is kept too (see :class:`Sent`).
    """
    if getattr(response, "from_cache", False) or response.status_code != 200:
        return True
    if hasattr(response, _PARSED):
        return True
    if hasattr(response, _UNUSABLE):
        return False
    content = response.content
    length = response.headers.get("Content-Length")
    if (
        length is not None
        and "Content-Encoding" not in response.headers
        and (not length.isdigit() or int(length) != len(content))
    ):
        return False  # cut off: not unusable, just not all there
    try:
        body = fast_json.loads(content)
    except RecursionError:
        setattr(response, _UNUSABLE, "the body is JSON nested too deeply to read")
        return False
    except ValueError as exc:
        setattr(response, _UNUSABLE, f"the body is not JSON ({_short(exc)})")
        return False
    check = BODY_CHECK.get()
    if check is not None:
        try:
            check(body)
        except ValueError as exc:
            setattr(response, _UNUSABLE, str(exc))
            return False
    setattr(response, _PARSED, body)
    return True


def bad_response(
    response: requests.Response, reason: str, redact: Callable[[str], str] = str
) -> BadResponse:
    """A :class:`BadResponse` saying ``reason``, the status and how the body starts."""
    start = redact(response.content[:BODY_START_CHARS].decode("utf-8", "replace"))
    url = redact(response.url or "")
    return BadResponse(
        f"The service answered {response.status_code} at {url}, but {reason}; not retried "
        f"(the same request would pay for the same answer). The body starts: {start!r}",
        url=url,
        status_code=response.status_code,
        body_start=start,
    )


def parsed_body(response: requests.Response) -> Any:
    """The response's JSON body: as parsed by :func:`is_complete_answer`, else parsed now.

    Raises :class:`BadResponse` when it is not JSON (e.g. a cache entry written before).
    """
    if hasattr(response, _PARSED):
        return getattr(response, _PARSED)
    try:
        return fast_json.loads(response.content)
    except RecursionError:
        raise bad_response(response, "the body is JSON nested too deeply to read") from None
    except ValueError as exc:
        raise bad_response(response, f"the body is not JSON ({_short(exc)})") from None


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:80]}"
