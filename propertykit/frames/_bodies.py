"""Response bodies into the records' struct array, for ``pk.frame(bodies)``: two tiers.

1. Arrow's JSON reader reads the bodies with the declared schema (:data:`RECORD_TYPE` in the
   envelope ``{"result": [...]}``), fields the schema does not name inferred
   (``unexpected_field_behavior="infer"``): in C++, on every core, with no Python object per
   value; a chunk at a time (the first small, so that untidy bodies are told early; never the
   whole input joined at once).
2. Once Arrow refuses a chunk (a value of the wrong type, a record that is not an object, an
   envelope of another shape, a boundary that is not a plain GeoJSON Polygon), it and every
   chunk after it are sifted (:mod:`propertykit.frames._sifting`): the records that hold the
   declared kinds are read by Arrow together, and only the others decoded, by ``msgspec``, and
   read as records are (:func:`propertykit.frames._records.read_records`): one odd value costs
   its record. A chunk whose records pass yet Arrow refuses, or that is not an envelope
   ``msgspec`` reads, is decoded whole, and so are the chunks after it.

Both give the frame the decoded records give (``tests/frames/test_bodies.py``), with one
difference: numbers in a boundary's coordinates read by Arrow come back as floats.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from propertykit.errors import InvalidInput
from propertykit.frames._coercion import Sink
from propertykit.frames._extras import joined, ordered
from propertykit.frames._records import in_sale_order, read_records
from propertykit.frames._schema import KNOWN, RECORD_TYPE
from propertykit.frames._sifting import sift
from propertykit.jsonio import loads, paused_gc, records_of, warn_left_out

#: What a boundary is read as by Arrow: a plain GeoJSON Polygon.
POLYGON = pa.struct(
    [("type", pa.string()), ("coordinates", pa.list_(pa.list_(pa.list_(pa.float64()))))]
)
#: Bytes per chunk: the first chunk's, and the most.
CHUNK_BYTES = (256 * 2**10, 16 * 2**20)
#: Bytes of bodies decoded at once when Arrow refuses them (their records held as Python objects
#: take several times as much).
DECODED_BYTES = 2 * 2**20
#: Bytes Arrow parses per task inside a chunk (several tasks use several cores).
BLOCK_BYTES = 4 * 2**20
_SPATIAL = pa.field(
    "spatial", pa.struct([*RECORD_TYPE.field("spatial").type, pa.field("boundary", POLYGON)])
)
_RECORD = pa.struct([_SPATIAL if f.name == "spatial" else f for f in RECORD_TYPE])
_SCHEMA = pa.schema([("result", pa.list_(_RECORD))])


_UNJOINED = (pa.ArrowException, TypeError)  # no type Arrow promotes the runs' types to


class Unreadable(Exception):
    """Arrow's reader cannot read the bodies exactly as ``json`` would: decode them."""


def read_bodies(
    bodies: list[Any],
    sink: Sink,
    left_out: list[Any] | None = None,
    fields: Sequence[str] = (),
) -> tuple[pa.StructArray, np.ndarray, list[dict[str, Any]]]:
    """Records and boundaries of response bodies: by Arrow, else decoded and read as records;
    and each body's envelope as read on the way.

    Items of the ``result`` lists that are not records are left out: added to ``left_out`` when
    given, else counted in a :class:`~propertykit.errors.NotRecordsWarning`. The envelopes hold,
    per body, the top-level ``fields`` asked for (Arrow reads an absent field as ``None``, and
    may hold one a body lacks) and ``"result"``: the length of its ``result`` list, ``None``
    when it has none; so a caller can check the envelopes without decoding the bodies.
    """
    noted = len(sink)
    with paused_gc():  # decoded bodies hold no cycles; collecting them costs more
        read = _Reading(sink, fields)
        try:
            read.all(bodies)
            struct = _joined_parts(read.parts)
        except _UNJOINED:  # the runs' fields Arrow cannot join: all decoded at once
            del sink[noted:]
            read = _Reading(sink, fields)
            read.decoded(bodies)
            struct = _joined_parts(read.parts, decoded=True)
    if left_out is not None:
        left_out.extend(read.left_out)
    elif read.left_out:
        warn_left_out(len(read.left_out), read.left_out[0])
    return struct, np.concatenate(read.boundaries), read.envelopes


