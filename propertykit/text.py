"""Words for people: counts with their nouns, and short lists.

The one home of the small helpers every layer's messages share (the command line, the forms'
messages, warnings), so that ``1 id`` / ``2 ids`` and ``a, b and 3 more`` read the same
everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["listed", "plural"]


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` (with thousands separators) and ``noun``, in the plural unless it is one.

    Examples
    --------
    >>> plural(1, "property", "properties"), plural(3, "request"), plural(5000, "id")
    ('1 property', '3 requests', '5,000 ids')
    """
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"


def listed(items: Sequence[str], *, most: int = 5) -> str:
    """Up to ``most`` items joined with commas, and how many more.

    Examples
    --------
    >>> listed(["A", "B"]), listed([str(n) for n in range(8)], most=3)
    ('A, B', '0, 1, 2 and 5 more')
    """
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most:,} more" if len(items) > most else "")
