"""The result of a title-deed purchase: what was bought, whether it has arrived, and polling.

A :class:`Purchase` exists only when the account paid. How purchases are made safely is
:mod:`propertykit.deeds._flow`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from propertykit.deeds._decisions import read_delivery_status


@dataclass(eq=False)
class Purchase:
    """A title deed the account paid for.

    Attributes
    ----------
    title_number
        The title bought.
    status
        ``"delivered"`` or ``"delivering"`` (a 202: charged, the deed still on its way).
    money_state
        Always ``"charged"``: a ``Purchase`` exists only when the account paid.
    data
        The service's latest answer about this purchase (the purchase body, or purchase-status).
    idempotency_key
        The key every attempt of this purchase carried (``None`` when only purchase-status knew).
    previously_bought
        True when nothing was bought now because the journal or purchase-status showed the
        title already bought.

    Examples
    --------
    >>> purchase = Purchase("NGL1", "delivered", data={})
    >>> purchase.status, purchase.money_state
    ('delivered', 'charged')
    """

    title_number: str
    status: Literal["delivered", "delivering"]
    data: Any = None
    idempotency_key: str | None = None
    previously_bought: bool = False
    money_state: Literal["charged"] = "charged"
    _fetch_status: Callable[[str], Any] | None = field(default=None, repr=False)
    _on_status: Callable[[Purchase], None] | None = field(default=None, repr=False)
    _sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    _monotonic: Callable[[], float] = field(default=time.monotonic, repr=False)

    def refresh(self) -> Purchase:
        """Ask purchase-status once and update ``status`` and ``data``; returns ``self``.

        Examples
        --------
        >>> purchase = client.buy_title_deed(sb.title_numbers[2])
        >>> purchase.refresh().status
        'delivered'
        """
        if self.status == "delivered" or self._fetch_status is None:
            return self
        body = self._fetch_status(self.title_number)
        self.data = body
        if read_delivery_status(body) == "delivered":
            self.status = "delivered"
            if self._on_status is not None:
                self._on_status(self)
        return self

    def wait(
        self,
        timeout: float = 60.0,
        interval: float = 1.0,
        *,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] | None = None,
    ) -> Purchase:
        """Poll purchase-status every ``interval`` seconds until delivered or ``timeout`` passes.

        It waits and tells the time on the clock of the client that bought it (``sleep`` and
        ``clock`` replace them).

        Returns ``self``; when the timeout passes first, ``status`` is still ``"delivering"``
        (the account was charged either way; call ``wait`` again later).

        Examples
        --------
        >>> client.buy_title_deed(sb.title_numbers[3]).wait(timeout=30).status
        'delivered'
        """
        sleep = sleep or self._sleep
        clock = clock or self._monotonic
        deadline = clock() + timeout
        self.refresh()
        while self.status != "delivered":
            remaining = deadline - clock()
            if remaining <= 0:
                break
            sleep(min(interval, remaining))
            self.refresh()
        return self
