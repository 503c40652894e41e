"""Bodies Arrow refuses, sifted a record at a time: the records it would read, and the others.

Arrow's JSON reader refuses a whole run of bodies for one value of the wrong kind. :func:`sift`
finds each record of such a run as raw JSON (``msgspec.Raw``: found, not decoded) and checks it
against the kinds :data:`RECORD_TYPE` declares (text, number, true/false, and objects and lists
of them: ``msgspec`` decodes it into a mirror of that type, fields it does not name skipped).
The records that pass are read by Arrow together; only the others are decoded, for the records'
route. A record can pass and still be refused by Arrow (a boundary that is not a plain Polygon,
a field it does not name of two kinds): the caller then decodes the run whole.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pyarrow as pa

from propertykit.frames._schema import RECORD_TYPE

_KINDS = {pa.string(): str, pa.float64(): float, pa.bool_(): bool}


@dataclass
class Sifted:
    """A run's records: raw JSON of those that passed, the others decoded, and their places."""

    passed: list[msgspec.Raw] = field(default_factory=list)
    passed_at: list[int] = field(default_factory=list)  # places among the run's records
    others: list[dict[str, Any]] = field(default_factory=list)
    others_at: list[int] = field(default_factory=list)
    envelopes: list[dict[str, Any]] = field(default_factory=list)  # asked fields, result's length
    left_out: list[Any] = field(default_factory=list)  # items that are not records


def sift(run: Sequence[bytes], asked: Sequence[str]) -> Sifted | None:
    """``run`` sifted, with the envelope fields ``asked``; ``None`` when a body is not an
    envelope holding a list that ``msgspec`` reads (other shapes, NaN): decode it whole."""
    envelope_of = _envelope(tuple(asked))
    found = Sifted()
    try:
        for body in run:
            envelope = envelope_of(body)
            items = envelope.result
            if items is None:
                return None
            values = [getattr(envelope, f"f{i}") for i in range(len(asked))]
            seen = {n: v for n, v in zip(asked, values, strict=True) if v is not msgspec.UNSET}
            found.envelopes.append(seen | {"result": len(items)})
            for item in items:
                at = len(found.passed) + len(found.others)
                try:
                    _CHECK(item)
                except msgspec.ValidationError:
                    value = msgspec.json.decode(item)
                    if type(value) is dict:
                        found.others.append(value)
                        found.others_at.append(at)
                    else:  # null, text, a list...: not a record
                        found.left_out.append(value)
                    continue
                found.passed.append(item)
                found.passed_at.append(at)
    except msgspec.DecodeError:  # not an envelope, or not JSON msgspec reads
        return None
    return found


@functools.cache
def _envelope(asked: tuple[str, ...]) -> Any:
    """Decodes a body's ``result`` into its records' raw JSON, and the ``asked`` fields (as
    attributes ``f0``, ``f1``, ..., ``UNSET`` where absent)."""
    fields: list[tuple[str, Any, Any]] = [("result", list[msgspec.Raw] | None, None)]
    fields += [(f"f{i}", Any, msgspec.UNSET) for i in range(len(asked))]
    rename = {f"f{i}": name for i, name in enumerate(asked)}
    return msgspec.json.Decoder(msgspec.defstruct("Envelope", fields, rename=rename)).decode


def _mirror(kind: pa.DataType, name: str) -> Any:
    """The ``msgspec`` type of values of Arrow's ``kind`` (each may be null)."""
    if isinstance(kind, pa.StructType):
        fields = [(f.name, _mirror(f.type, f"{name}_{f.name}") | None, None) for f in kind]
        return msgspec.defstruct(name, fields, gc=False)
    if isinstance(kind, pa.ListType):
        return list[_mirror(kind.value_type, name) | None]  # type: ignore[misc]
    return _KINDS[kind]


#: Decodes a record into a mirror of :data:`RECORD_TYPE`, or raises ``msgspec.ValidationError``.
_CHECK = msgspec.json.Decoder(_mirror(RECORD_TYPE, "Record")).decode
