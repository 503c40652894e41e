"""``POST /v1/property/query`` in the sandbox: properties by area and filters, paged.

The body is Vepler's documented one: ``area`` (a list of ``{type: postcode|outcode, value}``,
``{type: point, coordinates: [lng, lat], radius}`` in metres, or ``{type: polygon, coordinates}``
with GeoJSON Polygon rings or one ring; ``multipolygon``: a list of those), ``query`` (filters),
``limit`` (default per profile, at most 100), ``offset``, ``sortBy``, ``sortOrder`` and
``attributes`` (a list). A property is in the area when it is in any of the listed areas.
Filters:

======================  ===================================================================
``priceMin/Max``        ``pricing.currentSalePrice``, else ``estimatedSaleValue`` (served
                        units: pence under the ``vepler`` profile)
``rentMin/Max``         ``pricing.currentRentPrice``, else ``estimatedRentValue``
``beds``, ``baths``     ``roomDetails.beds`` / ``.baths`` is one of the listed numbers
``propertyType``        ``propertyType`` (case-insensitive)
``epcRating``           ``epc.currentEnergyRating``
``tenure``              ``tenure.type``
``councilTaxBand``      ``councilTax.taxBand``
``saleStatus``          ``marketStatus.forSale`` (``sstc`` also matches under offer / sold STC)
``rentStatus``          ``marketStatus.forRent``
``tags``                every listed tag has the given true/false value
``yearBuiltMin/Max``    ``yearBuilt``; ``floorAreaMin/Max``: ``floorAreaSqM``
======================  ===================================================================

Or ``query`` is a list: the condition groups of Vepler's SDK
(:mod:`propertykit.sandbox._query_conditions`). Records missing the field a filter reads are left
out. ``sortBy`` takes ``price``, ``rent``,
``beds``, ``baths``, ``yearBuilt``, ``floorArea`` or ``lastUpdated`` (missing values last);
the default order is the catalogue's.

Strict, as the real service documents 400s for bad requests: an unknown key at the top of the
body or in an area, an unknown filter, tag or sort field, and a value of the wrong type each
answer 400 with a message naming the offending key (never a 200 that quietly ignores it).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Collection, Iterable
from functools import lru_cache
from typing import Any

from propertykit.sandbox._catalogue import ATTRIBUTES, Catalogue
from propertykit.sandbox._profiles import PROFILES
from propertykit.sandbox._query_conditions import ConditionError, condition_test

MAX_QUERY_PAGE = 100
_EARTH_RADIUS_M = 6_371_008.8


class QueryError(Exception):
    """A query the sandbox refuses (400): ``code`` and ``message`` for the error body."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _get(record: dict[str, Any], *path: str) -> Any:
    value: Any = record
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _price(record: dict[str, Any]) -> Any:
    current = _get(record, "pricing", "currentSalePrice")
    return current if current is not None else _get(record, "pricing", "estimatedSaleValue")


def _rent(record: dict[str, Any]) -> Any:
    current = _get(record, "pricing", "currentRentPrice")
    return current if current is not None else _get(record, "pricing", "estimatedRentValue")


_READERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "price": _price,
    "rent": _rent,
    "beds": lambda r: _get(r, "roomDetails", "beds"),
    "baths": lambda r: _get(r, "roomDetails", "baths"),
    "yearBuilt": lambda r: r.get("yearBuilt"),
    "floorArea": lambda r: r.get("floorAreaSqM"),
    "lastUpdated": lambda r: r.get("lastUpdated"),
    "propertyType": lambda r: r.get("propertyType"),
    "epcRating": lambda r: _get(r, "epc", "currentEnergyRating"),
    "tenure": lambda r: _get(r, "tenure", "type"),
    "councilTaxBand": lambda r: _get(r, "councilTax", "taxBand"),
    "saleStatus": lambda r: _get(r, "marketStatus", "forSale"),
    "rentStatus": lambda r: _get(r, "marketStatus", "forRent"),
}
_RANGES = {"price": "price", "rent": "rent", "yearBuilt": "yearBuilt", "floorArea": "floorArea"}
_LISTS = ("beds", "baths", "propertyType", "epcRating", "tenure", "councilTaxBand",
          "saleStatus", "rentStatus")  # fmt: skip
_SALE_WORDS = {"sstc": {"sstc", "soldstc", "underoffer"}}
FILTER_NAMES = frozenset(
    [f"{name}{end}" for name in _RANGES for end in ("Min", "Max")] + list(_LISTS) + ["tags"]
)
#: The keys a query body may have.
BODY_KEYS = ("area", "query", "limit", "offset", "sortBy", "sortOrder", "attributes")
#: The fields ``sortBy`` takes.
SORT_FIELDS = (*_RANGES, "beds", "baths", "lastUpdated")
#: The tags ``query.tags`` may name (the record's ``tags`` object).
TAGS = ("newBuild", "chainFree", "auction", "sharedOwnership", "retirement", "cashBuyersOnly",
        "investment")  # fmt: skip
