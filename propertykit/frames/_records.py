"""Property records read into Arrow: the reading half of frames, in two tiers.

1. Arrow reads the records, a block of :data:`BLOCK` at a time, with the declared schema
   (``pa.array`` with :data:`RECORD_TYPE`): tidy records, the usual case.
2. In a block Arrow refuses, each field is tried by itself; a field Arrow refuses is read apart
   (:func:`read_values`: an object a leaf at a time, and only a leaf Arrow refuses through the
   lenient rules of :func:`propertykit.frames._coercion.lenient`, which coerce what has a clear
   meaning and send the rest to a sink, for the frame to count and keep). Later blocks read
   those fields apart at once, so untidy records cost one more look at the fields that hold
   untidy values, not at every field. A block's records are still in the CPU's caches when a
   field is read again.

Before either, one look at each record (:func:`_survey`) finds what Arrow's reading would not
show: fields the interface does not name, at any depth (kept: :mod:`propertykit.frames._extras`),
and values of another shape where an object or a list is expected (Arrow would read an empty
text or list as an object of missing values, an empty text as an empty list): that field is read
apart, the odd values missing, counted and kept. The result is one struct array: the fields of
:data:`RECORD_TYPE` first (each sale with any fields of its own after the named ones), then every
other field by dotted name; and the boundaries as served.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np
import pyarrow as pa

from propertykit.frames import _coercion as coercion
from propertykit.frames._coercion import Sink
from propertykit.frames._extras import ordered, read_extras
from propertykit.frames._schema import ARROW_ERRORS, KINDS, KNOWN, RECORD_TYPE, SALE_TYPE

_NONE = type(None)
_EMPTY: dict[str, Any] = {}


def as_dict(value: Any) -> dict[str, Any] | None:
    if type(value) is dict:
        return value
    return dict(value) if isinstance(value, Mapping) else None


def _objects(
    values: list[Any], column: str, sink: Sink, rows: Sequence[int] | None = None
) -> list[dict[str, Any] | None]:
    """``values`` as dicts or ``None`` (anything else counted in ``sink``)."""
    if set(map(type, values)) <= {dict, _NONE}:
        return values
    objects = [as_dict(v) for v in values]
    odd = [i for i, o in enumerate(objects) if o is None and values[i] is not None]
    coercion.note(sink, column or coercion.RECORD, odd, [values[i] for i in odd], rows)
    return objects


def _unknown(objects: list[dict[str, Any] | None], holder: str) -> list[str]:
    """The keys of ``objects`` the interface does not name, by name."""
    return sorted(set().union(*filter(None, objects)).difference(KNOWN[holder]))


def _field_values(
    objects: list[dict[str, Any] | None], keys: Sequence[str], prefix: str
) -> dict[str, list[Any]]:
    if not keys:
        return {}
    present = [_EMPTY if o is None else o for o in objects]
    return {f"{prefix}{k}": list(map(dict.get, present, repeat(k))) for k in keys}


#: Records Arrow reads at once: few enough that their objects stay in the CPU's caches while a
#: field Arrow refuses is read again by itself.
BLOCK = 2048
_OBJECTS = tuple(f.name for f in RECORD_TYPE if isinstance(f.type, pa.StructType))
_NAMED_ONLY = tuple(KNOWN[name].issuperset for name in _OBJECTS)


@dataclass
class _Survey:
    """What one look at every record finds that Arrow's reading would not show."""

    unknown: set[str] = field(default_factory=set)  # objects with keys the interface does not name
    odd: set[str] = field(default_factory=set)  # fields holding a value of another shape
    boundaries: list[Any] = field(default_factory=list)  # spatial.boundary as served


def _survey(records: list[dict[str, Any] | None]) -> _Survey:
    """Objects holding fields the interface does not name; fields holding a value of a shape
    Arrow would read silently (text or a list for an object, text for a list of sales)."""
    found = _Survey()
    record_named, sale_named = KNOWN[""].issuperset, KNOWN["saleHistory"].issuperset
    for record in records:
        if record is None:
            found.boundaries.append(None)
            continue
        if not record_named(record):
            found.unknown.add("")
        objects = map(record.get, _OBJECTS)
        for name, value, named in zip(_OBJECTS, objects, _NAMED_ONLY, strict=True):
            if type(value) is dict:
                if not named(value):
                    found.unknown.add(name)
            elif value is not None:
                found.odd.add(name)
        spatial = record.get("spatial")
        found.boundaries.append(spatial.get("boundary") if isinstance(spatial, Mapping) else None)
        sales = record.get("saleHistory")
        if type(sales) is list:
            try:
                if not all(map(sale_named, sales)):
                    found.unknown.add("saleHistory")
            except TypeError:  # an entry that is not an object
                found.odd.add("saleHistory")
        elif sales is not None:
            found.odd.add("saleHistory")
    return found


