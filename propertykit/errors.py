"""The exceptions propertykit raises, all under one root.

::

    PropertyKitError
    ├── ConfigError            no key / no base URL / a setting that cannot work
    ├── InvalidInput           (also ValueError) bad ids or arguments; raised before any request
    ├── NotCached              offline mode and the answer is not in the cache; nothing was sent
    ├── BudgetExceeded         the next billable request would pass ``budget``; nothing was sent
    ├── NetworkError           connection failures, timeouts, truncated bodies, after retries
    ├── BadResponse            a complete answer that cannot be used (not JSON, wrong shape,
    │                          broken paging); never retried, never cached
    ├── ResponseTooLarge       a body past ``max_body_bytes`` once decoded; reading stopped
    ├── PurchaseUncertain      a title-deed purchase whose outcome could not be established
    ├── CacheUnavailable       the cache cannot be reached or read (Redis down, a damaged file):
    │                          names it (.cache, never a password); nothing more was sent
    └── ApiError               the service answered 4xx/5xx (.status_code .body .code .message ...)
        ├── AuthenticationError      401  missing or invalid key
        ├── InsufficientCredit       402  too little credit; add credit and run again
        ├── PermissionDenied         403  key lacks access, or the endpoint is not available
        ├── NotFound                 404
        ├── RateLimited              429  per-minute limit (.retry_after)
        │   └── DailyCapReached      429  daily credit cap (.resets_at, midnight UTC)
        └── ServerError              5xx

``ServiceUnhealthy`` (also under ``PropertyKitError``) is raised by ``health()`` when the
service says it is ``unhealthy``.

Warnings share one base too, and every name ends in ``Warning``::

    PropertyKitWarning (a UserWarning)
    ├── MissingIdsWarning       ids asked for that returned no record (listed in attrs)
    ├── NotRecordsWarning       items of a list of records that are not records, left out
    ├── PagingWarning           a page said more follow but not where: the rest not fetched
    ├── UnparsedValuesWarning   values with no clear meaning in their column (kept raw)
    ├── MoneyUnitWarning        a table of money that does not say its unit: written as given
    │   └── MinorUnitsWarning   prices that look like pence although pounds were assumed
    ├── CacheWriteWarning       answers paid for that could not be stored in the cache
    ├── ServiceDegradedWarning  health says ``degraded``
    ├── GeometryWarning         locations or boundaries that could not be read
    ├── TileWarning             street tiles refused or late: the map keeps its outline
    ├── FewPairsWarning         a price index merged thin periods or left groups out
    └── EpcTrendWarning         an EPC trend pooled thin periods or left certificates out

Filter them by name (``warnings.simplefilter("error", pk.errors.MissingIdsWarning)``) or all at
once with ``PropertyKitWarning``.

Every error may carry ``partial``: the records fetched before a multi-request call failed and
where to resume, so nothing a user paid for is lost. Third-party exceptions are mapped once, at
the HTTP boundary, and chained with ``raise ... from``. No message, repr or attribute ever holds
the API key.
"""

from __future__ import annotations

import sys
import types
from datetime import datetime
from typing import Any

from propertykit.text import visible

__all__ = [
    "ApiError",
    "AuthenticationError",
    "BadResponse",
    "BudgetExceeded",
    "CacheUnavailable",
    "CacheWriteWarning",
    "ConfigError",
    "DailyCapReached",
    "EpcTrendWarning",
    "FewPairsWarning",
    "GeometryWarning",
    "InsufficientCredit",
    "InvalidInput",
    "MinorUnitsWarning",
    "MissingIdsWarning",
    "MoneyUnitWarning",
    "NetworkError",
    "NotCached",
    "NotFound",
    "NotRecordsWarning",
    "PagingWarning",
    "PermissionDenied",
    "PropertyKitError",
    "PropertyKitWarning",
    "PurchaseUncertain",
    "RateLimited",
    "ResponseTooLarge",
    "ServerError",
    "ServiceDegradedWarning",
    "ServiceUnhealthy",
    "TileWarning",
    "UnparsedValuesWarning",
    "outside_stacklevel",
]


class PropertyKitError(Exception):
    """Root of every error propertykit raises.

    ``partial`` is ``None``, or for a multi-request call that failed part-way a
    :class:`propertykit.client.PartialResult`: what was fetched (and paid for) and where to resume.

    Its ``str()`` is one line with control characters spelled out (text from outside is shown,
    never obeyed by a terminal); attributes such as ``ApiError.body`` keep the text as sent.
    """

    partial: Any = None

    def __str__(self) -> str:
        return visible(super().__str__())


