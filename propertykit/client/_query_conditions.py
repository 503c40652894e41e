"""The condition-group filters of the service's own SDK, checked before anything is sent.

``client.query(area, query=[...])`` takes the grammar of Vepler's TypeScript SDK
(``@vepler/http-sdk``'s ``queryProperty``, built by ``@vepler/property-query-builder``)::

    [{"operator": "AND",                       # or "OR": how the groups below combine
      "groups": [{"conditions": [              # a group holds when all its conditions do
          {"field": "roomDetails.beds", "comparator": "gte", "value": 3},
          {"field": "propertyType", "comparator": "in", "value": ["detached", "semi-detached"]},
      ]}]}]                                    # every item of the list must hold

A condition's ``field`` is a record field by its dotted name, as in the frame's columns
(``pricing.currentSalePrice``, ``epc.currentEnergyRating``, ``address.outcode``); money in the
service's unit (pence under the ``vepler`` profile). Comparators: ``eq``, ``ne``, ``gt``,
``gte``, ``lt``, ``lte``, ``in``, ``nin``, ``contains``, ``startswith``, ``endswith`` (the
SDK's type) and ``regex`` (its published schema). The list is sent as the body's ``query``,
as given, on every profile, as the SDK sends it.

:func:`check_conditions` refuses, with :class:`~propertykit.errors.InvalidInput` naming where
(``query[0].groups[1].conditions[0].field``) and what: a shape other than the SDK's, an unknown
key, operator, comparator or field, a comparator the field's kind cannot take (``gt`` on a
postcode, ``contains`` on a price), or a value of the wrong kind (text for a number, a single
value for ``in``, a date that is not ISO 8601, a regular expression that does not compile).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from propertykit.errors import InvalidInput
from propertykit.frames import KINDS

OPERATORS = ("AND", "OR")
#: Every comparator of the SDK's grammar.
COMPARATORS = (
    "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "startswith", "endswith",
    "regex",
)  # fmt: skip
_ORDERED = frozenset({"gt", "gte", "lt", "lte"})
_LISTS = frozenset({"in", "nin"})
_TEXT_ONLY = frozenset({"contains", "startswith", "endswith", "regex"})
_NUMBER_KINDS = frozenset({"int", "number"})
_TIME_KINDS = frozenset({"date", "datetime"})
_TEXT_KINDS = frozenset({"text", "category", "level"})
#: The fields a condition may name, by dotted name, with their kind (the record's own leaves).
CONDITION_FIELDS: dict[str, str] = {
    name: kind
    for name, kind in KINDS.items()
    if not name.startswith("saleHistory") and kind not in ("raw", "list")
}
MAX_PATTERN = 200


def check_conditions(query: object) -> list[dict[str, Any]]:
    """The ``query`` list to send, as given (tuples as lists); :class:`InvalidInput` otherwise.

    Examples
    --------
    >>> check_conditions([{"operator": "AND", "groups": [{"conditions": [
    ...     {"field": "roomDetails.beds", "comparator": "gte", "value": 3}]}]}])
    [{'operator': 'AND', 'groups': [{'conditions': [{'field': 'roomDetails.beds', \
'comparator': 'gte', 'value': 3}]}]}]
    >>> check_conditions([{"operator": "AND", "groups": [{"conditions": [
    ...     {"field": "roomDetails.bed", "comparator": "eq", "value": 3}]}]}])
    Traceback (most recent call last):
    ...
    propertykit.errors.InvalidInput: query[0].groups[0].conditions[0].field: unknown field \
