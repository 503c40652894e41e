"""The review of a match: each uncertain address with its candidates, decided by a person.

``MatchReview(matches, client)`` takes the frame of ``client.match_addresses(...)`` and shows its
``ambiguous`` and ``unmatched`` rows one at a time: the address as typed, why it was not matched,
and the candidates the service suggested. A person picks one, or marks it "not held by the
service", and keeps the decision: it goes to ``client.address_decisions`` (beside the client's
cache: every kernel of the machine, or the whole team on a Redis cache, sees it), and every later
``match_addresses`` call answers that text from it, asking the service nothing. Text from outside
(the client's list, the service's addresses) is shown as text: escaped, control characters
spelled out.
"""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

from propertykit.errors import InvalidInput
from propertykit.text import plural, visible
from propertykit.widgets._messages import describe_error
from propertykit.widgets._parts import Form, fill, hint, label, paragraph

if TYPE_CHECKING:
    from propertykit.client import Client

logger = logging.getLogger("propertykit")

#: The choice that says the service does not hold the address.
NOT_HELD = "not held"
#: The choice that leaves an address undecided (and forgets an earlier decision).
LATER = "later"
NOT_HELD_LABEL = "Not held by the service"
LATER_LABEL = "Decide later"
NOTHING_TO_REVIEW = "Every address was matched: nothing to review."
CHOICE_HINT = (
    "Pick the property this address is, or say the service does not hold it. A decision is "
    "kept beside the client's cache and used by every later match of the same text."
)
_REQUIRED = ("input", "status", "candidates")
NO_CANDIDATES = "The service suggested nothing close for this address."
#: Characters of a choice's label that fit beside its button in 590 px (the list has it whole).
LABEL_CHARACTERS = 56


