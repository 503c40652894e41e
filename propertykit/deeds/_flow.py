"""Title-deed purchases that are never charged twice and never leave the buyer guessing.

Decide, then act: the pure functions of :mod:`propertykit.deeds._decisions` turn what happened (an
HTTP status or a transport failure, the reported ``money_state``, the attempt number, a retry
policy) into a plain decision value; :func:`buy_title_deed` carries the decisions out over a
:class:`~propertykit.deeds._transport.PurchaseTransport` and writes every step to the
:class:`~propertykit.deeds._journal.Journal`.

The rules, from the service interface:

* one logical purchase sends one ``Idempotency-Key`` on every attempt; separate purchases send
  different keys;
* ``200`` is delivered, ``202`` is delivering; both mean the account was charged, and a ``202`` is
  never retried (poll with :meth:`~propertykit.deeds._purchase.Purchase.refresh` /
  :meth:`~propertykit.deeds._purchase.Purchase.wait`);
* an error whose ``money_state`` is ``charged`` is never retried: it is raised, saying the account
  was charged and what to do; ``not_charged`` is retried only when the error is retryable (5xx,
  a short 429, a connection that never opened); ``unknown``, a read timeout or a dropped
  connection after the request was sent -> ask purchase-status first and act on its answer; when
  that cannot be established either, :class:`~propertykit.errors.PurchaseUncertain` is raised and
  nothing is sent again;
* a title already bought (per the journal or per purchase-status) is not bought again: the
  recorded purchase is returned with ``previously_bought=True`` (``buy_again=True`` overrides);
  an open intent left by a crashed kernel is resolved through purchase-status first;
* kernels sharing one journal file buy one at a time (a cross-process lock on the journal).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Literal

from propertykit.config import MONEY_STATES
from propertykit.deeds._decisions import (
    AskStatus,
    Decision,
    Delivered,
    Delivering,
    Raise,
    RetryAfter,
    RetryPolicy,
    decide_after_attempt,
    decide_after_status,
    read_delivery_status,
    read_money_state,
    read_purchase_keys,
)
from propertykit.deeds._journal import Journal, PurchaseRecord
from propertykit.deeds._purchase import Purchase
from propertykit.deeds._transport import NotAnswered, PurchaseTransport
from propertykit.errors import (
    ApiError,
    DailyCapReached,
    InvalidInput,
    NotFound,
    PropertyKitError,
    PurchaseUncertain,
)

logger = logging.getLogger("propertykit")


def buy_title_deed(
    transport: PurchaseTransport,
    journal: Journal,
    title_number: str,
    payload: Mapping[str, Any] | None = None,
    *,
    policy: RetryPolicy | None = None,
    buy_again: bool = False,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
) -> Purchase:
    """Buy one title deed: charged at most once, and never an unknown outcome left unsaid.

    Parameters
    ----------
    transport
        The HTTP seam (``pk.Client`` provides one).
    journal
        Where intents and outcomes are recorded.
    title_number
        The title to buy.
    payload
        JSON body of the purchase request (``None`` sends none).
    policy
        Retries for attempts that were certainly not charged.
    buy_again
        Buy even when the journal or purchase-status shows the title already bought. Open
        intents are still resolved first.
    sleep, monotonic
        How it waits between retries, and the clock the purchase's ``wait`` polls on (the
        client's :class:`~propertykit.wire._clock.Clock`; injectable for tests).

    Returns
    -------
    Purchase
        ``status`` ``"delivered"`` or ``"delivering"``; ``previously_bought`` when nothing was
        bought now.

    Raises
    ------
    ApiError
        With ``money_state`` ``"charged"`` (do not buy again) or ``"not_charged"``.
    PurchaseUncertain
        When neither the purchase nor purchase-status established the outcome.

    Examples
    --------
    >>> from propertykit.deeds import HttpPurchaseTransport
    >>> transport = HttpPurchaseTransport(client._transport, client.endpoints)  # as pk.Client does
    >>> purchase = buy_title_deed(transport, Journal("deeds.jsonl"), sb.title_numbers[4])
    >>> purchase.status, purchase.previously_bought
    ('delivered', False)
    >>> buy_title_deed(transport, Journal("deeds.jsonl"), sb.title_numbers[4]).previously_bought
    True
    """
    title_number = check_title_number(title_number)
    body = check_payload(payload)  # before any request, and before the journal holds an intent
    flow = _Flow(transport, journal, title_number, policy or RetryPolicy(), sleep, monotonic)
    with journal.lock():  # kernels sharing the journal buy one at a time
        return flow.run(body, buy_again=buy_again)


def check_payload(payload: Mapping[str, Any] | None) -> dict[str, Any]:
    """The purchase payload as a dict, or :class:`~propertykit.errors.InvalidInput`.

    It must encode as standard JSON: no ``NaN`` or infinity, no objects JSON has no form for.

    Examples
    --------
    >>> check_payload({"reference": "job 7"})
    {'reference': 'job 7'}
    >>> check_payload({"price": float("nan")})
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: The purchase payload cannot be sent as JSON: ...
    """
    if payload is None:
        return {}
    if not isinstance(payload, Mapping):
        raise InvalidInput(f"The purchase payload must be a mapping, got {type(payload).__name__}")
    body = dict(payload)
    try:
        json.dumps(body, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"The purchase payload cannot be sent as JSON: {exc}") from None
    return body


def check_title_number(title_number: object) -> str:
    """The title number, or :class:`~propertykit.errors.InvalidInput` before anything is sent.

    HM Land Registry title numbers are letters and digits (``NGL123456``, ``ST100020``); anything
    else is refused here, in words a form can show as they are.

    Examples
    --------
    >>> check_title_number("NGL123456")
    'NGL123456'
    >>> check_title_number("bad title!")
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: “bad title!” is not a title number: title numbers are letters and digits only, such as NGL123456.
    """  # noqa: E501
    if not isinstance(title_number, str):
        raise InvalidInput(
            f"A title number is text, such as NGL123456, not a {type(title_number).__name__}."
        )
    if not title_number.strip():
        raise InvalidInput("Type a title number, such as NGL123456.")
    if not (title_number.isascii() and title_number.isalnum()) or len(title_number) > 20:
        raise InvalidInput(
            f"“{title_number}” is not a title number: title numbers are letters and digits only, "
            "such as NGL123456."
        )
    return title_number


def purchase_status(transport: PurchaseTransport, title_number: str) -> dict[str, Any]:
    """The purchase-status body for ``title_number``, raw (its shape is not specified).

    ``money_state`` is read from wherever the body carries it with
    :func:`~propertykit.deeds._decisions.read_money_state`; a body that is not a JSON object is
    returned as ``{"body": <text>}``.

    Examples
    --------
    >>> from propertykit.deeds import HttpPurchaseTransport
    >>> transport = HttpPurchaseTransport(client._transport, client.endpoints)
    >>> purchase_status(transport, sb.title_numbers[5])["result"]["money_state"]
    'not_charged'
    """
    body = transport.fetch_status(check_title_number(title_number))
    return body if isinstance(body, dict) else {"body": body}


class _Flow:
    """One call of :func:`buy_title_deed`: carries out the decisions and keeps the journal."""

    def __init__(
        self,
        transport: PurchaseTransport,
        journal: Journal,
        title_number: str,
        policy: RetryPolicy,
        sleep: Callable[[float], None],
        monotonic: Callable[[], float],
    ) -> None:
        self.transport = transport
        self.journal = journal
        self.title = title_number
        self.policy = policy
        self.sleep = sleep
        self.monotonic = monotonic
        self.service = transport.service

    def run(self, payload: dict[str, Any], *, buy_again: bool) -> Purchase:
        self.buy_again = buy_again
        open_intents = self.journal.open_intents(service=self.service, title_number=self.title)
        if open_intents:
            resumed = self.resume(open_intents, payload)
            if resumed is not None:
                return resumed
        if not buy_again:
            recorded = self.journal.charged(service=self.service, title_number=self.title)
            if recorded is not None:
                return self.purchase(
                    _delivery(recorded.status),
                    recorded.data,
                    recorded.idempotency_key,
                    previous=True,
                )
            body = self.check_not_bought()
            if read_money_state(body) == "charged":
                decision = decide_after_status(
                    "charged", read_delivery_status(body), attempt=0, policy=self.policy
                )
                status = "delivered" if isinstance(decision, Delivered) else None
                return self.purchase(_delivery(status), body, None, previous=True)
        key = str(uuid.uuid4())
        self.journal.record_intent(self.title, key, service=self.service, payload=payload)
        return self.send(key, payload, attempt=0)

    def check_not_bought(self) -> Any:
        """Ask purchase-status before a new purchase; 404 means never bought."""
        try:
            return self.transport.fetch_status(self.title)
        except ApiError as exc:
            if exc.status_code == 404:
                return None
            exc.hint = (
                f"Nothing was sent: could not check whether title {self.title} was already bought. "
                "Try again, or pass buy_again=True to buy without checking"
            )
            exc.args = (exc._describe(),)
            raise

    def resume(
        self, open_intents: list[PurchaseRecord], payload: dict[str, Any]
    ) -> Purchase | None:
        """Earlier purchases of this title never recorded an outcome: ask before anything.

        Returns the purchase, or ``None`` when purchase-status showed none of the open intents
        was charged (they are closed as ``not_charged``) and the title was bought by another
        purchase; the caller then treats the title as already bought (or buys again).
        """
        logger.info("resolving an open purchase intent for %s via purchase-status", self.title)
        body, failure = self.ask_status(open_intents[-1].idempotency_key)
        money_state = read_money_state(body)
        listed = read_purchase_keys(body) if money_state == "charged" else None
        if money_state == "charged" and listed is None and self.bought_before():
            # A charge that names no key may be the earlier purchase's: not these intents' own.
            money_state = "unknown"
        latest = open_intents[-1].idempotency_key
        for record in open_intents:
            charged = listed is not None and record.idempotency_key in listed
            if money_state == "not_charged" and record.idempotency_key != latest:
                self.close_not_charged(record.idempotency_key, "purchase-status: not charged")
            elif listed is not None and not charged:
                self.close_not_charged(record.idempotency_key, "purchase-status lists no charge")
        if listed is not None and latest not in listed:
            charged_keys = [r.idempotency_key for r in open_intents if r.idempotency_key in listed]
            if not charged_keys:
                return None
            latest = charged_keys[-1]
        decision = decide_after_status(
            money_state, read_delivery_status(body), attempt=0, policy=self.policy
        )
        if isinstance(decision, RetryAfter):
            return self.send(latest, payload, attempt=0)
        return self.act(decision, latest, body, failure, previous=True)

    def bought_before(self) -> bool:
        """Whether the journal holds a charged purchase of this title (an earlier one)."""
        return self.journal.charged(service=self.service, title_number=self.title) is not None

    def close_not_charged(self, key: str, detail: str) -> None:
        self.journal.record_outcome(
            self.title, key, service=self.service, money_state="not_charged", detail=detail
        )

    def send(self, key: str, payload: dict[str, Any], *, attempt: int) -> Purchase:
        while True:
            attempt += 1
            try:
                result = self.transport.send_purchase(self.title, key, payload)
            except PropertyKitError as exc:  # nothing was sent, and nothing before was charged
                self.journal.record_outcome(
                    self.title,
                    key,
                    service=self.service,
                    money_state="not_charged",
                    detail=str(exc),
                )
                raise
            body: Any = None
            if isinstance(result, NotAnswered):
                failure: PropertyKitError | None = result.error
                decision = decide_after_attempt(
                    result.kind,
                    transport_retried=result.retried,
                    attempt=attempt,
                    policy=self.policy,
                )
            else:
                body, failure = result.body, result.error
                decision = decide_after_attempt(
                    result.status_code,
                    money_state=_error_money_state(result.error, body),
                    retry_after=result.error.retry_after if result.error else None,
                    daily_cap=isinstance(result.error, DailyCapReached),
                    attempt=attempt,
                    policy=self.policy,
                )
            if isinstance(decision, AskStatus):
                logger.info(
                    "purchase of %s: %s; asking purchase-status", self.title, decision.reason
                )
                status_body, status_failure = self.ask_status(key)
                decision = decide_after_status(
                    self.money_state_of(status_body, key),
                    read_delivery_status(status_body),
                    attempt=attempt,
                    policy=self.policy,
                )
                if status_body is not None:
                    body = status_body
                failure = failure or status_failure
            if isinstance(decision, RetryAfter):
                self.sleep(decision.seconds)
                continue
            return self.act(decision, key, body, failure, previous=False)

    def ask_status(self, key: str | None = None) -> tuple[Any, PropertyKitError | None]:
        """Purchase-status, carrying this purchase's ``Idempotency-Key`` when there is one."""
        try:
            if key is None:
                return self.transport.fetch_status(self.title), None
            return self.transport.fetch_status(self.title, idempotency_key=key), None
        except PropertyKitError as exc:
            return None, exc

    def money_state_of(self, body: Any, key: str) -> str | None:
        """What purchase-status says about the purchase sent with ``key``.

        "Charged" counts only for this purchase: when the body lists idempotency keys, ``key``
        must be among them; when it lists none and the title may have been bought before
        (``buy_again``), a charge may be the earlier purchase's, so the outcome is unknown.
        """
        money_state = read_money_state(body)
        if money_state != "charged":
            return money_state
        listed = read_purchase_keys(body)
        if listed is not None:
            return "charged" if key in listed else "unknown"
        return "unknown" if self.buy_again else "charged"

    def act(
        self,
        decision: Decision,
        key: str,
        body: Any,
        failure: PropertyKitError | None,
        *,
        previous: bool,
    ) -> Purchase:
        if isinstance(decision, Delivered | Delivering):
            status: Literal["delivered", "delivering"] = (
                "delivered" if isinstance(decision, Delivered) else "delivering"
            )
            self.journal.record_outcome(
                self.title,
                key,
                service=self.service,
                money_state="charged",
                status=status,
                data=body,
            )
            return self.purchase(status, body, key, previous=previous)
        assert isinstance(decision, Raise), decision
        if decision.money_state == "unknown":
            message = (
                f"Could not establish whether buying title {self.title} charged your account "
                f"({decision.reason}). Do not buy it again blindly: check later with "
                f"client.purchase_status({self.title!r}), or call buy_title_deed({self.title!r}) "
                "again, which asks purchase-status first and never sends a second charge."
            )
            self.journal.record_uncertain(self.title, key, service=self.service, detail=message)
            raise PurchaseUncertain(message, title_number=self.title) from failure
        self.journal.record_outcome(
            self.title,
            key,
            service=self.service,
            money_state=decision.money_state,
            detail=decision.reason,
            data=body,
        )
        error = _explain(failure, decision, self.title)
        if error is failure:
            raise error
        raise error from failure

    def purchase(
        self,
        status: Literal["delivered", "delivering"],
        body: Any,
        key: str | None,
        *,
        previous: bool,
    ) -> Purchase:
        return Purchase(
            self.title,
            status,
            data=body,
            idempotency_key=key,
            previously_bought=previous,
            _fetch_status=self.transport.fetch_status,
            _on_status=self.record_delivery,
            _sleep=self.sleep,
            _monotonic=self.monotonic,
        )

    def record_delivery(self, purchase: Purchase) -> None:
        if purchase.idempotency_key is not None:
            self.journal.record_outcome(
                self.title,
                purchase.idempotency_key,
                service=self.service,
                money_state="charged",
                status=purchase.status,
            )


