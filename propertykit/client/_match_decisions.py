"""Decisions of a review (:class:`propertykit.widgets.MatchReview`), kept and applied again.

A person who picked the property an address is, or marked it "not held by the service", should
never be asked again: :meth:`propertykit.Client.match_addresses` answers that address text from
the decision, sending nothing. Decisions are notes beside the client's cache
(:mod:`propertykit.wire._notes`): in the SQLite cache file's folder for the kernels of one
machine, in the cache's Redis for a team; clearing the cache keeps them. They are filed under the
service's address and the text as typed, case and spacing evened out (``"72 High St"`` and
``"72  high st"`` are one text; ``"72 High Street"`` is another).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from propertykit.errors import InvalidInput
from propertykit.wire import Notes

#: The book of notes the decisions are kept in.
BOOK = "address-matches"


def text_key(text: str) -> str:
    """An address text as decisions and duplicates are told apart: case and spacing evened out.

    Examples
    --------
    >>> text_key("  72 High  St ") == text_key("72 high st")
    True
    """
    return " ".join(text.casefold().split())


@dataclass(frozen=True)
class Reviewed:
    """One decision: the property picked (``location_id``), or ``None`` for "not held"."""

    location_id: str | None
    matched_address: str | None
    decided_at: str

    @property
    def held(self) -> bool:
        """Whether a property was picked (else: not held by the service)."""
        return self.location_id is not None


class MatchDecisions:
    """The review decisions of one service, where the client's cache keeps notes.

    Examples
    --------
    >>> from propertykit.wire import MemoryNotes
    >>> decisions = MatchDecisions(MemoryNotes(), "http://127.0.0.1:8000")
    >>> decisions.pick("72 High St", "L00000042", "72 High Street, Bedford")
    >>> decisions.get("72 HIGH ST").location_id
    'L00000042'
    >>> decisions.not_held("Flat 9, 1 Nowhere Rd"); decisions.get("flat 9, 1 nowhere rd").held
    False
    """

    def __init__(self, notes: Notes, base_url: str) -> None:
        self.notes = notes
        self.service = urlsplit(base_url).netloc or base_url

    @property
    def where(self) -> str:
        """Where the decisions are kept (a file, a Redis server, or memory)."""
        return self.notes.where

    def _key(self, text: str) -> str:
        return f"{self.service}|{text_key(text)}"

    def pick(self, text: str, location_id: str, matched_address: str | None = None) -> None:
        """Decide that ``text`` is the property ``location_id``."""
        if not isinstance(location_id, str) or not location_id.strip():
            raise InvalidInput("pick() needs the location id of the property picked")
        self._put(text, location_id, matched_address)

    def not_held(self, text: str) -> None:
        """Decide that the service does not hold the address ``text``."""
        self._put(text, None, None)

    def forget(self, text: str) -> None:
        """Drop the decision on ``text`` (the next match asks the service again)."""
        self.notes.delete(self._key(self._text(text)))

    def get(self, text: str) -> Reviewed | None:
        """The decision on ``text``, or ``None``."""
        return self.get_many([text])[0]

    def get_many(self, texts: Sequence[str]) -> list[Reviewed | None]:
        """The decision on each text (``None``: none)."""
        values = self.notes.get_many([self._key(text) for text in texts])
        return [_read(value) for value in values]

    def _put(self, text: str, location_id: str | None, matched_address: str | None) -> None:
        when = datetime.now(UTC).isoformat(timespec="seconds")
        value = {"locationId": location_id, "matched_address": matched_address, "at": when}
        self.notes.put(self._key(self._text(text)), json.dumps(value))

    @staticmethod
    def _text(text: object) -> str:
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("A decision needs the address text it is about")
        return text


def _read(value: str | None) -> Reviewed | None:
    if value is None:
        return None
    try:
        data = json.loads(value)
        location_id = data.get("locationId")
        address = data.get("matched_address")
        return Reviewed(
            location_id if isinstance(location_id, str) else None,
            address if isinstance(address, str) else None,
            str(data.get("at", "")),
        )
    except (ValueError, AttributeError):  # a note someone else wrote: not a decision
        return None