class PropertyKitWarning(UserWarning):
    """Root of every warning propertykit gives (filter them all with this class).

    ``plain`` is the message in plain words, for readers of a report; ``str()`` adds, for the
    analyst at the notebook, where the details are kept (``see=``, e.g. a frame's ``attrs``).
    Its ``str()`` is one line with control characters spelled out, as an error's is.

    Examples
    --------
    >>> warning = PropertyKitWarning("3 periods merged", see='attrs["merged"]')
    >>> str(warning), warning.plain
    ('3 periods merged (see attrs["merged"])', '3 periods merged')
    """

    def __init__(self, message: str = "", *, see: str | None = None) -> None:
        super().__init__(f"{message} (see {see})" if see else message)
        self.plain = message

    def __str__(self) -> str:
        return visible(super().__str__())


def outside_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn``, called where this is called, that names the
    first caller outside propertykit (the user's line), however deep inside it the warning is.
    """
    level = 1
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("propertykit."):
        frame, level = frame.f_back, level + 1
    return level


class GeometryWarning(PropertyKitWarning):
    """Some locations or boundaries could not be read and became missing geometries."""


class CacheWriteWarning(PropertyKitWarning):
    """Answers paid for could not be stored in the cache (disk full, file size limit...); their
    records were returned, and the message counts them. Asking again pays again."""


class NotRecordsWarning(PropertyKitWarning):
    """Items of the service's list of records that are not records (JSON objects) were left
    out; the message counts them and shows one."""


class PagingWarning(PropertyKitWarning):
    """A page of records may have more after it, but its paging field (``nextOffset``, or
    ``offset`` beside a total) is not an integer: its records are kept, the pages after it were
    not fetched (never asked again from offset 0); the message names the field."""


class MoneyUnitWarning(PropertyKitWarning):
    """A table holding money does not say its unit (``attrs["money_unit"]``: pandas drops
    ``attrs`` when ``pd.concat`` or ``merge`` joins frames whose ``attrs`` differ): its figures
    are written as given, not converted, and the output says that the unit is not stated."""


class MinorUnitsWarning(MoneyUnitWarning):
    """Prices look like minor units (pence) although major units (pounds) were assumed, or
    although no unit was stated."""


class UnparsedValuesWarning(PropertyKitWarning):
    """Values with no clear meaning in their column are missing there; ``df.pk.unparsed()``."""


class EpcTrendWarning(PropertyKitWarning):
    """Certificates or periods were left out of an EPC trend, or thin periods were pooled."""


class FewPairsWarning(PropertyKitWarning):
    """Periods with too few repeat-sales pairs were merged with their neighbours, or groups
    with too few pairs left out, of a price index; the message names them."""


class MissingIdsWarning(PropertyKitWarning):
    """Some of the ids asked for returned no record (unknown to the service, or withdrawn).

    Given once per lookup; the message counts them and names a few, and the frame lists them all
    in ``df.attrs["missing_ids"]`` (a tuple, in the order asked). Turn it into an error with
    ``warnings.simplefilter("error", pk.errors.MissingIdsWarning)``.
    """


class ConfigError(PropertyKitError):
    """A setting is missing or cannot work (e.g. no API key given or found in the environment)."""


class InvalidInput(PropertyKitError, ValueError):
    """An argument is not acceptable; raised before any request is sent."""


class NotCached(PropertyKitError):
    """Offline mode, and the answer is not in the cache. Nothing was sent."""


class BudgetExceeded(PropertyKitError):
    """The next billable request would exceed the client's ``budget``. Nothing was sent."""


class NetworkError(PropertyKitError):
    """The service could not be reached, or the answer was cut off, after every retry."""

    def __init__(self, message: str, *, url: str | None = None, kind: str | None = None) -> None:
        super().__init__(message)
        self.url = url
        #: ``connect`` (nothing was sent), or ``timeout``/``reset``/``truncated`` (the service
        #: may have received the request); ``None`` when not known.
        self.kind = kind


class BadResponse(PropertyKitError):
    """The service answered completely, but the answer cannot be used.

    A 200 whose body is not JSON (an HTML page from a proxy, an empty body, bytes that are not
    UTF-8), whose envelope says ``success: false`` or has no list of records, or whose paging
    contradicts itself. Retrying would pay for the same answer again, so it is raised at once;
    it is never cached. ``status_code`` and ``body_start`` (the first bytes) say what came back.
    """

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        status_code: int | None = None,
        body_start: str = "",
    ) -> None:
        super().__init__(message)
        self.url = url
        self.status_code = status_code
        self.body_start = body_start