def _delivery(status: str | None) -> Literal["delivered", "delivering"]:
    return "delivered" if status == "delivered" else "delivering"


def _error_money_state(error: ApiError | None, body: Any) -> str | None:
    if error is None:
        return None
    if error.money_state in MONEY_STATES:
        return error.money_state
    return read_money_state(body)


def _explain(failure: PropertyKitError | None, decision: Raise, title: str) -> PropertyKitError:
    """The error to raise, its message saying what happened to the money and what to do."""
    if decision.money_state == "charged":
        hint = (
            f"Your account WAS charged for title {title}. Do not buy it again: the deed may still "
            f"be delivered; check client.purchase_status({title!r}) and contact the service's "
            "support with this error if it does not arrive"
        )
    elif isinstance(failure, NotFound):  # trying again later would not help
        hint = f"Your account was NOT charged: title {title} does not exist (check the number)"
    else:
        hint = f"Your account was NOT charged for title {title}; it is safe to try again later"
    if isinstance(failure, ApiError):
        failure.money_state = decision.money_state
        failure.hint = f"{failure.hint}. {hint}" if failure.hint else hint
        failure.args = (failure._describe(),)
        return failure
    if failure is not None and decision.money_state == "not_charged":
        # Raised before any answer (e.g. NetworkError): widgets read "no money_state" as
        # not charged, which is right here.
        failure.args = (f"{failure}. {hint}",)
        return failure
    # Charged, established by purchase-status rather than by an error answer.
    url = getattr(failure, "url", None)
    return ApiError(
        0, message=decision.reason, money_state=decision.money_state, hint=hint, url=url
    )