'roomDetails.bed' (did you mean 'roomDetails.beds'?)
    """
    items = _list(query, "query", "a list of condition groups such as [{'operator': 'AND', "
                  "'groups': [{'conditions': [...]}]}]")  # fmt: skip
    return [_query_group(item, f"query[{i}]") for i, item in enumerate(items)]


def _fail(where: str, message: str) -> InvalidInput:
    return InvalidInput(f"{where}: {message}")


def _list(value: object, where: str, what: str) -> list[Any]:
    if not isinstance(value, list | tuple) or not value:
        raise _fail(where, f"must be {what}, got {value!r}")
    return list(value)


def _keys(value: object, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"must be a dict with {', '.join(keys)}, got {value!r}")
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r}; it takes {', '.join(keys)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise _fail(where, f"missing {missing[0]!r}")
    return value


def _query_group(item: object, where: str) -> dict[str, Any]:
    group = _keys(item, where, ("operator", "groups"))
    operator = group["operator"]
    if operator not in OPERATORS:
        raise _fail(f"{where}.operator", f"must be 'AND' or 'OR', got {operator!r}")
    groups = _list(group["groups"], f"{where}.groups", "a non-empty list of {'conditions': [...]}")
    checked = []
    for g, inner in enumerate(groups):
        here = f"{where}.groups[{g}]"
        conditions = _list(
            _keys(inner, here, ("conditions",))["conditions"],
            f"{here}.conditions",
            "a non-empty list of {'field', 'comparator', 'value'}",
        )
        checked.append(
            {
                "conditions": [
                    _condition(c, f"{here}.conditions[{n}]") for n, c in enumerate(conditions)
                ]
            }
        )
    return {"operator": operator, "groups": checked}


def _condition(item: object, where: str) -> dict[str, Any]:
    condition = _keys(item, where, ("field", "comparator", "value"))
    field, comparator, value = condition["field"], condition["comparator"], condition["value"]
    if not isinstance(field, str) or field not in CONDITION_FIELDS:
        close = difflib.get_close_matches(str(field), CONDITION_FIELDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else " (a record field by dotted name)"
        raise _fail(f"{where}.field", f"unknown field {field!r}{hint}")
    if comparator not in COMPARATORS:
        raise _fail(
            f"{where}.comparator",
            f"unknown comparator {comparator!r}; the SDK's are {', '.join(COMPARATORS)}",
        )
    kind = CONDITION_FIELDS[field]
    if comparator in _ORDERED and kind not in _NUMBER_KINDS | _TIME_KINDS:
        raise _fail(f"{where}.comparator", f"{comparator!r} needs a number or date field; "
                    f"{field} is {_describe(kind)}")  # fmt: skip
    if comparator in _TEXT_ONLY and kind not in _TEXT_KINDS:
        raise _fail(f"{where}.comparator", f"{comparator!r} needs a text field; "
                    f"{field} is {_describe(kind)}")  # fmt: skip
    if comparator in _LISTS:
        values = _list(value, f"{where}.value", f"a non-empty list for {comparator!r}")
        for v in values:
            _check_value(v, kind, field, f"{where}.value")
        return {"field": field, "comparator": comparator, "value": values}
    _check_value(value, kind, field, f"{where}.value")
    if comparator == "regex":
        if len(value) > MAX_PATTERN:
            raise _fail(f"{where}.value", f"a pattern longer than {MAX_PATTERN} characters")
        try:
            re.compile(value)
        except re.error as exc:
            raise _fail(f"{where}.value", f"not a regular expression ({exc})") from None
    return {"field": field, "comparator": comparator, "value": value}


def _describe(kind: str) -> str:
    if kind in _NUMBER_KINDS:
        return "a number"
    if kind in _TIME_KINDS:
        return "a date"
    return "true or false" if kind == "flag" else "text"


def _check_value(value: object, kind: str, field: str, where: str) -> None:
    if kind in _NUMBER_KINDS:
        good = isinstance(value, int | float) and not isinstance(value, bool)
        good = good and math.isfinite(float(value))  # type: ignore[arg-type]
    elif kind in _TIME_KINDS:
        good = isinstance(value, str) and _is_iso_date(value)
    elif kind == "flag":
        good = isinstance(value, bool)
    else:
        good = isinstance(value, str) and bool(value)
    if not good:
        raise _fail(where, f"{field} takes {_describe(kind)}"
                    f"{' (ISO 8601, such as 2024-01-15)' if kind in _TIME_KINDS else ''}, "
                    f"got {value!r}")  # fmt: skip


def _is_iso_date(text: str) -> bool:
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True
