"""Property records read into Arrow: the reading half of frames, in two tiers.

1. Arrow reads every record at once with the declared schema (``pa.array`` with
   :data:`RECORD_TYPE`): tidy records, the usual case.
2. When Arrow refuses a value, each field is read by itself, and a field Arrow refuses is read a
   leaf at a time; a leaf Arrow refuses alone goes through the lenient rules
   (:func:`propertykit.frames.coercion.lenient`), which coerce what has a clear meaning and send
   the rest to a sink, for the frame to count and keep.

Either way one look at each object (:func:`_objects`) finds what Arrow would take silently: an
empty text or list where an object is expected (Arrow reads it as an object of missing values)
or where a list is (an empty list) is missing, counted and kept; and it finds the fields the
interface does not name, which are kept (:mod:`propertykit.frames.extras`). The result is one
struct array: the fields of :data:`RECORD_TYPE` first (each sale with any fields of its own
after the named ones), then every other field by dotted name; and the boundaries as served.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from propertykit.frames import coercion
from propertykit.frames.coercion import Sink
from propertykit.frames.extras import ordered, read_extras
from propertykit.frames.schema import (
    ARROW_ERRORS,
    EPC_RATINGS,
    KINDS,
    KNOWN,
    RECORD_FIELDS,
    RECORD_TYPE,
    SALE_TYPE,
    Field,
)

__all__ = [
    "EPC_RATINGS",
    "RECORD_FIELDS",
    "RECORD_TYPE",
    "Field",
    "as_dict",
    "in_sale_order",
    "read_histories",
    "read_records",
    "read_values",
    "with_sale_extras",
]

_NONE = type(None)
_EMPTY: dict[str, Any] = {}


def as_dict(value: Any) -> dict[str, Any] | None:
    if type(value) is dict:
        return value
    return dict(value) if isinstance(value, Mapping) else None


def _objects(
    values: list[Any], column: str, sink: Sink, rows: Sequence[int] | None = None
) -> tuple[list[dict[str, Any] | None], bool]:
    """``values`` as dicts or ``None`` (anything else counted in ``sink``), and whether any was
    changed (then Arrow's own reading of them cannot be kept)."""
    if set(map(type, values)) <= {dict, _NONE}:
        return values, False
    objects = [as_dict(v) for v in values]
    odd = [i for i, o in enumerate(objects) if o is None and values[i] is not None]
    coercion.note(sink, column or coercion.RECORD, odd, [values[i] for i in odd], rows)
    return objects, bool(odd)


def _unknown(objects: list[dict[str, Any] | None], holder: str) -> list[str]:
    """The keys of ``objects`` the interface does not name, in the order first seen."""
    known = KNOWN[holder]
    if set().union(*filter(None, objects)) <= known:  # dicts or None: the usual case, in C
        return []
    present = filter(None, objects)
    return [k for k in dict.fromkeys(itertools.chain.from_iterable(present)) if k not in known]


def _field_values(
    objects: list[dict[str, Any] | None], keys: Sequence[str], prefix: str
) -> dict[str, list[Any]]:
    if not keys:
        return {}
    present = [_EMPTY if o is None else o for o in objects]
    return {f"{prefix}{k}": list(map(dict.get, present, itertools.repeat(k))) for k in keys}


def read_records(rows: list[Any], sink: Sink) -> tuple[pa.StructArray, np.ndarray]:
    """Records (anything that is not an object is a row of missing values) and boundaries."""
    records, _ = _objects(rows, "", sink)
    try:
        whole: pa.StructArray | None = pa.array(records, RECORD_TYPE)
    except ARROW_ERRORS:
        whole = None
    present = [_EMPTY if r is None else r for r in records]
    columns: list[pa.Array] = []
    found: dict[str, list[Any]] = _field_values(records, _unknown(records, ""), "")
    boundaries = np.full(len(rows), None, dtype=object)
    for i, field in enumerate(RECORD_TYPE):
        name = field.name
        arrow = whole.field(i) if whole is not None else None
        nested = isinstance(field.type, pa.StructType | pa.ListType)
        if nested or arrow is None:
            values = list(map(dict.get, present, itertools.repeat(name)))
        if isinstance(field.type, pa.StructType):
            objects, changed = _objects(values, name, sink)
            found |= _field_values(objects, _unknown(objects, name), f"{name}.")
            if name == "spatial":
                served = (None if s is None else s.get("boundary") for s in objects)
                boundaries = np.fromiter(served, dtype=object, count=len(objects))
            if arrow is None or changed:
                arrow = read_values(objects, field.type, name, sink)
        elif isinstance(field.type, pa.ListType):
            arrow = read_histories(values, sink, arrow)
        elif arrow is None:
            arrow = read_values(values, field.type, name, sink)
        columns.append(arrow)
    extras = ordered(read_extras(found, sink))
    mask = pa.array([r is None for r in records]) if None in records else None
    struct = pa.StructArray.from_arrays(
        [*columns, *extras.values()], names=[*RECORD_TYPE.names, *extras], mask=mask
    )
    return struct, boundaries


def read_values(
    values: list[Any],
    arrow_type: pa.DataType,
    column: str,
    sink: Sink,
    rows: Sequence[int] | None = None,
) -> pa.Array:
    """Values of one named field as ``arrow_type``: Arrow at once, else an object a field at a
    time and a leaf by the lenient rules; ``rows[i]`` is the frame's row of ``values[i]``."""
    if isinstance(arrow_type, pa.ListType):
        return read_histories(values, sink, None, rows)
    if not isinstance(arrow_type, pa.StructType):
        return coercion.lenient(values, KINDS[column], arrow_type, column, sink, rows)
    try:
        return pa.array(values, arrow_type)
    except ARROW_ERRORS:
        pass
    objects, _ = _objects(values, column, sink, rows)
    present = [_EMPTY if o is None else o for o in objects]
    children = [
        read_values(
            list(map(dict.get, present, itertools.repeat(f.name))),
            f.type,
            f"{column}.{f.name}",
            sink,
            rows,
        )
        for f in arrow_type
    ]
    mask = pa.array([o is None for o in objects]) if None in objects else None
    return pa.StructArray.from_arrays(children, fields=list(arrow_type), mask=mask)


def read_histories(
    values: list[Any],
    sink: Sink,
    arrow: pa.ListArray | None = None,
    rows: Sequence[int] | None = None,
) -> pa.ListArray:
    """``saleHistory`` values as lists of sales, each sale's own fields kept after the named.

    ``arrow``: Arrow's reading of ``values``, kept when it holds nothing Arrow took silently
    (an empty text read as an empty list, an empty value as a sale). A value that is not a list
    and an entry that is not an object are left out, counted in ``sink``.
    """
    lists = set(map(type, values)) <= {list, _NONE}
    entries = list(itertools.chain.from_iterable(filter(None, values))) if lists else []
    if not (lists and set(map(type, entries)) <= {dict, _NONE}):
        arrow = None
    lengths = [len(v) if lists and v is not None else 0 for v in values]
    if arrow is None:
        offsets, entries, odd = [0], [], []
        for position, value in enumerate(values):
            if isinstance(value, list | tuple):
                for item in value:
                    if isinstance(item, Mapping):
                        entries.append(as_dict(item))
                    elif item is not None:
                        odd.append((position, item))
            elif value is not None:
                odd.append((position, value))
            offsets.append(len(entries))
        at = [p for p, _ in odd]
        coercion.note(sink, "saleHistory", at, [v for _, v in odd], rows)
        missing = pa.array([not isinstance(v, list | tuple) for v in values])
        lengths = np.diff(offsets).tolist()
        elements = read_values(entries, SALE_TYPE, "saleHistory", sink, _owners(lengths, rows))
        arrow = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), elements, mask=missing)
    keys = _unknown(entries, "saleHistory")
    if not keys:
        return arrow
    own = read_extras(_field_values(entries, keys, "saleHistory."), sink, _owners(lengths, rows))
    own = {name.removeprefix("saleHistory."): values for name, values in own.items()}
    return in_sale_order(with_sale_extras(arrow, own))


