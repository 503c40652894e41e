"""The transport: sends what ``client`` asks through the one session; retries and error mapping.

``transport`` and ``session`` are the only modules that know about ``requests``, the cache and the
rate limiter: :mod:`propertykit.wire._session` builds the session (requests-cache, then the
search-suggest rate limit, then ``requests``), and this module sends through it, one call to
:func:`~propertykit.wire._attempt.send_once` per attempt (one result back). It executes the
decisions of :mod:`propertykit.wire._retries`, counts traffic in a
:class:`~propertykit.wire._usage.Usage`, and maps every third-party error to a propertykit error
once, here, ``from`` the original.

Key safety: the key travels only in the ``x-api-key`` header, and the session keeps it out of the
cache and off other origins (see :mod:`propertykit.wire._session`). Here it is blanked out of error
bodies and error details, and no log line or repr shows it.

Threads: one :class:`Transport` may be used from several threads at once (the bulk runner of
:mod:`propertykit.client._bulk` does): its usage counters take a lock, a billable request reserves
its place in the ``budget`` before it is sent (so N threads never overspend by N - 1), and the
session's connection pool holds ``pool_size`` connections. The SQLite cache is shared between
kernels, and a Redis ``limiter_redis`` shares the search-suggest limit (see
:mod:`propertykit.wire._session`).

For title-deed purchases (a ``POST`` with an ``Idempotency-Key``), call
:meth:`Transport.fetch` with ``idempotent=False``: it is never cached, an error answer is raised
as is (with ``money_state``) for the caller to decide, and only a failure to connect (nothing
sent) is retried; a :class:`~propertykit.errors.NetworkError` carries ``kind`` (``connect``,
``timeout``, ``reset`` or ``truncated``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import requests
from requests_cache.backends.base import BaseCache
from requests_cache.models.response import CachedResponse

from propertykit.config import Endpoints
from propertykit.errors import (
    ApiError,
    BadResponse,
    BudgetExceeded,
    ConfigError,
    NetworkError,
    NotCached,
    ResponseTooLarge,
)
from propertykit.wire import _retries as policy
from propertykit.wire._attempt import (
    BODY_CHECK,
    BodyCheck,
    Sent,
    bad_response,
    parsed_body,
    send_once,
)
from propertykit.wire._bounded import DEFAULT_MAX_BODY_BYTES, LIMITS, CallLimits, DeadlinePassed
from propertykit.wire._clock import Clock
from propertykit.wire._derived_cache import clear_derived
from propertykit.wire._error_bodies import error_from_response
from propertykit.wire._failures import Failed, client_side_limit, never_connected, path_of
from propertykit.wire._session import CachedLimiterSession, describe_cache, open_session
from propertykit.wire._shared_budget import LocalBudget, shared_budget_for
from propertykit.wire._single_flight import single_flight_for
from propertykit.wire._usage import Usage
from propertykit.wire._write_failures import WriteFailures

logger = logging.getLogger("propertykit")


def _refused_by_the_limiter(exc: requests.exceptions.Timeout) -> bool:
    """Whether requests-ratelimiter refused to wait (the suggest limit needed a longer wait).

    It raises a bare ``Timeout`` before any adapter runs, so the exception carries no request;
    requests' own timeouts are ``ConnectTimeout``/``ReadTimeout`` raised with their request.
    """
    return type(exc) is requests.exceptions.Timeout and exc.request is None


_NO_REVALIDATING = (
    "requests-cache's stale_while_revalidate sends from a thread of its own, outside the budget "
    "and the one-fetch-per-batch lock; propertykit does not support it"
)

#: POST endpoints that only read (cached by URL and body, retried like a GET).
_READ_POSTS = frozenset({"query"})


@dataclass
class Transport:
    """Sends requests for the client and enforces every transport rule.

    Parameters
    ----------
    api_key
        Sent only in the ``x-api-key`` header.
    base_url
        The service's root address.
    cache
        A requests-cache backend, or ``None`` for no caching.
    expire_after
        Freshness of cached property data (``None``: 7 days).
    offline
        Serve from the cache only; anything else raises ``NotCached`` and sends nothing.
    endpoints
        Paths of the service (the non-cacheable ones and the rate-limited suggest path).
    retry
        Retry bounds; ``retry.deadline`` bounds each logical request (every attempt, every
        wait, every body read) in seconds.
    budget
        Most billable requests to send over the network (``None``: no limit).
    budget_name
        Count ``budget`` in the shared cache under this name, with every client (kernel, Dask
        worker) using the same name (see :mod:`propertykit.wire._shared_budget`).
    timeout
        Seconds to wait for the service (connect and read).
    max_body_bytes
        Cap on a decoded response body; past it :class:`~propertykit.errors.ResponseTooLarge`.
    pool_size
        Connections kept open to the service (at least the number of threads sending at once).
    limiter_redis
        A ``redis.Redis`` connection: count the search-suggest limit there, shared by every
        client using the same Redis (``None``: in this process only).
    clock
        The time and randomness it runs on (:class:`~propertykit.wire._clock.Clock`); tests pass
        fakes so retries run instantly.
    """

    api_key: str = field(repr=False)
    base_url: str
    cache: BaseCache | None
    expire_after: Any = None
    offline: bool = False
    endpoints: Endpoints = field(default_factory=Endpoints)
    retry: policy.RetrySettings = field(default_factory=policy.RetrySettings)
    budget: int | None = None
    budget_name: str | None = None
    timeout: float = 30.0
    close_cache: bool = True
    pool_size: int = 10
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    limiter_redis: Any = field(default=None, repr=False)
    clock: Clock = field(default_factory=Clock)
    usage: Usage = field(init=False)
    write_failures: WriteFailures = field(init=False, repr=False)
    session: CachedLimiterSession = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.base_url = self.base_url.rstrip("/")
        self.usage = Usage(budget=self.budget)
        self.write_failures = WriteFailures()
        shared_budget = shared_budget_for(self.cache, self.budget_name, self.budget)
        self.session = open_session(
            usage=self.usage,
            api_key=self.api_key,
            base_url=self.base_url,
            cache=self.cache,
            expire_after=self.expire_after,
            offline=self.offline,
            endpoints=self.endpoints,
            max_wait=self.retry.max_wait,
            close_cache=self.close_cache,
            pool_size=self.pool_size,
            limiter_redis=self.limiter_redis,
            max_body_bytes=self.max_body_bytes,
        )
        if self.session.settings.stale_while_revalidate:
            raise ConfigError(_NO_REVALIDATING)
        # Every real send passes the session's adapter: one fetch per batch across processes,
        # and the budget (this client's, or shared by name).
        sends = self.session.metered
        sends.cache = self.session.cache if self.cache is not None else None
        sends.flight = single_flight_for(self.cache, timeout=self.timeout)
        local = None if self.budget is None else LocalBudget(self.budget)
        sends.budget = shared_budget if shared_budget is not None else local

    # -- sending ----------------------------------------------------------------------------------

    def fetch_json(
        self,
        path: str,
        *,
        endpoint: str,
        params: Mapping[str, str | int] | None = None,
        billable: bool = False,
        check: BodyCheck | None = None,
        headers: Mapping[str, str] | None = None,
        method: str = "GET",
        json_body: Any = None,
        known_missing: bool = False,
    ) -> Any:
        """GET ``path`` (or POST a read such as the area query, cached by its body too) and
        return its parsed JSON body (retrying a cut-off body).

        ``check`` raises ``ValueError`` for a body that cannot be used (e.g. no list of
        records): such an answer is never cached, and raises
        :class:`~propertykit.errors.BadResponse` at once, as does a body that is not JSON.
        ``known_missing``: the caller has just found no answer to this request in the cache
        (:attr:`~propertykit.wire._bulk_cache.CachedForms.missing`): it is not looked up again
        before sending, and the service sees the request as without it (see
        :func:`~propertykit.wire._attempt.send_once`). Ignored offline.
        """
        sending = (params, json_body, headers, billable, True, check)
        missing = known_missing and not self.offline
        sent = self._call(method, path, endpoint, *sending, known_missing=missing)
        response = sent.response
        try:
            body = sent.body if sent.parsed else parsed_body(response)
            if check is not None and not sent.parsed:  # checked once per body
                check(body)
        except BadResponse:
            self.usage.record_error(endpoint)
            raise
        except ValueError as exc:
            self.usage.record_error(endpoint)
            raise bad_response(response, str(exc), self._redact) from None
        return body

    def fetch(
        self,
        method: str,
        path: str,
        *,
        endpoint: str,
        params: Mapping[str, str | int] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
        billable: bool = False,
        idempotent: bool = True,
        check: BodyCheck | None = None,
    ) -> requests.Response:
        """Send one logical request, with retries, and return its 2xx response.

        A 200 GET answer is only returned (and cached) when its body is complete JSON (that
        passes ``check``). The whole call, retries and waits included, ends within
        ``retry.deadline`` seconds; no body is read past ``max_body_bytes``.

        Raises
        ------
        NotCached
            Offline and not in the cache; nothing was sent.
        BudgetExceeded
            Billable, not in the cache, and the budget is spent; nothing was sent.
        ApiError
            The service answered 4xx/5xx (after retries where the rules allow).
        NetworkError
            No complete answer, after retries where the rules allow, or none by the deadline.
        BadResponse
            A complete 200 whose body cannot be used; never retried.
        ResponseTooLarge
            The body passed ``max_body_bytes``; never retried.
        """
        sending = (params, json_body, headers, billable, idempotent, check)
        return self._call(method, path, endpoint, *sending).response

    @contextmanager
    def _in_force(self, endpoint: str, check: BodyCheck | None) -> Iterator[None]:
        """What one call sets up for all its attempts, set here at once: its limits (the
        deadline on the client's clock, the body cap), the check a body must pass to be stored,
        and where its failed cache writes go (one warning when it ends)."""
        now = self.clock.monotonic
        limits = LIMITS.set(CallLimits(now() + self.retry.deadline, self.max_body_bytes, now))
        checking = BODY_CHECK.set(check)
        try:
            with self.write_failures.one_warning(partial(self._not_stored, endpoint)):
                yield
        finally:
            BODY_CHECK.reset(checking)
            LIMITS.reset(limits)

    def _call(
        self,
        method: str,
        path: str,
        endpoint: str,
        params: Mapping[str, str | int] | None,
        json_body: Any,
        headers: Mapping[str, str] | None,
        billable: bool,
        idempotent: bool,
        check: BodyCheck | None,
        *,
        known_missing: bool = False,
    ) -> Sent:
        """One logical request, its attempts and retries: what its 2xx attempt brought back."""
        if self.session.settings.stale_while_revalidate:  # set on the session after it was made
            raise ConfigError(_NO_REVALIDATING)
        if self.offline and not idempotent:  # a read (GET, the POST area query) may replay
            raise NotCached(f"Offline: {method} {path} is never answered from the cache")
        with self._in_force(endpoint, check):
            url = self.base_url + path
            started = self.clock.monotonic()
            attempt = 0
            while True:
                cause: BaseException | None = None
                try:
                    sending = (params, json_body, headers, billable, known_missing)
                    sent = self._attempt(method, url, endpoint, *sending)
                except Failed as failure:
                    cause = failure.cause
                    decision = policy.decide_on_failure(
                        failure.kind,
                        detail=self._redact(str(failure.cause)),
                        url=url,
                        attempt=attempt,
                        elapsed=self.clock.monotonic() - started,
                        settings=self.retry,
                        rng=self.clock.random,
                        idempotent=idempotent,
                    )
                else:
                    if 200 <= sent.response.status_code < 300:
                        return sent
                    decision = policy.decide_on_response(
                        self._error_of(sent.response),
                        attempt=attempt,
                        elapsed=self.clock.monotonic() - started,
                        settings=self.retry,
                        rng=self.clock.random,
                        idempotent=idempotent,
                    )
                if isinstance(decision, policy.Fail):
                    self.usage.record_error(endpoint)
                    logger.info("%s %s failed: %s", method, path, decision.error)
                    raise decision.error from cause
                self.usage.record_retry(endpoint)
                logger.info(
                    "%s %s: %s; retry %d in %.2f s",
                    method,
                    path,
                    decision.reason,
                    attempt + 1,
                    decision.delay,
                )
                self.clock.sleep(decision.delay)
                attempt += 1

    def _attempt(
        self,
        method: str,
        url: str,
        endpoint: str,
        params: Mapping[str, str | int] | None,
        json_body: Any,
        headers: Mapping[str, str] | None,
        billable: bool,
        known_missing: bool,
    ) -> Sent:
        """One attempt: what it brought back (any status), or raise ``Failed``.

        Also raises ``NotCached``/``BudgetExceeded`` (nothing sent), a client-side
        ``RateLimited`` (the suggest limit would need a longer wait than ``max_wait``), and
        ``NetworkError`` for requests that cannot be sent at all (e.g. too many redirects).
        """
        is_read = method == "GET" or endpoint in _READ_POSTS
        try:
            sent = send_once(
                self.session,
                method,
                url,
                endpoint=endpoint,
                billable=billable,
                shared=is_read,
                budget=self.session.metered.budget,
                known_missing=known_missing,
                params=params,
                json=json_body,
                headers=dict(headers or {}),
                timeout=self.timeout,
            )
        except BudgetExceeded:
            self.usage.record_error(endpoint)
            raise
        except DeadlinePassed as exc:
            self.usage.record_error(endpoint)
            raise NetworkError(
                f"No complete answer from {path_of(url)} within the deadline of "
                f"{self.retry.deadline:g} s (attempts and waits included): {exc}",
                url=url,
                kind="timeout" if exc.sent else "connect",  # "connect": nothing was sent
            ) from exc
        except ResponseTooLarge:
            self.usage.record_error(endpoint)
            raise
        except requests.exceptions.Timeout as exc:
            if _refused_by_the_limiter(exc):
                self.usage.record_error(endpoint)
                raise client_side_limit(
                    url, self.endpoints.suggest_per_minute, self.retry.max_wait
                ) from exc
            kind: policy.FailureKind = (
                "connect" if isinstance(exc, requests.exceptions.ConnectTimeout) else "timeout"
            )
            raise Failed(kind, exc) from exc
        except (
            requests.exceptions.ChunkedEncodingError,
            requests.exceptions.ContentDecodingError,
        ) as exc:
            raise Failed("truncated", exc) from exc
        except requests.exceptions.ConnectionError as exc:
            kind = "connect" if never_connected(exc) else "reset"
            raise Failed(kind, exc) from exc
        except requests.exceptions.RequestException as exc:
            self.usage.record_error(endpoint)
            detail = self._redact(str(exc))
            raise NetworkError(f"Request to {url} failed: {detail}", url=url) from exc

        response = sent.response
        if (
            isinstance(response, CachedResponse)
            and response.status_code == 504
            and response.reason == "Not Cached"
        ):
            self.usage.record_error(endpoint)
            raise NotCached(f"Offline, and {path_of(url)} is not in the cache; nothing was sent")
        if getattr(response, "from_cache", False):
            self.usage.record_cache_hit(endpoint)
            logger.debug("%s %s: cache hit", method, path_of(response.url))
            return sent
        logger.debug("%s %s: %d", method, path_of(response.url), response.status_code)
        if is_read and response.status_code == 200 and not sent.complete:
            if sent.unusable is not None:  # complete, but not usable: asking again pays again
                self.usage.record_error(endpoint)
                raise bad_response(response, sent.unusable, self._redact)
            raise Failed("truncated", ValueError("the body is shorter than announced"))
        return sent

    def _error_of(self, response: requests.Response) -> ApiError:
        return error_from_response(
            response.status_code,
            response.content,
            response.headers,
            url=response.url,
            now=self.clock.now(),
            secrets=(self.api_key,),
        )

    def _not_stored(self, endpoint: str, cache: str, error: BaseException) -> None:
        self.usage.record_not_stored(endpoint)
        self.write_failures.note(cache, error)

    def _redact(self, text: str) -> str:
        return text.replace(self.api_key, "***") if self.api_key else text

    # -- the cache --------------------------------------------------------------------------------

    def cached_json(
        self,
        path: str,
        params: Mapping[str, str | int] | None = None,
        *,
        method: str = "GET",
        json_body: Any = None,
    ) -> Any:
        """The parsed body the cache would answer a GET of ``path`` (or a POST read of
        ``json_body``, as the area query) with, or ``None``.

        Nothing is sent and nothing is counted: a dry run asks this. An entry past its expiry
        counts as missing online (it would be fetched again) and as present offline.
        """
        response = self.session.request(
            method,
            self.base_url + path,
            params=params,
            json=json_body,
            only_if_cached=True,
            timeout=self.timeout,
        )
        if not getattr(response, "from_cache", False) or response.status_code != 200:
            return None
        try:
            return parsed_body(response)
        except BadResponse:
            return None

    def cache_info(self) -> dict[str, Any]:
        """See :func:`describe_cache`; all zero when caching is off."""
        if self.cache is None:
            return {"entries": 0, "size_bytes": None, "oldest": None, "newest": None, "path": None}
        return describe_cache(self.session.cache)

    def clear_cache(self) -> None:
        """Delete every cached answer (and the bodies kept as read beside them)."""
        clear_derived(self.session.cache)  # for a backend passed as cache=, nothing to do
        self.session.cache.clear()  # type: ignore[no-untyped-call]

    def close(self) -> None:
        """Release the connection pool, the cache connection and the limiter."""
        self.session.close()  # type: ignore[no-untyped-call]
