"""The sandbox's account: keys, clock, credits, limits, purchases, faults and logs.

Everything here is plain data behind one lock; nothing touches the network. The HTTP handler
asks questions (``refuse_billable``, ``take_suggest_slot``...) and applies the answers.
"""

from __future__ import annotations

import math
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from propertykit.config import MONEY_STATES

FAULT_KINDS = ("error", "reset", "slow", "truncate", "reset_after_charge", "slow_after_charge")
FAULT_BODIES = ("object", "string", "text", "html", "empty")


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("sandbox times must be timezone-aware (e.g. datetime(..., tzinfo=UTC))")
    return moment.astimezone(UTC)


def seconds_to_midnight(now: datetime) -> int:
    """Whole seconds from ``now`` to the next midnight UTC (at least 1).

    Examples
    --------
    >>> seconds_to_midnight(datetime(2025, 1, 1, 23, 59, 30, tzinfo=UTC))
    30
    """
    now = _utc(now)
    midnight = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
    return max(1, math.ceil((midnight - now).total_seconds()))


class Clock:
    """The sandbox's notion of "now": the wall clock, a fixed time, or any callable, plus an offset.

    Examples
    --------
    >>> clock = Clock(datetime(2025, 1, 1, tzinfo=UTC))
    >>> clock.advance(90)
    >>> clock.now().isoformat()
    '2025-01-01T00:01:30+00:00'
    """

    def __init__(self, now: datetime | Callable[[], datetime] | None = None) -> None:
        self._lock = threading.Lock()
        self._source: Callable[[], datetime] = lambda: datetime.now(UTC)
        self._offset = timedelta()
        if now is not None:
            self.set(now)

    def set(self, now: datetime | Callable[[], datetime]) -> None:
        """Follow ``now`` from here on: a fixed aware datetime, or a callable returning one."""
        with self._lock:
            if callable(now):
                self._source = now
            else:
                fixed = _utc(now)
                self._source = lambda: fixed
            self._offset = timedelta()

    def advance(self, seconds: float) -> None:
        """Move the clock forward (or back, if negative) by ``seconds``."""
        with self._lock:
            self._offset += timedelta(seconds=seconds)

    def now(self) -> datetime:
        """The current sandbox time, timezone-aware UTC."""
        with self._lock:
            return _utc(self._source()) + self._offset


@dataclass(frozen=True)
class KeyInfo:
    """An API key's name and whether it may buy title deeds (never the key itself)."""

    name: str
    title_deeds: bool


@dataclass(frozen=True)
class Charge:
    """One entry of the ledger: credits taken from the account."""

    at: datetime
    key_name: str
    endpoint: str
    credits: int
    title_number: str | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class RequestRecord:
    """A request that reached the sandbox; ``status`` is 0 when the connection was dropped.

    ``headers``: the request's headers as ``(name, value)``, names lower-cased; ``x-api-key``
    with an empty value (a key is never kept)."""

    method: str
    path: str
    query: str
    status: int
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Fault:
    """A pending fault for the next ``count`` requests whose path contains ``path_contains``."""

    kind: str
    count: int = 1
    status: int = 503
    delay: float = 1.0
    path_contains: str = ""
    body: str = "object"

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {FAULT_KINDS}")
        if self.body not in FAULT_BODIES:
            raise ValueError(f"unknown fault body {self.body!r}; expected one of {FAULT_BODIES}")
        if self.kind == "error" and not 500 <= self.status <= 599:
            raise ValueError(f"an 'error' fault needs a 5xx status, got {self.status}")
        if self.count < 1:
            raise ValueError("count must be at least 1")


@dataclass
class ForcedOutcome:
    """The next ``count`` purchases fail with ``status`` and this ``money_state``."""

    money_state: str
    status: int = 500
    charged: bool | None = None
    count: int = 1

    def __post_init__(self) -> None:
        if self.money_state not in MONEY_STATES:
            raise ValueError(f"money_state must be one of {MONEY_STATES}, got {self.money_state!r}")
        if self.charged is None:
            self.charged = self.money_state == "charged"
        if self.count < 1:
            raise ValueError("count must be at least 1")


@dataclass
class PurchaseEntry:
    """One charged purchase of a title deed."""

    at: datetime
    title_number: str
    idempotency_key: str | None
    credits: int
    ready_at: datetime
    document: dict[str, Any]

    def status(self, now: datetime) -> str:
        return "delivered" if now >= self.ready_at else "delivering"


@dataclass(frozen=True)
class Refusal:
    """Why a request cannot go ahead: status, error code, message, optional Retry-After."""

    status: int
    code: str
    message: str
    retry_after: int | None = None


