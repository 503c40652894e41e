"""Response bodies as read into Arrow, kept per body so a warm re-run need not parse them again.

``pk.frame(bodies)`` reads the bodies (:func:`read_for_keeping`: Arrow's JSON reader, or the
lenient route; :func:`records_frame_and_shares` for records a fetch decoded) and then types the
columns (:func:`frame_from_read`). The first half is most of
the time, and its result depends on nothing but the bodies, so the client keeps it beside each
cached response (:mod:`propertykit.wire._derived_cache`): :func:`encode_shares` gives each body's
share, as Arrow IPC (its records and its boundaries, no pickle), and :func:`decode_shares` puts
the shares of many bodies back together, ready for :func:`frame_from_read`. The frame is then
the very frame ``pk.frame(bodies)`` gives (``tests/frames/test_stored_form.py``).

A body gets no share (``None``) when its reading cannot be kept exactly: values the reader
coerced or kept raw (they are reported per frame), fields the interface does not name (typed by
the whole read, not the body alone), or boundaries that are not plain GeoJSON polygons of
floats. :func:`format_name` names the format: the schema and the reading code it came
from, so a share is never read by a version that would read the bodies differently.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import pickle
from collections.abc import Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from propertykit.frames._bodies import POLYGON, geojson, read_bodies
from propertykit.frames._coercion import Sink
from propertykit.frames._records import read_records
from propertykit.frames._schema import RECORD_TYPE
from propertykit.frames._tables import frame_from_arrow
from propertykit.jsonio import warn_left_out

_KNOWN_ONLY = RECORD_TYPE
_SCHEMA = pa.schema([("records", RECORD_TYPE), ("boundary", POLYGON)])
_END_OF_STREAM = b"\xff\xff\xff\xff\x00\x00\x00\x00"
#: Bump when what a share holds changes in a way the schema does not show.
_FORMAT = "2"
#: The modules whose code decides how bodies read: a change in any gives a new format name.
_READERS = ("bodies.py", "records.py", "extras.py", "schema.py", "coercion.py")


@dataclass(frozen=True)
class BodiesRead:
    """Bodies read into Arrow: records, their boundaries as served, values kept raw, and the
    items of the ``result`` lists that were not records (left out; the frame counts them);
    and what the bodies' envelopes said (:func:`~propertykit.frames._bodies.read_bodies`)."""

    records: pa.StructArray
    boundaries: np.ndarray
    sink: Sink
    left_out: tuple[Any, ...] = ()
    #: Per body, the envelope fields asked of :func:`read_for_keeping` as read, and
    #: ``"result"``: the length of its list (``None``: none); empty for kept shares.
    envelopes: tuple[dict[str, Any], ...] = ()


@functools.cache
def format_name() -> str:
    """The name of the format of the shares: format, schema and reading code, hashed."""
    digest = hashlib.sha1(f"{_FORMAT}\n{RECORD_TYPE}\n{POLYGON}".encode(), usedforsecurity=False)
    for name in _READERS:
        try:
            digest.update(Path(__file__).with_name(name).read_bytes())
        except OSError:  # no sources (a frozen install): the package version stands in
            from importlib.metadata import version

            digest.update(version("propertykit").encode())
    return f"arrow{_FORMAT}-{digest.hexdigest()[:16]}"


def read_for_keeping(
    bodies: Sequence[bytes | bytearray | memoryview | str], fields: Sequence[str] = ()
) -> BodiesRead:
    """Bodies read as ``pk.frame(bodies)`` reads them, with the envelope ``fields`` asked for."""
    sink: Sink = []
    left_out: list[Any] = []
    records, boundaries, envelopes = read_bodies(list(bodies), sink, left_out, fields)
    return BodiesRead(records, boundaries, sink, tuple(left_out), tuple(envelopes))


def records_frame_and_shares(
    records: Sequence[Any],
    lengths: Sequence[int],
    *,
    money_unit: Literal["major", "minor"] | None = None,
    only: Container[int] | None = None,
) -> tuple[pd.DataFrame, list[bytes | None]]:
    """Records already decoded (a fetch's), read as ``pk.frame(records)`` reads them, and framed
    as :func:`frame_and_shares` frames a read: the frame is that frame, and the shares keep
    exactly it."""
    sink: Sink = []
    struct, boundaries = read_records(list(records), sink)
    read = BodiesRead(struct, boundaries, sink)
    return frame_and_shares(read, lengths, money_unit=money_unit, only=only)


