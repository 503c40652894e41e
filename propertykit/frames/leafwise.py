"""Bodies Arrow refuses as a whole, read by Arrow all the same: every leaf but those it refuses.

Arrow's JSON reader gives up on a whole read when one leaf changes kind (``"forSale": true``
where text was expected; ``"beds": "3"``), and names that leaf in its error. :func:`read_leaves`
reads the bodies a chunk at a time with an explicit schema and extra keys ignored; when Arrow
refuses a chunk, the leaf it names is dropped from the schema (Arrow then skips it unchecked) and
the chunk is read again. Chunks start small and grow, so that the leaves a feed bends are found
while re-reading costs little. Each leaf dropped is read from its decoded values by the caller
(:mod:`propertykit.frames.raw_leaves`), so an odd value costs its own column, not the batch.

What is dropped is a *part*: a path of names, as :mod:`propertykit.frames.narrowing` uses them.
``("marketStatus", "forSale")`` is one leaf of an object; ``("saleHistory", "price")`` one field
of every sale; ``("tenure",)`` a whole top-level field, when the value itself is not the object
(or list) expected. ``("spatial", "boundary")`` is the boundary, read as a plain GeoJSON Polygon
unless Arrow refuses that. Errors that name no such part (a record that is not an object, an
envelope of another shape, a number too big for a double) raise :class:`Unreadable`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.json as pa_json

__all__ = [
    "BLOCK_BYTES",
    "BOUNDARY",
    "CHUNK_BYTES",
    "Leaves",
    "Part",
    "Unreadable",
    "chunks",
    "read_leaves",
]

Part = tuple[str, ...]
#: The path of the boundary, which the reader reads as a GeoJSON Polygon.
BOUNDARY: Part = ("spatial", "boundary")
#: Bytes per chunk: the first chunk's, and the most.
CHUNK_BYTES = (256 * 2**10, 16 * 2**20)
#: Bytes Arrow parses per task inside a chunk (several tasks use several cores).
BLOCK_BYTES = 4 * 2**20
_REFUSED = re.compile(r"Column\((/[^)]*)\) (?:changed from \w+ to \w+|was specified twice)")


class Unreadable(Exception):
    """The bodies need the lenient route: decode them with ``json``, then frame the records."""


@dataclass(frozen=True)
class Leaves:
    """What Arrow read: records of the kept parts, in order, the parts it refused, and how many
    items of the ``result`` lists were ``null`` (left out)."""

    records: pa.StructArray
    refused: frozenset[Part]
    left_out: int = 0


def read_leaves(
    data: Sequence[bytes], record_type: pa.StructType, polygon: pa.DataType, multiline: bool
) -> Leaves:
    """The records of ``data`` (one envelope per body) as ``record_type`` less refused parts.

    ``polygon`` is the type the boundary is read as while Arrow takes it. Records that are
    ``null`` in a ``result`` list are left out (and counted), as ``json``'s route leaves them out.
    """
    refused: set[Part] = set()
    tables: list[pa.Table] = []
    longest = max(map(len, data))
    for chunk in chunks(data):
        buffer = chunk[0] if len(chunk) == 1 else b"\n".join(chunk)
        table = _read_chunk(buffer, record_type, polygon, refused, multiline, longest)
        if table.num_rows != len(chunk):  # a body held more than one JSON value, or none
            raise Unreadable(f"{len(chunk)} bodies read as {table.num_rows} JSON objects")
        tables.append(table)
    final = _schema(record_type, polygon, refused).field("result").type.value_type
    parts = []
    for table in tables:
        for chunk in table.column("result").chunks:
            records = chunk.flatten()
            parts.append(records if records.type == final else records.cast(final))
    records = pa.concat_arrays(parts)
    left_out = records.null_count
    if left_out:
        records = records.filter(records.is_valid())
    kept = {f.name for f in final}
    for field in record_type:  # an object none of whose leaves Arrow kept is refused whole
        if field.name not in kept:
            refused.add((field.name,))
    return Leaves(records, frozenset(refused), left_out)


def chunks(data: Sequence[bytes]) -> Iterator[Sequence[bytes]]:
    """``data`` in runs of bodies of about :data:`CHUNK_BYTES` (the first small, then growing)."""
    start, size = 0, CHUNK_BYTES[0]
    while start < len(data):
        end, taken = start, 0
        while end < len(data) and (end == start or taken + len(data[end]) <= size):
            taken += len(data[end])
            end += 1
        yield data[start:end]
        start, size = end, min(2 * size, CHUNK_BYTES[1])


def _read_chunk(
    buffer: bytes,
    record_type: pa.StructType,
    polygon: pa.DataType,
    refused: set[Part],
    multiline: bool,
    longest: int,
) -> pa.Table:
    """One chunk as Arrow reads it, each part it refuses added to ``refused`` on the way."""
    while True:
        try:
            return pa_json.read_json(
                pa.BufferReader(buffer),
                read_options=pa_json.ReadOptions(block_size=max(BLOCK_BYTES, longest + 1)),
                parse_options=pa_json.ParseOptions(
                    explicit_schema=_schema(record_type, polygon, refused),
                    unexpected_field_behavior="ignore",
                    newlines_in_values=multiline,
                ),
            )
        except pa.ArrowInvalid as exc:
            part = _part(str(exc), record_type)
            if part in refused:  # refused already: Arrow should not name it again
                raise Unreadable(str(exc)) from exc
            refused.add(part)


def _part(message: str, record_type: pa.StructType) -> Part:
    """The part Arrow's error names, or :class:`Unreadable` when it names none."""
    found = _REFUSED.search(message)
    path = found.group(1).split("/")[1:] if found else []
    if path[:2] != ["result", "[]"] or len(path) < 3:
        raise Unreadable(message)
    names = [name for name in path[2:] if name != "[]"]
    if tuple(names[:2]) == BOUNDARY:
        return BOUNDARY
    top = record_type.get_field_index(names[0])
    if top < 0:  # extra keys are ignored unread: Arrow should never name one
        raise Unreadable(message)
    inner = record_type.field(top).type
    if isinstance(inner, pa.ListType):
        inner = inner.value_type
    if len(names) == 1 or not isinstance(inner, pa.StructType):
        return (names[0],)
    if inner.get_field_index(names[1]) < 0:
        raise Unreadable(message)
    kind = inner.field(names[1]).type
    if len(names) > 2 and isinstance(kind, pa.StructType | pa.ListType):
        raise Unreadable(message)  # deeper than the service's records nest
    return (names[0], names[1])


def _schema(record_type: pa.StructType, polygon: pa.DataType, refused: set[Part]) -> pa.Schema:
    """The envelope as Arrow should read it: the record parts not refused, the boundary added."""
    fields = []
    for field in record_type:
        if (field.name,) in refused:
            continue
        inner = field.type.value_type if isinstance(field.type, pa.ListType) else field.type
        if not isinstance(inner, pa.StructType):
            fields.append(field)
            continue
        kept = [f for f in inner if (field.name, f.name) not in refused]
        if field.name == BOUNDARY[0] and BOUNDARY not in refused:
            kept.append(pa.field(BOUNDARY[1], polygon))
        if not kept:
            continue
        kind = pa.struct(kept)
        fields.append(pa.field(field.name, pa.list_(kind) if field.type != inner else kind))
    return pa.schema([("result", pa.list_(pa.struct(fields)))])
