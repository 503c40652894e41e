"""``PurchaseForm``: buy a title deed from a notebook, with a confirmation step and plain outcomes.

Exported as :class:`propertykit.widgets.lookup_form.PurchaseForm`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import ipywidgets as widgets

from propertykit.deeds import read_delivery_status, read_money_state
from propertykit.widgets.messages import (
    CHARGED,
    UNKNOWN,
    describe_error,
    describe_money_state,
    money_state_of,
)
from propertykit.widgets.parts import Form, paragraph
from propertykit.widgets.timing import Scheduler, start_timer

if TYPE_CHECKING:
    from propertykit.client import Client
    from propertykit.deeds import Purchase

__all__ = ["PurchaseForm"]

logger = logging.getLogger("propertykit")


class PurchaseForm(Form):
    """Buy a title deed: confirm the cost, watch delivery, read what happened to the money.

    Parameters
    ----------
    client
        The client to buy with (its purchase journal keeps every purchase charged at most once).
    cost
        What one title deed costs, shown before confirming: a number of credits or a text such
        as ``"£3"``. The service does not state it; ``None`` says the cost is unknown.
    poll_interval
        Seconds between purchase-status checks while a deed is being delivered.
    timeout
        Seconds to keep checking before leaving the purchase as "being delivered".
    scheduler, clock
        How delayed checks are run (default: a timer thread) and the clock timing them out.

    Attributes
    ----------
    title, buy_button, confirmation, confirm_button, cancel_button, check_button, progress,
    message
        The widgets, for driving the form from code.
    value
        The :class:`~propertykit.deeds.purchase.Purchase` of the last successful purchase, else
        ``None``.
    money_state
        ``charged``, ``not_charged`` or ``unknown`` after the last purchase, else ``None``.

    Examples
    --------
    >>> import propertykit as pk
    >>> form = pk.widgets.PurchaseForm(client, cost=25)
    >>> form.title.value = sb.title_numbers[6]
    >>> form.buy_button.click()  # asks to confirm; nothing is sent yet
    >>> form.confirm_button.click()
    >>> form.money_state, form.value.status
    ('charged', 'delivered')
    """

    def __init__(
        self,
        client: Client,
        *,
        cost: float | str | None = None,
        poll_interval: float = 2.0,
        timeout: float = 300.0,
        scheduler: Scheduler = start_timer,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(client)
        self.cost = cost
        self.poll_interval = poll_interval
        self.timeout = timeout
        self._scheduler = scheduler
        self._clock = clock
        self.value: Purchase | None = None
        self.money_state: str | None = None
        self._pending_title: str | None = None
        self._build()

    def _build(self) -> None:
        hidden = widgets.Layout(display="none")
        self.title = widgets.Text(description="Title", placeholder="Title number, e.g. NGL123456")
        self.buy_button = widgets.Button(description="Buy…", button_style="primary")
        self.confirmation = widgets.HTML()
        self.confirm_button = widgets.Button(description="Confirm purchase", button_style="danger")
        self.cancel_button = widgets.Button(description="Cancel")
        self.confirm_box = widgets.VBox(
            [self.confirmation, widgets.HBox([self.confirm_button, self.cancel_button])],
            layout=hidden,
        )
        self.progress = widgets.IntProgress(
            value=0, min=0, max=1, description="Delivering", layout=widgets.Layout(display="none")
        )
        self.check_button = widgets.Button(
            description="Check purchase status", layout=widgets.Layout(display="none")
        )
        self.message = widgets.HTML()
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.title, self.buy_button]),
                self.confirm_box,
                self.progress,
                self.message,
                self.check_button,
            ]
        )
        self.buy_button.on_click(lambda _button: self.ask_confirmation())
        self.confirm_button.on_click(lambda _button: self.confirm())
        self.cancel_button.on_click(lambda _button: self.cancel())
        self.check_button.on_click(lambda _button: self.check_status())

    # -- steps ------------------------------------------------------------------------------

    def cost_text(self) -> str:
        """The sentence about the price shown before confirming.

        Examples
        --------
        >>> pk.widgets.PurchaseForm(client, cost=25).cost_text()
        'This costs 25 credits.'
        """
        if self.cost is None:
            return (
                "The cost is unknown: the service does not state what a title deed costs, so "
                "check your account's price list before confirming."
            )
        if isinstance(self.cost, int | float):
            return f"This costs {self.cost:g} credits."
        return f"This costs {self.cost}."

    def ask_confirmation(self) -> None:
        """Step 1 (the Buy button): state the title and the cost, and wait for Confirm/Cancel."""
        title = self.title.value.strip()
        if not title:
            self._say("Type a title number first.", "error")
            return
        self._pending_title = title
        self.confirmation.value = paragraph(
            f"Buy the title deed for {title}? {self.cost_text()} Your account is charged once, "
            "however often the request has to be retried.",
            kind="warn",
        )
        self.confirm_box.layout.display = None
        self.buy_button.disabled = True
        self.message.value = ""

    def cancel(self) -> None:
        """Step 2, declined: nothing is sent."""
        self._end_confirmation()
        self._say("Cancelled: nothing was bought and you were not charged.")

    def confirm(self) -> None:
        """Step 2, accepted: buy, then report the outcome (and watch a delivery in progress)."""
        title = self._pending_title
        self._end_confirmation()
        if title is None:
            return
        self.value = None
        self.check_button.layout.display = "none"
        self._say(f"Buying the title deed for {title}…")
        try:
            with self._lock:
                purchase = self.client.buy_title_deed(title)
        except Exception as exc:
            logger.debug("purchase failed", exc_info=True)
            self._report_failure(title, exc)
            return
        self.value = purchase
        self.money_state = purchase.money_state
        earlier = (
            "This title was bought before (see the purchase journal), so nothing was bought or "
            "charged now. "
            if purchase.previously_bought
            else ""
        )
        if purchase.status == "delivered":
            self._say(earlier + describe_money_state("charged", delivered=True) + ".", "ok")
            return
        self._say(f"{earlier}{CHARGED}…", "ok")
        self._watch(purchase, started=self._clock())

    def check_status(self) -> None:
        """Ask purchase-status for the title and say what it means for the money.

        Examples
        --------
        >>> form = PurchaseForm(client)
        >>> form.title.value = sb.title_numbers[7]
        >>> form.check_status()
        >>> "You were not charged" in form.message.value
        True
        """
        title = self._pending_title or self.title.value.strip()
        if not title:
            self._say("Type a title number first.", "error")
            return
        try:
            with self._lock:
                body = self.client.purchase_status(title)
        except Exception as exc:
            logger.debug("purchase-status failed", exc_info=True)
            self._say(f"{UNKNOWN}. Could not ask the purchase status: {describe_error(exc)}")
            return
        state = read_money_state(body) or "unknown"
        self.money_state = state
        delivered = read_delivery_status(body) == "delivered"
        text = describe_money_state(state, delivered=delivered)
        if state == "not_charged":
            text += f": no purchase of {title} is recorded, so it is safe to buy it"
        self._say(f"Purchase status of {title}: {text}.", "error" if state == "unknown" else "ok")
        if state != "unknown":
            self.check_button.layout.display = "none"

    # -- delivery ---------------------------------------------------------------------------

    def _watch(self, purchase: Purchase, *, started: float) -> None:
        self.progress.max = max(1, int(self.timeout / max(self.poll_interval, 1e-9)))
        self.progress.value = 0
        self.progress.layout.display = None
        self._scheduler(self.poll_interval, lambda: self._poll(purchase, started))

    def _poll(self, purchase: Purchase, started: float) -> None:
        try:
            with self._lock:
                purchase.refresh()
        except Exception as exc:
            logger.debug("delivery check failed", exc_info=True)
            self._stop_watching(
                f"{CHARGED}, but checking the delivery failed: {describe_error(exc)} "
                "Press “Check purchase status” later; do not buy again.",
                "warn",
            )
            return
        self.progress.value = min(self.progress.max, self.progress.value + 1)
        if purchase.status == "delivered":
            self._stop_watching(describe_money_state("charged", delivered=True) + ".", "ok")
        elif self._clock() - started >= self.timeout:
            self._stop_watching(
                f"{CHARGED}: still on its way after {self.timeout:g} s. Press “Check purchase "
                "status” later; do not buy again.",
                "warn",
            )
        else:
            self._scheduler(self.poll_interval, lambda: self._poll(purchase, started))

    def _stop_watching(self, text: str, kind: str) -> None:
        self.progress.layout.display = "none"
        if kind != "ok":
            self.check_button.layout.display = None
        self._say(text, kind)

    # -- outcome ----------------------------------------------------------------------------

    def _report_failure(self, title: str, error: BaseException) -> None:
        state = money_state_of(error)
        self.money_state = state
        detail = describe_error(error)
        if state == "charged":
            text = (
                f"{CHARGED} — do not buy it again. The service reported a problem after "
                f"charging: {detail} Check the purchase status; if the deed does not arrive, "
                "contact the service's support."
            )
        elif state == "not_charged":
            text = f"{describe_money_state(state)}. {detail}"
        else:
            text = f"{UNKNOWN}. Press “Check purchase status” for title {title}."
        if state != "not_charged":
            self.check_button.layout.display = None
        self._say(text, "error")

    def _end_confirmation(self) -> None:
        self.confirm_box.layout.display = "none"
        self.buy_button.disabled = False

    def _say(self, text: str, kind: str = "info") -> None:
        self.message.value = paragraph(text, kind=kind)