class ResponseTooLarge(PropertyKitError):
    """A response body grew past ``max_body_bytes`` once decoded; reading it was stopped.

    Raised at once (the same request would send the same body again); nothing is cached.
    """

    def __init__(self, message: str, *, url: str | None = None, limit: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.limit = limit


class PurchaseUncertain(PropertyKitError):
    """A title-deed purchase whose outcome could not be established; ``money_state`` is ``unknown``.

    Do not buy again blindly: ask ``client.purchase_status(title_number)`` first.
    """

    money_state = "unknown"

    def __init__(self, message: str, *, title_number: str) -> None:
        super().__init__(message)
        self.title_number = title_number


class CacheUnavailable(PropertyKitError):
    """The cache cannot be reached or read: a Redis server down or gone mid-call, a cache file
    that is not a database or is damaged.

    Nothing more is sent once it is raised: an answer that cannot be stored would be paid for
    again. ``cache`` names the cache (``redis://host:port/db`` without user or password, or the
    file's path); the message says what to do. Answers stored before it happened stay free.

    Examples
    --------
    >>> import pickle
    >>> error = CacheUnavailable("Redis is gone", cache="redis://cache:6379/0")
    >>> pickle.loads(pickle.dumps(error)).cache  # as a Dask worker's error reaches the client
    'redis://cache:6379/0'
    """

    def __init__(self, message: str, *, cache: str = "") -> None:
        super().__init__(message)
        self.cache = cache


class ApiError(PropertyKitError):
    """The service answered with an error status.

    Attributes
    ----------
    status_code
        The HTTP status.
    body
        The raw response text, as the service's official client carries it.
    code, message
        The service's own error code and message, when the body had them.
    retry_after
        Seconds to wait, from ``Retry-After``, when given.
    money_state
        For title-deed purchases: ``charged``, ``not_charged`` or ``unknown``.
    url
        The request URL (never holds the key: the key travels only in a header).
    hint
        What to do next, in plain words (e.g. add credit), when propertykit knows.
    request_id, details
        The service's ``request_id`` and ``details``, when the body had them (quote the
        request id to the service's support).
    """

    def __init__(
        self,
        status_code: int,
        *,
        body: str = "",
        code: str | None = None,
        message: str | None = None,
        retry_after: float | None = None,
        money_state: str | None = None,
        url: str | None = None,
        hint: str | None = None,
        request_id: str | None = None,
        details: Any = None,
    ) -> None:
        self.request_id = request_id
        self.details = details
        self.status_code = status_code
        self.body = body
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.money_state = money_state
        self.url = url
        self.hint = hint
        super().__init__(self._describe())

    def code_is(self, *codes: str) -> bool:
        """Whether the service's code is one of ``codes``, compared case-insensitively.

        ``RATE_LIMIT_EXCEEDED`` (older answers) and ``rate_limit_exceeded`` are the same code.
        """
        own = (self.code or "").casefold()
        return bool(own) and any(own == code.casefold() for code in codes)

    def __str__(self) -> str:
        # Built on demand: the transport may add a hint (what to do next) after creation.
        return visible(self._describe())

    def _describe(self) -> str:
        text = self._core()
        if self.hint:
            text = f"{text.rstrip('.')}. {self.hint}"
        return text

    def _core(self) -> str:
        text = f"HTTP {self.status_code}"
        if self.code:
            text += f" {self.code}"
        if self.message:
            text += f": {self.message}"
        if self.money_state:
            text += f" (money_state={self.money_state})"
        if self.request_id:
            text += f" [request_id {self.request_id}]"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class AuthenticationError(ApiError):
    """401: the API key is missing or invalid."""


class InsufficientCredit(ApiError):
    """402: the account has too little credit. The same request succeeds once credit is added."""


class PermissionDenied(ApiError):
    """403: the key lacks access to this resource, or the endpoint is not available."""


class NotFound(ApiError):
    """404: no such path or resource."""


class RateLimited(ApiError):
    """429: a rate limit was hit; ``retry_after`` says how many seconds to wait."""


class DailyCapReached(RateLimited):
    """429: the account's daily credit cap is spent; it resets at midnight UTC (``resets_at``)."""

    def __init__(
        self, status_code: int, *, resets_at: datetime | None = None, **kwargs: Any
    ) -> None:
        self.resets_at = resets_at
        super().__init__(status_code, **kwargs)

    def _describe(self) -> str:
        # Lead with what matters: "Daily credit cap reached; resets at 00:00 UTC (in 3 h 12 min)".
        if self.hint:
            return f"{self.hint} ({self._core()})"
        return self._core()


class ServerError(ApiError):
    """5xx: the service failed. Not charged; retried automatically before this is raised."""


class ServiceDegradedWarning(PropertyKitWarning):
    """Health says ``degraded``: the service answers, but some answers may be slow or missing."""


#: The name of :class:`ServiceDegradedWarning` before every warning's name ended in ``Warning``.
ServiceDegraded = ServiceDegradedWarning


class ServiceUnhealthy(PropertyKitError):
    """Health says ``unhealthy`` (even with HTTP 200): expect failures; try again later.

    ``health`` holds the service's answer as it was sent.
    """

    def __init__(self, message: str, *, health: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.health = dict(health or {})


class TileWarning(PropertyKitWarning):
    """Street tiles could not be drawn under a map, which keeps its outline basemap.

    One per map, naming the cause in plain words: the tile server could not be reached, was
    too slow, refused, redirected elsewhere, or sent something that is not a tile (not an image,
    too many bytes, too many pixels). Nothing it sent is kept in the tile cache.
    """
