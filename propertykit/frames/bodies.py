"""Response bodies read straight into Arrow by pyarrow's JSON reader, for ``pk.frame(bodies)``.

The reader parses in C++ on every core and makes no Python object per value, so framing raw
bodies this way takes a fraction of decoding them first (``benchmarks/frames.py``). The bodies
are read a chunk at a time (:func:`propertykit.frames.leafwise.chunks`: the first small, so that
untidy bodies are told early; never the whole input joined at once). :func:`read` is strict: a
value of the wrong type, a record that is not an object, an envelope that is not ``{"result":
[...]}``, a body that is not exactly one JSON object, or a ``spatial.boundary`` that is not a
plain GeoJSON Polygon (``type`` and ``coordinates``, nothing else) makes it raise
:class:`Unreadable`, and :mod:`propertykit.frames.from_bodies` reads the bodies leaf by leaf, or
decodes them with ``json``. What it does read, it reads as that route would
(``tests/frames/test_bodies.py`` holds the two equal), with one difference: numbers in a
boundary's coordinates come back as floats (``1.0`` where ``1`` was served).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextvars import ContextVar
from itertools import pairwise
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from propertykit.frames.leafwise import BLOCK_BYTES, Unreadable, chunks
from propertykit.jsonio import paused_gc

__all__ = ["ENVELOPE_FIELDS", "POLYGON", "Unreadable", "as_bytes", "geojson", "read"]

#: When set to a dict, :func:`read` fills it with each envelope's top-level fields as Arrow read
#: them (name -> one value per body; ``"result"`` -> the length of its ``result`` list, ``None``
#: when it has none), so a caller can check the envelopes without decoding them. A caller fills
#: the dict beforehand with the names it will look at (any values): bodies Arrow reads only
#: leaf by leaf (:mod:`propertykit.frames.leafwise`) give those alone. Field names no envelope
#: holds are left out. Left empty when the bodies are not read by Arrow.
ENVELOPE_FIELDS: ContextVar[dict[str, list[Any]] | None] = ContextVar(
    "propertykit_envelope_fields", default=None
)


#: What a boundary is read as by Arrow: a plain GeoJSON Polygon.
POLYGON = pa.struct(
    [("type", pa.string()), ("coordinates", pa.list_(pa.list_(pa.list_(pa.float64()))))]
)


@functools.cache
def _schema(record_type: pa.StructType) -> pa.Schema:
    """The envelope as the reader should expect it: records of ``record_type``, boundary added."""
    spatial = record_type.field("spatial").type
    spatial = pa.struct([*spatial, pa.field("boundary", POLYGON)])
    fields = [pa.field("spatial", spatial) if f.name == "spatial" else f for f in record_type]
    return pa.schema([("result", pa.list_(pa.struct(fields)))])


def as_bytes(bodies: Sequence[bytes | bytearray | memoryview | str]) -> list[bytes]:
    """The bodies as ``bytes``, or :class:`Unreadable` (none, or text ``json`` alone reads)."""
    if not bodies:
        raise Unreadable("no bodies")
    try:
        return [b.encode() if isinstance(b, str) else bytes(b) for b in bodies]
    except UnicodeEncodeError as exc:  # lone surrogates, which json reads
        raise Unreadable(str(exc)) from exc


def read(
    bodies: Sequence[bytes | bytearray | memoryview | str], record_type: pa.StructType
) -> tuple[pa.StructArray, np.ndarray, int]:
    """The records of ``bodies`` as ``record_type``, and their ``spatial.boundary`` values.

    Parameters
    ----------
    bodies
        Response bodies, each one JSON envelope ``{"result": [record, ...], ...}``.
    record_type
        The struct type the records are read as (``spatial.boundary`` is read separately).

    Returns
    -------
    tuple
        The records, in order, as a struct array of ``record_type``; an object array of each
        record's boundary as decoded JSON (``None`` where absent or null); and how many items of
        the ``result`` lists were ``null``, not records, and are left out.

    Raises
    ------
    Unreadable
        The reader cannot read the bodies exactly as ``json`` would.
    """
    data = as_bytes(bodies)
    multiline = any(b"\n" in body or b"\r" in body for body in data)
    longest = max(map(len, data))
    fields = ENVELOPE_FIELDS.get()
    found: dict[str, list[Any]] = {}
    records, boundaries = [], []
    read = left_out = 0
    for chunk in chunks(data):  # small first: untidy bodies are told before much is read
        table = _parse(chunk, record_type, multiline, longest)
        if table.num_rows != len(chunk):  # a body held more than one JSON value, or none
            raise Unreadable(f"{len(chunk)} bodies read as {table.num_rows} JSON objects")
        if fields is not None:
            _envelope(table, found, read)
        try:  # Arrow can fail here on odd inferred shapes (e.g. a boundary {"": [null, null]})
            lists = table.column("result")
            part = pa.concat_arrays([c.flatten() for c in lists.chunks])
            if part.null_count:  # json's route leaves out (and counts) items that are not objects
                left_out += part.null_count
                part = part.filter(part.is_valid())
            spatial = part.flatten()[part.type.get_field_index("spatial")]
            boundary = spatial.flatten()[spatial.type.get_field_index("boundary")]
            records.append(part.cast(record_type))  # drops the boundary and any extra keys
        except pa.ArrowException as exc:
            raise Unreadable(str(exc)) from exc
        boundaries.append(geojson(boundary))
        read += len(chunk)
    if fields is not None:
        fields.clear()
        fields.update(
            {name: values + [None] * (read - len(values)) for name, values in found.items()}
        )
    return pa.concat_arrays(records), np.concatenate(boundaries), left_out


def _envelope(table: pa.Table, found: dict[str, list[Any]], before: int) -> None:
    """Add a chunk's envelope fields to ``found`` (a field new here: ``None`` in ``before``)."""
    for name in table.column_names:
        values = (
            pc.list_value_length(table.column(name)).to_pylist()
            if name == "result"
            else table.column(name).to_pylist()
        )
        found.setdefault(name, [None] * before).extend(values)
    for name, values in found.items():
        if name not in table.column_names:
            values.extend([None] * table.num_rows)