_AREA_KEYS = {
    "postcode": {"type", "value"},
    "outcode": {"type", "value"},
    "point": {"type", "coordinates", "radius"},
    "polygon": {"type", "coordinates"},
    "multipolygon": {"type", "coordinates"},
}
_INT_LISTS = ("beds", "baths")


def _unknown(
    what: str, given: Iterable[Any], allowed: Collection[str], code: str = "invalid_parameter"
) -> None:
    """400 naming the first key (or item) of ``given`` that is not ``allowed``."""
    extra = [str(name) for name in given if name not in allowed]
    if extra:
        raise QueryError(
            code, f"Unknown {what} {extra[0]!r}; allowed: {', '.join(sorted(allowed))}."
        )


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise QueryError("invalid_parameter", f"{what} must be a number, got {value!r}.")
    return float(value)


def _distance_m(lng1: float, lat1: float, lng2: float, lat2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * _EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(h)))


def _in_ring(lng: float, lat: float, ring: list[list[float]]) -> bool:
    inside = False
    for (x1, y1), (x2, y2) in itertools.pairwise(ring):
        if (y1 > lat) != (y2 > lat) and lng < (x2 - x1) * (lat - y1) / (y2 - y1) + x1:
            inside = not inside
    return inside


def _rings(coordinates: object) -> list[list[list[float]]]:
    if not isinstance(coordinates, list) or not coordinates:
        raise QueryError("invalid_area", "polygon coordinates must be a list of rings.")
    rings = [coordinates] if _is_position(coordinates[0]) else coordinates
    checked = []
    for ring in rings:
        if not isinstance(ring, list) or len(ring) < 4 or not all(map(_is_position, ring)):
            raise QueryError("invalid_area", "each polygon ring needs 4 or more [lng, lat].")
        checked.append([[float(x), float(y)] for x, y in ring])
    return checked


def _is_position(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(n, int | float) and not isinstance(n, bool) for n in value)
    )


def _area_test(area: object) -> Callable[[dict[str, Any]], bool]:
    if not isinstance(area, dict):
        raise QueryError("invalid_area", "each area must be an object.")
    kind = area.get("type")
    if isinstance(kind, str) and kind in _AREA_KEYS:
        _unknown(f"key in a {kind} area:", area, _AREA_KEYS[kind])
    if kind in ("postcode", "outcode"):
        value = area.get("value")
        if not isinstance(value, str) or not value.strip():
            raise QueryError("invalid_area", f"a {kind} area needs a value.")
        wanted = value.replace(" ", "").upper()
        field = "postcodeNoSpace" if kind == "postcode" else "outcode"
        return lambda r: str(_get(r, "address", field) or "").replace(" ", "").upper() == wanted
    if kind == "point":
        centre, radius = area.get("coordinates"), area.get("radius")
        if not _is_position(centre):
            raise QueryError("invalid_area", "a point area needs coordinates [lng, lat].")
        metres = _number(radius, "radius")
        lng0, lat0 = float(centre[0]), float(centre[1])  # type: ignore[index]

        def near(r: dict[str, Any]) -> bool:
            lat, lng = _get(r, "spatial", "lat"), _get(r, "spatial", "lng")
            return lat is not None and _distance_m(lng0, lat0, lng, lat) <= metres

        return near
    if kind in ("polygon", "multipolygon"):
        parts = area.get("coordinates") if kind == "multipolygon" else [area.get("coordinates")]
        if not isinstance(parts, list) or not parts:
            raise QueryError("invalid_area", "multipolygon coordinates must list polygons.")
        polygons = [_rings(part) for part in parts]

        def within(r: dict[str, Any]) -> bool:
            lat, lng = _get(r, "spatial", "lat"), _get(r, "spatial", "lng")
            if lat is None or lng is None:
                return False
            return any(
                _in_ring(lng, lat, outer) and not any(_in_ring(lng, lat, h) for h in holes)
                for outer, *holes in polygons
            )

        return within
    raise QueryError("invalid_area", f"unknown area type {kind!r}.")


def _folded(value: object) -> object:
    return value.casefold() if isinstance(value, str) else value


