"""Fields the interface does not name, on Dask: carried in one column of JSON text.

A pandas frame keeps each such field as a column of its own (``df.attrs["extra_columns"]``).
A Dask frame's columns are fixed before any partition is fetched, and Dask assumes every
partition has them (its ``concat`` keeps the columns of the first partition); so each partition
packs the fields ``meta`` does not name into :data:`EXTRA_FIELDS`: per row, a JSON object
whose ``"fields"`` are those fields as the service nests them
(``{"fields": {"lastSale": {"price": 250000}}}``), missing where there are none. A sale's own
fields leave ``saleHistory`` (its type is ``meta``'s) for ``"saleHistory": [{"buyerType":
"investor"}, ...]`` among the fields, an object per sale. Dask does not keep a
partition's ``attrs``, so the values left unparsed (``df.pk.unparsed()``) go along too, under
``"unparsed"`` on their property's row: ``[propertyId, column, value as served]`` each.
:func:`unpack_extra_fields` turns a computed frame back into the frame ``client.properties``
gives, each field typed as :func:`propertykit.frames.frame` types it.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa

from propertykit.frames import frame
from propertykit.jsonio import paused_gc

#: The column of a Dask frame holding each row's fields the interface does not name.
EXTRA_FIELDS = "extra_fields"

_ENCODER = msgspec.json.Encoder()


def with_extra_fields_column(meta: pd.DataFrame) -> pd.DataFrame:
    """``meta`` (an empty frame) with an empty :data:`EXTRA_FIELDS` column of text."""
    meta = meta.copy()
    meta[EXTRA_FIELDS] = pd.Series([], dtype=meta["propertyId"].dtype, index=meta.index)
    return meta


def packed(df: pd.DataFrame, meta: pd.DataFrame) -> pd.DataFrame:
    """``df`` with exactly the columns of ``meta``: its other fields (and a sale's own) packed
    into :data:`EXTRA_FIELDS`."""
    named = [name for name in meta.columns if name != EXTRA_FIELDS]
    fragments: list[dict[str, Any]] = [{} for _ in range(len(df))]
    for name in (n for n in df.columns if n not in named and n != EXTRA_FIELDS):
        path = name.split(".")
        for row, value in enumerate(_values(df[name])):
            if value is not None:
                _put(fragments[row], path, value)
    result = df[named]
    if "saleHistory" in named:
        result["saleHistory"] = _sales_cut(df["saleHistory"], meta["saleHistory"].dtype, fragments)
    rows = {id_: row for row, id_ in enumerate(df["propertyId"])}
    unparsed: dict[int, list[list[Any]]] = {}
    for id_, name, value in df.attrs.get("unparsed", ()):  # on its property's row
        unparsed.setdefault(rows.get(id_, 0), []).append([id_, name, value])
    texts: list[str | None] = []
    for row, fields in enumerate(fragments):
        pack: dict[str, Any] = {"fields": fields} if fields else {}
        if row in unparsed:
            pack["unparsed"] = unparsed[row]
        texts.append(_ENCODER.encode(pack).decode() if pack else None)
    result[EXTRA_FIELDS] = pd.Series(texts, index=df.index, dtype=meta[EXTRA_FIELDS].dtype)
    return result


def unpack_extra_fields(df: pd.DataFrame) -> pd.DataFrame:
    """A computed Dask frame (properties, or ``ddf.pk.sales()``) as pandas gives it: the fields
    packed in :data:`EXTRA_FIELDS` as columns after the named ones (``attrs["extra_columns"]``),
    a sale's own back in ``saleHistory``.

    Examples
    --------
    >>> import propertykit.dask as pkd
    >>> df = pkd.unpack_extra_fields(pkd.properties(sb.location_ids[:50], client=client).compute())
    >>> df.attrs["extra_columns"]  # the sandbox sends only the fields the interface names
    ()
    """
    if EXTRA_FIELDS not in df.columns:
        return df
    decode = msgspec.json.Decoder().decode
    ids = df["propertyId"].tolist()  # by its id, a value left unparsed in framing them is listed
    with paused_gc():  # many small dicts, no cycles (see propertykit.jsonio)
        packs = [decode(text) if isinstance(text, str) else {} for text in df[EXTRA_FIELDS]]
        framed = [row for row, pack in enumerate(packs) if "fields" in pack]  # rows with some
        fragments = [{"propertyId": ids[row], **packs[row]["fields"]} for row in framed]
    unpacked = frame(fragments, money_unit=df.attrs.get("money_unit", "major"))
    places = np.full(len(df), -1)
    places[framed] = np.arange(len(framed))
    rows = pa.array(places, mask=places < 0)  # each row's place among those framed, or null
    extra = list(unpacked.attrs["extra_columns"])
    result = df.drop(columns=EXTRA_FIELDS)
    for name in extra:
        result[name] = pd.arrays.ArrowExtensionArray(pa.array(unpacked[name].array).take(rows))
    if "saleHistory" in result.columns:
        own = _lists(unpacked["saleHistory"]).take(rows)
        result["saleHistory"] = _sales_joined(result["saleHistory"], own)
    result.attrs = {k: v for k, v in df.attrs.items() if k != "unparsed"}
    result.attrs["extra_columns"] = tuple(extra)
    carried = [tuple(entry) for pack in packs for entry in pack.get("unparsed", ())]
    if carried or "unparsed" in unpacked.attrs:
        result.attrs["unparsed"] = (*carried, *unpacked.attrs.get("unparsed", ()))
    return result


def _values(column: pd.Series) -> list[Any]:
    """The column's values (Arrow typed, as every field the interface does not name) as Python
    objects, ``None`` where missing."""
    values: list[Any] = pa.array(column.array).to_pylist()
    return values


def _put(fragment: dict[str, Any], path: list[str], value: Any) -> None:
    for name in path[:-1]:
        fragment = fragment.setdefault(name, {})
    fragment[path[-1]] = value


def _lists(column: pd.Series) -> pa.ListArray:
    lists = pa.array(column.array)
    return lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists


def _sales_cut(
    column: pd.Series, named: pd.ArrowDtype, fragments: list[dict[str, Any]]
) -> pd.arrays.ArrowExtensionArray:
    """``saleHistory`` of the type ``named``; a sale's own fields into its row's fragment."""
    lists = _lists(column)
    if lists.type == named.pyarrow_dtype:
        return column.array
    keep = set(named.pyarrow_dtype.value_type.names)
    for row, sales in enumerate(lists.to_pylist()):
        own = [
            {k: v for k, v in (sale or {}).items() if k not in keep and v is not None}
            for sale in sales or ()
        ]
        if any(own):
            fragments[row]["saleHistory"] = own
    return pd.arrays.ArrowExtensionArray(lists.cast(named.pyarrow_dtype))


def _sales_joined(column: pd.Series, own_lists: pa.ListArray) -> pd.api.extensions.ExtensionArray:
    """``saleHistory`` with each sale's own fields (from ``own_lists``, the unpacked fields'
    histories, row by row) added to its named ones."""
    lists = _lists(column)
    named = set(lists.type.value_type.names)
    own_fields = [f for f in own_lists.type.value_type if f.name not in named]
    if not own_fields:
        return column.array
    lengths = lists.value_lengths().fill_null(0).to_numpy()
    own_lengths = own_lists.value_lengths().fill_null(0).to_numpy()
    own_starts = own_lists.offsets.to_numpy()[:-1]
    taken: list[int | None] = []  # per sale, its place among the unpacked sales (None: none)
    for length, own_length, start in zip(lengths, own_lengths, own_starts, strict=True):
        found = own_length == length
        taken.extend(start + i if found else None for i in range(length))
    own_values = own_lists.values
    sales = lists.flatten()
    children = [sales.field(i) for i in range(sales.type.num_fields)]
    children += [own_values.field(f.name).take(pa.array(taken, pa.int64())) for f in own_fields]
    joined = pa.StructArray.from_arrays(
        children,
        fields=[*sales.type, *own_fields],
        mask=sales.is_null() if sales.null_count else None,
    )
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    mask = lists.is_null() if lists.null_count else None
    return pd.arrays.ArrowExtensionArray(pa.ListArray.from_arrays(offsets, joined, mask=mask))