def frame_from_read(
    read: BodiesRead, *, money_unit: Literal["major", "minor"] | None = None
) -> pd.DataFrame:
    """The frame ``pk.frame(bodies)`` makes of bodies already read."""
    if read.left_out:
        warn_left_out(len(read.left_out), read.left_out[0])
    return frame_from_arrow(read.records, read.boundaries, list(read.sink), money_unit=money_unit)


def frame_and_shares(
    read: BodiesRead,
    lengths: Sequence[int],
    *,
    money_unit: Literal["major", "minor"] | None = None,
    only: Container[int] | None = None,
) -> tuple[pd.DataFrame, list[bytes | None]]:
    """The frame of ``read`` (:func:`frame_from_read`) and each body's share of it
    (:func:`encode_shares`; all ``None`` when ``lengths`` do not count its records)."""
    df = frame_from_read(read, money_unit=money_unit)
    fits = sum(lengths) == len(read.records)
    return df, encode_shares(read, lengths, only) if fits else [None] * len(lengths)


def encode_shares(
    read: BodiesRead, lengths: Sequence[int], only: Container[int] | None = None
) -> list[bytes | None]:
    """Each body's share of ``read`` (its ``lengths[i]`` records), or ``None`` where not kept.

    ``lengths`` are the bodies' record counts in order, summing to the records read. ``only``:
    the positions of the bodies to share (``None``: all); the others get ``None``.
    """
    if only is not None and not any(i in only for i in range(len(lengths))):
        return [None] * len(lengths)
    if sum(lengths) != len(read.records) or read.records.type != _KNOWN_ONLY:
        # Fields the interface does not name are typed by what else a read holds (an integer
        # field is float64 beside a body with 2.5 in it): a body's share of them is not what
        # the body read alone gives, so such reads are not kept.
        return [None] * len(lengths)
    odd_rows = np.zeros(len(read.records) + 1, dtype=bool)
    for _column, rows, _raw in read.sink:
        odd_rows[np.asarray(rows, dtype=np.intp)] = True
    polygons = _polygons(read.boundaries)  # all at once: one check, not one per body
    shares: list[bytes | None] = []
    start = 0
    for i, length in enumerate(lengths):
        end = start + length
        share = None
        if only is None or i in only:
            share = polygons if polygons is not None else _polygons(read.boundaries[start:end])
        if share is None or odd_rows[start:end].any():
            shares.append(None)
        else:
            if share is polygons:
                share = polygons.slice(start, length)
            records = read.records.slice(start, length)
            batch = pa.RecordBatch.from_arrays([records, share], schema=_SCHEMA)
            shares.append(bytes(batch.serialize()))
        start = end
    return shares


def _polygons(boundaries: np.ndarray) -> pa.StructArray | None:
    """The boundaries as Arrow polygons, if they read back exactly as served (else ``None``).

    Exactly: the same keys in the same order, floats (not ints or booleans) for coordinates;
    pickle tells those apart where ``==`` does not (``1 == 1.0 == True``).
    """
    served = boundaries.tolist()
    try:
        polygons = pa.array(served, type=POLYGON)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    again = geojson(polygons, strict=False).tolist()
    exact = map(operator.eq, map(pickle.dumps, again), map(pickle.dumps, served))
    return polygons if all(exact) else None  # each alone: which objects are shared is no matter


def decode_shares(shares: Sequence[bytes | memoryview]) -> BodiesRead | None:
    """The shares of many bodies put back together, as :func:`read_for_keeping` read them.

    ``None`` when a share cannot be read (the caller reads the bodies instead).
    """
    stream = b"".join([_schema_message(), *shares, _END_OF_STREAM])
    try:
        table = pa.ipc.open_stream(stream).read_all().combine_chunks()
        if table.schema != _SCHEMA:
            return None
        columns = [
            column.chunk(0) if column.num_chunks else pa.array([], column.type)
            for column in table.columns
        ]
    except (pa.ArrowException, ValueError):
        return None
    struct, polygons = columns
    boundaries = geojson(polygons, strict=False)
    return BodiesRead(struct, boundaries, [])


@functools.cache
def _schema_message() -> bytes:
    return bytes(_SCHEMA.serialize())
