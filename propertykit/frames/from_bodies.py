"""Raw response bodies into the records' struct array, by Arrow wherever Arrow can read them.

Three routes, each tried when the one before cannot read the bodies exactly:

1. :func:`propertykit.frames.bodies.read`: Arrow's JSON reader reads every body at once, in C++
   on every core, with no Python object per value (tidy bodies, the usual case);
2. leaf by leaf: Arrow reads every leaf it accepts (:mod:`propertykit.frames.leafwise`); the
   leaves it refuses, and only they, are decoded by ``msgspec``
   (:mod:`propertykit.frames.raw_leaves`) and read leniently by
   :func:`~propertykit.frames.records.read_values`, as decoded records are: an odd value costs
   its own column, and the frame is the one its decoded records give;
3. ``json`` decodes the bodies and :func:`~propertykit.frames.records.read_records` reads the
   records (bodies of other shapes: a record that is not an object, a bare list of records,
   a number too big for a double).
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from propertykit.errors import InvalidInput
from propertykit.frames import bodies as _bodies
from propertykit.frames.coercion import Sink
from propertykit.frames.leafwise import BOUNDARY, Leaves, Unreadable, read_leaves
from propertykit.frames.raw_leaves import Decoded, decode_parts
from propertykit.frames.records import RECORD_TYPE, hollow, read_records, read_values
from propertykit.jsonio import loads, paused_gc, records_of, warn_left_out

__all__ = ["decode_body", "read_bodies"]


def read_bodies(
    bodies: list[Any], sink: Sink, left_out: list[Any] | None = None
) -> tuple[pa.StructArray, np.ndarray]:
    """Records and boundaries of response bodies: by Arrow, else leaf by leaf, else ``json``.

    Items of the ``result`` lists that are not records are left out: added to ``left_out`` when
    given, else counted in a :class:`~propertykit.errors.NotRecordsWarning`.
    """
    counted: list[Any] = []
    records, boundaries = _read_bodies(bodies, sink, counted)
    if left_out is not None:
        left_out.extend(counted)
    elif counted:
        warn_left_out(len(counted), counted[0])
    return records, boundaries


def _read_bodies(
    bodies: list[Any], sink: Sink, left_out: list[Any]
) -> tuple[pa.StructArray, np.ndarray]:
    """:func:`read_bodies`, the three routes in turn; items that are not records to ``left_out``."""
    fields = _bodies.ENVELOPE_FIELDS.get()
    names = list(fields) if fields is not None else []
    try:
        records, boundaries, nulls = _bodies.read(bodies, RECORD_TYPE)
    except Unreadable:
        pass
    else:
        left_out.extend([None] * nulls)
        return records, boundaries
    noted = len(sink)
    try:
        return _leaf_by_leaf(_bodies.as_bytes(bodies), sink, names, fields, left_out)
    except Unreadable:
        if fields is not None:
            fields.clear()
        del sink[noted:]  # values a failed attempt noted: the json route notes them again
    with paused_gc():  # decoded bodies hold no cycles; collecting them costs more than json
        decoded = [decode_body(body, position) for position, body in enumerate(bodies)]
        found = [record for body in decoded for record in records_of(body, left_out=left_out)]
    return read_records(found, sink)


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


def _leaf_by_leaf(
    data: list[bytes],
    sink: Sink,
    names: list[str],
    fields: dict[str, list[Any]] | None,
    left_out: list[Any],
) -> tuple[pa.StructArray, np.ndarray]:
    """Arrow for the leaves it reads, ``msgspec`` and the lenient reader for the others."""
    multiline = any(b"\n" in body or b"\r" in body for body in data)
    leaves = read_leaves(data, RECORD_TYPE, _bodies.POLYGON, multiline)
    decoded = decode_parts(data, RECORD_TYPE, leaves.refused, names)
    rows = len(leaves.records)
    if len(decoded.boundaries) != rows:  # Arrow and msgspec disagree on what a record is
        raise Unreadable(f"{rows} records read by Arrow, {len(decoded.boundaries)} decoded")
    try:
        boundaries = _boundaries(leaves, decoded)
    except (pa.ArrowException, msgspec.DecodeError) as exc:
        raise Unreadable(str(exc)) from exc
    records = _graft(leaves, decoded, sink)
    left_out.extend([None] * leaves.left_out)
    if fields is not None:
        fields.clear()
        fields.update(decoded.envelope)
        fields["result"] = decoded.lengths
    return records, boundaries


def _graft(leaves: Leaves, decoded: Decoded, sink: Sink) -> pa.StructArray:
    """The records as :data:`RECORD_TYPE`: Arrow's parts, and the refused ones read leniently."""
    records, refused = leaves.records, leaves.refused
    children: list[pa.Array] = []
    whole: list[str] = []
    for field in RECORD_TYPE:
        name = field.name
        if (name,) in refused:
            children.append(read_values(decoded.values[(name,)], field.type, name, sink))
            if isinstance(field.type, pa.StructType | pa.ListType):
                whole.append(name)
            continue
        arrow = records.field(name)
        inner = field.type.value_type if isinstance(field.type, pa.ListType) else field.type
        odd = [leaf for leaf in getattr(inner, "names", ()) if (name, leaf) in refused]
        if not odd:
            children.append(arrow if arrow.type == field.type else arrow.cast(field.type))
            continue
        lists = isinstance(arrow, pa.ListArray)
        entries = arrow.flatten() if lists else arrow
        owners = pc.list_parent_indices(arrow).to_numpy() if lists else None
        parts = []
        for leaf in inner:
            if leaf.name in odd:
                values = decoded.values[(name, leaf.name)]
                if len(values) != len(entries):
                    raise Unreadable(f"{name}.{leaf.name}: {len(values)} values, {len(entries)}")
                dotted = f"{name}.{leaf.name}"
                parts.append(read_values(values, leaf.type, dotted, sink, owners))
            else:
                parts.append(entries.field(leaf.name))
        items = pa.StructArray.from_arrays(parts, fields=list(inner), mask=entries.is_null())
        if lists:
            offsets = pc.subtract(arrow.offsets, arrow.offsets[0])
            items = pa.ListArray.from_arrays(offsets, items, mask=arrow.is_null())
        children.append(items)
    if whole:  # what pa.array takes for an empty object or list is counted, as for records
        at = [RECORD_TYPE.get_field_index(name) for name in whole]
        served = [
            dict(zip(whole, values, strict=True))
            for values in zip(*(decoded.values[(n,)] for n in whole), strict=True)
        ]
        checked = hollow(
            pa.StructArray.from_arrays([children[i] for i in at], names=whole), served, sink
        )
        for i, child in zip(at, checked.flatten(), strict=True):
            children[i] = child
    return pa.StructArray.from_arrays(children, fields=list(RECORD_TYPE))


