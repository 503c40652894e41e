"""Property records read into Arrow by the frame's schema, leniently: the reading half of frames.

:data:`RECORD_FIELDS` is the schema (each field's path, kind and category levels);
:func:`read_records` reads parsed records through ``pa.array`` with that schema, narrowing down
to the objects and values Arrow refuses and coercing them as :mod:`propertykit.frames.tables`
documents; :func:`read_bodies` reads raw response bodies through Arrow's JSON reader
(:mod:`propertykit.frames.bodies`), falling back to ``json`` and :func:`read_records`. Both give a
struct array of :data:`RECORD_TYPE` and the boundaries as served; :func:`flatten` turns the
struct array into leaf arrays by dotted name, for frames to type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from propertykit.errors import InvalidInput
from propertykit.frames import bodies as _bodies
from propertykit.jsonio import loads, records_of

__all__ = [
    "ARROW_ERRORS",
    "BODY_TYPES",
    "CATEGORY",
    "DATE",
    "DATETIME",
    "EPC_RATINGS",
    "FLAG",
    "INT",
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
    "read_bodies",
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
_PLAIN_TYPES: dict[pa.DataType, set[type]] = {  # Python types Arrow reads as meant, per leaf type
    pa.string(): {str, type(None)},
    pa.float64(): {int, float, bool, type(None)},
    pa.bool_(): {bool, type(None)},
}


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


def _coerce_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _coerce_number(value: Any) -> float | None:
    if not isinstance(value, int | float | str):
        return None
    try:
        return float(value.strip() if isinstance(value, str) else value)
    except (ValueError, OverflowError):
        return None


def _coerce_flag(value: Any) -> bool | None:
    if isinstance(value, str):
        return {"true": True, "false": False}.get(value.strip().lower())
    return bool(value) if isinstance(value, int | float) and value in (0, 1) else None


_COERCE: dict[pa.DataType, Callable[[Any], Any]] = {
    pa.string(): _coerce_text,
    pa.float64(): _coerce_number,
    pa.bool_(): _coerce_flag,
}


def read_values(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """Read Python values as ``arrow_type``; whatever Arrow refuses is narrowed down and coerced."""
    nested = isinstance(arrow_type, pa.StructType | pa.ListType)
    if nested or set(map(type, values)) <= _PLAIN_TYPES[arrow_type]:
        try:
            return pa.array(values, type=arrow_type)
        except ARROW_ERRORS:
            pass
    if isinstance(arrow_type, pa.ListType):  # keep lists; drop entries that are not objects
        offsets: list[int] = [0]
        items: list[Any] = []
        for value in values:
            if isinstance(value, list | tuple):
                items.extend(item for item in value if isinstance(item, Mapping))
            offsets.append(len(items))
        mask = pa.array([not isinstance(v, list | tuple) for v in values], type=pa.bool_())
        elements = read_values(items, arrow_type.value_type)
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), elements, mask=mask)
    if isinstance(arrow_type, pa.StructType):
        parents = [as_dict(v) for v in values]
        children = [read_values([_get(p, f.name) for p in parents], f.type) for f in arrow_type]
        mask = pa.array([p is None for p in parents], type=pa.bool_())
        return pa.StructArray.from_arrays(children, fields=list(arrow_type), mask=mask)
    return pa.array([_COERCE[arrow_type](v) for v in values], type=arrow_type)


def flatten(array: pa.StructArray, prefix: str = "") -> dict[str, pa.Array]:
    """Leaf arrays by dotted name (a parent's nulls carried down)."""
    columns: dict[str, pa.Array] = {}
    for child, values in zip(array.type, array.flatten(), strict=True):
        if isinstance(child.type, pa.StructType):
            columns |= flatten(values, f"{prefix}{child.name}.")
        else:
            columns[prefix + child.name] = values
    return columns


def _boundaries(rows: list[dict[str, Any] | None]) -> np.ndarray:
    """``spatial.boundary`` of each row, as served (any JSON value), in an object array."""
    spatial = (None if r is None else r.get("spatial") for r in rows)
    boundary = (
        s.get("boundary") if type(s) is dict or isinstance(s, Mapping) else None for s in spatial
    )
    return np.fromiter(boundary, dtype=object, count=len(rows))


def read_bodies(bodies: list[Any]) -> tuple[pa.StructArray, np.ndarray]:
    """Records and boundaries of response bodies: Arrow's reader, else ``json`` and records."""
    try:
        return _bodies.read(bodies, RECORD_TYPE)
    except _bodies.Unreadable:
        decoded = [decode_body(body, position) for position, body in enumerate(bodies)]
        return read_records([record for body in decoded for record in records_of(body)])


def decode_body(body: Any, position: int) -> Any:
    """One raw body decoded, or :class:`InvalidInput` naming its position and what it holds."""
    data = bytes(body) if isinstance(body, memoryview) else body
    try:
        value = loads(data)
    except RecursionError:
        raise InvalidInput(f"Body {position} is JSON nested too deeply to read") from None
    except ValueError as exc:
        start = data[:60]
        raise InvalidInput(
            f"Body {position} is not JSON ({type(exc).__name__}); it starts {start!r}. "
            "pk.frame takes records (a list of dicts) or raw response bodies (bytes)"
        ) from None
    if not isinstance(value, dict | list):
        raise InvalidInput(
            f"Body {position} is a JSON {type(value).__name__}, not an envelope or a list of "
            "records"
        )
    return value


def read_records(rows: list[dict[str, Any] | None]) -> tuple[pa.StructArray, np.ndarray]:
    """Records (dicts, or ``None`` for rows that are not objects) and their boundaries."""
    return read_values(rows, RECORD_TYPE), _boundaries(rows)
