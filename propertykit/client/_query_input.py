"""Checks of an area query's input, in the service's own words, before anything is sent.

``area`` is one dict in the shape of ``POST /v1/property/query`` (or a list of them)::

    {"type": "postcode", "value": "SW1A 1AA"}
    {"type": "outcode", "value": "SW1A"}
    {"type": "point", "coordinates": [lng, lat], "radius": metres}
    {"type": "polygon", "coordinates": [[[lng, lat], ...]]}     # a GeoJSON Polygon's rings
    {"type": "multipolygon", "coordinates": [ring_or_polygon, ...]}  # as Vepler's older SDK

Filters carry the service's own names and are sent as given in the body's ``query`` object; an
unknown name, a value of the wrong kind, or a minimum above its maximum raises
:class:`~propertykit.errors.InvalidInput`, as do an unknown tag and an unknown ``sortBy`` field:
the same requests the service (and the sandbox) answer with 400, refused before they are paid for.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from propertykit.errors import InvalidInput

AREA_TYPES = ("postcode", "outcode", "point", "polygon", "multipolygon")

#: Numeric filters, each with its partner (min, max).
RANGE_FILTERS = (
    ("priceMin", "priceMax"),
    ("rentMin", "rentMax"),
    ("yearBuiltMin", "yearBuiltMax"),
    ("floorAreaMin", "floorAreaMax"),
)
_NUMBERS = tuple(name for pair in RANGE_FILTERS for name in pair)
_INT_LISTS = ("beds", "baths")
_TEXT_LISTS = (
    "propertyType",
    "epcRating",
    "tenure",
    "councilTaxBand",
    "saleStatus",
    "rentStatus",
)
#: Every filter name the query endpoint is documented to take in its ``query`` object.
FILTERS = (*_NUMBERS, *_INT_LISTS, *_TEXT_LISTS, "tags")
#: The tags of a record (``tags`` in the service interface), which ``tags={...}`` may name.
TAGS = ("newBuild", "chainFree", "auction", "sharedOwnership", "retirement", "cashBuyersOnly",
        "investment")  # fmt: skip
#: The fields the area query can be sorted by (``sortBy``).
SORT_FIELDS = ("price", "rent", "beds", "baths", "yearBuilt", "floorArea", "lastUpdated")

_POSTCODE = re.compile(r"^[A-Z]{1,2}[0-9][A-Z0-9]? ?[0-9][A-Z]{2}$", re.I)
_OUTCODE = re.compile(r"^[A-Z]{1,2}[0-9][A-Z0-9]?$", re.I)
_EPC = frozenset("ABCDEFG")


def _fail(message: str) -> InvalidInput:
    return InvalidInput(message)


def _is_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def check_area(area: object) -> list[dict[str, Any]]:
    """The ``area`` list to send; :class:`InvalidInput` for anything malformed.

    Examples
    --------
    >>> check_area({"type": "postcode", "value": "SW1A 1AA"})
    [{'type': 'postcode', 'value': 'SW1A 1AA'}]
    """
    if isinstance(area, Mapping):
        items: list[object] = [area]
    elif isinstance(area, list | tuple) and area:
        items = list(area)
    else:
        raise _fail(
            "area must be a dict such as {'type': 'postcode', 'value': 'SW1A 1AA'} "
            f"(or a non-empty list of them), got {area!r}"
        )
    return [_check_one_area(item) for item in items]


def _check_one_area(area: object) -> dict[str, Any]:
    if not isinstance(area, Mapping):
        raise _fail(f"each area must be a dict, got {area!r}")
    kind = area.get("type")
    if kind not in AREA_TYPES:
        raise _fail(f"area type must be one of {', '.join(AREA_TYPES)}, got {kind!r}")
    allowed = {
        "postcode": {"type", "value"},
        "outcode": {"type", "value"},
        "point": {"type", "coordinates", "radius"},
        "polygon": {"type", "coordinates"},
        "multipolygon": {"type", "coordinates"},
    }[str(kind)]
    extra = sorted(set(map(str, area)) - allowed)
    if extra:
        raise _fail(f"a {kind} area takes {', '.join(sorted(allowed))}; unknown: {extra}")
    if kind in ("postcode", "outcode"):
        value = area.get("value")
        pattern = _POSTCODE if kind == "postcode" else _OUTCODE
        if not isinstance(value, str) or not pattern.match(value.strip()):
            raise _fail(f"{kind} area needs a UK {kind} as 'value', got {value!r}")
        return {"type": kind, "value": value}
    if kind == "point":
        position = _position(area.get("coordinates"), "point coordinates")
        radius = area.get("radius")
        if not _is_number(radius) or float(radius) <= 0:  # type: ignore[arg-type]
            raise _fail(f"point area needs a radius in metres above 0, got {radius!r}")
        return {"type": "point", "coordinates": position, "radius": radius}
    if kind == "multipolygon":
        parts = area.get("coordinates")
        if not isinstance(parts, list | tuple) or not parts:
            raise _fail(f"multipolygon coordinates must be a list of polygons, got {parts!r}")
        return {"type": "multipolygon", "coordinates": [_polygon(part) for part in parts]}
    return {"type": "polygon", "coordinates": _polygon(area.get("coordinates"))}


def _position(value: object, what: str) -> list[float]:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(_is_number(number) for number in value)
    ):
        raise _fail(f"{what} must be [longitude, latitude], got {value!r}")
    lng, lat = float(value[0]), float(value[1])
    if not (-180 <= lng <= 180 and -90 <= lat <= 90):
        raise _fail(f"{what} must be [longitude, latitude] in degrees, got {value!r}")
    return [value[0], value[1]]


def _polygon(value: object) -> list[Any]:
    """A GeoJSON Polygon's rings (a single ring is accepted and sent as given)."""
    if not isinstance(value, list | tuple) or not value:
        raise _fail(f"polygon coordinates must be a list of rings of [lng, lat], got {value!r}")
    single_ring = _is_number_pair(value[0])
    rings = [value] if single_ring else list(value)
    for ring in rings:
        if not isinstance(ring, list | tuple) or len(ring) < 4:
            raise _fail("each polygon ring needs at least 4 [lng, lat] positions (closed)")
        positions = [_position(point, "polygon position") for point in ring]
        if positions[0] != positions[-1]:
            raise _fail("each polygon ring must be closed (its last position equals its first)")
    return (
        [list(map(list, ring)) for ring in rings] if not single_ring else [list(p) for p in value]
    )


