"""The review of a match: each uncertain address with its candidates, decided by a person.

``MatchReview(matches, client, book=...)`` takes the frame of ``client.match_addresses(...)`` and
shows, one at a time, its ``ambiguous`` and ``unmatched`` rows, the rows a review of the book has
decided already (so a decision can be revised), and its blank rows (said to be blank: nothing
to decide): the address as typed, why it was not matched (the matcher's ``reason``), and the
candidates the service suggested, each listed once, as a choice. A person picks one, or marks it
"not held by the service", and keeps the decision: it goes to the book's decisions
(``client.match_decisions(book)``, beside the client's cache: every kernel of the machine, or the
whole team on a Redis cache, sees it), and every later ``match_addresses(..., book=book)`` call
answers that text from it, asking the service nothing. The form names the book it writes to; its
heading and each row's status are drawn from the decisions, so they follow every Keep, and read
the same after a rebuild from the same frame or from a fresh match. Text from outside (the
client's list, the service's addresses, the matcher's reasons) is shown as text: escaped,
control characters spelled out.
"""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

from propertykit.client import Reviewed, check_book, text_key
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
    "Pick the property this address is from the list above, or say the service does not hold "
    "it. A decision is kept for this book beside the client's cache, and used by every later "
    "match of the same text in the book."
)
NO_CANDIDATES_HINT = (
    "No candidates are listed for this row: say the service does not hold the address, or "
    "decide later. A decision is kept for this book beside the client's cache, and used by "
    "every later match of the same text in the book."
)
BLANK_ROW = "Blank row: no address given, nothing to decide."
_REQUIRED = ("input", "status", "candidates")
_DECIDED_COLUMNS = ["status", "locationId", "matched_address", "reason"]
#: How a row answered from a decision reads (``propertykit.client._matching``'s reasons).
_FROM_REVIEW = ("picked in review", "not held by the service (review")
#: The row after a decision is withdrawn, when the frame held no answer of the matcher.
_WITHDRAWN = "decision withdrawn in review: match the address again to ask the service"
#: Characters of a choice's label that fit beside its button in 590 px.
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
    book
        The book the decisions are kept in (see ``client.match_addresses``); default: the book
        ``matches`` was matched in (``matches.attrs["book"]``), else the default book.

    Attributes
    ----------
    choice, keep_button, previous_button, next_button, position, address, reason, message
        The widgets, for driving the review from code.
    book, book_line
        The book's name, and the line that says it.
    rows
        Positions (in ``matches``) of the rows to review, in order.
    value
        ``matches`` with every decision of the book applied.

    Examples
    --------
    >>> import propertykit as pk
    >>> matches = client.match_addresses(["96 Mill Lane, SE11 8TF"], book="acme")  # doctest: +SKIP
    >>> review = pk.widgets.MatchReview(matches, client)  # doctest: +SKIP
    >>> review.choice.value = review.choice.options[0][1]  # doctest: +SKIP
    >>> review.keep_button.click()  # doctest: +SKIP
    """

    def __init__(self, matches: pd.DataFrame, client: Client, *, book: str | None = None) -> None:
        if not isinstance(matches, pd.DataFrame) or any(c not in matches for c in _REQUIRED):
            raise InvalidInput(
                "MatchReview needs the frame client.match_addresses() returned "
                "(columns input, status and candidates)"
            )
        named = book if book is not None else matches.attrs.get("book")
        self.book = check_book(named)
        super().__init__(client)
        self.matches = matches
        self.value = matches.copy()
        for column in _DECIDED_COLUMNS:  # a decision writes ids and text into them
            self.value[column] = self.value[column].astype(object) if column in self.value else None
        self.decisions = client.match_decisions(self.book)
        self._texts = [_text_of(value) for value in matches["input"].tolist()]
        self._decided: dict[int, Reviewed | None] = self._read_decisions()
        status = matches["status"].astype("object").tolist()
        self.rows = [
            position
            for position, text in enumerate(self._texts)
            if text is None
            or status[position] in ("ambiguous", "unmatched")
            or self._decided.get(position) is not None
        ]
        for position in self.rows:
            self._apply(position)
        self.current = 0
        self._addresses: dict[str, str] = {}  # the row shown: candidate id -> its whole address
        self._build()
        self.show(0)

    def _read_decisions(self) -> dict[int, Reviewed | None]:
        """This book's decision on every row with text (none where the store cannot be read)."""
        with_text = [(p, text) for p, text in enumerate(self._texts) if text is not None]
        try:
            found = self.decisions.get_many([text for _p, text in with_text])
        except Exception as exc:  # a store that cannot be read: said, and nothing decided
            logger.debug("reading decisions failed", exc_info=True)
            self._unread = describe_error(exc)
            return {}
        self._unread = ""
        return {p: done for (p, _text), done in zip(with_text, found, strict=True)}

    def _build(self) -> None:
        self.heading = widgets.HTML()
        self.book_line = widgets.HTML(paragraph(_book_sentence(self.book)))
        self.position = widgets.HTML()
        self.address = widgets.HTML()
        self.reason = widgets.HTML()
        self.choice = widgets.RadioButtons(options=[], layout=fill())
        self.whole = widgets.HTML(layout=widgets.Layout(min_width="0"))
        self.choice_hint = hint(CHOICE_HINT)
        self.keep_button = widgets.Button(
            description="Keep decision", button_style="primary", icon="check"
        )
        self.previous_button = widgets.Button(description="Previous", icon="arrow-left")
        self.next_button = widgets.Button(description="Next", icon="arrow-right")
        self.message = widgets.HTML(paragraph(self._unread, kind="error") if self._unread else "")
        buttons = widgets.HBox(
            [self.keep_button, self.previous_button, self.next_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        self.deciding = widgets.VBox(
            [label("It is"), self.choice, self.whole, self.choice_hint],
            layout=widgets.Layout(min_width="0"),
        )
        self.body = widgets.VBox(
            [self.position, label("Address as given"), self.address, self.reason,
             self.deciding, buttons],
            layout=widgets.Layout(max_width="590px", min_width="0"),
        )  # fmt: skip
        self.widget = widgets.VBox([self.heading, self.book_line, self.body, self.message])
        self.keep_button.on_click(lambda _button: self.keep())
        self.previous_button.on_click(lambda _button: self.show(self.current - 1))
        self.next_button.on_click(lambda _button: self.show(self.current + 1))
        self.choice.observe(lambda _change: self._show_whole(), names="value")
        self.body.layout.display = None if self.rows else "none"
        self._show_heading()

    def _show_heading(self) -> None:
        """The counts of the rows in review as they stand: decided ones counted as decided."""
        if not self.rows:
            self.heading.value = paragraph(NOTHING_TO_REVIEW)
            return
        states = [self._state(position) for position in self.rows]
        parts = [
            f"{states.count(name):,} {name}"
            for name in ("ambiguous", "unmatched", "decided", "blank")
            if states.count(name) or name in ("ambiguous", "unmatched")
        ]
        self.heading.value = paragraph(
            f"{plural(len(self.rows), 'row')} to review: {', '.join(parts)}."
        )

    def _state(self, position: int) -> str:
        if self._texts[position] is None:
            return "blank"
        if self._decided.get(position) is not None:
            return "decided"
        return str(self.value["status"].iloc[position])

    # -- moving -----------------------------------------------------------------------------

    def show(self, number: int) -> None:
        """Show the ``number``-th row to review (0 is the first); out of range: the nearest."""
        if not self.rows:
            return
        self.current = max(0, min(number, len(self.rows) - 1))
        position = self.rows[self.current]
        text = self._texts[position]
        self.position.value = paragraph(
            f"Address {self.current + 1:,} of {len(self.rows):,} "
            f"({_place_in_list(self.matches.index, position)})"
        )
        given = self.matches["input"].iloc[position]
        shown = "(blank)" if given is None or pd.isna(given) else str(given)
        self.address.value = f"<b>{html.escape(visible(shown))}</b>"
        self._show_row_status(position)
        self.previous_button.disabled = self.current == 0
        self.next_button.disabled = self.current == len(self.rows) - 1
        self.deciding.layout.display = "none" if text is None else None
        self.keep_button.disabled = text is None
        if text is None:
            self.choice.options = []
            return
        self.choice.options = self._options(self.matches.iloc[position])
        self.choice.value = self._earlier_choice(self._decided.get(position))
        self._show_whole()

    def _show_row_status(self, position: int) -> None:
        """The row's status as its decision (or the matcher) has it, with the matcher's reason."""
        if self._texts[position] is None:
            reason = self.matches["reason"].iloc[position] if "reason" in self.matches else None
            why = f" ({reason})" if isinstance(reason, str) and reason else ""
            self.reason.value = paragraph(visible(BLANK_ROW + why))
            return
        decided = self._decided.get(position)
        matcher = _matcher_reason(self.matches, position)
        if decided is not None:
            said = f" The matcher said: {matcher}" if matcher else ""
            self.reason.value = paragraph(visible(_decided_sentence(decided) + said), kind="ok")
            return
        status = str(self.value["status"].iloc[position])
        why = f"{status.capitalize()}: {matcher}" if matcher else status.capitalize()
        self.reason.value = paragraph(visible(why), kind="warn")

    def _options(self, row: pd.Series) -> list[tuple[str, str]]:
        """The choices: each candidate once, a short label (its whole address under the list
        when picked), then not held and later."""
        ids = [str(i) for i in _listed(row.get("candidates"))]
        shown = [str(a) for a in _listed(row.get("candidate_addresses"))]
        whole = [shown[k] if k < len(shown) else "" for k in range(len(ids))]
        self._addresses = {i: a for i, a in zip(ids, whole, strict=True) if a}
        self.choice_hint.value = hint(CHOICE_HINT if ids else NO_CANDIDATES_HINT).value
        options = [(_short_label(k + 1, whole[k], ids[k]), ids[k]) for k in range(len(ids))]
        return [*options, (NOT_HELD_LABEL, NOT_HELD), (LATER_LABEL, LATER)]

    def _earlier_choice(self, earlier: Reviewed | None) -> str:
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

    def _show_whole(self) -> None:
        """The picked candidate's whole address, when its label had to be cut."""
        chosen = self.choice.value
        address = self._addresses.get(chosen) if isinstance(chosen, str) else None
        cut = any(name.endswith(f"… ({chosen})") for name, _value in self.choice.options)
        self.whole.value = (
            paragraph(f"Picked: {visible(address)} ({visible(chosen)})") if address and cut else ""
        )

    # -- deciding ---------------------------------------------------------------------------

    def keep(self) -> None:
        """Keep the choice shown for this address (what the button does), then move on."""
        if not self.rows:
            return
        position = self.rows[self.current]
        text = self._texts[position]
        if text is None:
            return
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
                kept = self.decisions.get(text)
        except Exception as exc:
            logger.debug("keeping a decision failed", exc_info=True)
            self.message.value = paragraph(describe_error(exc), kind="error")
            return
        for other, same in enumerate(self._texts):  # every row of the same text is decided
            if same is not None and text_key(same) == text_key(text):
                self._decided[other] = kept
                if other in self.rows:
                    self._apply(other)
        self.message.value = paragraph(_kept_sentence(text, chosen, address), kind="ok")
        self._show_heading()
        if self.current < len(self.rows) - 1:
            self.show(self.current + 1)
        else:
            self.show(self.current)

    def _apply(self, position: int) -> None:
        """Row ``position`` of :attr:`value` as its decision has it (none: as matched)."""
        columns = _DECIDED_COLUMNS
        decided = self._decided.get(position)
        if decided is not None and decided.held:
            values = ["matched", decided.location_id, decided.matched_address,
                      f"picked in review ({decided.when})"]  # fmt: skip
        elif decided is not None:
            values = ["unmatched", None, None, f"not held by the service (review, {decided.when})"]
        else:
            values = [self.matches[column].iloc[position] if column in self.matches else None
                      for column in columns]  # fmt: skip
            if values[0] == "matched" or str(values[3]).startswith(_FROM_REVIEW):
                values = ["unmatched", None, None, _WITHDRAWN]
        for column, cell in zip(columns, values, strict=True):
            self.value.iloc[position, self.value.columns.get_loc(column)] = cell


def _place_in_list(index: pd.Index, position: int) -> str:
    """Where a row is in the list given: its label, or, for a plain list, its place from 1.

    Examples
    --------
    >>> _place_in_list(pd.RangeIndex(3), 0), _place_in_list(pd.Index([12, 14]), 1)
    ('item 1 of the list', 'row 14 of the list')
    """
    if isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1:
        return f"item {position + 1:,} of the list"
    return f"row {visible(index[position])} of the list"


def _text_of(value: object) -> str | None:
    """A row's address text, or ``None`` for a blank or non-text row (nothing to decide)."""
    return value if isinstance(value, str) and value.strip() else None


def _matcher_reason(matches: pd.DataFrame, position: int) -> str:
    """The matcher's reason for a row; not a reason that only repeats a decision."""
    reason = matches["reason"].iloc[position] if "reason" in matches else None
    if not isinstance(reason, str) or reason.startswith(_FROM_REVIEW):
        return ""
    return reason


def _book_sentence(book: str) -> str:
    """The line that says which book the review writes to.

    Examples
    --------
    >>> _book_sentence("acme-2026")
    'Decisions are kept in the book “acme-2026”: only its matches use them.'
    """
    if book == check_book(None):
        return (
            "Decisions are kept in the default book (no book named): only matches without a "
            "book use them. Name one with match_addresses(..., book=...)."
        )
    return f"Decisions are kept in the book “{book}”: only its matches use them."


def _decided_sentence(decided: Reviewed) -> str:
    if decided.held:
        picked = decided.matched_address or "the property"
        return (
            f"Decided on {decided.when}: it is {picked} ({decided.location_id}). Change it below."
        )
    return f"Decided on {decided.when}: not held by the service. Change it below."


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
