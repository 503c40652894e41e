"""The record's schema: each field the interface names, its path, its kind and the Arrow type
it is read as.

:data:`RECORD_FIELDS` and :data:`SALE_FIELDS` name the fields; :data:`RECORD_TYPE` is the struct
type Arrow reads a record as (nested one level, as served; ``spatial.boundary`` is read apart, as
served). Every leaf is read as text, ``float64`` or ``bool``: integers go through ``float64``
because Arrow truncates 2.5 to 2 when it reads ``int64``. Fields the interface does not name are
kept too (:mod:`propertykit.frames._extras`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

#: EPC ratings in category order (A, the most efficient, first).
EPC_RATINGS = ("A", "B", "C", "D", "E", "F", "G")
#: Council-tax bands in category order (I exists in Wales only).
TAX_BANDS = ("A", "B", "C", "D", "E", "F", "G", "H", "I")

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

_ARROW_LEAF = {TEXT: pa.string(), CATEGORY: pa.string(), DATE: pa.string(), DATETIME: pa.string()}
_ARROW_LEAF |= {INT: pa.float64(), NUMBER: pa.float64(), FLAG: pa.bool_()}
#: What Arrow raises when it refuses a value.
ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError)
#: What pk.frame takes for response bodies rather than records.
BODY_TYPES = (bytes, bytearray, memoryview, str)


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

#: The kind of each leaf, by dotted name (a sale's fields under ``saleHistory.``).
KINDS: dict[str, str] = {f.name: f.kind for f in RECORD_FIELDS}
KINDS |= {f"saleHistory.{f.name}": f.kind for f in SALE_FIELDS}
KINDS |= {f.name: "level" for f in RECORD_FIELDS if f.levels}  # ratings, bands: text only

#: The names the interface gives, by object: ``""`` for the record itself, ``"saleHistory"``
#: for a sale, else a nested object's name.
KNOWN: dict[str, frozenset[str]] = {"": frozenset(f.path[0] for f in RECORD_FIELDS)}
KNOWN |= {"saleHistory": frozenset(f.name for f in SALE_FIELDS)}
for _f in RECORD_FIELDS:
    if len(_f.path) == 2:
        KNOWN[_f.path[0]] = KNOWN.get(_f.path[0], frozenset()) | {_f.path[1]}
