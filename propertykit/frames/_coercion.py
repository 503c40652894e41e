"""Off-spec values: coerced where their meaning is clear, otherwise counted, warned and kept raw.

The frame is read by Arrow with its typed schema at once (:mod:`propertykit.frames._records`).
When Arrow refuses a value, only the column holding it is read here, value by value
(:func:`lenient`); every other column stays on the Arrow path. Values whose meaning is clear
are coerced:

============================  =================================================================
served                        read as
============================  =================================================================
numeric text, in a number     the number (``"250000"`` -> 250000.0, ``" 3 "`` -> 3)
boolean, in a number          1 or 0 (as Python, numpy and Arrow read it)
boolean or number, in text    its JSON text (``true`` -> ``"true"``, ``7`` -> ``"7"``)
``"true"``/``"false"``, 1/0,  the flag
in a flag
============================  =================================================================

(The typing half, :mod:`propertykit.frames._tables`, reads a date in a date-time column as
midnight UTC, converts offsets to UTC and upper-cases ratings and bands.) A value with no clear
meaning (an object where a number is expected, ``"c. 1930"`` as a year, a fraction as a count,
``"H"`` as an EPC rating) is missing in its typed column; :func:`report` gives one
:class:`UnparsedValuesWarning` per column with the count and an example, and keeps every such
value, as served, in ``df.attrs["unparsed"]``: an :class:`Unparsed` tuple of
``(propertyId, column, value)`` (a tuple, not a DataFrame, so that ``pd.concat`` can compare
frames' ``attrs``; one that pandas shares rather than deep-copies into every derived frame).
:func:`unparsed_table` (``df.pk.unparsed()``) shows it as a DataFrame.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from propertykit.errors import UnparsedValuesWarning, outside_stacklevel

#: Columns of :func:`unparsed_table`.
UNPARSED_COLUMNS = ("propertyId", "column", "value")
#: Where readers put values they could not read: (column, rows of the frame, raw values).
Sink = list[tuple[str, Sequence[int], list[Any]]]
#: The column name used for a record that is not an object at all.
RECORD = "<record>"

_UNREAD = object()  # marks a value with no clear meaning


class Unparsed(tuple[tuple[Any, str, Any], ...]):
    """``df.attrs["unparsed"]``: ``(propertyId, column, value)`` entries, a tuple like any other.

    pandas deep-copies ``attrs`` into every frame or column derived from a frame (each
    ``df[name]``); these entries are never changed after the frame is built, so each copy is
    the same object, at no cost, rather than a copy of every raw value.
    """

    __slots__ = ()

    def __copy__(self) -> Unparsed:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Unparsed:
        return self


def _text(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return json.dumps(value)
    return _UNREAD


def _only_text(value: Any) -> Any:
    return value if isinstance(value, str) else _UNREAD


def _number(value: Any) -> Any:
    if isinstance(value, int | float):  # bool too: 1.0 and 0.0
        try:
            return float(value)
        except OverflowError:
            return _UNREAD
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return _UNREAD
        return number if math.isfinite(number) else _UNREAD
    return _UNREAD


def _integer(value: Any) -> Any:
    number = _number(value)
    if number is _UNREAD or not isinstance(value, str):
        return number  # a served 2.5 or 1e100 is judged when typed, and kept as served
    whole = float(number).is_integer() and abs(number) < 2.0**63
    return number if whole else _UNREAD  # "2.5" or "1E100" as a count: kept raw, as served


def _flag(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.strip().lower(), _UNREAD)
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    return _UNREAD


_COERCE = {
    "text": _text,
    "category": _text,
    "level": _only_text,
    "date": _only_text,
    "datetime": _only_text,
    "int": _integer,
    "number": _number,
    "flag": _flag,
}


_TEXT, _FLOAT = frozenset({str, type(None)}), frozenset({int, float, bool, type(None)})
_PLAIN = {"text": _TEXT, "category": _TEXT, "level": _TEXT, "date": _TEXT, "datetime": _TEXT}
_PLAIN |= {"int": _FLOAT, "number": _FLOAT, "flag": frozenset({bool, type(None)})}


def lenient(
    values: list[Any],
    kind: str,
    arrow_type: pa.DataType,
    column: str,
    sink: Sink | None,
    rows: Sequence[int] | None = None,
    *,
    plain: frozenset[Any] | None = None,
) -> pa.Array:
    """``values`` of one column, coerced for ``kind``; values with no clear meaning to ``sink``.

    ``rows`` maps each position in ``values`` to its row of the frame (default: the same).
    Values of the ``plain`` types (default: those Arrow reads as meant) are left to Arrow.
    """
    coerce = _COERCE[kind]
    plain = plain or _PLAIN[kind]
    types = list(map(type, values))
    odd = set(types).difference(plain)  # the types of values to coerce, if any
    out = list(values) if odd else values
    bad: list[int] = []
    for position in itertools.compress(range(len(values)), map(odd.__contains__, types)):
        read = coerce(values[position])
        if read is _UNREAD:
            bad.append(position)
            read = None
        out[position] = read
    try:
        array = pa.array(out, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):  # e.g. an int beyond float64
        return lenient(values, kind, arrow_type, column, sink, rows, plain=frozenset({type(None)}))
    if bad and sink is not None:
        note(sink, column, bad, [values[i] for i in bad], rows)
    return array


def note(
    sink: Sink, column: str, positions: Sequence[int], raw: list[Any], rows: Sequence[int] | None
) -> None:  # fmt: skip
    """Put values that could not be read in ``sink``, by their rows of the frame."""
    if positions:
        sink.append(
            (column, [rows[i] for i in positions] if rows is not None else list(positions), raw)
        )


def report(sink: Sink, ids: Sequence[Any] | None, order: Sequence[str]) -> Unparsed:
    """Warn once per column of ``sink`` and give its entries as ``(propertyId, column, value)``.

    ``ids`` holds each row's propertyId (``None``: the sink holds ids, not rows); ``order`` the
    columns' order (others go last). Entries come by row, then column.
    """
    if not sink:
        return Unparsed()
    rank = {name: i for i, name in enumerate(order)}
    for column, _, _ in sink:  # an object's own value: where its first field is
        if column not in rank:
            inside = [i for name, i in rank.items() if name.startswith(column + ".")]
            rank[column] = min(inside, default=len(order))
    by_column: dict[str, list[tuple[int, Any]]] = {}
    for column, rows, raw in sink:
        by_column.setdefault(column, []).extend(zip(rows, raw, strict=True))
    entries: list[tuple[Any, int, str, Any]] = []
    for column, found in sorted(by_column.items(), key=lambda kv: rank.get(kv[0], len(rank))):
        count = len(found)
        example = found[0][1]
        warnings.warn(
            UnparsedValuesWarning(
                f"{count:,} value{'s' if count != 1 else ''} of {column!r} had no clear meaning "
                f"(e.g. {_shown(example)}) and {'are' if count != 1 else 'is'} missing in that "
                "column",
                see="df.pk.unparsed(): each with its propertyId and the value as served",
            ),
            stacklevel=outside_stacklevel(),
        )
        place = rank.get(column, len(rank))
        entries.extend((row, place, column, value) for row, value in found)
    if ids is None:
        return Unparsed((_id(row), column, value) for row, _, column, value in entries)
    entries.sort(key=lambda e: (e[0], e[1]))
    return Unparsed((_id(ids[row]), column, value) for row, _, column, value in entries)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _id(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def unparsed_table(df: pd.DataFrame) -> pd.DataFrame:
    """The values of ``df`` that had no clear meaning, as served: propertyId, column, value."""
    entries = df.attrs.get("unparsed") or ()
    values = np.empty(len(entries), dtype=object)
    for i, entry in enumerate(entries):  # one by one: a list value must stay one cell
        values[i] = entry[2]
    return pd.DataFrame(
        {
            "propertyId": pd.array([e[0] for e in entries], dtype="str"),
            "column": pd.array([e[1] for e in entries], dtype="str"),
            "value": values,
        },
        columns=list(UNPARSED_COLUMNS),
    )
