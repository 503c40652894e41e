"""The service's record envelope, read in one place: records, paging, and what breaks them.

A 200 answer of the lookup endpoints is an envelope ``{"success": true, "result": [records],
"totalSize", "size", "hasMore", "nextOffset"}`` (a bare list of records is accepted too). The
real service's documentation also shows envelopes with ``total``, ``limit`` and ``offset``
instead (no ``hasMore``, no ``nextOffset``), and list keys other than ``result`` (planning
answers ``applications``): the key tuples below hold those variants; extend them to accept
another envelope.

- :func:`check_envelope` says whether a parsed body can be used at all; the transport runs it
  before a body may be cached (``fetch_json(check=...)``), so ``success: false`` or a ``result``
  that is a string, a number, ``null`` or an object is never cached and raises
  :class:`~propertykit.errors.BadResponse` at once (asking again would pay again).
- :func:`paging` is the one rule for "more pages follow", from an envelope's top-level fields:
  :func:`read_page` applies it to a decoded body, and the warm replay to the fields Arrow read
  (:mod:`propertykit.client._replay`). Where a page would have more after it but does not say
  where as an integer (``nextOffset`` or ``offset`` of another type), no more pages are fetched,
  and a :class:`~propertykit.errors.PagingWarning` says so: never a loop from offset 0.
- :func:`read_page` turns a usable body into a :class:`Page`.
- :func:`next_offset` decides where the next page starts, and stops with ``BadResponse`` when the
  service breaks its own paging: an offset that repeats or goes backwards, a next offset past
  ``totalSize`` (or past the number of ids asked), or an empty page while ``hasMore`` stays true.
  Without these, a server answering ``hasMore: true`` for ever is paid page after page.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from propertykit.errors import BadResponse, PagingWarning, outside_stacklevel
from propertykit.jsonio import Record, only_records

#: Keys an envelope may hold its list of records under, tried in order: the documented ones only
#: (a guess such as ``data`` would take an unusable answer for an empty page).
RECORD_KEYS: tuple[str, ...] = ("result", "applications")
#: Keys of the total number of records across pages.
TOTAL_KEYS: tuple[str, ...] = ("totalSize", "total")
#: Keys of the offset the next page starts at.
NEXT_OFFSET_KEYS: tuple[str, ...] = ("nextOffset",)
#: Keys saying whether more pages follow.
HAS_MORE_KEYS: tuple[str, ...] = ("hasMore",)
#: Every top-level field :func:`paging` reads (``offset``: the page's own, in the variant).
PAGING_FIELDS: tuple[str, ...] = (*HAS_MORE_KEYS, *NEXT_OFFSET_KEYS, "offset", *TOTAL_KEYS)


@dataclass(frozen=True)
class Paging:
    """What an envelope says about the pages after it.

    ``next_offset`` and ``total_size`` are ``None`` when the envelope does not give them as
    integers; ``unplaced`` says why pages that may follow are not followed (a paging field that
    is not an integer), else ``None``.
    """

    has_more: bool
    next_offset: int | None = None
    total_size: int | None = None
    unplaced: str | None = None


@dataclass(frozen=True)
class Page:
    """One usable answer: its records, and what it says about the pages after it.

    ``records`` holds the objects of the list (anything else in it is left out, counted by a
    :class:`~propertykit.errors.NotRecordsWarning`); ``items`` how many items the list held,
    records or not, for the offset of the next page (``None``: as many as ``records``);
    ``next_offset`` and ``total_size`` are ``None`` when the body does not give them;
    ``unplaced`` says why pages that may follow were not followed (:class:`Paging`).
    """

    records: list[Record]
    has_more: bool = False
    next_offset: int | None = None
    total_size: int | None = None
    items: int | None = None
    unplaced: str | None = None

    @property
    def served(self) -> int:
        """Items the page's list held, records or not."""
        return len(self.records) if self.items is None else self.items

    @property
    def whole(self) -> bool:
        """Whether this page is the whole answer as it stands: no pages after it, none left
        unfollowed, every item a record (what the warm replay may keep as read)."""
        return not self.has_more and self.unplaced is None and self.served == len(self.records)


def check_envelope(body: Any) -> None:
    """Raise ``ValueError`` saying why ``body`` holds no usable list of records.

    Examples
    --------
    >>> check_envelope({"success": True, "result": []})
    >>> check_envelope({"success": False, "error": "maintenance"})
    Traceback (most recent call last):
    ValueError: it says success: false ('maintenance')
    >>> check_envelope({"result": "ok"})
    Traceback (most recent call last):
    ValueError: its result is a str, not a list of records
    """
    if isinstance(body, list):
        return
    if not isinstance(body, dict):
        raise ValueError(f"the body is a JSON {_kind(body)}, not an envelope of records")
    if body.get("success") is False:
        detail = body.get("error", body.get("message"))
        said = f" ({_brief(detail)})" if detail is not None else ""
        raise ValueError(f"it says success: false{said}")
    key = _first_key(body, RECORD_KEYS)
    if key is None:
        names = " or ".join(repr(name) for name in RECORD_KEYS)
        raise ValueError(f"it has no list of records (no {names})")
    if not isinstance(body[key], list):
        raise ValueError(f"its {key} is a {_kind(body[key])}, not a list of records")


