"""Every sentence the forms show, in one place: what happened, what it cost, what to do next.

The forms (:mod:`propertykit.widgets._lookup_form`, :mod:`propertykit.widgets._find`,
:mod:`propertykit.widgets._purchase_form`) show these instead of tracebacks, so they can be read
and reviewed here as text. None holds a word of code (no ``'value'``, no ``(s)``, no quoted
Python values) and none ever holds the API key (errors never carry it).

Sentences are grouped by where they appear: errors and money (both forms), then the lookup form's
search, fetch, table and status line; the ids box's sentences live in
:mod:`~propertykit.widgets._id_messages` and the Find tab's in
:mod:`~propertykit.widgets._find_messages`, and are named here too.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from propertykit.text import listed, plural, visible

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
    """The service's own words, as a clause (empty when it gave none; never its code name)."""
    words = visible(error.message or "").strip().rstrip(".")
    return f" The service said: “{words}”." if words else ""


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.0f} min"


def describe_error(
    error: BaseException, *, about: str | None = None, now: datetime | None = None
) -> str:
    """One sentence (or two) in plain words for any error propertykit raises.

    No status code and no code name: what happened, what it concerns, and what to do.

    Parameters
    ----------
    error
        The exception caught at the edge of a form.
    about
        What the request was about, named in the sentence where it helps ("title NGL1",
        "location id L1"); ``None``: the sentence names no subject.
    now
        The current time, for "resets in ..." (default: the wall clock).

    Returns
    -------
    str
        What happened and what to do; never a traceback.

    Examples
    --------
    >>> from propertykit.errors import InsufficientCredit, NotFound
    >>> describe_error(InsufficientCredit(402, code="insufficient_credit"))[:55]
    'The account has too little credit; this request was not'
    >>> describe_error(NotFound(404), about="title ZZ999999")
    'The service does not know title ZZ999999.'
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
            f"The account's daily credit cap is reached; {when}. "
            "Nothing more can be fetched from the service until then; cached lookups still work."
        )
    if isinstance(error, RateLimited):
        wait = f"wait {_seconds(error.retry_after)}" if error.retry_after else "wait a minute"
        return f"Too many requests for now: {wait} and try again.{_said(error)}"
    if isinstance(error, AuthenticationError):
        return (
            "The API key was refused: check PROPERTYKIT_API_KEY, or create a new key "
            "in the account dashboard under Settings → API Keys."
        )
    if isinstance(error, InsufficientCredit):
        return (
            "The account has too little credit; this request was not charged. "
            "Add credit to the account, then try again."
        )
    if isinstance(error, PermissionDenied):
        return (
            "This API key may not use this part of the service."
            f"{_said(error)} Use a key with access, or check the client's endpoint settings."
        )
    if isinstance(error, NotFound):
        subject = f"does not know {about}" if about else "found nothing at the address asked"
        return f"The service {subject}.{_said(error)}"
    if isinstance(error, ServerError):
        return (
            "The service failed, even after retrying; failed requests are not charged. "
            "Try again in a few minutes."
        )
    if isinstance(error, ApiError):
        concerning = f" about {about}" if about else ""
        return f"The service refused the request{concerning}.{_said(error)}"
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
            "To fetch it, use a client that is not in offline mode."
        )
    if isinstance(error, BudgetExceeded):
        return (
            "This client's budget of billable requests is spent, so nothing was sent. "
            "To continue, make a new client with a larger budget."
        )
    if isinstance(error, ConfigError):
        return f"A setting is missing or wrong: {error}"
    if isinstance(error, PropertyKitError):
        return str(error)
    return (
        "Something unexpected went wrong inside propertykit. Please report it to the "
        "propertykit maintainers, with the log of the “propertykit” logger at debug level."
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


# -- the lookup form: hints on screen -------------------------------------------------------

IDS_HINT = (
    "Location ids, or source ids written provider::id (such as rightmove::123); "
    "one per line or separated by commas."
)
SEARCH_HINT = (
    "Type at least 3 letters of an address, street, town or postcode; pick a match to add its id."
)
#: "Ctrl-click", its hyphen one that never breaks a line.
_CTRL_CLICK = "Ctrl\u2011click (⌘\u2011click on a Mac) to choose several."
ATTRIBUTES_HINT = f"Nothing chosen means every attribute. {_CTRL_CLICK}"
CHOOSE_SEVERAL_HINT = f"Nothing chosen means any. {_CTRL_CLICK}"
PRICE_HINT = "In pounds. 0 means no limit."
AT_MOST_HINT = "The most properties to fetch; each page of them is a billable request."

# -- the lookup form: search-suggest --------------------------------------------------------

NO_MATCHES = "No matches."


def describe_suggestions(count: int) -> str:
    """The line under the Matches list.

    Examples
    --------
    >>> describe_suggestions(1)
    '1 match: pick it to add its id to the ids box.'
    """
    if not count:
        return NO_MATCHES
    pick = "pick it" if count == 1 else "pick one"
    return f"{plural(count, 'match', 'matches')}: {pick} to add its id to the ids box."


def describe_suggest_paused(per_minute: float, wait: float) -> str:
    """Suggestions held back by the per-minute limit.

    Examples
    --------
    >>> describe_suggest_paused(2, 49.6)
    'Suggestions paused: the limit of 2 searches per minute is reached; they resume in 50 s.'
    """
    return (
        f"Suggestions paused: the limit of {per_minute:g} searches per minute is reached; "
        f"they resume in {wait:.0f} s."
    )


# -- the lookup form: fetching --------------------------------------------------------------


def describe_cost(sent: int, cached: int) -> str:
    """What one fetch cost.

    Examples
    --------
    >>> describe_cost(1, 0)
    '1 request sent, 0 answered from the cache'
    """
    return f"{plural(sent, 'request')} sent, {cached:,} answered from the cache"


def describe_fetch(
    count: int,
    *,
    sent: int,
    cached: int,
    missing: list[str],
    notes: list[str],
    names: Sequence[str] = (),
) -> str:
    """The outcome of a fetch that went through, naming what it fetched (up to three).

    Examples
    --------
    >>> print(describe_fetch(1, sent=1, cached=0, missing=["L09"], notes=[],
    ...                      names=["12 Oak Road"]))
    ... # doctest: +NORMALIZE_WHITESPACE
    Fetched 1 property: 12 Oak Road (1 request sent, 0 answered from the cache). No property
    was found for 1 location id: L09.
    """
    named = f": {listed(list(names), most=3)}" if names else ""
    fetched = plural(count, "property", "properties")
    text = f"Fetched {fetched}{named} ({describe_cost(sent, cached)})."
    if missing:
        text += (
            f" No property was found for {plural(len(missing), 'location id')}: "
            f"{listed(missing, most=10)}."
        )
    return " ".join([text, *notes])


def describe_partial(error_text: str, count: int, *, sent: int, cached: int) -> str:
    """A fetch that failed part way: the error, then what is shown.

    Examples
    --------
    >>> print(describe_partial("It failed.", 10, sent=2, cached=0))
    ... # doctest: +NORMALIZE_WHITESPACE
    It failed. Showing the 10 properties fetched before the error (2 requests sent,
    0 answered from the cache).
    """
    fetched = plural(count, "property", "properties")
    cost = describe_cost(sent, cached)
    return f"{error_text} Showing the {fetched} fetched before the error ({cost})."


def describe_nothing_found(missing: list[str], *, sent: int, cached: int) -> str:
    """A fetch that found no property at all: which ids found nothing, and what it cost.

    Examples
    --------
    >>> describe_nothing_found(["L09999999"], sent=1, cached=0)
    'No property was found for 1 id: L09999999 (1 request sent, 0 answered from the cache).'
    """
    return (
        f"No property was found for {plural(len(missing), 'id')}: {listed(missing, most=10)} "
        f"({describe_cost(sent, cached)})."
    )


def describe_found(count: int, notes: list[str], *, where: str = "") -> str:
    """The outcome of the Find tab's query, naming the area searched.

    Examples
    --------
    >>> describe_found(30, [], where="in SE11")
    'Found 30 properties in SE11.'
    >>> describe_found(0, [], where="in SE11")
    'Found no property in SE11.'
    """
    counted = plural(count, "property", "properties") if count else "no property"
    found = f"Found {counted}" + (f" {where}" if where else "")
    return " ".join([f"{found}.", *notes])


def describe_stale(what: str, *, why: str = "from before the error above") -> str:
    """The mark on results left from before an error, or from before a search that found nothing.

    Examples
    --------
    >>> print(describe_stale("the fetch of 3 properties at 14:05"))
    ... # doctest: +NORMALIZE_WHITESPACE
    Earlier results: the results below are still those of the fetch of 3 properties at 14:05,
    from before the error above.
    """
    return f"Earlier results: the results below are still those of {what}, {why}."


#: The table's toggle: it names the view a press gives.
SHOW_EVERY_COLUMN = "Show every column"
SHOW_READABLE = "Show the main columns"


def describe_table(total: int, shown: int) -> str:
    """The caption of the result table.

    Examples
    --------
    >>> describe_table(120, 100)[:64]
    '120 properties; the first 100 shown. In code, form.value holds t'
    """
    text = plural(total, "property", "properties")
    if shown < total:
        text += f"; the first {shown:,} shown"
    return text + ". In code, form.value holds the whole table (hover a heading for its column)."


def describe_usage(
    *, sent: int, cached: int, billable: int, budget: int | None, credit_problem: str | None
) -> str:
    """The status line: this client's counts so far, and a credit problem when there is one.

    Examples
    --------
    >>> describe_usage(sent=2, cached=1, billable=2, budget=None, credit_problem=None)
    'This client so far: 2 requests sent (2 billable), 1 answered from the cache.'
    >>> describe_usage(sent=1, cached=0, billable=1, budget=5, credit_problem=None)[-38:]
    'Budget: 4 of 5 billable requests left.'
    """
    text = (
        f"This client so far: {plural(sent, 'request')} sent ({billable:,} billable), "
        f"{cached:,} answered from the cache."
    )
    if budget is not None:
        text += (
            f" Budget: {max(0, budget - billable):,} of {plural(budget, 'billable request')} left."
        )
    if credit_problem:
        text += f" {credit_problem}"
    return text


#: What the status line says about credit after a fetch failed for want of it.
DAILY_CAP_PROBLEM = "The daily credit cap is reached."
NO_CREDIT_PROBLEM = "The account has too little credit."
