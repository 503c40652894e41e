"""Property records read into Arrow by the frame's schema, leniently: the reading half of frames.

:data:`RECORD_FIELDS` is the schema (each field's path, kind and category levels);
:func:`read_records` reads parsed records through ``pa.array`` with that schema; when Arrow
refuses some, it is narrowed down to the leaves it refuses (:mod:`propertykit.frames.narrowing`),
which alone are read from their Python values and coerced (:mod:`propertykit.frames.coercion`);
values with no clear meaning go to a sink, for the frame to count and keep. (Raw response bodies
are read by :mod:`propertykit.frames.from_bodies`, with :func:`read_values` for the values
Arrow's JSON reader refuses.) Both give one struct array of :data:`RECORD_TYPE` and the
boundaries as served; :func:`flatten` turns it into leaf arrays by dotted name, for frames to
type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from propertykit.frames import coercion, narrowing
from propertykit.frames.coercion import Sink

__all__ = [
    "ARROW_ERRORS",
    "BODY_TYPES",
    "CATEGORY",
    "DATE",
    "DATETIME",
    "EPC_RATINGS",
    "FLAG",
    "INT",
    "KINDS",
    "LIST",
    "NUMBER",
    "RAW",
    "RECORD_FIELDS",
    "RECORD_TYPE",
    "SALES_LIST",
    "SALE_FIELDS",
    "TAX_BANDS",
    "TEXT",
    "Field",
    "as_dict",
    "flatten",
    "hollow",
    "read_records",
    "read_values",
]

#: EPC ratings in category order (A, the most efficient, first).
EPC_RATINGS = ("A", "B", "C", "D", "E", "F", "G")
#: Council-tax bands in category order (I exists in Wales only).
TAX_BANDS = ("A", "B", "C", "D", "E", "F", "G", "H", "I")

# -- the schema ------------------------------------------------------------------------------

#: Kinds of field, each read and typed its own way.
TEXT, CATEGORY, INT, NUMBER, FLAG, DATE, DATETIME, RAW, LIST = (
    "text", "category", "int", "number", "flag", "date", "datetime", "raw", "list"
)  # fmt: skip


@dataclass(frozen=True)
class Field:
    path: tuple[str, ...]
    kind: str
    levels: tuple[str, ...] | None = None  # ordered categories; None: unordered, as seen

    @property
    def name(self) -> str:
        return ".".join(self.path)


def _fields(
    prefix: str, kind: str, names: str, levels: tuple[str, ...] | None = None
) -> list[Field]:
    return [Field((prefix, n) if prefix else (n,), kind, levels) for n in names.split()]


_ADDRESS = "displayAddress postcode streetName streetNumber locality town county postcodeNoSpace"
RECORD_FIELDS: list[Field] = [
    *_fields("", TEXT, "propertyId locationId"),
    *_fields("address", TEXT, _ADDRESS + " outcode incode country"),
    *_fields("spatial", NUMBER, "lat lng"),
    Field(("spatial", "boundary"), RAW),
    *_fields("", TEXT, "classificationCode"),
    *_fields("", CATEGORY, "propertyType propertySubType"),
    *_fields("roomDetails", INT, "beds baths receptions"),
    *_fields("pricing", NUMBER, "currentSalePrice currentRentPrice estimatedSaleValue"),
    *_fields("pricing", NUMBER, "estimatedRentValue pricePerSqFt"),
    *_fields("pricing", CATEGORY, "currency"),
    *_fields("marketStatus", CATEGORY, "forSale forRent"),
    *_fields("marketStatus", DATETIME, "listingDate soldDate"),
    *_fields("marketStatus", INT, "daysOnMarket"),
    *_fields("epc", CATEGORY, "currentEnergyRating potentialEnergyRating", EPC_RATINGS),
    *_fields("epc", INT, "currentEnergyEfficiency potentialEnergyEfficiency"),
    *_fields("epc", DATE, "validFrom validTo"),
    Field(("saleHistory",), LIST),
    *_fields("tenure", CATEGORY, "type"),
    *_fields("tenure", INT, "leaseYearsRemaining"),
    *_fields("tenure", NUMBER, "groundRent serviceCharge"),
    *_fields("councilTax", CATEGORY, "taxBand", TAX_BANDS),
    *_fields("councilTax", NUMBER, "annualCharge"),
    *_fields("councilTax", TEXT, "localAuthority"),
    *_fields("tags", FLAG, "newBuild chainFree auction sharedOwnership retirement cashBuyersOnly"),
    *_fields("tags", FLAG, "investment"),
    *_fields("", NUMBER, "floorAreaSqM plotSizeSqM"),
    *_fields("", INT, "yearBuilt"),
    *_fields("", DATETIME, "lastUpdated"),
]
SALE_FIELDS: list[Field] = [
    *_fields("", DATE, "date"),
    *_fields("", NUMBER, "price"),
    *_fields("", CATEGORY, "propertyType"),
    *_fields("", FLAG, "newBuild"),
]

# Arrow reads each leaf as text, float64 or bool. Integers go through float64 because Arrow
# truncates 2.5 to 2 when it reads int64.
_ARROW_LEAF = {TEXT: pa.string(), CATEGORY: pa.string(), DATE: pa.string(), DATETIME: pa.string()}
_ARROW_LEAF |= {INT: pa.float64(), NUMBER: pa.float64(), FLAG: pa.bool_()}
ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError)
#: What pk.frame takes for response bodies rather than records.
BODY_TYPES = (bytes, bytearray, memoryview, str)
_KIND_OF = {pa.string(): TEXT, pa.float64(): NUMBER, pa.bool_(): FLAG}  # for unnamed columns


def _arrow_type(fields: list[Field], sale: pa.DataType | None = None) -> pa.StructType:
    """The struct type Arrow reads ``fields`` as (nested one level, as served)."""
    top: list[pa.Field | str] = []
    nested: dict[str, list[pa.Field]] = {}
    for f in fields:
        if f.kind == RAW:
            continue
        leaf = pa.field(f.path[-1], pa.list_(sale) if f.kind == LIST else _ARROW_LEAF[f.kind])
        if len(f.path) == 1:
            top.append(leaf)
        else:
            if f.path[0] not in nested:
                top.append(f.path[0])
            nested.setdefault(f.path[0], []).append(leaf)
    return pa.struct([pa.field(x, pa.struct(nested[x])) if isinstance(x, str) else x for x in top])


SALE_TYPE = _arrow_type(SALE_FIELDS)
RECORD_TYPE = _arrow_type(RECORD_FIELDS, SALE_TYPE)
SALES_LIST = pa.list_(SALE_TYPE)


# -- reading values: Arrow at once, else per object, else per value ----------------------------


def as_dict(value: Any) -> dict[str, Any] | None:
    if type(value) is dict:
        return value
    return dict(value) if isinstance(value, Mapping) else None


def _get(parent: dict[str, Any] | None, key: str) -> Any:
    return None if parent is None else parent.get(key)


#: The kind of each leaf, by dotted name (a sale's fields under ``saleHistory.``).
KINDS: dict[str, str] = {f.name: f.kind for f in RECORD_FIELDS}
KINDS |= {f"saleHistory.{f.name}": f.kind for f in SALE_FIELDS}
KINDS |= {f.name: "level" for f in RECORD_FIELDS if f.levels}  # ratings, bands: text only


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def read_values(
    values: list[Any],
    arrow_type: pa.DataType,
    column: str = "",
    sink: Sink | None = None,
    rows: Sequence[int] | None = None,
) -> pa.Array:
    """Read Python values as ``arrow_type``: Arrow at once, else narrowed down to the columns
    Arrow refuses, which alone are read value by value (:func:`coercion.lenient`).

    ``column`` is the dotted name of ``values``; values with no clear meaning go to ``sink`` by
    their row of the frame (``rows[i]`` for ``values[i]``; default ``i``).
    """
    if not isinstance(arrow_type, pa.StructType | pa.ListType):  # Arrow reads plain values
        kind = KINDS.get(column, _KIND_OF[arrow_type])
        return coercion.lenient(values, kind, arrow_type, column, sink, rows)
    try:
        return pa.array(values, type=arrow_type)
    except ARROW_ERRORS:
        pass
    if isinstance(arrow_type, pa.ListType):
        return _read_lists(values, arrow_type, column, sink, rows)
    return _read_struct(values, arrow_type, column, sink, rows)


def _read_struct(
    values: list[Any],
    arrow_type: pa.StructType,
    column: str,
    sink: Sink | None,
    rows: Sequence[int] | None,
) -> pa.StructArray:
    """Objects Arrow refused as a whole: by Arrow but for the leaves it refuses, which are read
    from their Python values by :func:`read_values` (:mod:`propertykit.frames.narrowing`)."""
    parents = _objects(values, column, sink, rows)
    return narrowing.read_objects(parents, arrow_type, column, rows, _reader(sink))


def _objects(
    values: list[Any], column: str, sink: Sink | None, rows: Sequence[int] | None
) -> list[dict[str, Any] | None]:
    """``values`` as dicts, or ``None`` where they are none (counted in ``sink``)."""
    if set(map(type, values)) == {dict}:
        return values
    parents = [v if type(v) is dict else as_dict(v) for v in values]
    if sink is not None:
        odd = [i for i, p in enumerate(parents) if p is None and values[i] is not None]
        coercion.note(sink, column or coercion.RECORD, odd, [values[i] for i in odd], rows)
    return parents


def _reader(sink: Sink | None) -> narrowing.Read:
    def read(values: list[Any], of: pa.DataType, name: str, at: Sequence[int] | None) -> pa.Array:
        return read_values(values, of, name, sink, at)

    return read


def _read_lists(
    values: list[Any],
    arrow_type: pa.ListType,
    column: str,
    sink: Sink | None,
    rows: Sequence[int] | None,
) -> pa.ListArray:
    """Lists Arrow refused as a whole: lists of objects keep to the Arrow path but for the
    fields Arrow refuses; otherwise entries that are not objects go to ``sink``."""
    if set(map(type, values)) <= {list, type(None)}:
        lengths = [0 if v is None else len(v) for v in values]
        flat = [item for v in values if v is not None for item in v]
        if set(map(type, flat)) <= {dict}:
            ends = np.cumsum(lengths, dtype=np.int32)
            parents = np.arange(len(values)) if rows is None else np.asarray(rows)
            by_row = np.repeat(parents, lengths).tolist()
            elements = read_values(flat, arrow_type.value_type, column, sink, by_row)
            missing = pa.array([v is None for v in values]) if None in values else None
            starts = pa.array(np.concatenate([np.zeros(1, np.int32), ends]))
            return pa.ListArray.from_arrays(starts, elements, mask=missing)
    offsets: list[int] = [0]
    items: list[Any] = []
    owners: list[int] = []
    odd: list[int] = []
    odd_values: list[Any] = []
    for position, value in enumerate(values):
        row = rows[position] if rows is not None else position
        if isinstance(value, list | tuple):
            for item in value:
                if isinstance(item, Mapping):
                    items.append(item)
                    owners.append(row)
                elif item is not None:
                    odd.append(row)
                    odd_values.append(item)
        elif value is not None:
            odd.append(row)
            odd_values.append(value)
        offsets.append(len(items))
    if sink is not None and odd:
        sink.append((column, odd, odd_values))
    mask = pa.array([not isinstance(v, list | tuple) for v in values], type=pa.bool_())
    elements = read_values(items, arrow_type.value_type, column, sink, owners)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), elements, mask=mask)


def flatten(
    array: pa.StructArray | pa.ChunkedArray, prefix: str = ""
) -> dict[str, pa.Array | pa.ChunkedArray]:
    """Leaf arrays by dotted name (a parent's nulls carried down)."""
    columns: dict[str, pa.Array | pa.ChunkedArray] = {}
    for child, values in zip(array.type, array.flatten(), strict=True):
        if isinstance(child.type, pa.StructType):
            columns |= flatten(values, f"{prefix}{child.name}.")
        else:
            columns[prefix + child.name] = values
    return columns


def _boundaries(rows: list[Any]) -> list[Any]:
    """``spatial.boundary`` of each row, as served (any JSON value)."""
    return [
        s.get("boundary") if type(r) is dict and type(s := r.get("spatial")) is dict else _slow(r)
        for r in rows
    ]


def _extend_by(
    boundaries: list[Any], lists: dict[str, list[Any]]
) -> Callable[[list[dict[str, Any] | None]], None]:
    def visit(block: list[dict[str, Any] | None]) -> None:
        boundaries.extend(_boundaries(block))
        for name, served in lists.items():
            served.extend(narrowing.values_of(block, name))

    return visit


#: The list fields of a record (``saleHistory``).
_LISTS = tuple(f.name for f in RECORD_TYPE if isinstance(f.type, pa.ListType))


def _slow(row: Any) -> Any:  # a row or its spatial is not a dict
    spatial = _get(as_dict(row), "spatial")
    return spatial.get("boundary") if isinstance(spatial, Mapping) else None


def read_records(rows: list[Any], sink: Sink) -> tuple[pa.StructArray, np.ndarray]:
    """Records (anything that is not an object is a row of missing values) and boundaries.

    Arrow reads them all at once; when it refuses any value, they are read a block at a time
    (:func:`narrowing.read_blocks`), the boundaries of each block taken while it is at hand,
    and the blocks joined.
    """
    try:
        records = pa.array(rows, RECORD_TYPE)
    except ARROW_ERRORS:
        pass
    else:
        served = _boundaries(rows)
        return hollow(records, rows, sink), np.fromiter(served, object, len(rows))
    boundaries: list[Any] = []
    lists: dict[str, list[Any]] = {name: [] for name in _LISTS}  # taken while at hand, for hollow
    objects = _objects(rows, "", sink, None)
    blocks = narrowing.read_blocks(
        objects, RECORD_TYPE, "", None, _reader(sink), _extend_by(boundaries, lists)
    )
    # One array, not a chunk per block (~200 per 100k records), or the frame's text and list
    # columns would be chunked so, each user operation on them a loop over the chunks (1.2-2.3x
    # slower). The copy, a field at a time, costs about what typing chunked columns would.
    records = narrowing.concat_structs(blocks, RECORD_TYPE)
    return hollow(records, rows, sink, lists), np.fromiter(boundaries, object, len(rows))


def hollow(
    records: pa.StructArray,
    rows: list[Any],
    sink: Sink,
    lists: Mapping[str, list[Any]] | None = None,
) -> pa.StructArray:
    """``records`` with the empty values Arrow took for objects counted, and for lists missing.

    ``pa.array`` reads an empty string, bytes or list where an object is expected as an object
    of missing values, and an empty string where a list is as an empty list. Only objects with
    every field missing, empty ``saleHistory`` lists and their entries are looked at here
    (``lists``: a list field's values as served by row, where already taken from ``rows``).
    """
    hollowed = []
    fields = records.flatten()  # each missing where its record is, as pc.struct_field gives
    for i, field in enumerate(records.type):
        if isinstance(field.type, pa.StructType):
            odd = _not_of(rows, _all_missing(fields[i]), field.name, _is_object)
            coercion.note(sink, field.name, odd, [_raw(rows, r, field.name) for r in odd], None)
        elif isinstance(field.type, pa.ListType):
            served = lists.get(field.name) if lists is not None else None
            if _hollow_in(fields[i], field.name, rows, served):
                hollowed.append(i)
    if not hollowed:
        return records
    return _hollow_lists_of(records, rows, sink, hollowed)


def _hollow_in(lists: pa.ListArray, name: str, rows: list[Any], served: list[Any] | None) -> bool:
    """Whether list field ``name`` holds an empty list read from text or an empty entry."""
    lengths = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
    empty = np.flatnonzero((lengths == 0) & lists.is_valid().to_numpy(zero_copy_only=False))
    entries = pc.list_flatten(lists)
    hollow = isinstance(entries.type, pa.StructType) and len(_all_missing(entries)) > 0
    if hollow:
        return True
    if served is not None:
        return not all(_is_list(served[r]) for r in empty.tolist())
    return bool(_not_of(rows, empty, name, _is_list))


def _hollow_lists_of(
    records: pa.StructArray, rows: list[Any], sink: Sink, lists: list[int]
) -> pa.StructArray:
    """``records`` with list fields ``lists`` made right."""
    children = [records.field(i) for i in range(records.type.num_fields)]
    for i in lists:  # a missing record's list is missing, not an empty list to look at
        children[i] = pc.struct_field(records, [i])
        if isinstance(children[i], pa.ListArray):
            children[i] = _hollow_lists(children[i], rows, records.type[i].name, sink)
    return pa.StructArray.from_arrays(
        children, fields=list(records.type), mask=records.is_null() if records.null_count else None
    )


def _not_of(rows: list[Any], positions: Any, name: str, served: Callable[[Any], bool]) -> list[int]:
    """Of ``positions``, those whose row's ``name`` is not as ``served`` says it should be."""
    return [
        int(r)
        for r in positions
        if not served(row.get(name) if type(row := rows[r]) is dict else _raw(rows, r, name))
    ]


def _is_object(value: Any) -> bool:
    return type(value) is dict


def _is_list(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _hollow_lists(lists: pa.ListArray, rows: list[Any], name: str, sink: Sink) -> pa.ListArray:
    """A list column whose empty text (read as ``[]``) is missing and whose empty entries (read
    as objects of missing values) are left out, as entries that are not objects are; counted."""
    lengths = pc.list_value_length(lists).to_numpy(zero_copy_only=False)
    empty = np.flatnonzero((lengths == 0) & lists.is_valid().to_numpy(zero_copy_only=False))
    odd = _not_of(rows, empty, name, _is_list)
    coercion.note(sink, name, odd, [_raw(rows, r, name) for r in odd], None)
    entries = lists.values
    offsets = lists.offsets.to_numpy()
    bad = np.zeros(len(entries), dtype=bool)
    for entry in _all_missing(entries) if isinstance(entries, pa.StructArray) else ():
        owner = int(np.searchsorted(offsets, entry, side="right")) - 1
        served = _raw(rows, owner, name)  # read by Arrow whole: entries in their served places
        if len(served) == lengths[owner] and type(served[entry - offsets[owner]]) is not dict:
            bad[entry] = True
            coercion.note(sink, name, [owner], [served[entry - offsets[owner]]], None)
    if not odd and not bad.any():
        return lists
    missing = lists.is_null().to_numpy(zero_copy_only=False).copy()
    missing[odd] = True
    left_out = np.concatenate([np.zeros(1, np.int64), np.cumsum(bad)])[offsets]
    return pa.ListArray.from_arrays(
        pa.array(offsets - left_out, pa.int32()),
        entries.filter(pa.array(~bad)),
        mask=pa.array(missing),
    )


def _all_missing(objects: pa.StructArray) -> np.ndarray:
    """Positions of objects that are present with every field missing."""
    missing = objects.null_count
    if any(
        pc.struct_field(objects, [i]).null_count == missing for i in range(objects.type.num_fields)
    ):
        return np.empty(0, np.int64)  # a field is there in every object that is
    hollow = objects.is_valid()
    for i in range(objects.type.num_fields):
        hollow = pc.and_(hollow, objects.field(i).is_null())
    return np.flatnonzero(hollow.to_numpy(zero_copy_only=False))


def _raw(rows: list[Any], row: Any, name: str) -> Any:
    return _get(as_dict(rows[int(row)]), name)
