"""Plain-words sentences for what went wrong and what happened to the money.

The forms of :mod:`propertykit.widgets.lookup_form` show these instead of tracebacks. Each sentence
says what happened and what to do next; none ever holds the API key (errors never carry it).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from propertykit.config import MONEY_STATES
from propertykit.errors import (
    ApiError,
    AuthenticationError,
    BudgetExceeded,
    ConfigError,
    DailyCapReached,
    InsufficientCredit,
    InvalidInput,
    NetworkError,
    NotCached,
    NotFound,
    PermissionDenied,
    PropertyKitError,
    PurchaseUncertain,
    RateLimited,
    ServerError,
)

__all__ = [
    "CHARGED",
    "NOT_CHARGED",
    "UNKNOWN",
    "describe_error",
    "describe_money_state",
    "describe_reset",
    "money_state_of",
]

#: What a purchase did to the account, in the words the forms use.
CHARGED = "You were charged; the deed is being delivered"
NOT_CHARGED = "You were not charged"
UNKNOWN = "We could not establish whether you were charged — check again before retrying"


def describe_reset(resets_at: datetime, now: datetime | None = None) -> str:
    """When a daily cap resets, e.g. ``00:00 UTC on Tue 3 Jun 2025 (in 3 h 12 min)``.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> describe_reset(datetime(2025, 6, 3, tzinfo=UTC), datetime(2025, 6, 2, 20, 48, tzinfo=UTC))
    '00:00 UTC on Tue 3 Jun 2025 (in 3 h 12 min)'
    """
    moment = resets_at.astimezone(UTC)
    text = f"{moment:%H:%M} UTC on {moment:%a} {moment.day} {moment:%b %Y}"
    if now is None:
        now = datetime.now(UTC)
    minutes = max(0, round((moment - now.astimezone(UTC)).total_seconds() / 60))
    hours, minutes = divmod(minutes, 60)
    wait = f"{hours} h {minutes} min" if hours else f"{minutes} min"
    return f"{text} (in {wait})"


def _said(error: ApiError) -> str:
    """The service's own words, as a clause (empty when it gave none)."""
    words = (error.message or error.code or "").strip().rstrip(".")
    return f" The service said: “{words}”." if words else ""


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.0f} min"


def describe_error(error: BaseException, *, now: datetime | None = None) -> str:
    """One sentence (or two) in plain words for any error propertykit raises.

    Parameters
    ----------
    error
        The exception caught at the edge of a form.
    now
        The current time, for "resets in ..." (default: the wall clock).

    Returns
    -------
    str
        What happened and what to do; never a traceback.

    Examples
    --------
    >>> from propertykit.errors import InsufficientCredit
    >>> describe_error(InsufficientCredit(402, code="insufficient_credit"))[:44]
    'The account has too little credit (HTTP 402)'
    """
    if isinstance(error, DailyCapReached):
        if now is None and error.resets_at is not None and error.retry_after is not None:
            # Count down as the service did (its Retry-After), not by this machine's clock.
            now = error.resets_at - timedelta(seconds=error.retry_after)
        when = (
            f"it resets at {describe_reset(error.resets_at, now)}"
            if error.resets_at is not None
            else "it resets at midnight UTC"
        )
        return (
            f"The account's daily credit cap is reached (HTTP 429); {when}. "
            "Nothing more can be fetched from the service until then; cached lookups still work."
        )
    if isinstance(error, RateLimited):
        wait = f"wait {_seconds(error.retry_after)}" if error.retry_after else "wait a minute"
        return f"Too many requests for now (HTTP 429): {wait} and try again.{_said(error)}"
    if isinstance(error, AuthenticationError):
        return (
            "The API key was refused (HTTP 401): check PROPERTYKIT_API_KEY, or create a new key "
            "in the account dashboard under Settings → API Keys."
        )
    if isinstance(error, InsufficientCredit):
        return (
            "The account has too little credit (HTTP 402); this request was not charged. "
            "Add credit, then run the same request again."
        )
    if isinstance(error, PermissionDenied):
        return (
            "This key may not use this endpoint (HTTP 403)."
            f"{_said(error)} Use a key with access, or check the client's endpoint settings."
        )
    if isinstance(error, NotFound):
        return f"Not found (HTTP 404).{_said(error)}"
    if isinstance(error, ServerError):
        return (
            f"The service failed (HTTP {error.status_code}) even after retrying; failed requests "
            "are not charged. Try again in a few minutes."
        )
    if isinstance(error, ApiError):
        return f"The service refused the request (HTTP {error.status_code}).{_said(error)}"
    if isinstance(error, NetworkError):
        return (
            "Could not reach the service, even after retrying. Check the network connection "
            "(and PROPERTYKIT_BASE_URL), then try again; answers already received are cached."
        )
    if isinstance(error, PurchaseUncertain):
        return f"{UNKNOWN}: ask the purchase status of title {error.title_number} first."
    if isinstance(error, InvalidInput):
        return f"Please check the input: {error}"
    if isinstance(error, NotCached):
        return (
            "Offline mode: this lookup is not in the cache, so nothing was sent. "
            "Go online (offline=False) to fetch it."
        )
    if isinstance(error, BudgetExceeded):
        return (
            "This client's budget of billable requests is spent, so nothing was sent. "
            "Create the client with a larger budget= to continue."
        )
    if isinstance(error, ConfigError):
        return f"A setting is missing or wrong: {error}"
    if isinstance(error, PropertyKitError):
        return str(error)
    return (
        f"Something unexpected went wrong ({type(error).__name__}: {error}). "
        "Please report it to the propertykit maintainers."
    )


def money_state_of(error: BaseException) -> str:
    """``charged``, ``not_charged`` or ``unknown`` for an error raised by a title-deed purchase.

    propertykit's purchase flow puts ``money_state`` on every error raised after the request
    was sent; an error without one was raised before anything was sent (offline, budget, a
    failed check of purchase-status), so nothing was charged. Errors from outside propertykit
    count as ``unknown``.

    Examples
    --------
    >>> from propertykit.errors import ApiError, PurchaseUncertain
    >>> money_state_of(ApiError(500, money_state="charged"))
    'charged'
    >>> money_state_of(PurchaseUncertain("?", title_number="T1"))
    'unknown'
    """
    if isinstance(error, PurchaseUncertain):
        return "unknown"
    if not isinstance(error, PropertyKitError):
        return "unknown"
    state = getattr(error, "money_state", None)
    return state if state in MONEY_STATES else "not_charged"


def describe_money_state(money_state: str, *, delivered: bool = False) -> str:
    """What a purchase did to the account, in plain words.

    Examples
    --------
    >>> describe_money_state("not_charged")
    'You were not charged'
    >>> describe_money_state("charged", delivered=True)
    'You were charged; the deed has been delivered'
    """
    if money_state == "charged":
        return "You were charged; the deed has been delivered" if delivered else CHARGED
    if money_state == "not_charged":
        return NOT_CHARGED
    return UNKNOWN