def _filter_test(name: str, value: object) -> Callable[[dict[str, Any]], bool]:
    if name.endswith(("Min", "Max")) and name[:-3] in _RANGES:
        read, bound = _READERS[name[:-3]], _number(value, name)
        if name.endswith("Min"):
            return lambda r: (v := read(r)) is not None and v >= bound
        return lambda r: (v := read(r)) is not None and v <= bound
    if name in _LISTS:
        if not isinstance(value, list) or not value:
            raise QueryError("invalid_parameter", f"{name} must be a non-empty array.")
        kind: type = int if name in _INT_LISTS else str
        wrong = [i for i in value if not isinstance(i, kind) or isinstance(i, bool)]
        if wrong:
            raise QueryError(
                "invalid_parameter",
                f"{name} takes {'integers' if kind is int else 'strings'}, got {wrong[0]!r}.",
            )
        read = _READERS[name]
        wanted: set[Any] = set()
        for item in value:
            key = item.casefold() if isinstance(item, str) else item
            wanted |= _SALE_WORDS.get(key, {key}) if name == "saleStatus" else {key}
        return lambda r: _folded(read(r)) in wanted
    if name == "tags":
        if not isinstance(value, dict):
            raise QueryError("invalid_parameter", "tags must be an object of true/false.")
        _unknown("tag", value, TAGS)
        wrong = [tag for tag, want in value.items() if not isinstance(want, bool)]
        if wrong:
            raise QueryError("invalid_parameter", f"tags.{wrong[0]} must be true or false.")
        pairs = list(value.items())
        return lambda r: all(bool(_get(r, "tags", tag)) == want for tag, want in pairs)
    raise QueryError(
        "invalid_parameter",
        f"Unknown query filter {name!r}; allowed: {', '.join(sorted(FILTER_NAMES))}.",
    )


def run_query(
    catalogue: Catalogue, body: object, default_limit: int
) -> tuple[list[dict[str, Any]], int, int, int, tuple[str, ...] | None]:
    """(page of full records, total matching, offset, limit, attributes) for a query body."""
    if not isinstance(body, dict):
        raise QueryError("invalid_body", "The request body must be a JSON object.")
    _unknown("key in the query body:", body, BODY_KEYS)
    areas = body.get("area")
    if isinstance(areas, dict):
        areas = [areas]
    if not isinstance(areas, list) or not areas:
        raise QueryError("invalid_area", "area must be a non-empty array of areas.")
    query = body.get("query") or {}
    for area in areas:
        _area_test(area)  # refused here, before anything is looked up
    _record_tests(query)
    limit = body.get("limit", default_limit)
    offset = body.get("offset", 0)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise QueryError("invalid_parameter", f"limit must be an integer >= 1, got {limit!r}.")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise QueryError("invalid_parameter", f"offset must be an integer >= 0, got {offset!r}.")
    attributes = body.get("attributes")
    if attributes is not None:
        if not isinstance(attributes, list):
            raise QueryError("invalid_attribute", "attributes must be an array of names.")
        _unknown("attribute", attributes, ATTRIBUTES, "invalid_attribute")
        attributes = tuple(attributes)
    sort_by, order = body.get("sortBy"), body.get("sortOrder", "asc")
    if order not in ("asc", "desc"):
        raise QueryError("invalid_parameter", "sortOrder must be asc or desc.")
    if sort_by is not None and sort_by not in SORT_FIELDS:
        raise QueryError(
            "invalid_parameter",
            f"Unknown sortBy field {sort_by!r}; allowed: {', '.join(SORT_FIELDS)}.",
        )
    asked = json.dumps([areas, query, sort_by, order], sort_keys=True)
    found = _matching(
        catalogue.seed, catalogue.n_properties, catalogue.profile.name, catalogue.realism, asked
    )
    limit = min(limit, MAX_QUERY_PAGE)
    page = [catalogue.record(i) for i in found[offset : offset + limit]]
    return page, len(found), offset, limit, attributes


def _record_tests(query: object) -> list[Callable[[dict[str, Any]], bool]]:
    """The tests a record must pass for ``query`` (filters, or Vepler's condition groups)."""
    if isinstance(query, list):  # the condition groups of Vepler's SDK
        try:
            return [condition_test(query)]
        except ConditionError as exc:
            raise QueryError("invalid_parameter", str(exc)) from None
    if isinstance(query, dict):
        return [_filter_test(name, value) for name, value in query.items()]
    raise QueryError(
        "invalid_parameter",
        "query must be an object of filters or an array of condition groups.",
    )


@lru_cache(maxsize=64)
def _matching(
    seed: int, n_properties: int, profile: str, realism: str, asked: str
) -> tuple[int, ...]:
    """The indexes of the records in any of the areas that pass every test, in the order asked
    (``asked``: the checked areas, query, sortBy and sortOrder as JSON). The latest answers are
    kept, so that paging through one scans the world once, not once per page: the catalogue
    never changes."""
    areas, query, sort_by, order = json.loads(asked)
    catalogue = Catalogue(
        seed=seed, n_properties=n_properties, profile=PROFILES[profile], realism=realism
    )
    in_area = [_area_test(area) for area in areas]
    tests = _record_tests(query)
    found = [
        i
        for i, record in enumerate(map(catalogue.record, range(n_properties)))
        if any(test(record) for test in in_area) and all(test(record) for test in tests)
    ]
    if sort_by is not None:
        read = _READERS[sort_by]
        present = [i for i in found if read(catalogue.record(i)) is not None]
        missing = [i for i in found if read(catalogue.record(i)) is None]
        present.sort(key=lambda i: read(catalogue.record(i)), reverse=order == "desc")
        found = present + missing
    return tuple(found)
