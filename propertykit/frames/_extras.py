"""Fields the interface does not name: kept, typed as Arrow's JSON reader infers them.

The service adds fields; a frame keeps every one. From raw bodies, Arrow's JSON reader reads them
along with the named ones (``unexpected_field_behavior="infer"``); from records,
:func:`read_extras` hands their values, encoded by ``msgspec`` (by ``json`` when they hold NaN
or an infinity, which ``msgspec`` writes as null), to the same reader, so that both routes type
them alike (a text that is an ISO 8601 time is a ``timestamp[s]``, say). A field
whose values mix kinds Arrow cannot hold in one column (a number here, text there) follows the
lenient rule for text (:mod:`propertykit.frames._coercion`): numbers and booleans as their JSON
text; objects and lists missing there, counted and kept as served. An object field with such a
leaf is read a field at a time.

Names are dotted paths: ``lastSale`` at the top, ``pricing.newPriceField`` inside a named
object; a sale's own under its name. The frame flattens objects further (``lastSale.price``) and
keeps lists whole (:func:`ordered` gives the order: by the named field holding them, then name).
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Sequence
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.json as pa_json

from propertykit.frames import _coercion as coercion
from propertykit.frames._coercion import Sink
from propertykit.frames._schema import ARROW_ERRORS, RECORD_TYPE

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()
_EMPTY: dict[str, Any] = {}
_REFUSED = (*ARROW_ERRORS, pa.ArrowException, TypeError, ValueError)  # odd shapes too
_RANK = {name: i for i, name in enumerate(RECORD_TYPE.names)}


def read_extras(
    columns: dict[str, list[Any]], sink: Sink, rows: Sequence[int] | None = None
) -> dict[str, pa.Array]:
    """Each field's values (one per row, ``None`` where absent) as Arrow's JSON reader types
    them; values of a field Arrow refuses go by the lenient rule (to ``sink`` by ``rows``)."""
    if not columns:
        return {}
    with contextlib.suppress(*_REFUSED):
        return _inferred(columns)
    read: dict[str, pa.Array] = {}
    for name, values in columns.items():
        try:
            read |= _inferred({name: values})
            continue
        except _REFUSED:
            pass
        served = [v for v in values if v is not None]
        if served and all(type(v) is dict for v in served):  # a field at a time
            keys = dict.fromkeys(itertools.chain.from_iterable(served))
            parts = {f"{name}.{k}": [None if v is None else v.get(k) for v in values] for k in keys}
            read |= read_extras(parts, sink, rows)
        else:
            read[name] = coercion.lenient(values, "text", pa.string(), name, sink, rows)
    return read


def _inferred(columns: dict[str, list[Any]]) -> dict[str, pa.Array]:
    """The columns as Arrow's JSON reader infers them, read in one block (so that a field null
    at first and an object later is read as the reader reads it within a body)."""
    names = list(columns)
    rows = list(zip(*columns.values(), strict=True))
    if not rows:
        return {name: pa.nulls(0) for name in names}
    nothing = (None,) * len(names)
    objects = [  # a row without a value: an empty object, made once
        _EMPTY
        if row == nothing
        else {n: v for n, v in zip(names, row, strict=True) if v is not None}
        for row in rows
    ]
    lines = _ENCODER.encode_lines(objects)
    if _DECODER.decode_lines(lines) != objects:  # msgspec writes NaN and infinities as null
        texts = (json.dumps(o, allow_nan=True, default=msgspec.to_builtins) for o in objects)
        lines = "\n".join(texts).encode()
    table = pa_json.read_json(
        pa.BufferReader(lines),
        read_options=pa_json.ReadOptions(use_threads=False, block_size=len(lines) + 1),
    )
    if table.num_rows != len(rows):
        raise ValueError(f"{len(rows)} rows read as {table.num_rows}")
    return {
        name: table.column(name).combine_chunks()
        if name in table.column_names
        else pa.nulls(len(rows))
        for name in names
    }


def ordered(extras: dict[str, pa.Array]) -> dict[str, pa.Array]:
    """``extras`` by the named field holding each (top-level ones last), then by name."""

    def rank(name: str) -> tuple[int, str]:
        holder = name.split(".", 1)[0] if "." in name else ""
        return _RANK.get(holder, len(_RANK)), name

    return {name: extras[name] for name in sorted(extras, key=rank)}


def joined(parts: Sequence[pa.Array]) -> pa.Array:
    """``parts`` as one array of the type Arrow promotes theirs to (raises when there is none)."""
    types = list(dict.fromkeys(part.type for part in parts))
    if len(types) > 1:
        schemas = [pa.schema([("v", t)]) for t in types]
        common = pa.unify_schemas(schemas, promote_options="permissive").field("v").type
        parts = [part.cast(common) for part in parts]
    return pa.concat_arrays(list(parts))