@dataclass
class _Reading:
    """Runs of bodies read so far, in order: by Arrow, or decoded and read as records."""

    sink: Sink
    fields: Sequence[str]  # the envelope fields asked for
    parts: list[dict[str, pa.Array]] = field(default_factory=list)
    boundaries: list[np.ndarray] = field(default_factory=list)
    envelopes: list[dict[str, Any]] = field(default_factory=list)  # the fields asked, per body
    left_out: list[Any] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)  # named fields Arrow refused in records
    records: int = 0
    sifting: bool = True  # False once Arrow refused records that passed (see sifted)

    def all(self, bodies: list[Any]) -> None:
        """Every body, a chunk at a time: by Arrow until it refuses a chunk, which is sifted,
        as is every chunk after it (a chunk of sifted records is read about as fast as Arrow
        refuses one: asking again would cost more than it saves once odd values are seen)."""
        try:
            data: Sequence[Any] = _as_bytes(bodies)
            refused = False
        except Unreadable:  # text Arrow cannot take: decoded
            data, refused, self.sifting = bodies, True, False
        for chunk in _chunks(data):
            if not refused:
                try:
                    self.by_arrow(chunk)
                    continue
                except Unreadable:
                    refused = True
            self.sifted(chunk)

    def by_arrow(self, run: Sequence[bytes]) -> None:
        """Tier 1, or :class:`Unreadable` with nothing read."""
        part, boundaries, nulls, envelopes = _by_arrow(run, self.fields)
        self._add(part, boundaries, envelopes)
        self.left_out.extend([None] * nulls)

    def sifted(self, run: Sequence[Any]) -> None:
        """Tier 2: the records of ``run`` sifted (:mod:`~propertykit.frames._sifting`), those that
        pass read by Arrow together, the others decoded and read as records; else the run
        decoded whole (and, once Arrow refused records that passed, every run after)."""
        asked = [n for n in self.fields if n != "result"]
        found = sift(run, asked) if self.sifting else None
        try:
            if found is None:
                raise Unreadable("not sifted")
            multiline = any(b"\n" in body or b"\r" in body for body in run)
            passed, boundaries = _records_by_arrow(found.passed, multiline)
        except Unreadable:  # records that pass yet Arrow refuses: sifting does not help here
            self.sifting = False
            for piece in _chunks(run, DECODED_BYTES):
                self.decoded(piece)
            return
        own: Sink = []
        records, other_boundaries = read_records(found.others, own, self.refused)
        places = found.others_at
        self.sink.extend((c, [self.records + places[r] for r in rows], raw) for c, rows, raw in own)
        others = dict(zip(records.type.names, records.flatten(), strict=True))
        order = np.argsort(np.asarray(found.passed_at + places), kind="stable")  # as served
        part = {
            name: joined(
                [
                    passed.get(name, pa.nulls(len(found.passed))),
                    others.get(name, pa.nulls(len(records))),
                ]
            ).take(order)
            for name in dict.fromkeys([*passed, *others])
        }
        self._add(part, np.concatenate([boundaries, other_boundaries])[order], found.envelopes)
        self.left_out.extend(found.left_out)

    def decoded(self, run: Sequence[Any]) -> None:
        """Tier 2: ``run`` decoded, by ``msgspec``, and its records read as records are."""
        at = len(self.envelopes)
        decoded = [decode_body(body, at + i) for i, body in enumerate(run)]
        found = [r for body in decoded for r in records_of(body, left_out=self.left_out)]
        envelopes = []
        for body in decoded:  # what the caller asked of the envelopes, and the records' count
            envelope = body if isinstance(body, dict) else {}
            result = envelope.get("result")
            seen = {n: envelope[n] for n in self.fields if n in envelope}
            envelopes.append(seen | {"result": len(result) if isinstance(result, list) else None})
        own: Sink = []
        records, boundaries = read_records(found, own, self.refused)
        self.sink.extend((c, [self.records + r for r in rows], raw) for c, rows, raw in own)
        part = dict(zip(records.type.names, records.flatten(), strict=True))
        self._add(part, boundaries, envelopes)

    def _add(
        self, part: dict[str, pa.Array], boundaries: np.ndarray, envelopes: list[dict[str, Any]]
    ) -> None:
        self.parts.append(part)
        self.boundaries.append(boundaries)
        self.envelopes.extend(envelopes)
        self.records += len(boundaries)


