"""The condition-group filters of the service's own SDK (``client.query(area, query=[...])``,
docs/client.md), checked before anything is sent: :func:`check_conditions` refuses, naming where
(``query[0].groups[1].conditions[0].field``) and what, a shape other than the SDK's, an unknown
key, operator, comparator or field, a comparator the field's kind cannot take, or a value of the
wrong kind. A ``field`` is a record field by dotted name, as in the frame's columns.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
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
#: The fields a condition may name, by dotted name, with their kind (the record's own leaves).
CONDITION_FIELDS: dict[str, str] = {
    name: kind
    for name, kind in KINDS.items()
    if not name.startswith("saleHistory") and kind not in ("raw", "list")
}
MAX_PATTERN = 200


def _is_iso_date(value: object) -> bool:
    try:
        datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return False
    return isinstance(value, str)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


_NUMBER = ("a number", _is_number, "")
_DATE = ("a date", _is_iso_date, " (ISO 8601, such as 2024-01-15)")
#: A field's kind -> what it takes, in words; whether a value is one; a hint when it is not.
_TAKES: dict[str, tuple[str, Callable[[object], bool], str]] = {
    "int": _NUMBER, "number": _NUMBER, "date": _DATE, "datetime": _DATE,
    "flag": ("true or false", lambda v: isinstance(v, bool), ""),
}  # fmt: skip
_TEXT = ("text", lambda v: isinstance(v, str) and bool(v), "")
#: A comparator -> the kinds of field it needs (in words) and how to say them.
_NEEDS = {
    **dict.fromkeys(("gt", "gte", "lt", "lte"), (("a number", "a date"), "a number or date")),
    **dict.fromkeys(("contains", "startswith", "endswith", "regex"), (("text",), "a text")),
}


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
    checked = []
    for i, item in enumerate(items):
        where = f"query[{i}]"
        operator, groups = _keys(item, where, ("operator", "groups")).values()
        if operator not in OPERATORS:
            raise _fail(f"{where}.operator", f"must be 'AND' or 'OR', got {operator!r}")
        groups = _list(groups, f"{where}.groups", "a non-empty list of {'conditions': [...]}")
        for g, group in enumerate(groups):
            here = f"{where}.groups[{g}]"
            (conditions,) = _keys(group, here, ("conditions",)).values()
            conditions = _list(conditions, f"{here}.conditions",
                               "a non-empty list of {'field', 'comparator', 'value'}")  # fmt: skip
            groups[g] = {"conditions": [_condition(c, f"{here}.conditions[{n}]")
                                        for n, c in enumerate(conditions)]}  # fmt: skip
        checked.append({"operator": operator, "groups": groups})
    return checked


def _fail(where: str, message: str) -> InvalidInput:
    return InvalidInput(f"{where}: {message}")


def _list(value: object, where: str, what: str) -> list[Any]:
    if not isinstance(value, list | tuple) or not value:
        raise _fail(where, f"must be {what}, got {value!r}")
    return list(value)


def _keys(value: object, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """``value``'s ``keys``, in that order; refused if it is not a dict of exactly those."""
    if not isinstance(value, Mapping):
        raise _fail(where, f"must be a dict with {', '.join(keys)}, got {value!r}")
    unknown = sorted(str(k) for k in value if k not in keys)
    if unknown:
        raise _fail(where, f"unknown key {unknown[0]!r}; it takes {', '.join(keys)}")
    missing = [k for k in keys if k not in value]
    if missing:
        raise _fail(where, f"missing {missing[0]!r}")
    return {k: value[k] for k in keys}


def _condition(item: object, where: str) -> dict[str, Any]:
    condition = _keys(item, where, ("field", "comparator", "value"))
    field, comparator, value = condition.values()
    if not isinstance(field, str) or field not in CONDITION_FIELDS:
        close = difflib.get_close_matches(str(field), CONDITION_FIELDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else " (a record field by dotted name)"
        raise _fail(f"{where}.field", f"unknown field {field!r}{hint}")
    if comparator not in COMPARATORS:
        known = ", ".join(COMPARATORS)
        raise _fail(
            f"{where}.comparator", f"unknown comparator {comparator!r}; the SDK's are {known}"
        )
    takes, good, hint = _TAKES.get(CONDITION_FIELDS[field], _TEXT)
    kinds, needs = _NEEDS.get(comparator, (None, ""))
    if kinds is not None and takes not in kinds:
        raise _fail(f"{where}.comparator",
                    f"{comparator!r} needs {needs} field; {field} is {takes}")  # fmt: skip
    if comparator in ("in", "nin"):
        value = _list(value, f"{where}.value", f"a non-empty list for {comparator!r}")
    for v in value if comparator in ("in", "nin") else [value]:
        if not good(v):
            raise _fail(f"{where}.value", f"{field} takes {takes}{hint}, got {v!r}")
    if comparator == "regex":
        if len(value) > MAX_PATTERN:
            raise _fail(f"{where}.value", f"a pattern longer than {MAX_PATTERN} characters")
        try:
            re.compile(value)
        except re.error as exc:
            raise _fail(f"{where}.value", f"not a regular expression ({exc})") from None
    return {"field": field, "comparator": comparator, "value": value}
