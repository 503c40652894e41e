"""Pure decisions of the title-deed purchase flow, and readers for bodies of unspecified shape.

Inputs are plain values (an HTTP status or a transport failure kind, the ``money_state`` the
service reported, the attempt number, a :class:`RetryPolicy`); outputs are decision values
(:class:`Delivered`, :class:`Delivering`, :class:`AskStatus`, :class:`RetryAfter`,
:class:`Raise`). Nothing here sends, sleeps or reads a clock; :mod:`propertykit.deeds._purchase`
acts.

An error body without ``money_state`` is read as ``unknown``, except for 401 and 403, which
refuse the request before any purchase is made and are read as ``not_charged``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from propertykit.config import MONEY_STATES
from propertykit.wire import RetrySettings, backoff_delay

#: Transport failures where the request certainly never reached the service.
NOT_SENT_FAILURES = frozenset({"connect", "connect_error", "connect_timeout"})

#: Delivery states a purchase-status body may report; the last three mean delivery failed.
DELIVERY_STATES = (
    "delivered",
    "delivering",
    "pending",
    "processing",
    "failed",
    "cancelled",
    "canceled",
)
FAILED_DELIVERY = ("failed", "cancelled", "canceled")


# -- decisions (plain values) -------------------------------------------------------------------


@dataclass(frozen=True)
class Delivered:
    """The purchase succeeded and the deed is delivered (charged)."""


@dataclass(frozen=True)
class Delivering:
    """The purchase succeeded and delivery is in progress (charged)."""


@dataclass(frozen=True)
class AskStatus:
    """The outcome is not known: ask purchase-status before anything else."""

    reason: str


@dataclass(frozen=True)
class RetryAfter:
    """Not charged and retryable: send again, with the same key, after ``seconds``."""

    seconds: float


@dataclass(frozen=True)
class Raise:
    """Stop and raise; ``money_state`` is what the user must be told about their money."""

    money_state: str
    reason: str


Decision = Delivered | Delivering | AskStatus | RetryAfter | Raise


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a purchase is retried when it was certainly not charged.

    Parameters
    ----------
    settings
        The client's retry bounds (``max_retries``, ``max_wait``, backoff), shared with every
        other request.
    rng
        Source of the backoff jitter (injectable for tests).

    Examples
    --------
    >>> policy = RetryPolicy(RetrySettings(max_retries=2), random.Random(0))
    >>> policy.max_retries, 0 <= policy.backoff(1) <= 0.5
    (2, True)
    """

    settings: RetrySettings = field(default_factory=RetrySettings)
    rng: random.Random = field(default_factory=random.Random, compare=False)

    @property
    def max_retries(self) -> int:
        return self.settings.max_retries

    @property
    def max_wait(self) -> float:
        return self.settings.max_wait

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1-based): capped, fully jittered."""
        return backoff_delay(retry - 1, self.settings, self.rng)


def decide_after_attempt(
    outcome: int | str,
    *,
    money_state: str | None = None,
    retry_after: float | None = None,
    daily_cap: bool = False,
    transport_retried: bool = False,
    attempt: int,
    policy: RetryPolicy,
) -> Decision:
    """Decide what to do after one purchase request.

    Parameters
    ----------
    outcome
        The HTTP status, or a transport failure kind: ``"connect"`` (also ``"connect_error"``,
        ``"connect_timeout"``: never sent) or anything else, e.g. ``"timeout"``, ``"reset"``,
        ``"truncated"``, ``"read_timeout_after_send"`` (maybe received and acted on).
    money_state
        ``money_state`` read from an error body (``None`` when the body had none).
    retry_after, daily_cap
        ``Retry-After`` seconds of a 429, and whether it is the daily credit cap.
    transport_retried
        The HTTP layer already retried a failure to connect as often as the policy allows
        (so it is not retried again here).
    attempt
        How many purchase requests have been made so far, this one included (1-based).
    policy
        The retry policy.

    Examples
    --------
    >>> decide_after_attempt(202, attempt=1, policy=RetryPolicy())
    Delivering()
    >>> decide_after_attempt(500, money_state="charged", attempt=1, policy=RetryPolicy())
    Raise(money_state='charged', reason='HTTP 500 with money_state=charged')
    """
    if isinstance(outcome, str):
        if outcome in NOT_SENT_FAILURES:
            if transport_retried:
                return Raise("not_charged", f"could not connect ({outcome}); nothing was sent")
            return _retry_or_raise(attempt, policy, None, f"could not connect ({outcome})")
        return AskStatus(f"the request was sent but no complete answer came back ({outcome})")
    if 200 <= outcome < 300:
        return Delivering() if outcome == 202 else Delivered()
    state = money_state if money_state in MONEY_STATES else None
    if state is None:
        state = "not_charged" if outcome in (401, 403) else "unknown"
    if state == "charged":
        return Raise("charged", f"HTTP {outcome} with money_state=charged")
    if state == "unknown":
        return AskStatus(f"HTTP {outcome} and the service could not say whether it charged")
    if outcome >= 500:
        return _retry_or_raise(attempt, policy, None, f"HTTP {outcome}, not charged")
    if outcome == 429 and not daily_cap and retry_after is not None:
        if retry_after <= policy.max_wait:
            return _retry_or_raise(attempt, policy, retry_after, "HTTP 429, not charged")
        return Raise("not_charged", f"HTTP 429: Retry-After {retry_after:g} s exceeds max_wait")
    return Raise("not_charged", f"HTTP {outcome}, not charged; not retryable")


def decide_after_status(
    money_state: str | None,
    delivery: str | None,
    *,
    attempt: int,
    policy: RetryPolicy,
) -> Decision:
    """Decide what to do once purchase-status has answered about an uncertain purchase.

    Parameters
    ----------
    money_state
        ``money_state`` read from the purchase-status body (``None`` when it had none, or when
        purchase-status could not be reached).
    delivery
        The delivery status read from the body (``delivered``/``delivering``/``None``/other).
    attempt
        Purchase requests made so far for this logical purchase (0 when none was sent by this
        client, e.g. when resolving an open intent).
    policy
        The retry policy.

    Examples
    --------
    >>> decide_after_status("charged", "delivered", attempt=1, policy=RetryPolicy())
    Delivered()
    >>> decide_after_status(None, None, attempt=1, policy=RetryPolicy()).money_state
    'unknown'
    """
    if money_state == "charged":
        if delivery == "delivered":
            return Delivered()
        if delivery in FAILED_DELIVERY:
            return Raise("charged", f"purchase-status says charged, delivery {delivery!r}")
        return Delivering()
    if money_state == "not_charged":
        if attempt == 0:
            return RetryAfter(0.0)
        return _retry_or_raise(attempt, policy, None, "purchase-status says not charged")
    return Raise("unknown", "purchase-status could not establish whether the account was charged")


def _retry_or_raise(
    attempt: int, policy: RetryPolicy, retry_after: float | None, reason: str
) -> Decision:
    if attempt > policy.max_retries:
        return Raise("not_charged", f"{reason}; gave up after {attempt} attempts")
    seconds = retry_after if retry_after is not None else policy.backoff(attempt)
    return RetryAfter(seconds)


# -- reading bodies whose shape is not specified -----------------------------------------------


def find_field(
    body: Any, names: tuple[str, ...], accept: Callable[[Any], bool] | None = None
) -> Any:
    """The first value under one of ``names`` in ``body`` (searched breadth-first) that ``accept``s.

    Examples
    --------
    >>> find_field({"result": {"money_state": "charged"}}, ("money_state", "moneyState"))
    'charged'
    """
    queue: list[Any] = [body]
    while queue:
        node = queue.pop(0)
        if isinstance(node, Mapping):
            for name in names:
                value = node.get(name)
                if name in node and (accept(value) if accept else not isinstance(value, Mapping)):
                    return value
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node)
    return None


def read_money_state(body: Any) -> str | None:
    """``charged``/``not_charged``/``unknown`` wherever the body carries it, else ``None``.

    Examples
    --------
    >>> read_money_state({"success": True, "result": {"money_state": "not_charged"}})
    'not_charged'
    """
    value = find_field(body, ("money_state", "moneyState"), lambda value: value in MONEY_STATES)
    return str(value) if value is not None else None


def read_delivery_status(body: Any) -> str | None:
    """The delivery status (``delivered``, ``delivering``, ...) wherever the body carries it.

    Only values that describe a delivery are taken (an unrelated ``"status": "ok"`` is not).

    Examples
    --------
    >>> read_delivery_status({"result": {"status": "delivering"}})
    'delivering'
    """
    value = find_field(
        body,
        ("status", "deliveryStatus", "delivery_status"),
        lambda value: value in DELIVERY_STATES,
    )
    return str(value) if value is not None else None


def read_purchase_keys(body: Any) -> set[str] | None:
    """Idempotency keys of the charged purchases a purchase-status body lists, if it lists any.

    ``None`` means the body names no keys at all (its shape is not specified), so nothing can
    be concluded about a particular key.

    Examples
    --------
    >>> read_purchase_keys({"result": {"purchases": [{"idempotencyKey": "k1"}]}})
    {'k1'}
    >>> read_purchase_keys({"result": {"money_state": "charged"}}) is None
    True
    """
    keys: set[str] = set()
    queue: list[Any] = [body]
    while queue:
        node = queue.pop()
        if isinstance(node, Mapping):
            for name in ("idempotencyKey", "idempotency_key"):
                if isinstance(node.get(name), str):
                    keys.add(node[name])
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node)
    return keys or None