@dataclass
class SandboxState:
    """The single account both sandbox keys belong to. All public methods take the lock."""

    balance: int = 1_000_000
    daily_cap: int = 100_000
    suggest_per_minute: int = 30
    latency: float = 0.0
    delivery_delay: float = 0.0
    #: What health reports under the ``vepler`` profile: healthy, degraded or unhealthy.
    health_status: str = "healthy"
    clock: Clock = field(default_factory=Clock)
    keys: dict[str, KeyInfo] = field(default_factory=dict)
    ledger: list[Charge] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    forced: list[ForcedOutcome] = field(default_factory=list)
    purchases: dict[str, list[PurchaseEntry]] = field(default_factory=dict)
    by_idempotency_key: dict[str, PurchaseEntry] = field(default_factory=dict)
    _spent_by_day: dict[date, int] = field(default_factory=dict)
    _suggest_window: tuple[datetime, int] | None = None
    lock: threading.RLock = field(default_factory=threading.RLock)

    def new_key(self, name: str, *, title_deeds: bool) -> str:
        """Create a live key (``pk_live_<hex>``) on this account and return its value."""
        value = f"pk_live_{secrets.token_hex(16)}"
        with self.lock:
            self.keys[value] = KeyInfo(name, title_deeds)
        return value

    def key_info(self, value: str | None) -> KeyInfo | None:
        with self.lock:
            return self.keys.get(value) if value else None

    # -- credits -----------------------------------------------------------------------------

    def spent_today(self) -> int:
        with self.lock:
            return self._spent_by_day.get(self.clock.now().date(), 0)

    def refuse_billable(self, credits: int) -> Refusal | None:
        """``None`` when ``credits`` may be charged now; else the 402 or 429 to answer with."""
        with self.lock:
            now = self.clock.now()
            if self.balance < credits:
                return Refusal(
                    402,
                    "insufficient_credit",
                    f"This request costs {credits} credit{'s' if credits != 1 else ''} "
                    f"but the account has {self.balance}. "
                    "Add credit and send the same request again.",
                )
            spent = self._spent_by_day.get(now.date(), 0)
            if spent + credits > self.daily_cap:
                return Refusal(
                    429,
                    "rate_limit_exceeded",
                    f"Daily credit cap of {self.daily_cap} credits reached "
                    f"({spent} used today); it resets at midnight UTC.",
                    retry_after=seconds_to_midnight(now),
                )
            return None

    def charge(
        self,
        key: KeyInfo,
        endpoint: str,
        credits: int,
        *,
        title_number: str | None = None,
        idempotency_key: str | None = None,
    ) -> Charge:
        """Take ``credits`` from the balance and the day's cap and write the ledger entry."""
        with self.lock:
            now = self.clock.now()
            self.balance -= credits
            self._spent_by_day[now.date()] = self._spent_by_day.get(now.date(), 0) + credits
            entry = Charge(now, key.name, endpoint, credits, title_number, idempotency_key)
            self.ledger.append(entry)
            return entry

    # -- search-suggest ----------------------------------------------------------------------

    def take_suggest_slot(self) -> Refusal | None:
        """Count one search-suggest request in this minute, or refuse it with 429."""
        with self.lock:
            now = self.clock.now()
            window = now.replace(second=0, microsecond=0)
            used = (
                self._suggest_window[1]
                if self._suggest_window and self._suggest_window[0] == window
                else 0
            )
            if used >= self.suggest_per_minute:
                retry = max(1, math.ceil((window + timedelta(minutes=1) - now).total_seconds()))
                return Refusal(
                    429,
                    "rate_limit_exceeded",
                    f"Search-suggest is limited to {self.suggest_per_minute} requests per minute "
                    "for this account.",
                    retry_after=retry,
                )
            self._suggest_window = (window, used + 1)
            return None

    # -- faults ------------------------------------------------------------------------------

    def take_fault(self, path: str, *, kinds: tuple[str, ...]) -> Fault | None:
        """Consume one use of the first pending fault of one of ``kinds`` matching ``path``."""
        with self.lock:
            for fault in self.faults:
                if fault.kind in kinds and fault.path_contains in path:
                    fault.count -= 1
                    if fault.count == 0:
                        self.faults.remove(fault)
                    return Fault(
                        fault.kind, 1, fault.status, fault.delay, fault.path_contains, fault.body
                    )
            return None

    def take_forced_outcome(self) -> ForcedOutcome | None:
        with self.lock:
            if not self.forced:
                return None
            outcome = self.forced[0]
            outcome.count -= 1
            if outcome.count == 0:
                self.forced.pop(0)
            return ForcedOutcome(outcome.money_state, outcome.status, outcome.charged, 1)

    # -- purchases ---------------------------------------------------------------------------

    def record_purchase(
        self,
        key: KeyInfo,
        title: str,
        idempotency_key: str | None,
        credits: int,
        document: dict[str, Any],
    ) -> PurchaseEntry:
        """Charge for a purchase and remember it (under its idempotency key, when given)."""
        with self.lock:
            now = self.clock.now()
            self.charge(
                key, "purchase", credits, title_number=title, idempotency_key=idempotency_key
            )
            entry = PurchaseEntry(
                now,
                title,
                idempotency_key,
                credits,
                now + timedelta(seconds=self.delivery_delay),
                document,
            )
            self.purchases.setdefault(title, []).append(entry)
            if idempotency_key:
                self.by_idempotency_key[idempotency_key] = entry
            return entry

    def log_request(self, record: RequestRecord) -> None:
        with self.lock:
            self.requests.append(record)