def _is_number_pair(value: object) -> bool:
    return isinstance(value, list | tuple) and len(value) == 2 and all(map(_is_number, value))


def check_filters(filters: Mapping[str, object]) -> dict[str, Any]:
    """The ``query`` object to send: the filters as given (tuples as lists), each checked.

    Examples
    --------
    >>> check_filters({"priceMin": 30000000, "beds": [2, 3]})
    {'priceMin': 30000000, 'beds': [2, 3]}
    """
    unknown = sorted(set(filters) - set(FILTERS))
    if unknown:
        raise _fail(f"Unknown query filter(s) {unknown}; the service takes: {', '.join(FILTERS)}")
    query: dict[str, Any] = {}
    for name, value in filters.items():
        if name in _NUMBERS:
            if not _is_number(value) or float(value) < 0:  # type: ignore[arg-type]
                raise _fail(f"{name} must be a number >= 0, got {value!r}")
            query[name] = value
        elif name in _INT_LISTS:
            query[name] = _list_of(name, value, int)
        elif name in _TEXT_LISTS:
            query[name] = _list_of(name, value, str)
            if name == "epcRating" and not set(map(str.upper, query[name])) <= _EPC:
                raise _fail(f"epcRating takes letters A to G, got {value!r}")
        else:  # tags
            if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, bool) for k, v in value.items()
            ):
                raise _fail(f"tags must be a dict of tag name to True/False, got {value!r}")
            unknown_tags = [tag for tag in value if tag not in TAGS]
            if unknown_tags:
                raise _fail(f"Unknown tag {unknown_tags[0]!r}; the service has: {', '.join(TAGS)}")
            query[name] = dict(value)
    for low, high in RANGE_FILTERS:
        if low in query and high in query and float(query[low]) > float(query[high]):
            raise _fail(f"{low} ({query[low]!r}) is above {high} ({query[high]!r})")
    return query


def _list_of(name: str, value: object, kind: type) -> list[Any]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple | set | frozenset):
        example = "[2, 3]" if kind is int else "['detached']"
        raise _fail(f"{name} must be a list such as {example}, got {value!r}")
    items = list(value)
    good = all(
        isinstance(item, kind) and not isinstance(item, bool) and (kind is not str or item)
        for item in items
    )
    if not items or not good:
        raise _fail(f"{name} must be a non-empty list of {kind.__name__}, got {value!r}")
    return items


def check_sort_field(sort_by: object) -> str:
    """``sort_by`` if the service can sort by it; :class:`InvalidInput` naming the choices.

    Examples
    --------
    >>> check_sort_field("price")
    'price'
    >>> check_sort_field("cost")
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: Unknown sortBy field 'cost'; the service sorts by: price, \
rent, beds, baths, yearBuilt, floorArea, lastUpdated
    """
    if not isinstance(sort_by, str) or sort_by not in SORT_FIELDS:
        raise _fail(
            f"Unknown sortBy field {sort_by!r}; the service sorts by: {', '.join(SORT_FIELDS)}"
        )
    return sort_by