def decode_body(body: Any, position: int) -> Any:
    """One raw body decoded, or :class:`InvalidInput` naming its position and what it holds."""
    data = bytes(body) if isinstance(body, memoryview | bytearray) else body
    try:
        value = msgspec.json.decode(data)
    except RecursionError:
        raise InvalidInput(f"Body {position} is JSON nested too deeply to read") from None
    except msgspec.DecodeError:  # json reads a little more (NaN, lone surrogates): its verdict
        try:
            value = loads(data)
        except RecursionError:
            raise InvalidInput(f"Body {position} is JSON nested too deeply to read") from None
        except ValueError as exc:
            raise InvalidInput(
                f"Body {position} is not JSON ({type(exc).__name__}); it starts {data[:60]!r}. "
                "pk.frame takes records (a list of dicts) or raw response bodies (bytes)"
            ) from None
    if not isinstance(value, dict | list):
        raise InvalidInput(
            f"Body {position} is a JSON {type(value).__name__}, not an envelope or a list of "
            "records"
        )
    return value


def _joined_parts(parts: list[dict[str, pa.Array]], *, decoded: bool = False) -> pa.StructArray:
    """Chunks' records as one struct: the named fields, then every other in order.

    A field that is a whole value in some chunks and read by its fields in others (``a``, and
    ``a.b``) is a :class:`TypeError`, to read the bodies again ``decoded``, as records are: then
    ``a`` and ``a.b`` are two fields (a record may well have both keys), as ``pk.frame(records)``
    has them.
    """
    names = list(dict.fromkeys(name for part in parts for name in part))
    columns = {
        name: joined([p.get(name, pa.nulls(len(p["propertyId"]))) for p in parts]) for name in names
    }
    extras = ordered({name: a for name, a in columns.items() if name not in RECORD_TYPE.names})
    columns["saleHistory"] = in_sale_order(columns["saleHistory"])  # _extras asked once, above
    if not decoded and {n[:i] for n in extras for i, c in enumerate(n) if c == "."} & extras.keys():
        raise TypeError("a field read whole here and by its fields there")  # as one, decoded
    known = [columns[name] for name in RECORD_TYPE.names]
    return pa.StructArray.from_arrays(
        [*known, *extras.values()], names=[*RECORD_TYPE.names, *extras]
    )


def _as_bytes(bodies: Sequence[Any]) -> list[bytes]:
    if not bodies:
        raise Unreadable("no bodies")
    try:
        return [b.encode() if isinstance(b, str) else bytes(b) for b in bodies]
    except UnicodeEncodeError as exc:  # lone surrogates, which json reads
        raise Unreadable(str(exc)) from exc


def _chunks(data: Sequence[Any], most: int = CHUNK_BYTES[1]) -> Iterator[Sequence[Any]]:
    """``data`` in runs of bodies of about :data:`CHUNK_BYTES` (the first small, then growing
    up to ``most``)."""
    start, size = 0, CHUNK_BYTES[0]
    while start < len(data):
        end, taken = start, 0
        while end < len(data) and (end == start or taken + len(data[end]) <= size):
            taken += len(data[end])
            end += 1
        yield data[start:end]
        start, size = end, min(2 * size, most)


def read_by_arrow(bodies: Sequence[Any]) -> tuple[pa.StructArray, np.ndarray, int]:
    """Tier 1 alone: every body by Arrow's reader, or :class:`Unreadable`: the records, their
    boundaries, and how many items of the ``result`` lists were ``null`` (left out)."""
    read = _Reading([], ())
    for chunk in _chunks(_as_bytes(bodies)):
        read.by_arrow(chunk)
    try:
        struct = _joined_parts(read.parts)
    except _UNJOINED as exc:  # kinds Arrow cannot join: as records do
        raise Unreadable(str(exc)) from exc
    return struct, np.concatenate(read.boundaries), len(read.left_out)


def _read_json(lines: Sequence[Any], schema: pa.Schema, multiline: bool) -> pa.Table:
    """JSON values, one a line (``multiline``: spread over several), by Arrow's reader with
    ``schema`` (fields it does not name inferred), or :class:`Unreadable`."""
    try:
        table = pa_json.read_json(
            pa.BufferReader(lines[0] if len(lines) == 1 else b"\n".join(lines)),
            read_options=pa_json.ReadOptions(block_size=max(BLOCK_BYTES, *map(len, lines)) + 1),
            parse_options=pa_json.ParseOptions(
                explicit_schema=schema,
                unexpected_field_behavior="infer",
                newlines_in_values=multiline,
            ),
        )
    except pa.ArrowException as exc:
        raise Unreadable(str(exc)) from exc
    if table.num_rows != len(lines):  # a line held more than one JSON value, or none
        raise Unreadable(f"{len(lines)} lines read as {table.num_rows} JSON values")
    return table


