"""Ids as the service takes them: checked before anything is sent, and percent-encoded.

A location id is any non-empty printable string without whitespace, ``,``, ``/``, ``?`` or ``#``,
and not ``.`` or ``..`` (which the URL library would resolve as a path step, sending the request to
a path the user never named); a source id is of the form ``<provider>::<id>``, without whitespace,
``,`` or ``/``, and may hold ``?`` or ``#`` (percent-encoded in the path).
:func:`parse_ids` reads ids as a person pastes them (mixed kinds, one per line or
comma-separated), for the forms and the command line. In a path, each id is percent-encoded
except ``:`` (so ``provider::id`` stays readable) and ids are joined with ``,``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from propertykit.errors import InvalidInput

#: Separators of the service's comma-separated path segments: never inside an id.
_FORBIDDEN_IN_ID = frozenset(",/")
#: Also refused in a location id, a bare path segment: what a URL reads as its query or fragment.
_FORBIDDEN_IN_LOCATION_ID = frozenset(",/?#")
#: Whole ids that a URL reads as a step in the path rather than a segment.
_DOT_SEGMENTS = frozenset({".", ".."})
#: Characters kept readable in an encoded id; everything else reserved or unsafe is encoded.
_SAFE_IN_ID = ":"


def validate_ids(ids: str | Iterable[str], *, source: bool) -> list[str]:
    """Check ids before anything is sent and drop repeats, keeping the first order.

    Parameters
    ----------
    ids
        One id, or any iterable of ids.
    source
        ``True`` for ``<provider>::<id>`` source ids, ``False`` for location ids.

    Raises
    ------
    InvalidInput
        An id is empty, ``.`` or ``..``, not a string, holds a separator (``,`` or ``/``; for
        location ids also ``?`` or ``#``), whitespace or a control character, or (for source
        ids) is not ``<provider>::<id>``; or no id was given.

    Examples
    --------
    >>> validate_ids(["zoopla::1", "rightmove::2", "zoopla::1"], source=True)
    ['zoopla::1', 'rightmove::2']
    >>> validate_ids("L1,L2", source=False)
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: Location id 'L1,L2' has “,” in it
    """
    if isinstance(ids, str):
        ids = [ids]
    try:
        items = list(ids)
    except TypeError:
        raise InvalidInput(f"Expected an id or a list of ids, got {type(ids).__name__}") from None
    if _all_plain(items, source=source):  # the common case, checked in C: nothing to report
        return list(dict.fromkeys(items))
    kind = "source id" if source else "location id"
    seen: dict[str, None] = {}
    for item in items:
        if not isinstance(item, str):
            raise InvalidInput(f"Each {kind} must be a string, got {item!r}")
        if not item:
            raise InvalidInput(f"Empty {kind}")
        problem = id_problem(item, source=source)
        if problem:
            raise InvalidInput(f"{kind.capitalize()} {item!r} {problem}")
        seen.setdefault(item, None)
    if not seen:
        raise InvalidInput(f"No {kind}s given")
    return list(seen)


#: Characters named in words when an id holds them.
_CHARACTER_NAMES = {" ": "a space", "\t": "a tab"}


def id_problem(item: str, *, source: bool) -> str | None:
    """Why ``item`` cannot be sent as an id, in plain words (``None``: it can be).

    The one check behind :func:`validate_ids` (which raises with it) and :func:`parse_ids`
    (which lists it), so the forms refuse exactly what the client refuses.

    Examples
    --------
    >>> id_problem("L 2", source=False)
    'has a space in it'
    >>> id_problem("rightmove-123", source=True)
    'is not a source id (written provider::id, such as rightmove::123)'
    >>> id_problem("L00000001", source=False) is None
    True
    """
    if item in _DOT_SEGMENTS:
        return "is not an id (a web address reads it as a step in the path)"
    forbidden = _FORBIDDEN_IN_ID if source else _FORBIDDEN_IN_LOCATION_ID
    bad = sorted({ch for ch in item if ch in forbidden or ch.isspace() or not ch.isprintable()})
    if bad:
        names = dict.fromkeys(_name_of(ch) for ch in bad)
        return f"has {' and '.join(names)} in it"
    if source:
        provider, sep, rest = item.partition("::")
        if not sep or not provider or not rest:
            return "is not a source id (written provider::id, such as rightmove::123)"
    return None


def _name_of(character: str) -> str:
    if character in _CHARACTER_NAMES:
        return _CHARACTER_NAMES[character]
    if character.isspace():
        return "a blank character"
    if not character.isprintable():
        return "a control character"
    return f"“{character}”"


#: Ids that need no check beyond this and no percent-encoding (one per line, for a whole list).
_PLAIN_LOCATION_IDS = re.compile(r"(?:[A-Za-z0-9_.~:-]+\n)*[A-Za-z0-9_.~:-]+")
_PLAIN_SOURCE_IDS = re.compile(
    r"(?:[A-Za-z0-9_.~-]+::[A-Za-z0-9_.~:-]+\n)*[A-Za-z0-9_.~-]+::[A-Za-z0-9_.~:-]+"
)


def _all_plain(items: list[Any], *, source: bool) -> bool:
    """Whether every item is a str of plain characters (and ``provider::id`` for sources)."""
    if not items or not all(type(item) is str for item in items):
        return False
    text = "\n".join(items)
    plain = (_PLAIN_SOURCE_IDS if source else _PLAIN_LOCATION_IDS).fullmatch(text)
    return plain is not None and not _DOT_SEGMENTS.intersection(items)


def encode_id(item: str) -> str:
    """Percent-encode one id for a path segment, keeping ``:`` readable.

    Examples
    --------
    >>> encode_id("epc::8200 0000#1")
    'epc::8200%200000%231'
    """
    if item.isalnum() and item.isascii():
        return item  # nothing quote would change (the common case, without quote's cost)
    return quote(item, safe=_SAFE_IN_ID)


def join_ids(ids: Iterable[str]) -> str:
    """Encode ids and join them with commas, as one path segment.

    Examples
    --------
    >>> join_ids(["L1", "zoopla::9"])
    'L1,zoopla::9'
    """
    return ",".join(encode_id(item) for item in ids)


_SEPARATORS = re.compile(r"[,\n\r;]+")


@dataclass
class ParsedIds:
    """Ids read from a text box, by kind, in the order typed (repeats dropped).

    Attributes
    ----------
    location_ids, source_ids
        The valid ids of each kind.
    invalid
        ``(id, reason)`` for every id that cannot be sent; the reason is a sentence in plain
        words that names the id (``“L 2” has a space in it``).
    """

    location_ids: list[str] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)
    invalid: list[tuple[str, str]] = field(default_factory=list)

    @property
    def count(self) -> int:
        """Number of valid ids."""
        return len(self.location_ids) + len(self.source_ids)


def parse_ids(text: str) -> ParsedIds:
    """Split pasted ids (newlines, commas or semicolons) and sort them by kind.

    An id with ``::`` is a source id and must be ``<provider>::<id>``; any other is a location
    id. Both follow the client's rules (no spaces, ``/`` or ``,`` inside an id); a location id
    with a single ``:`` is taken as a mistyped source id.

    Examples
    --------
    >>> parsed = parse_ids("L00000001, rightmove::100000009\\nL00000001\\nzoopla::")
    >>> parsed.location_ids, parsed.source_ids, [bad for bad, _ in parsed.invalid]
    (['L00000001'], ['rightmove::100000009'], ['zoopla::'])
    """
    parsed = ParsedIds()
    seen: set[str] = set()
    for raw in _SEPARATORS.split(text):
        item = raw.strip()
        if not item or item in seen:
            continue
        seen.add(item)
        is_source = "::" in item
        problem = id_problem(item, source=is_source)
        if problem:
            parsed.invalid.append((item, f"“{item}” {problem}"))
        elif not is_source and ":" in item:
            reason = "has a single “:” (a source id is written provider::id, with two)"
            parsed.invalid.append((item, f"“{item}” {reason}"))
        elif is_source:
            parsed.source_ids.append(item)
        else:
            parsed.location_ids.append(item)
    return parsed
