"""``PurchaseForm``: buy a title deed from a notebook, with a confirmation step and plain outcomes.

Exported as :class:`propertykit.widgets._lookup_form.PurchaseForm`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from typing import TYPE_CHECKING

import ipywidgets as widgets

from propertykit.deeds import Journal, check_title_number, read_delivery_status, read_money_state
from propertykit.errors import InvalidInput, NotFound
from propertykit.widgets._messages import (
    UNKNOWN,
    describe_error,
    describe_money_state,
    money_state_of,
)
from propertykit.widgets._parts import Form, paragraph
from propertykit.widgets._timing import Scheduler, start_timer

if TYPE_CHECKING:
    from propertykit.client import Client
    from propertykit.deeds import EarlierPurchase, Purchase

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
    title, buy_button, confirmation, confirm_button, buy_again_button, cancel_button,
    check_button, progress, message
        The widgets, for driving the form from code. A confirmation holds only for the title it
        names: editing ``title`` withdraws it. ``confirm_button`` buys a title not bought before;
        a title bought before is offered only through ``buy_again_button``.
    value
        The :class:`~propertykit.deeds._purchase.Purchase` of the last successful purchase, else
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
        self._pending: _Pending | None = None
        self._build()

    def _build(self) -> None:
        hidden = widgets.Layout(display="none")
        self.title = widgets.Text(description="Title", placeholder="Title number, e.g. NGL123456")
        self.buy_button = widgets.Button(description="Buy…", button_style="primary")
        self.confirmation = widgets.HTML()
        self.confirm_button = widgets.Button(description="Confirm purchase", button_style="danger")
        self.buy_again_button = widgets.Button(
            description="Buy again", button_style="danger", layout=widgets.Layout(display="none")
        )
        self.cancel_button = widgets.Button(description="Cancel")
        self.confirm_box = widgets.VBox(
            [
                self.confirmation,
                widgets.HBox([self.confirm_button, self.buy_again_button, self.cancel_button]),
            ],
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
        self.title.observe(lambda _change: self._title_changed(), names="value")
        self.buy_button.on_click(lambda _button: self.ask_confirmation())
        self.confirm_button.on_click(lambda _button: self.confirm())
        self.buy_again_button.on_click(lambda _button: self.confirm(again=True))
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
        return f"This costs {self._cost_words()}."

    def ask_confirmation(self) -> None:
        """Step 1 (the Buy button): ask the service about the title, then offer it, or say why not.

        Purchase-status (free) is asked first: a title the service does not know is said at
        once, and so is one it cannot vouch for (its answer says nothing of the title, or it
        could not be asked); neither is offered for credits. A title bought before is said, with
        when, and offered only as a second copy. Nothing is bought at this step.

        Examples
        --------
        >>> form = PurchaseForm(client, cost=25)
        >>> form.title.value = "ZZ999999"
        >>> form.ask_confirmation()
        >>> form.confirm_box.layout.display, "does not know title ZZ999999" in form.message.value
        ('none', True)
        """
        title = self.title.value.strip()
        self._withdraw()
        self.message.value = ""
        try:
            check_title_number(title)
        except InvalidInput as exc:
            self._say(str(exc), "error")
            return
        try:
            with self._lock:
                status = self.client.purchase_status(title)
                earlier = self.client.earlier_purchase(title)
        except NotFound as exc:
            self._say(not_known(title, exc), "error")
            return
        except Exception as exc:
            logger.debug("purchase-status failed", exc_info=True)
            open_intent = self._has_open_intent(title)
            self.money_state = "unknown" if open_intent else None
            self._say(could_not_check(title, exc, open_intent), "error")
            self.check_button.layout.display = None
            return
        if earlier is None and read_money_state(status) is None:
            self._say(not_vouched(title), "error")
            self.check_button.layout.display = None
            return
        self._pending = _Pending(title, again=earlier is not None)
        if earlier is None:
            text = (
                f"Buy the title deed for {title}? {self.cost_text()} The service knows this "
                "title and has no purchase of it recorded. Your account is charged once, however "
                "often the request has to be retried."
            )
        else:
            text = (
                f"{bought_before(earlier)} Buying it again charges again"
                f"{self._cost_clause()}: press “Buy again” only if you need a second copy."
            )
        self.confirmation.value = paragraph(text, kind="warn")
        self.confirm_button.layout.display = "none" if earlier else None
        self.buy_again_button.layout.display = None if earlier else "none"
        self.confirm_box.layout.display = None
        self.buy_button.disabled = True

    def cancel(self) -> None:
        """Step 2, declined: nothing is sent."""
        pending = self._withdraw()
        name = f" of {pending.title}" if pending else ""
        self._say(f"Cancelled the purchase{name}: nothing was bought and you were not charged.")

    def confirm(self, *, again: bool = False) -> None:
        """Step 2, accepted: buy the title the confirmation named, then report the outcome.

        Confirm buys only a title offered as new, and “Buy again” only one offered as bought
        before; anything else (no pending confirmation, or the other kind) sends nothing.
        """
        pending = self._pending
        if pending is None or pending.again != again:
            return
        self._withdraw()
        title = pending.title
        self.value = None
        self.check_button.layout.display = "none"
        self.buy_button.disabled = True
        self._say(f"Buying the title deed for {title}…")
        try:
            with self._lock:
                purchase = self.client.buy_title_deed(title, buy_again=again)
        except Exception as exc:
            logger.debug("purchase failed", exc_info=True)
            self.buy_button.disabled = False
            self._report_failure(title, exc)
            return
        self.value = purchase
        self.money_state = purchase.money_state
        if purchase.previously_bought:
            self.buy_button.disabled = False
            self._say(
                f"{title} had already been bought, so nothing was bought or charged now.", "ok"
            )
            return
        if purchase.status == "delivered":
            self.buy_button.disabled = False
            self._say(f"{self._bought(title)}; the deed has been delivered.", "ok")
            return
        self._say(f"{self._bought(title)}; the deed is being delivered…", "ok")
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
        title = self.title.value.strip()
        try:
            check_title_number(title)
        except InvalidInput as exc:
            self._say(str(exc), "error")
            return
        try:
            with self._lock:
                body = self.client.purchase_status(title)
        except Exception as exc:
            logger.debug("purchase-status failed", exc_info=True)
            if isinstance(exc, NotFound):
                self._say(not_known(title, exc), "error")
                return
            self._say(
                f"{UNKNOWN}. Could not ask the purchase status of {title}: "
                f"{describe_error(exc, about=f'title {title}')}"
            )
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
        title = purchase.title_number
        try:
            with self._lock:
                purchase.refresh()
        except Exception as exc:
            logger.debug("delivery check failed", exc_info=True)
            self._stop_watching(
                f"{self._bought(title)}, but checking the delivery failed: "
                f"{describe_error(exc, about=f'title {title}')} Press “Check purchase status” "
                "later; do not buy it again.",
                "warn",
            )
            return
        waited = self._clock() - started
        self.progress.value = min(self.progress.max, self.progress.value + 1)
        if purchase.status == "delivered":
            self._stop_watching(f"{self._bought(title)}; the deed has been delivered.", "ok")
        elif waited >= self.timeout:
            self._stop_watching(
                f"{self._bought(title)}; the deed is still on its way after {waited:.0f} s. "
                "Press “Check purchase status” later; do not buy it again.",
                "warn",
            )
        else:
            self._say(
                f"{self._bought(title)}; the deed is being delivered (waited {waited:.0f} s)…",
                "ok",
            )
            self._scheduler(self.poll_interval, lambda: self._poll(purchase, started))

    def _stop_watching(self, text: str, kind: str) -> None:
        self.progress.layout.display = "none"
        self.buy_button.disabled = False
        if kind != "ok":
            self.check_button.layout.display = None
        self._say(text, kind)

    # -- outcome ----------------------------------------------------------------------------

    def _report_failure(self, title: str, error: BaseException) -> None:
        state = money_state_of(error)
        self.money_state = state
        detail = describe_error(error, about=f"title {title}")
        if state == "charged":
            text = (
                f"You were charged for {title}, but the service reported a problem after "
                f"charging: {detail} Do not buy it again: check the purchase status, and if the "
                "deed does not arrive, contact the service's support."
            )
        elif state == "not_charged":
            text = f"You were not charged for {title}. {detail}"
        else:
            text = f"{UNKNOWN}. Press “Check purchase status” for title {title}."
        if state != "not_charged":
            self.check_button.layout.display = None
        self._say(text, "error")

    # -- state ------------------------------------------------------------------------------

    def _title_changed(self) -> None:
        """Editing the title withdraws a pending confirmation: it held for the title it named."""
        pending = self._withdraw()
        if pending is not None:
            self._say(
                f"The title changed, so the purchase of {pending.title} was not confirmed and "
                "nothing was bought. Press Buy to buy the title now in the box."
            )

    def _withdraw(self) -> _Pending | None:
        """End any pending confirmation (Confirm and Buy again then buy nothing); return it."""
        pending, self._pending = self._pending, None
        self.confirm_box.layout.display = "none"
        self.buy_button.disabled = False
        return pending

    def _has_open_intent(self, title: str) -> bool:
        journal = Journal(self.client.journal)
        return bool(journal.open_intents(service=self.client.base_url, title_number=title))

    def _cost_words(self) -> str:
        if isinstance(self.cost, int | float):
            return f"{self.cost:g} credits"
        return str(self.cost)

    def _cost_clause(self) -> str:
        return "" if self.cost is None else f" ({self._cost_words()})"

    def _bought(self, title: str) -> str:
        """ "You bought …: charged" — the start of every outcome of a new purchase."""
        return f"You bought the title deed for {title}{self._cost_clause()}: you were charged"

    def _say(self, text: str, kind: str = "info") -> None:
        self.message.value = paragraph(text, kind=kind)
        self._refresh_status()  # every form's "This client so far" line reads the usage now


@dataclass(frozen=True)
class _Pending:
    """A confirmation on screen: the title it names, and whether it offers buying again."""

    title: str
    again: bool


def bought_before(earlier: EarlierPurchase) -> str:
    """The sentence saying a title was bought before, with when and where that is known from.

    Examples
    --------
    >>> from datetime import datetime, UTC
    >>> from propertykit.deeds import EarlierPurchase
    >>> bought_before(EarlierPurchase("NGL1", "journal", datetime(2026, 3, 4, 9, 5, tzinfo=UTC), None))
    'NGL1 was already bought on 4 Mar 2026 at 09:05 UTC (your purchase journal): you were charged then.'
    """  # noqa: E501
    when = f" on {earlier.at.astimezone(UTC):%-d %b %Y at %H:%M} UTC" if earlier.at else ""
    source = "your purchase journal" if earlier.source == "journal" else "the service's records"
    return f"{earlier.title_number} was already bought{when} ({source}): you were charged then."


def could_not_check(title: str, error: BaseException, open_intent: bool) -> str:
    """What to say when purchase-status could not be asked before offering a purchase.

    With an earlier purchase of the title left open (a kernel stopped while buying), whether the
    account was charged is unknown; otherwise nothing was ever sent, and nothing is now.
    """
    if open_intent:
        return (
            f"{UNKNOWN}: an earlier purchase of {title} has no recorded outcome, and its purchase "
            f"status could not be asked. {describe_error(error, about=f'title {title}')} "
            "Press “Check purchase status”."
        )
    return (
        f"Could not ask the service about title {title}, so it was not offered: nothing was "
        f"sent and you were not charged. {describe_error(error, about=f'title {title}')}"
    )


def not_known(title: str, error: BaseException) -> str:
    """What to say when the service does not know a title: it is not offered for credits.

    Examples
    --------
    >>> from propertykit.errors import NotFound
    >>> print(not_known("ZZ999999", NotFound(404, message="Title ZZ999999 does not exist.")))
    ... # doctest: +NORMALIZE_WHITESPACE
    The service does not know title ZZ999999. The service said: “Title ZZ999999 does not exist”.
    Nothing was offered or sent, and you were not charged: check the title number.
    """
    return (
        f"{describe_error(error, about=f'title {title}')} Nothing was offered or sent, and you "
        "were not charged: check the title number."
    )


def not_vouched(title: str) -> str:
    """What to say when the service answered about a title but did not vouch for it.

    Examples
    --------
    >>> not_vouched("NGL1")[:71]
    'The service answered about title NGL1 without saying whether it exists '
    """
    return (
        f"The service answered about title {title} without saying whether it exists or was "
        "bought before, so it was not offered: nothing was sent and you were not charged. Press "
        "“Check purchase status” to ask again, or check the title number."
    )