def read_records(
    rows: list[Any], sink: Sink, refused: set[str] | None = None
) -> tuple[pa.StructArray, np.ndarray]:
    """Records (anything that is not an object is a row of missing values) and boundaries.

    ``refused``: named fields Arrow refused in records read before, each read by itself here
    at once; the fields Arrow refuses here are added to it.
    """
    records = _objects(rows, "", sink)
    survey = _survey(records)
    present = [_EMPTY if r is None else r for r in records]
    refused = set() if refused is None else refused
    refused |= survey.odd
    blocks = [
        _named_fields(
            records[at : at + BLOCK], present[at : at + BLOCK], at, refused, survey.odd, sink
        )
        for at in range(0, max(len(records), 1), BLOCK)
    ]
    found: dict[str, list[Any]] = {}
    if "" in survey.unknown:
        found |= _field_values(records, _unknown(records, ""), "")
    columns: list[pa.Array] = []
    for i, field_ in enumerate(RECORD_TYPE):
        name, odd = field_.name, field_.name in survey.odd
        values: list[Any] = []
        if odd or name in survey.unknown:
            values = list(map(dict.get, present, repeat(name)))
        arrow = None if odd else pa.concat_arrays([block[i] for block in blocks])
        if name == "saleHistory" and values:  # a sale's own fields, or values of other shapes
            arrow = read_histories(values, sink, arrow)
        elif odd:  # values Arrow would take silently (text as an object of nulls): counted
            objects = _objects(values, name, sink)
            found |= _field_values(objects, _unknown(objects, name), f"{name}.")
            arrow = read_values(objects, field_.type, name, sink)
        elif values:  # an object holding fields the interface does not name
            found |= _field_values(values, _unknown(values, name), f"{name}.")
        columns.append(arrow)
    extras = ordered(read_extras(found, sink))
    mask = pa.array([r is None for r in records]) if None in records else None
    struct = pa.StructArray.from_arrays(
        [*columns, *extras.values()], names=[*RECORD_TYPE.names, *extras], mask=mask
    )
    return struct, np.fromiter(survey.boundaries, dtype=object, count=len(records))


def _named_fields(
    records: list[dict[str, Any] | None],
    present: list[dict[str, Any]],
    start: int,
    refused: set[str],
    odd: set[str],
    sink: Sink,
) -> list[pa.Array | None]:
    """A block of records' named fields: Arrow at once, but for the fields it refuses (in
    ``refused``, added to as found), each read by itself (:func:`read_values`: only a leaf Arrow
    refuses value by value; rows counted from ``start``). Fields in ``odd`` are left out."""
    while True:
        read = pa.struct([f for f in RECORD_TYPE if f.name not in refused])
        try:
            arrow = pa.array(records, read)
            break
        except ARROW_ERRORS:
            found = {f.name for f in read if not _reads(present, f)}
            refused |= found or set(read.names)  # none alone: every field by itself
    rows = range(start, start + len(records))
    columns: list[pa.Array | None] = []
    for field_ in RECORD_TYPE:
        name = field_.name
        if name in odd:
            columns.append(None)
        elif name in refused:
            values = list(map(dict.get, present, repeat(name)))
            columns.append(read_values(values, field_.type, name, sink, rows, refused=True))
        else:
            columns.append(arrow.field(name))
    return columns


def _reads(present: list[dict[str, Any]], field_: pa.Field) -> bool:
    """Whether Arrow reads ``field_`` of every record in ``present``."""
    try:
        pa.array(present, pa.struct([field_]))
    except ARROW_ERRORS:
        return False
    return True


