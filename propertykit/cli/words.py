"""Plain words for the commands' output: a count with its noun in the right number."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 property``, ``2 properties``: a count (with thousands separators) and its noun.

    Examples
    --------
    >>> plural(1, "property", "properties"), plural(3, "request"), plural(5000, "id")
    ('1 property', '3 requests', '5,000 ids')
    """
    return f"{count:,} {word if count == 1 else (words or word + 's')}"
