"""Whether a title was bought before: asked before a purchase is offered, not while buying.

A form (or a careful script) asks :func:`find_earlier_purchase` before it puts a purchase up for
confirmation, so that a title already bought is said with when, and buying it again is a choice of
its own. It looks where :func:`propertykit.deeds._flow.buy_title_deed` looks: the journal's charged
purchases first, then purchase-status (free). It sends no purchase and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from propertykit.deeds._decisions import read_delivery_status, read_money_state
from propertykit.deeds._flow import check_title_number
from propertykit.deeds._journal import Journal
from propertykit.deeds._transport import PurchaseTransport
from propertykit.errors import ApiError

_TIME_FIELDS = ("purchasedAt", "purchased_at", "chargedAt", "at")


@dataclass(frozen=True)
class EarlierPurchase:
    """A charged purchase of a title, found before buying it again.

    Attributes
    ----------
    title_number
        The title.
    source
        ``"journal"`` (this machine's purchase journal) or ``"purchase-status"`` (the service).
    at
        When it was bought (aware UTC), when known.
    status
        ``delivered`` or ``delivering`` when known, else ``None``.
    """

    title_number: str
    source: str
    at: datetime | None
    status: str | None


def find_earlier_purchase(
    transport: PurchaseTransport, journal: Journal, title_number: str
) -> EarlierPurchase | None:
    """The latest charged purchase of ``title_number``, or ``None`` when it was never bought.

    Raises :class:`~propertykit.errors.InvalidInput` for a malformed title (nothing is sent), and
    the error of purchase-status when it cannot be asked (a 404 means never bought).

    Examples
    --------
    >>> from propertykit.deeds import HttpPurchaseTransport, Journal
    >>> transport = HttpPurchaseTransport(client._transport, client.endpoints)
    >>> find_earlier_purchase(transport, Journal("deeds.jsonl"), sb.title_numbers[9]) is None
    True
    >>> _ = client.buy_title_deed(sb.title_numbers[9])
    >>> find_earlier_purchase(transport, Journal("deeds.jsonl"), sb.title_numbers[9]).source
    'purchase-status'
    """
    title_number = check_title_number(title_number)
    record = journal.charged(service=transport.service, title_number=title_number)
    if record is not None:
        return EarlierPurchase(
            title_number, "journal", record.outcome_at or record.intent_at, record.status
        )
    try:
        body = transport.fetch_status(title_number)
    except ApiError as exc:
        if exc.status_code == 404:
            return None
        raise
    if read_money_state(body) != "charged":
        return None
    return EarlierPurchase(
        title_number, "purchase-status", _latest_time(body), read_delivery_status(body)
    )


def _latest_time(body: Any) -> datetime | None:
    """The latest purchase time a purchase-status body gives anywhere (its shape is not set)."""
    times: list[datetime] = []
    queue: list[Any] = [body]
    while queue:
        node = queue.pop()
        if isinstance(node, dict):
            for name in _TIME_FIELDS:
                value = node.get(name)
                if isinstance(value, str):
                    try:
                        moment = datetime.fromisoformat(value)
                    except ValueError:
                        continue
                    if moment.tzinfo is not None:
                        times.append(moment)
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node)
    return max(times) if times else None
