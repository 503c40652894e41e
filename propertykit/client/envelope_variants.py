"""The real service's documented envelope variants, as a table :mod:`.envelope` reads.

The service interface's envelope is ``{success, result, totalSize, size, hasMore, nextOffset}``.
Vepler's documentation also shows endpoints answering ``total``, ``limit`` and ``offset`` instead
(no ``hasMore``, no ``nextOffset``), and list keys other than ``result`` (planning answers
``applications``). :mod:`propertykit.client.envelope` takes its key tuples from here and asks
:func:`more_by_total` whether such a page has more after it; everything else (checks, paging
guards, :class:`~propertykit.errors.BadResponse` with the body's first bytes) stays there.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RECORD_KEYS", "TOTAL_KEYS", "more_by_total"]

#: Keys an envelope may hold its list of records under, tried in order: the documented ones only
#: (a guess such as ``data`` would take an unusable answer for an empty page).
RECORD_KEYS: tuple[str, ...] = ("result", "applications")
#: Keys of the total number of records across pages.
TOTAL_KEYS: tuple[str, ...] = ("totalSize", "total")


def more_by_total(body: dict[str, Any], records: int, total: int | None) -> bool:
    """Whether pages follow, for an envelope without ``hasMore``: its offset plus this page
    falls short of its total.

    Examples
    --------
    >>> more_by_total({"total": 5, "limit": 2, "offset": 0}, 2, 5)
    True
    >>> more_by_total({"total": 5, "limit": 2, "offset": 4}, 1, 5)
    False
    >>> more_by_total({"result": []}, 0, None)
    False
    """
    offset = body.get("offset", 0)
    if total is None or not records or not isinstance(offset, int) or isinstance(offset, bool):
        return False
    return offset + records < total