def _records_by_arrow(
    records: Sequence[Any], multiline: bool
) -> tuple[dict[str, pa.Array], np.ndarray]:
    """Records (raw JSON) by Arrow's reader, or :class:`Unreadable`: columns and boundaries."""
    if not records:
        return {}, np.empty(0, dtype=object)
    table = _read_json(records, pa.schema(list(_RECORD)), multiline)
    try:
        part, boundary = _split(table.to_struct_array().combine_chunks())
        return part, geojson(boundary)
    except pa.ArrowException as exc:
        raise Unreadable(str(exc)) from exc


def _by_arrow(
    run: Sequence[bytes], fields: Sequence[str]
) -> tuple[dict[str, pa.Array], np.ndarray, int, list[dict[str, Any]]]:
    """A run of bodies by Arrow's reader, or :class:`Unreadable`: its records' columns, their
    boundaries, how many ``result`` items were ``null``, and each body's envelope fields."""
    table = _read_json(run, _SCHEMA, any(b"\n" in body or b"\r" in body for body in run))
    try:
        asked = [n for n in fields if n != "result" and n in table.column_names]
        columns = {n: table.column(n).to_pylist() for n in asked}
        columns["result"] = pc.list_value_length(table.column("result")).to_pylist()
        by_body = zip(*columns.values(), strict=True)
        envelopes = [dict(zip(columns, values, strict=True)) for values in by_body]
        records = pa.concat_arrays([c.flatten() for c in table.column("result").chunks])
        nulls = records.null_count  # items that are not objects: left out, counted
        if nulls:
            records = records.filter(records.is_valid())
        part, boundary = _split(records)
        return part, geojson(boundary), nulls, envelopes
    except pa.ArrowException as exc:
        raise Unreadable(str(exc)) from exc


def _split(records: pa.StructArray) -> tuple[dict[str, pa.Array], pa.StructArray]:
    """A chunk's records as columns: the named fields as :data:`RECORD_TYPE` has them (a
    sale's own fields after the named), others by dotted name; and the boundaries."""
    columns: dict[str, pa.Array] = {}
    boundary = None
    for kind, child in zip(records.type, records.flatten(), strict=True):
        name = kind.name
        if name not in KNOWN[""] or not isinstance(kind.type, pa.StructType | pa.ListType):
            columns[name] = child
        elif isinstance(kind.type, pa.StructType):
            known = RECORD_TYPE.field(name).type
            inner = dict(zip(kind.type.names, child.flatten(), strict=True))
            boundary = inner.pop("boundary") if name == "spatial" else boundary
            mask = child.is_null() if child.null_count else None
            columns[name] = pa.StructArray.from_arrays(
                [inner.pop(f.name) for f in known], fields=list(known), mask=mask
            )
            columns |= {f"{name}.{k}": v for k, v in inner.items()}
        else:  # saleHistory
            offsets = pc.subtract(child.offsets, child.offsets[0])
            mask = child.is_null() if child.null_count else None
            columns[name] = pa.ListArray.from_arrays(offsets, child.flatten(), mask=mask)
    if boundary is None:
        raise Unreadable("no spatial field")
    return columns, boundary


def geojson(boundary: pa.StructArray, *, strict: bool = True) -> np.ndarray:
    """Boundaries as the dicts ``json`` decodes (floats for numbers), ``None`` where missing.

    ``strict``: raise :class:`Unreadable` for a boundary with other keys or without its type or
    coordinates (read as served, Arrow cannot tell those absent from null); otherwise they are
    ``None`` in it.
    """
    if {f.name for f in boundary.type} != {"type", "coordinates"}:
        raise Unreadable("a boundary has keys other than type and coordinates")
    if strict:
        served = boundary.filter(boundary.is_valid())
        if served.field("type").null_count or served.field("coordinates").null_count:
            raise Unreadable("a boundary without its type or coordinates")  # absent, or null?
    values = np.empty(len(boundary), dtype=object)
    with paused_gc():  # many small lists, no cycles: see propertykit.jsonio
        values[:] = boundary.to_pylist()
    return values