def _parse(
    data: Sequence[bytes], record_type: pa.StructType, multiline: bool, longest: int
) -> pa.Table:
    """The envelopes of ``data`` as Arrow reads them, or :class:`Unreadable`."""
    try:
        return pa_json.read_json(
            pa.BufferReader(data[0] if len(data) == 1 else b"\n".join(data)),
            read_options=pa_json.ReadOptions(block_size=max(BLOCK_BYTES, longest + 1)),
            parse_options=pa_json.ParseOptions(
                explicit_schema=_schema(record_type),
                unexpected_field_behavior="infer",  # so that extra keys in a boundary show
                newlines_in_values=multiline,
            ),
        )
    except pa.ArrowException as exc:
        raise Unreadable(str(exc)) from exc


def geojson(boundary: pa.StructArray, *, strict: bool = True) -> np.ndarray:
    """Boundaries as the dicts ``json`` decodes (floats for numbers), ``None`` where missing.

    ``strict``: raise :class:`Unreadable` for a boundary without its type or coordinates (read
    as served, Arrow cannot tell those absent from null); otherwise they are ``None`` in it.
    """
    if {f.name for f in boundary.type} != {"type", "coordinates"}:
        raise Unreadable("a boundary has keys other than type and coordinates")
    values = np.full(len(boundary), None, dtype=object)
    present = boundary.is_valid().to_numpy(zero_copy_only=False)
    if not present.any():
        return values
    served = boundary.filter(present)
    kinds, polygons = (served.field(name) for name in ("type", "coordinates"))
    if strict and (kinds.null_count or polygons.null_count):  # absent and null look alike
        raise Unreadable("a boundary without its type or coordinates")
    rings = polygons.flatten()
    points = rings.flatten()
    with paused_gc():  # many small lists, no cycles: see propertykit.jsonio
        if (
            kinds.null_count
            or polygons.null_count
            or rings.null_count
            or points.null_count
            or points.flatten().null_count
        ):
            decoded = served.to_pylist()  # nulls inside: Arrow's slower, exact conversion
        else:
            numbers = points.flatten().to_numpy()
            levels: tuple[pa.ListArray, ...] = (points, rings, polygons)
            widths = np.diff(points.offsets.to_numpy())
            if len(widths) and (widths == widths[0]).all() and widths[0]:  # e.g. all (x, y)
                items: list[Any] = numbers.reshape(-1, int(widths[0])).tolist()  # pairs, in C
                levels = levels[1:]
            else:
                items = numbers.tolist()
            for level in levels:
                offsets = level.offsets.to_numpy()
                items = [items[a:b] for a, b in pairwise((offsets - offsets[0]).tolist())]
            names = kinds.to_numpy(zero_copy_only=False).tolist()
            decoded = [{"type": t, "coordinates": c} for t, c in zip(names, items, strict=True)]
    chosen = np.empty(len(decoded), dtype=object)
    chosen[:] = decoded
    values[present] = chosen
    return values