def paging(envelope: Mapping[str, Any], items: int) -> Paging:
    """Whether pages follow an envelope whose list held ``items`` items: the one rule.

    ``hasMore`` says so when present (``true`` and nothing else is yes). Without it (the
    documented ``total``/``limit``/``offset`` variant), pages follow while the page's ``offset``
    plus its items fall short of the total. Where pages would follow but the envelope does not
    say where as an integer (``nextOffset``, or ``offset`` in the variant, of another type), no
    more pages follow, and ``unplaced`` says why: never a loop from offset 0.

    Examples
    --------
    >>> paging({"hasMore": True, "nextOffset": 2}, 2)
    Paging(has_more=True, next_offset=2, total_size=None, unplaced=None)
    >>> paging({"total": 5, "limit": 2, "offset": 0}, 2).has_more
    True
    >>> paging({"total": 5, "limit": 2, "offset": 4}, 1).has_more
    False
    >>> paging({"total": 5, "limit": 2, "offset": "2"}, 2)
    Paging(has_more=False, next_offset=None, total_size=5, unplaced="offset '2' is not an integer")
    """
    total = _integer(envelope, TOTAL_KEYS)
    following = _value(envelope, NEXT_OFFSET_KEYS)
    more_key = _first_key(envelope, HAS_MORE_KEYS)
    if more_key is not None:
        if envelope[more_key] is True and following is not None and not _is_integer(following):
            return Paging(False, None, total, f"nextOffset {_brief(following)} is not an integer")
        placed = following if _is_integer(following) else None
        return Paging(envelope[more_key] is True, placed, total)
    offset = envelope.get("offset", 0)
    if total is None or not items:
        return Paging(False, None, total)
    if not _is_integer(offset):
        if offset is None:
            return Paging(False, None, total)
        return Paging(False, None, total, f"offset {_brief(offset)} is not an integer")
    placed = following if _is_integer(following) else None
    return Paging(offset + items < total, placed, total)


def read_page(body: Any, *, left_out: list[Any] | None = None, where: str = "") -> Page:
    """The records and paging of a body that passed :func:`check_envelope`.

    Raises :class:`~propertykit.errors.BadResponse` when it does not pass. Items of the list
    that are not records are added to ``left_out`` when given, else counted in a warning
    (:func:`propertykit.jsonio.only_records`). A page that may have more after it but does not
    say where (:func:`paging`) is read as the last, and a
    :class:`~propertykit.errors.PagingWarning` says so (naming ``where``, the path asked).

    Examples
    --------
    >>> read_page({"result": [{"id": 1}], "hasMore": True, "nextOffset": 1})
    Page(records=[{'id': 1}], has_more=True, next_offset=1, total_size=None, items=1, unplaced=None)
    """
    try:
        check_envelope(body)
    except ValueError as exc:
        raise BadResponse(f"The service's answer cannot be used: {exc}") from None
    if isinstance(body, list):
        return Page(only_records(body, left_out=left_out), items=len(body))
    key = _first_key(body, RECORD_KEYS)
    assert key is not None
    items = body[key]
    records = only_records(items, left_out=left_out)
    said = paging(body, len(items))
    if said.unplaced is not None:
        at = f" at {where}" if where else ""
        warnings.warn(
            f"A page{at} may have more after it, but its {said.unplaced}: the pages after it "
            f"were not fetched ({len(records):,} records kept)",
            PagingWarning,
            stacklevel=outside_stacklevel(),
        )
    return Page(
        records, said.has_more, said.next_offset, said.total_size, len(items), said.unplaced
    )


def next_offset(page: Page, offset: int, *, where: str, most: int | None = None) -> int | None:
    """Offset of the page after ``page`` (fetched at ``offset``), or ``None`` after the last.

    Parameters
    ----------
    page
        The page just read.
    offset
        The offset it was asked for.
    where
        What was asked (a path), for the message.
    most
        Most records the request can have in all (e.g. one per id asked), when known.

    Raises
    ------
    BadResponse
        The service broke its own paging; the pages before are kept by the caller.

    Examples
    --------
    >>> next_offset(Page([{}], has_more=True, next_offset=1, total_size=2), 0, where="/x")
    1
    >>> next_offset(Page([{}], has_more=True, next_offset=0), 0, where="/x")
    Traceback (most recent call last):
    propertykit.errors.BadResponse: The service broke its paging at /x: ...
    """
    if not page.has_more:
        return None
    following = page.next_offset if page.next_offset is not None else offset + page.served
    problem = None
    if not page.served:
        problem = f"the page at offset {offset} is empty while hasMore stays true"
    elif following == offset:
        problem = f"the page at offset {offset} gives the same offset again as the next"
    elif following < offset:
        problem = f"the page at offset {offset} gives an earlier offset ({following}) as the next"
    elif page.total_size is not None and following >= page.total_size:
        problem = (
            f"the page at offset {offset} says hasMore with next offset {following}, at or past "
            f"totalSize {page.total_size}"
        )
    elif most is not None and following >= most:
        problem = (
            f"the page at offset {offset} says hasMore with next offset {following}, but only "
            f"{most} ids were asked for"
        )
    if problem is not None:
        raise BadResponse(
            f"The service broke its paging at {where}: {problem}. Stopped instead of paying for "
            "more pages; the records fetched so far are in the error's .partial"
        )
    return following


def _first_key(body: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((key for key in keys if key in body), None)


def _value(body: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    key = _first_key(body, keys)
    return body.get(key) if key is not None else None


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _integer(body: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    value = _value(body, keys)
    return value if _is_integer(value) else None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "object", list: "list", bool: "boolean"}.get(type(value), type(value).__name__)


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