class MatchReview(Form):
    """Decide the ambiguous and unmatched rows of ``client.match_addresses(...)``.

    Parameters
    ----------
    matches
        The frame ``match_addresses`` returned (its ``input``, ``status`` and ``candidates``;
        ``candidate_addresses`` shows the candidates' addresses).
    client
        The client whose decisions store keeps what is decided.

    Attributes
    ----------
    choice, keep_button, previous_button, next_button, position, address, reason, message
        The widgets, for driving the review from code.
    rows
        Positions (in ``matches``) of the rows to review, in order.
    value
        ``matches`` with every decision taken here applied.

    Examples
    --------
    >>> import propertykit as pk
    >>> matches = client.match_addresses(["96 Mill Lane, SE11 8TF"])  # doctest: +SKIP
    >>> review = pk.widgets.MatchReview(matches, client)  # doctest: +SKIP
    >>> review.choice.value = review.choice.options[0][1]  # doctest: +SKIP
    >>> review.keep_button.click()  # doctest: +SKIP
    """

    def __init__(self, matches: pd.DataFrame, client: Client) -> None:
        super().__init__(client)
        if not isinstance(matches, pd.DataFrame) or any(c not in matches for c in _REQUIRED):
            raise InvalidInput(
                "MatchReview needs the frame client.match_addresses() returned "
                "(columns input, status and candidates)"
            )
        self.value = matches.copy()
        self.decisions = client.address_decisions
        uncertain = matches["status"].isin(["ambiguous", "unmatched"])
        texts = matches["input"].map(lambda text: isinstance(text, str) and bool(text.strip()))
        self.rows = [int(i) for i in (uncertain & texts).to_numpy().nonzero()[0]]
        self.current = 0
        self._addresses: dict[str, str] = {}  # the row shown: candidate id -> its whole address
        self._build()
        self.show(0)

    def _build(self) -> None:
        self.heading = widgets.HTML()
        self.position = widgets.HTML()
        self.address = widgets.HTML()
        self.reason = widgets.HTML()
        self.candidates = widgets.HTML(layout=widgets.Layout(min_width="0"))
        self.choice = widgets.RadioButtons(options=[], layout=fill())
        self.keep_button = widgets.Button(
            description="Keep decision", button_style="primary", icon="check"
        )
        self.previous_button = widgets.Button(description="Previous", icon="arrow-left")
        self.next_button = widgets.Button(description="Next", icon="arrow-right")
        self.message = widgets.HTML()
        buttons = widgets.HBox(
            [self.keep_button, self.previous_button, self.next_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        self.body = widgets.VBox(
            [self.position, label("Address as given"), self.address, self.reason,
             label("Candidates"), self.candidates, label("It is"), self.choice,
             hint(CHOICE_HINT), buttons],
            layout=widgets.Layout(max_width="590px", min_width="0"),
        )  # fmt: skip
        self.widget = widgets.VBox([self.heading, self.body, self.message])
        self.keep_button.on_click(lambda _button: self.keep())
        self.previous_button.on_click(lambda _button: self.show(self.current - 1))
        self.next_button.on_click(lambda _button: self.show(self.current + 1))
        counts = self.value["status"].iloc[self.rows].value_counts()
        self.heading.value = paragraph(
            f"{plural(len(self.rows), 'address', 'addresses')} to review: "
            f"{counts.get('ambiguous', 0):,} ambiguous, {counts.get('unmatched', 0):,} unmatched."
            if self.rows
            else NOTHING_TO_REVIEW
        )
        self.body.layout.display = None if self.rows else "none"

    # -- moving -----------------------------------------------------------------------------

    def show(self, number: int) -> None:
        """Show the ``number``-th row to review (0 is the first); out of range: the nearest."""
        if not self.rows:
            return
        self.current = max(0, min(number, len(self.rows) - 1))
        row = self.value.iloc[self.rows[self.current]]
        text = str(row["input"])
        self.position.value = paragraph(f"Address {self.current + 1:,} of {len(self.rows):,}")
        self.address.value = f"<b>{html.escape(visible(text))}</b>"
        reason = row.get("reason")
        why = f"{str(row['status']).capitalize()}: {reason}" if isinstance(reason, str) else ""
        self.reason.value = paragraph(visible(why), kind="warn") if why else ""
        self.choice.options = self._options(row)
        self.choice.value = self._earlier_choice(text)
        self.previous_button.disabled = self.current == 0
        self.next_button.disabled = self.current == len(self.rows) - 1

    def _options(self, row: pd.Series) -> list[tuple[str, str]]:
        """The choices: each candidate as a short label (the list above has it whole), then
        not held and later. Sets the list of candidates' whole addresses."""
        ids = [str(i) for i in _listed(row.get("candidates"))]
        shown = [str(a) for a in _listed(row.get("candidate_addresses"))]
        whole = [shown[k] if k < len(shown) else "" for k in range(len(ids))]
        self._addresses = {i: a for i, a in zip(ids, whole, strict=True) if a}
        items = "".join(
            f"<li>{html.escape(visible(address or '(no address given)'))} "
            f"<code>{html.escape(visible(location_id))}</code></li>"
            for address, location_id in zip(whole, ids, strict=True)
        )
        self.candidates.value = (
            f'<ol style="margin:2px 0 4px 0;padding-left:22px;line-height:1.4">{items}</ol>'
            if ids
            else paragraph(NO_CANDIDATES)
        )
        options = [(_short_label(k + 1, whole[k], ids[k]), ids[k]) for k in range(len(ids))]
        return [*options, (NOT_HELD_LABEL, NOT_HELD), (LATER_LABEL, LATER)]

    def _earlier_choice(self, text: str) -> str:
        try:
            earlier = self.decisions.get(text)
        except Exception:  # a store that cannot be read is said when keeping, not here
            logger.debug("reading a decision failed", exc_info=True)
            earlier = None
        if earlier is None:
            return LATER
        if not earlier.held:
            return NOT_HELD
        picked = str(earlier.location_id)
        if picked not in [value for _name, value in self.choice.options]:
            address = earlier.matched_address or ""
            self._addresses.setdefault(picked, address)
            label_text = _short_label(0, address, picked).removeprefix("0. ")
            self.choice.options = [(label_text, picked), *self.choice.options]
        return picked

    # -- deciding ---------------------------------------------------------------------------

    def keep(self) -> None:
        """Keep the choice shown for this address (what the button does), then move on."""
        if not self.rows:
            return
        position = self.rows[self.current]
        text = str(self.value["input"].iloc[position])
        chosen = self.choice.value
        address = self._addresses.get(chosen) if isinstance(chosen, str) else None
        try:
            with self._lock:
                if chosen == NOT_HELD:
                    self.decisions.not_held(text)
                elif chosen == LATER or chosen is None:
                    self.decisions.forget(text)
                else:
                    self.decisions.pick(text, chosen, address)
        except Exception as exc:
            logger.debug("keeping a decision failed", exc_info=True)
            self.message.value = paragraph(describe_error(exc), kind="error")
            return
        self._apply(position, chosen, address)
        self.message.value = paragraph(_kept_sentence(text, chosen, address), kind="ok")
        if self.current < len(self.rows) - 1:
            self.show(self.current + 1)

    def _apply(self, position: int, chosen: Any, address: str | None) -> None:
        index = self.value.index[position]
        if chosen == NOT_HELD:
            status, location_id, address, reason = (
                "unmatched",
                None,
                None,
                "not held by the service (review)",
            )
        elif chosen == LATER or chosen is None:
            return
        else:
            status, location_id, reason = "matched", chosen, "picked in review"
        self.value.loc[index, ["status", "locationId", "matched_address", "reason"]] = [
            status, location_id, address, reason,
        ]  # fmt: skip


def _listed(value: object) -> list[Any]:
    if isinstance(value, list | tuple):
        return list(value)
    if hasattr(value, "tolist"):
        listed: list[Any] = value.tolist()
        return listed
    return []


def _short_label(number: int, address: str, location_id: str) -> str:
    """``3. Flat 2, Oak House, 12 Mill… (L00000042)``: at most :data:`LABEL_CHARACTERS`.

    Examples
    --------
    >>> _short_label(1, "Flat 2, Oak House, 12 Mill Lane, Kempston, Bedford, MK40 1NN", "L9")
    '1. Flat 2, Oak House, 12 Mill Lane, Kempston, Bedf… (L9)'
    """
    tail = f" ({location_id})"
    room = LABEL_CHARACTERS - len(tail) - len(f"{number}. ")
    text = visible(address) if address else location_id
    text = text if len(text) <= room else text[: room - 1].rstrip() + "…"
    return f"{number}. {text}{tail}" if address else f"{number}. {location_id}"


def _kept_sentence(text: str, chosen: Any, address: str | None) -> str:
    shown = visible(text)
    if chosen == NOT_HELD:
        return f"Kept: “{shown}” is not held by the service. Later matches of it say so."
    if chosen == LATER or chosen is None:
        return f"“{shown}” is left undecided: later matches ask the service again."
    picked = f"{visible(address)} ({visible(chosen)})" if address else visible(chosen)
    return f"Kept: “{shown}” is {picked}. Later matches of it use this."
