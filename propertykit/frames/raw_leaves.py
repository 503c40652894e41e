"""The values Arrow refused, decoded from the bodies without decoding the rest of each record.

:mod:`propertykit.frames.leafwise` reads every part of the records Arrow accepts. The parts it
refused are decoded here by ``msgspec`` against a type naming only them: every other key is
skipped as it is scanned, so no Python object is made for it. The values come back exactly as
``json`` decodes them (``true`` stays a boolean, ``"3"`` a string), for the lenient reader
(:func:`propertykit.frames.records.read_values`) to coerce or count, as it does for records.

The same pass brings each boundary's raw JSON text (to check that Arrow's reading of it as a
Polygon left nothing out) and the envelopes' top-level fields the caller asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from types import GenericAlias
from typing import Any

import msgspec
import pyarrow as pa

from propertykit.frames.leafwise import BOUNDARY, Part, Unreadable
from propertykit.jsonio import paused_gc

__all__ = ["Decoded", "decode_parts"]

_UNSET: Any = msgspec.UNSET


@dataclass
class Decoded:
    """The refused parts' values, the boundaries, and the envelopes' fields asked for.

    ``values[part]`` holds one value per record for a whole field or a leaf of an object, and one
    per entry of every record's list (in order, ``null`` entries included) for a leaf of the
    entries of a list. ``boundaries`` holds, per record, the boundary's raw JSON text
    (``msgspec.Raw``; ``None`` where absent) or, when Arrow refused the boundary, its value.
    ``envelope`` holds the envelope fields asked for (one value per body; a field no body holds
    is left out), ``lengths`` each body's ``result`` list length (``None`` where it has none).
    """

    values: dict[Part, list[Any]] = field(default_factory=dict)
    boundaries: list[Any] = field(default_factory=list)
    envelope: dict[str, list[Any]] = field(default_factory=dict)
    lengths: list[int | None] = field(default_factory=list)


def _struct(name: str, fields: Iterable[tuple[str, Any]], absent: Any = None) -> Any:
    """A msgspec Struct type decoding the named keys (as ``f0``, ``f1``...; a key not there is
    ``absent``), skipping every other key unread."""
    named = list(fields)
    return msgspec.defstruct(
        name,
        [(f"f{i}", kind, absent) for i, (_, kind) in enumerate(named)],
        rename={f"f{i}": key for i, (key, _) in enumerate(named)},
        gc=False,  # decoded JSON holds no cycles: the collector need not track these
    )


@dataclass(frozen=True)
class _Top:
    """A top-level field of the record decoded for its refused parts."""

    name: str
    whole: bool  # the field itself refused: decoded as any JSON value
    leaves: tuple[str, ...] = ()  # else the refused leaves of its object(s)
    boundary: bool = False  # ``spatial``: its boundary, raw (or decoded when refused)
    entries: bool = False  # a list of objects (``saleHistory``), not one object


def _optional(kind: Any) -> Any:
    """``kind | None``, for a type made at run time."""
    return kind | None


def _record_type(record_type: pa.StructType, refused: frozenset[Part]) -> tuple[Any, list[_Top]]:
    """The Struct type a record is decoded as, and what each of its fields is read for."""
    fields: list[tuple[str, Any]] = []
    tops: list[_Top] = []
    for arrow_field in record_type:
        name = arrow_field.name
        if (name,) in refused:
            fields.append((name, Any))
            tops.append(_Top(name, whole=True))
            continue
        leaves = tuple(p[1] for p in sorted(refused) if len(p) == 2 and p[0] == name)
        leaves = tuple(leaf for leaf in leaves if (name, leaf) != BOUNDARY)
        boundary = name == BOUNDARY[0]
        if not leaves and not boundary:
            continue
        inner: list[tuple[str, Any]] = [(leaf, Any) for leaf in leaves]
        if boundary:
            inner.append((BOUNDARY[1], Any if BOUNDARY in refused else msgspec.Raw))
        kind = _optional(_struct(f"{name}_", inner))
        many = isinstance(arrow_field.type, pa.ListType)
        fields.append((name, _optional(GenericAlias(list, kind)) if many else kind))
        tops.append(_Top(name, whole=False, leaves=leaves, boundary=boundary, entries=many))
    return _struct("Record", fields), tops


def decode_parts(
    data: Sequence[bytes],
    record_type: pa.StructType,
    refused: frozenset[Part],
    envelope_names: Sequence[str] = (),
) -> Decoded:
    """The refused parts of the records of ``data``, decoded; see :class:`Decoded`."""
    record, tops = _record_type(record_type, refused)
    names = [n for n in dict.fromkeys(envelope_names) if n != "result"]
    listed = _optional(GenericAlias(list, _optional(record)))
    fields = [("result", listed), *((n, Any) for n in names)]
    decoder = msgspec.json.Decoder(_struct("Envelope", fields, _UNSET))
    found = Decoded()
    for top in tops:  # every part, values or none
        for part in [(top.name,)] if top.whole else [(top.name, leaf) for leaf in top.leaves]:
            found.values[part] = []
    seen: dict[str, list[Any]] = {n: [] for n in names}
    takers = [(attrgetter(f"f{i}"), top) for i, top in enumerate(tops)]
    with paused_gc():
        for body in data:
            try:
                decoded = decoder.decode(body)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                raise Unreadable(str(exc)) from exc
            records = decoded.f0
            found.lengths.append(len(records) if isinstance(records, list) else None)
            for i, name in enumerate(names, start=1):
                seen[name].append(getattr(decoded, f"f{i}"))
            if not isinstance(records, list) or not records:
                continue
            if None in records:  # null records: left out, as Arrow's route leaves them
                records = [one for one in records if one is not None]
            for get, top in takers:  # a body at a time: its records are still in cache
                _take(list(map(get, records)), top, found)
    found.envelope = {  # as Arrow reads envelopes: a field no body holds is not there
        name: [None if v is _UNSET else v for v in values]
        for name, values in seen.items()
        if any(v is not _UNSET for v in values)
    }
    return found


def _take(values: list[Any], top: _Top, found: Decoded) -> None:
    """Add one top-level field's values (one per record) to ``found``, by part."""
    if top.whole:
        found.values[(top.name,)].extend(values)
        if top.name == BOUNDARY[0]:
            found.boundaries.extend(v.get(BOUNDARY[1]) if type(v) is dict else None for v in values)
        return
    if top.entries:  # one value per entry of every record's list
        values = list(chain.from_iterable(filter(None, values)))
    complete = None not in values
    for j, name in enumerate((*top.leaves, BOUNDARY[1]) if top.boundary else top.leaves):
        get = attrgetter(f"f{j}")
        taken = map(get, values) if complete else (v and get(v) for v in values)
        if top.boundary and j == len(top.leaves):
            found.boundaries.extend(taken)
        else:
            found.values[(top.name, name)].extend(taken)