def read_values(
    values: list[Any],
    arrow_type: pa.DataType,
    column: str,
    sink: Sink,
    rows: Sequence[int] | None = None,
    *,
    refused: bool = False,
) -> pa.Array:
    """Values of one named field as ``arrow_type``: Arrow at once (unless already ``refused``),
    else an object a field at a time and a leaf by the lenient rules; ``rows[i]`` is the frame's
    row of ``values[i]``."""
    if isinstance(arrow_type, pa.ListType):  # a sale's own fields: read with all the sales
        return read_histories(values, sink, None, rows, own_fields=False)
    if not isinstance(arrow_type, pa.StructType):
        return coercion.lenient(values, KINDS[column], arrow_type, column, sink, rows)
    if not refused:
        try:
            return pa.array(values, arrow_type)
        except ARROW_ERRORS:
            pass
    objects = _objects(values, column, sink, rows)
    present = [_EMPTY if o is None else o for o in objects]
    children = []
    for f in arrow_type:  # only a leaf Arrow refuses is read value by value
        try:
            children.append(pa.array(present, pa.struct([f])).field(0))
        except ARROW_ERRORS:
            leaf = list(map(dict.get, present, repeat(f.name)))
            children.append(read_values(leaf, f.type, f"{column}.{f.name}", sink, rows))
    mask = pa.array([o is None for o in objects]) if None in objects else None
    return pa.StructArray.from_arrays(children, fields=list(arrow_type), mask=mask)


def read_histories(
    values: list[Any],
    sink: Sink,
    arrow: pa.ListArray | None = None,
    rows: Sequence[int] | None = None,
    *,
    own_fields: bool = True,
) -> pa.ListArray:
    """``saleHistory`` values as lists of sales, each sale's own fields kept after the named
    (unless not ``own_fields``).

    ``arrow``: Arrow's reading of ``values``, kept when it holds nothing Arrow took silently
    (an empty text read as an empty list). A value that is not a list and an entry that is not
    an object (nor ``null``: a missing sale) are left out, counted in ``sink``.
    """
    lists = set(map(type, values)) <= {list, _NONE}
    entries = list(itertools.chain.from_iterable(filter(None, values))) if lists else []
    plain = lists and set(map(type, entries)) <= {dict, _NONE}  # lists of objects (or nulls)
    if not plain:
        arrow = None
    lengths = [len(v) if lists and v is not None else 0 for v in values]
    if arrow is None and plain:  # Arrow at once
        offsets = pa.array(np.cumsum([0, *lengths]), pa.int32())
        elements = read_values(entries, SALE_TYPE, "saleHistory", sink, _owners(lengths, rows))
        arrow = pa.ListArray.from_arrays(
            offsets, elements, mask=pa.array([v is None for v in values], pa.bool_())
        )
    if arrow is None:
        offsets, entries, odd = [0], [], []
        for position, value in enumerate(values):
            if isinstance(value, list | tuple):
                for item in value:
                    if item is None or isinstance(item, Mapping):  # a null sale, as Arrow reads it
                        entries.append(as_dict(item))
                    else:
                        odd.append((position, item))
            elif value is not None:
                odd.append((position, value))
            offsets.append(len(entries))
        at = [p for p, _ in odd]
        coercion.note(sink, "saleHistory", at, [v for _, v in odd], rows)
        missing = pa.array([not isinstance(v, list | tuple) for v in values], pa.bool_())
        lengths = np.diff(offsets).tolist()
        elements = read_values(entries, SALE_TYPE, "saleHistory", sink, _owners(lengths, rows))
        arrow = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), elements, mask=missing)
    keys = _unknown(entries, "saleHistory") if own_fields else []
    if not keys:
        return arrow
    own = read_extras(_field_values(entries, keys, "saleHistory."), sink, _owners(lengths, rows))
    own = {name.removeprefix("saleHistory."): values for name, values in own.items()}
    return in_sale_order(arrow, own)


def _owners(lengths: list[int], rows: Sequence[int] | None) -> list[int]:
    """The frame's row of each entry of lists of ``lengths``."""
    owners = np.repeat(np.arange(len(lengths)), lengths)
    found: list[int] = (
        owners if rows is None else np.asarray(rows, dtype=np.intp)[owners]
    ).tolist()
    return found


def in_sale_order(lists: pa.ListArray, own: dict[str, pa.Array] | None = None) -> pa.ListArray:
    """``lists`` of sales with each sale's named fields first, then its own fields by name,
    those of ``own`` (one value per sale) among them."""
    sales = lists.values
    fields = {name: sales.field(name) for name in sales.type.names} | (own or {})
    order = [*SALE_TYPE.names, *sorted(n for n in fields if n not in SALE_TYPE.names)]
    if order == sales.type.names:
        return lists
    mask = sales.is_null() if sales.null_count else None
    sales = pa.StructArray.from_arrays([fields[n] for n in order], names=order, mask=mask)
    mask = lists.is_null() if lists.null_count else None
    return pa.ListArray.from_arrays(lists.offsets, sales, mask=mask)
