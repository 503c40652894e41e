"""The condition-group filters of Vepler's SDK in the sandbox's area query (``query`` a list).

``query: [{operator: AND|OR, groups: [{conditions: [{field, comparator, value}]}]}]``: a record
matches when every item of the list holds; an item holds when its groups, joined by its
``operator``, do; a group holds when all its conditions do. ``field`` is a record field by its
dotted name (:data:`FIELDS`, with its kind); money as served (pence under the ``vepler``
profile). A record without the field never matches a condition on it (``ne`` and ``nin``
included). Text compares without regard to case; dates compare as dates.

Strict, as the service documents 400s for bad requests: an unknown key, operator, field or
comparator, a comparator the field's kind cannot take, or a value of the wrong kind each answer
400 naming where (``query[0].groups[0].conditions[1].field``) and what.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

Record = dict[str, Any]
Test = Callable[[Record], bool]

COMPARATORS = (
    "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "startswith", "endswith",
    "regex",
)  # fmt: skip
_NUMBER, _TEXT, _FLAG, _DATE = "number", "text", "flag", "date"
_ADDRESS = ("displayAddress postcode streetName streetNumber locality town county "
            "postcodeNoSpace outcode incode country")  # fmt: skip
_GROUPS: list[tuple[str, str, str]] = [
    ("", _TEXT, "propertyId locationId classificationCode propertyType propertySubType"),
    ("address", _TEXT, _ADDRESS),
    ("spatial", _NUMBER, "lat lng"),
    ("roomDetails", _NUMBER, "beds baths receptions"),
    ("pricing", _NUMBER, "currentSalePrice currentRentPrice estimatedSaleValue "
                         "estimatedRentValue pricePerSqFt"),
    ("pricing", _TEXT, "currency"),
    ("marketStatus", _TEXT, "forSale forRent"),
    ("marketStatus", _DATE, "listingDate soldDate"),
    ("marketStatus", _NUMBER, "daysOnMarket"),
    ("epc", _TEXT, "currentEnergyRating potentialEnergyRating"),
    ("epc", _NUMBER, "currentEnergyEfficiency potentialEnergyEfficiency"),
    ("epc", _DATE, "validFrom validTo"),
    ("tenure", _TEXT, "type"),
    ("tenure", _NUMBER, "leaseYearsRemaining groundRent serviceCharge"),
    ("councilTax", _TEXT, "taxBand localAuthority"),
    ("councilTax", _NUMBER, "annualCharge"),
    ("tags", _FLAG, "newBuild chainFree auction sharedOwnership retirement cashBuyersOnly "
                    "investment"),
    ("", _NUMBER, "floorAreaSqM plotSizeSqM yearBuilt"),
    ("", _DATE, "lastUpdated"),
]  # fmt: skip
#: Fields a condition may name, by dotted name, with their kind.
FIELDS: dict[str, str] = {
    (f"{prefix}.{name}" if prefix else name): kind
    for prefix, kind, names in _GROUPS
    for name in names.split()
}
_KINDS_OF = {
    "eq": None, "ne": None, "in": None, "nin": None,
    "gt": (_NUMBER, _DATE), "gte": (_NUMBER, _DATE),
    "lt": (_NUMBER, _DATE), "lte": (_NUMBER, _DATE),
    "contains": (_TEXT,), "startswith": (_TEXT,), "endswith": (_TEXT,), "regex": (_TEXT,),
}  # fmt: skip
MAX_PATTERN = 200


class ConditionError(ValueError):
    """A condition query the sandbox refuses: the message names where and what."""


def _fail(where: str, message: str) -> ConditionError:
    return ConditionError(f"{where}: {message}.")


def _object(value: object, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, f"must be an object with {', '.join(keys)}")
    unknown = [str(k) for k in value if k not in keys]
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r}; allowed: {', '.join(keys)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise _fail(where, f"missing {missing[0]!r}")
    return value


def _array(value: object, where: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise _fail(where, "must be a non-empty array")
    return value


def condition_test(query: list[Any]) -> Test:
    """A test of a record for the condition groups ``query``; :class:`ConditionError` if bad."""
    items = [_item_test(item, f"query[{i}]") for i, item in enumerate(_array(query, "query"))]
    return lambda record: all(test(record) for test in items)


def _item_test(item: object, where: str) -> Test:
    body = _object(item, where, ("operator", "groups"))
    operator = body["operator"]
    if operator not in ("AND", "OR"):
        raise _fail(f"{where}.operator", f"unknown operator {operator!r}; allowed: AND, OR")
    groups: list[list[Test]] = []
    for g, group in enumerate(_array(body["groups"], f"{where}.groups")):
        here = f"{where}.groups[{g}]"
        conditions = _array(
            _object(group, here, ("conditions",))["conditions"], here + ".conditions"
        )
        groups.append(
            [_condition_test(c, f"{here}.conditions[{n}]") for n, c in enumerate(conditions)]
        )
    join = all if operator == "AND" else any
    return lambda record: join(all(test(record) for test in group) for group in groups)


def _read(record: Record, path: tuple[str, ...]) -> Any:
    value: Any = record
    for name in path:
        value = value.get(name) if isinstance(value, dict) else None
    return value


def _condition_test(item: object, where: str) -> Test:
    body = _object(item, where, ("field", "comparator", "value"))
    field, comparator, value = body["field"], body["comparator"], body["value"]
    if not isinstance(field, str) or field not in FIELDS:
        raise _fail(f"{where}.field", f"unknown field {field!r}")
    if comparator not in _KINDS_OF:
        allowed = ", ".join(COMPARATORS)
        raise _fail(f"{where}.comparator", f"unknown comparator {comparator!r}; allowed: {allowed}")
    kind = FIELDS[field]
    kinds = _KINDS_OF[comparator]
    if kinds is not None and kind not in kinds:
        raise _fail(f"{where}.comparator", f"{comparator!r} does not apply to {field} ({kind})")
    if comparator in ("in", "nin"):
        wanted = {_value(v, kind, f"{where}.value") for v in _array(value, f"{where}.value")}
    else:
        wanted = {_value(value, kind, f"{where}.value")}
    path = tuple(field.split("."))
    target = next(iter(wanted))
    if comparator == "regex":
        if len(str(value)) > MAX_PATTERN:
            raise _fail(f"{where}.value", f"a pattern longer than {MAX_PATTERN} characters")
        try:
            pattern = re.compile(str(value), re.IGNORECASE)
        except re.error as exc:
            raise _fail(f"{where}.value", f"not a regular expression ({exc})") from None
    compare: Callable[[Any], bool] = {
        "eq": lambda v: v in wanted,
        "in": lambda v: v in wanted,
        "ne": lambda v: v not in wanted,
        "nin": lambda v: v not in wanted,
        "gt": lambda v: v > target,
        "gte": lambda v: v >= target,
        "lt": lambda v: v < target,
        "lte": lambda v: v <= target,
        "contains": lambda v: target in v,
        "startswith": lambda v: v.startswith(target),
        "endswith": lambda v: v.endswith(target),
        "regex": lambda v: pattern.search(v) is not None,
    }[comparator]

    def test(record: Record) -> bool:
        found = _read(record, path)
        if found is None:
            return False
        try:
            return compare(_value(found, kind, ""))
        except ConditionError:  # a value the record holds that is not of its kind
            return False

    return test


def _value(value: object, kind: str, where: str) -> Any:
    """``value`` in comparable form for ``kind``: floats, folded text, bools, UTC datetimes."""
    if kind == _NUMBER:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise _fail(where, f"must be a number, got {value!r}")
        return float(value)
    if kind == _FLAG:
        if not isinstance(value, bool):
            raise _fail(where, f"must be true or false, got {value!r}")
        return value
    if not isinstance(value, str):
        raise _fail(where, f"must be {'a date' if kind == _DATE else 'text'}, got {value!r}")
    if kind == _TEXT:
        return value.casefold()
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _fail(where, f"must be an ISO 8601 date, got {value!r}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
