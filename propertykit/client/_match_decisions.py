"""Decisions of a review (:class:`propertykit.widgets.MatchReview`), kept and applied again.

A person who picked the property an address is, or marked it "not held by the service", should
never be asked again: :meth:`propertykit.Client.match_addresses` answers that address text from
the decision, sending nothing. Decisions are notes beside the client's cache
(:mod:`propertykit.wire._notes`): in the SQLite cache file's folder for the kernels of one
machine, in the cache's Redis for a team; clearing the cache keeps them.

They belong to a **book** (a client's list: ``"acme-2026"``; ``None`` is the book named
:data:`DEFAULT_BOOK`) and to the **service** that answered: its profile, host and path, never its
port (a sandbox served on port 0 gets a new port every kernel, and is the same service). Within
them, a decision is filed under the text as typed, case and spacing evened out (``"72 High St"``
and ``"72  high st"`` are one text; ``"72 High Street"`` is another). Another book never sees a
book's decisions, unless asked: :meth:`MatchDecisions.copy_from`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from propertykit.errors import InvalidInput
from propertykit.text import visible
from propertykit.wire import Notes

#: The notes the default book's decisions are kept in (each other book: ``<BOOK>:<name>``).
BOOK = "address-matches"
#: The book of ``book=None``.
DEFAULT_BOOK = "default"
#: A book's name: a letter or digit, then letters, digits, spaces, ``.``, ``_``, ``-``.
BOOK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}")


def text_key(text: str) -> str:
    """An address text as decisions and duplicates are told apart: case and spacing evened out.

    Examples
    --------
    >>> text_key("  72 High  St ") == text_key("72 high st")
    True
    """
    return " ".join(text.casefold().split())


def check_book(book: object) -> str:
    """The book's name (``None``: :data:`DEFAULT_BOOK`), else one-line ``InvalidInput``.

    Examples
    --------
    >>> check_book(None), check_book("acme-2026")
    ('default', 'acme-2026')
    >>> check_book("acme/2026")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: book='acme/2026': a book's name is 1 to 64 letters...
    """
    if book is None:
        return DEFAULT_BOOK
    if not isinstance(book, str):
        raise InvalidInput(f"book= takes a name (text), got {type(book).__name__}")
    if BOOK_NAME.fullmatch(book) is None or book != book.strip():
        raise InvalidInput(
            f"book={visible(book)!r}: a book's name is 1 to 64 letters, digits, spaces, "
            "'.', '_' or '-', beginning with a letter or digit (e.g. 'acme-2026')"
        )
    return book


def notes_book(book: str) -> str:
    """The notes a book's decisions are kept in.

    Examples
    --------
    >>> notes_book("default"), notes_book("acme-2026")
    ('address-matches', 'address-matches:acme-2026')
    """
    return BOOK if book == DEFAULT_BOOK else f"{BOOK}:{book}"


def service_identity(base_url: str, profile: str = "spec") -> str:
    """The service a decision is about: its profile, host and path, without the port.

    Examples
    --------
    >>> service_identity("http://127.0.0.1:53111/") == service_identity("http://127.0.0.1:8000")
    True
    >>> service_identity("https://API.example.com/v2", "vepler")
    'vepler:api.example.com/v2'
    """
    parts = urlsplit(base_url)
    host = (parts.hostname or base_url).lower()
    return f"{profile}:{host}{parts.path.rstrip('/')}"


def in_words(moment: str) -> str:
    """A decision's time as a person says it (``7 December 2026, 15:18 UTC``); text that is
    no time is given back as it is.

    Examples
    --------
    >>> in_words("2026-12-07T15:18:03+00:00")
    '7 December 2026, 15:18 UTC'
    >>> in_words("")
    'at a time not recorded'
    """
    try:
        when = datetime.fromisoformat(moment).astimezone(UTC)
    except ValueError:
        return moment or "at a time not recorded"
    return f"{when.day} {when:%B %Y, %H:%M} UTC"


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

    @property
    def when(self) -> str:
        """When it was decided, in words (:func:`in_words`)."""
        return in_words(self.decided_at)


class MatchDecisions:
    """The review decisions of one book, about one service, where the client's cache keeps notes.

    Parameters
    ----------
    notes
        Where the book's notes are kept (:func:`propertykit.wire.notes_for` of
        :func:`notes_book`).
    base_url
        The service's address (its port is not part of what the decisions are about).
    book
        The book's name (:func:`check_book`).
    profile
        The service's profile (``Endpoints.profile``).
    notes_of
        The notes of another book, by its name (for :meth:`copy_from`).

    Examples
    --------
    >>> from propertykit.wire import MemoryNotes
    >>> decisions = MatchDecisions(MemoryNotes(), "http://127.0.0.1:8000", book="acme")
    >>> decisions.pick("72 High St", "L00000042", "72 High Street, Bedford")
    >>> decisions.get("72 HIGH ST").location_id
    'L00000042'
    >>> decisions.not_held("Flat 9, 1 Nowhere Rd"); decisions.get("flat 9, 1 nowhere rd").held
    False
    """

    def __init__(
        self,
        notes: Notes,
        base_url: str,
        *,
        book: str = DEFAULT_BOOK,
        profile: str = "spec",
        notes_of: Callable[[str], Notes] | None = None,
    ) -> None:
        self.notes = notes
        self.book = check_book(book)
        self.service = service_identity(base_url, profile)
        # Decisions kept before books, under host:port, are the default book's.
        self._legacy = urlsplit(base_url).netloc or base_url
        self._notes_of = notes_of

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
        checked = self._text(text)
        self.notes.delete(self._key(checked))
        if self.book == DEFAULT_BOOK:
            self.notes.delete(f"{self._legacy}|{text_key(checked)}")

    def get(self, text: str) -> Reviewed | None:
        """The decision on ``text``, or ``None``."""
        return self.get_many([text])[0]

    def get_many(self, texts: Sequence[str]) -> list[Reviewed | None]:
        """The decision on each text (``None``: none)."""
        values = self.notes.get_many([self._key(text) for text in texts])
        if self.book == DEFAULT_BOOK and any(value is None for value in values):
            older = self.notes.get_many([f"{self._legacy}|{text_key(text)}" for text in texts])
            values = [
                new if new is not None else old for new, old in zip(values, older, strict=True)
            ]
        return [_read(value) for value in values]

    def count(self) -> int:
        """Decisions of this book about this service."""
        return sum(1 for key, _value in self.notes.items() if key.startswith(f"{self.service}|"))

    def copy_from(self, book: str) -> int:
        """Copy into this book the decisions of ``book`` about the same service, on the texts
        this book has not decided; how many were copied. The only way a book takes another's
        decisions.

        Examples
        --------
        >>> client.match_decisions("acme-2026").pick("4 Mill Lane", "L00000004")
        >>> client.match_decisions("acme-2027").copy_from("acme-2026")
        1
        """
        source = check_book(book)
        if source == self.book:
            raise InvalidInput(f"copy_from({source!r}): that is this book")
        if self._notes_of is None:
            raise InvalidInput(
                "These decisions were made without a client: open them with "
                "client.match_decisions(book) to copy another book's"
            )
        other = self._notes_of(source)
        prefix = f"{self.service}|"
        theirs = {key: value for key, value in other.items() if key.startswith(prefix)}
        if not theirs:
            return 0
        keys = list(theirs)
        already_decided = self.notes.get_many(keys)
        copied = 0
        for key, held in zip(keys, already_decided, strict=True):
            if held is None:
                self.notes.put(key, theirs[key])
                copied += 1
        return copied

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
            location_id=location_id if isinstance(location_id, str) else None,
            matched_address=address if isinstance(address, str) else None,
            decided_at=str(data.get("at", "")),
        )
    except (ValueError, AttributeError):  # a note someone else wrote: not a decision
        return None
