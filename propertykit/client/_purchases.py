"""``client.buy_title_deed(...)``, ``purchase_status`` and ``earlier_purchase``: to ``deeds``.

The purchase flow (one ``Idempotency-Key`` per logical purchase, the journal, ``money_state``)
lives in ``deeds``; the client lends it its transport, endpoints, retry bounds and journal file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from propertykit.config import Endpoints
from propertykit.wire import Transport

if TYPE_CHECKING:
    from propertykit.deeds import EarlierPurchase, Purchase


class PurchasesMixin:
    """The title-deed methods of ``pk.Client``."""

    _transport: Transport
    endpoints: Endpoints
    journal: Path | None

    def buy_title_deed(
        self, title_number: str, *, buy_again: bool = False, **payload: Any
    ) -> Purchase:
        """Buy a title deed, charged at most once (see :mod:`propertykit.deeds._purchase`).

        Every attempt carries the same ``Idempotency-Key``; the intent is written to the journal
        before sending and the outcome after. A title already bought (per the journal or per
        purchase-status) is returned as the earlier :class:`~propertykit.deeds._purchase.Purchase`
        with ``previously_bought=True`` instead of being bought again.

        Parameters
        ----------
        title_number
            The title to buy.
        buy_again
            Buy even when the title was bought before (open intents are still resolved first).
        **payload
            JSON fields of the purchase request.

        Returns
        -------
        Purchase
            ``status`` ``"delivered"`` or ``"delivering"`` (poll with ``.refresh()`` /
            ``.wait()``), ``money_state`` ``"charged"``.

        Raises
        ------
        ApiError
            With ``money_state`` ``"charged"`` (do not buy again) or ``"not_charged"``.
        PurchaseUncertain
            The outcome could not be established; call again later (it asks first).

        Examples
        --------
        >>> purchase = client.buy_title_deed(sb.title_numbers[0])
        >>> purchase.status, purchase.money_state
        ('delivered', 'charged')
        """
        from propertykit import deeds

        return deeds.buy_title_deed(
            deeds.HttpPurchaseTransport(self._transport, self.endpoints),
            deeds.Journal(self.journal),
            title_number,
            payload,
            policy=deeds.RetryPolicy(self._transport.retry, self._transport.clock.random),
            buy_again=buy_again,
            sleep=self._transport.clock.sleep,
            monotonic=self._transport.clock.monotonic,
        )

    def purchase_status(self, title_number: str) -> dict[str, Any]:
        """The raw purchase-status answer for a title (never cached).

        Its shape is not specified by the service; ``money_state`` is read from wherever it is
        with :func:`propertykit.deeds._purchase.read_money_state`.

        Examples
        --------
        >>> client.purchase_status(sb.title_numbers[1])["result"]["money_state"]
        'not_charged'
        >>> purchase = client.buy_title_deed(sb.title_numbers[1])
        >>> client.purchase_status(sb.title_numbers[1])["result"]["money_state"]
        'charged'
        """
        from propertykit import deeds

        transport = deeds.HttpPurchaseTransport(self._transport, self.endpoints)
        return deeds.purchase_status(transport, title_number)

    def earlier_purchase(self, title_number: str) -> EarlierPurchase | None:
        """The charged purchase of a title made before (journal, then purchase-status), if any.

        Nothing is bought: ask this before offering a purchase, so that a title already bought
        is said (with when) instead of being put up for confirmation as if new.

        Examples
        --------
        >>> client.earlier_purchase(sb.title_numbers[19]) is None  # no example buys this one
        True
        """
        from propertykit import deeds

        transport = deeds.HttpPurchaseTransport(self._transport, self.endpoints)
        return deeds.find_earlier_purchase(transport, deeds.Journal(self.journal), title_number)