def _boundaries(leaves: Leaves, decoded: Decoded) -> np.ndarray:
    """Each record's boundary as served: Arrow's reading where it holds it all, else decoded."""
    served = decoded.boundaries
    if BOUNDARY in leaves.refused or (BOUNDARY[0],) in leaves.refused:
        return np.fromiter(served, dtype=object, count=len(served))  # lists stay lists
    try:
        values = _bodies.geojson(leaves.records.field(BOUNDARY[0]).field(BOUNDARY[1]))
    except Unreadable:  # a boundary without its type or its coordinates: decode every one
        values = np.full(len(served), None, dtype=object)
        exact = np.zeros(len(served), dtype=bool)
    else:
        exact = _plain_polygons(served)
    for i in np.flatnonzero(~exact).tolist():
        raw = served[i]
        values[i] = None if raw is None else msgspec.json.decode(raw)
    return values


def _plain_polygons(served: list[Any]) -> np.ndarray:
    """Where Arrow's reading of a boundary (raw JSON text) holds all of it: ``null``, or exactly
    six quotes (the keys ``type`` and ``coordinates`` and the type's name, nothing else)."""
    exact = np.zeros(len(served), dtype=bool)
    at = [i for i, raw in enumerate(served) if raw is not None]
    if not at:
        return exact
    raws = [served[i] for i in at]
    ends = np.cumsum(np.fromiter(map(len, raws), dtype=np.int64, count=len(raws)))
    marks = np.flatnonzero(np.frombuffer(b"".join(raws), dtype=np.uint8) == ord('"'))
    quotes = np.bincount(np.searchsorted(ends, marks, side="right"), minlength=len(raws))
    exact[at] = quotes == 6
    for i in np.flatnonzero(quotes == 0).tolist():  # a number, a list, {} or null
        exact[at[i]] = bytes(raws[i]) == b"null"
    return exact
