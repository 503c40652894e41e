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
from urllib.parse import quote

from propertykit.errors import InvalidInput

__all__ = ["ParsedIds", "encode_id", "join_ids", "parse_ids", "validate_ids"]

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
    propertykit.errors.InvalidInput: Location id 'L1,L2' contains ','
    """
    if isinstance(ids, str):
        ids = [ids]
    try:
        items = list(ids)
    except TypeError:
        raise InvalidInput(f"Expected an id or a list of ids, got {type(ids).__name__}") from None
    kind = "source id" if source else "location id"
    seen: dict[str, None] = {}
    for item in items:
        if not isinstance(item, str):
            raise InvalidInput(f"Each {kind} must be a string, got {item!r}")
        if not item:
            raise InvalidInput(f"Empty {kind}")
        if item in _DOT_SEGMENTS:
            raise InvalidInput(
                f"{kind.capitalize()} {item!r} is not an id (a URL reads it as a path step)"
            )
        forbidden = _FORBIDDEN_IN_ID if source else _FORBIDDEN_IN_LOCATION_ID
        bad = {ch for ch in item if ch in forbidden or ch.isspace() or not ch.isprintable()}
        if bad:
            shown = ", ".join(repr(ch) for ch in sorted(bad))
            raise InvalidInput(f"{kind.capitalize()} {item!r} contains {shown}")
        if source:
            provider, sep, rest = item.partition("::")
            if not sep or not provider or not rest:
                raise InvalidInput(f"Source id {item!r} is not of the form <provider>::<id>")
        seen.setdefault(item, None)
    if not seen:
        raise InvalidInput(f"No {kind}s given")
    return list(seen)


def encode_id(item: str) -> str:
    """Percent-encode one id for a path segment, keeping ``:`` readable.

    Examples
    --------
    >>> encode_id("epc::8200 0000#1")
    'epc::8200%200000%231'
    """
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
        ``(id, reason)`` for every id that cannot be sent.
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
        try:
            validate_ids([item], source=is_source)
        except InvalidInput as exc:
            parsed.invalid.append((item, str(exc)))
            continue
        if not is_source and ":" in item:
            reason = f"Id {item!r} has a single ':'; a source id is written <provider>::<id>"
            parsed.invalid.append((item, reason))
        elif is_source:
            parsed.source_ids.append(item)
        else:
            parsed.location_ids.append(item)
    return parsed
