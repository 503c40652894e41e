"""Every documented envelope of the real service: where the records are, whether more follow.

The service interface's envelope is ``{success, result, totalSize, size, hasMore, nextOffset}``.
Vepler's documentation also shows endpoints answering ``total``, ``limit`` and ``offset``
instead, and list keys other than ``result`` (planning answers ``applications``). Both are read
here; a body that matches none of them raises :class:`UnreadableEnvelope` with its first bytes,
rather than being taken for "no records".
"""

from __future__ import annotations

import json
from typing import Any

from propertykit.errors import PropertyKitError
from propertykit.jsonio import Record

__all__ = ["LIST_KEYS", "UnreadableEnvelope", "next_offset", "page_records"]

#: Keys a list of records may be under, in the order they are looked for.
LIST_KEYS = ("result", "results", "applications", "properties", "data", "items")
#: Keys that make a body an envelope even when it holds no list (e.g. an empty page).
_ENVELOPE_KEYS = ("success", "totalSize", "size", "hasMore", "nextOffset", "total", "count")
#: How much of an unreadable body an error shows.
_SHOWN = 200


class UnreadableEnvelope(PropertyKitError):
    """A 200 answer whose body matches none of the documented envelopes.

    ``body_start`` holds its first bytes. Nothing more is sent for the call.
    """

    def __init__(self, message: str, *, body_start: str) -> None:
        super().__init__(message)
        self.body_start = body_start


def page_records(body: Any) -> list[Record]:
    """The records of one answer, under whichever documented key holds them.

    Examples
    --------
    >>> page_records({"success": True, "applications": [{"id": "A1"}], "total": 1})
    [{'id': 'A1'}]
    >>> page_records([{"propertyId": "P1"}])
    [{'propertyId': 'P1'}]
    """
    if isinstance(body, list):
        return [item for item in body if isinstance(item, dict)]
    if isinstance(body, dict):
        for key in LIST_KEYS:
            if key in body:
                found = body[key]
                if isinstance(found, dict):
                    return [found]
                if isinstance(found, list):
                    return [item for item in found if isinstance(item, dict)]
                if found is None:
                    return []
        if any(key in body for key in _ENVELOPE_KEYS):
            return []
    shown = _start_of(body)
    raise UnreadableEnvelope(
        "The service answered 200 with a body propertykit cannot read as records "
        f"(no {', '.join(LIST_KEYS[:3])}, ... list): {shown}",
        body_start=shown,
    )


def next_offset(body: Any, offset: int, page: list[Record]) -> int | None:
    """Offset of the next page, or ``None`` when this was the last one.

    ``hasMore``/``nextOffset`` first; else ``total`` (or ``totalSize``) against ``offset`` plus
    the page. A page that would not move forward ends the paging.

    Examples
    --------
    >>> next_offset({"total": 5, "limit": 2, "offset": 0}, 0, [{}, {}])
    2
    >>> next_offset({"total": 5, "limit": 2, "offset": 4}, 4, [{}]) is None
    True
    """
    if not isinstance(body, dict) or not page:
        return None
    served = _integer(body.get("offset"))
    start = served if served is not None else offset
    if "hasMore" in body:
        if body.get("hasMore") is not True:
            return None
        following = _integer(body.get("nextOffset"))
        if following is None:
            following = start + len(page)
    else:
        total = _integer(body.get("total"))
        if total is None:
            total = _integer(body.get("totalSize"))
        if total is None or start + len(page) >= total:
            return None
        following = start + len(page)
    return following if following > offset else None


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _start_of(body: Any) -> str:
    try:
        text = json.dumps(body, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(body)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