def _owners(lengths: list[int], rows: Sequence[int] | None) -> list[int]:
    """The frame's row of each entry of lists of ``lengths``."""
    owners = np.repeat(np.arange(len(lengths)), lengths)
    found: list[int] = (
        owners if rows is None else np.asarray(rows, dtype=np.intp)[owners]
    ).tolist()
    return found


def in_sale_order(lists: pa.ListArray) -> pa.ListArray:
    """``lists`` of sales with each sale's named fields first, then its own fields by name."""
    sales = lists.values
    named = list(SALE_TYPE.names)
    order = named + sorted(n for n in sales.type.names if n not in named)
    if order == sales.type.names:
        return lists
    mask = sales.is_null() if sales.null_count else None
    sales = pa.StructArray.from_arrays([sales.field(n) for n in order], names=order, mask=mask)
    mask = lists.is_null() if lists.null_count else None
    return pa.ListArray.from_arrays(lists.offsets, sales, mask=mask)


def with_sale_extras(lists: pa.ListArray, extras: dict[str, pa.Array]) -> pa.ListArray:
    """``lists`` of sales with each sale's own fields (one value per sale) after the named."""
    if not extras:
        return lists
    sales = lists.values
    fields = [sales.field(i) for i in range(sales.type.num_fields)]
    joined = pa.StructArray.from_arrays(
        [*fields, *extras.values()],
        names=[*sales.type.names, *extras],
        mask=sales.is_null() if sales.null_count else None,
    )
    return pa.ListArray.from_arrays(
        lists.offsets, joined, mask=lists.is_null() if lists.null_count else None
    )
