"""Frames bigger than memory: Parquet and GeoParquet datasets partitioned by outcode.

:func:`to_parquet` and :func:`to_geoparquet` write a folder of Parquet files in Hive layout
(``<folder>/address.outcode=SW1A/part-0.parquet``), one subfolder per value of the partition
column, so DuckDB, dask(-geopandas), pyarrow and Spark read only the outcodes a query needs::

    import dask.dataframe as dd                       # or dask_geopandas.read_parquet
    ddf = dd.read_parquet("portfolio/")               # lazily, partition by partition
    duckdb.sql("SELECT * FROM read_parquet('portfolio/**/*.parquet', hive_partitioning=true)")

Columns keep their types (categoricals, nullable ints, timestamps, ``saleHistory`` as a list of
structs). Values whose form the service does not fix (``spatial.boundary``) are written as JSON
text, so every file has the same schema. The GeoParquet files carry the ``geo`` metadata of
GeoParquet 1.0 (WKB geometry, CRS as PROJJSON, bounding box of the whole frame). Row order
across partitions is not kept. Money says its unit to every reader: pandas reads ``attrs`` back
(``money_unit``, ``currency``), and each money column's Arrow field carries ``unit``
(``pounds`` or ``pence``) and ``currency`` in its metadata, for DuckDB, Spark and pyarrow.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from propertykit.errors import InvalidInput
from propertykit.frames import UNIT_WORDS, money_columns_of, money_unit_of
from propertykit.views._columns import nested_as_json

if TYPE_CHECKING:
    import geopandas as gpd
    import pyarrow as pa

#: Column the datasets are partitioned by unless told otherwise.
DEFAULT_PARTITION = "address.outcode"

Existing = Literal["error", "replace_partitions", "append"]
_BEHAVIOUR = {"replace_partitions": "delete_matching", "append": "overwrite_or_ignore"}


def to_parquet(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    partition_by: str | list[str] | None = DEFAULT_PARTITION,
    existing: Existing = "error",
) -> Path:
    """Write a property frame as a Parquet dataset partitioned by ``partition_by``.

    Parameters
    ----------
    df
        A property frame (``client.properties(...)``) or any DataFrame.
    path
        The dataset's folder.
    partition_by
        Column(s) whose values name the subfolders; ``None`` writes one file.
    existing
        When the folder already holds files: ``"error"`` (default), ``"replace_partitions"``
        (the partitions written now replace the same ones; others stay) or ``"append"``.

    Returns
    -------
    pathlib.Path
        The folder.

    Examples
    --------
    >>> import tempfile, pandas as pd, pyarrow.dataset as ds
    >>> df = pd.DataFrame({"address.outcode": ["SW1A", "M1", "SW1A"], "price": [1, 2, 3]})
    >>> folder = to_parquet(df, tempfile.mkdtemp() + "/portfolio")
    >>> sorted(p.name for p in folder.iterdir())
    ['address.outcode=M1', 'address.outcode=SW1A']
    >>> ds.dataset(folder, partitioning="hive").to_table().num_rows
    3
    """
    table = _arrow_table(nested_as_json(df, dtype="string", arrow=False))
    return _write(table, Path(path), _columns(df, partition_by), existing)


def to_geoparquet(
    df: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    geometry: Literal["point", "boundary"] = "point",
    partition_by: str | list[str] | None = DEFAULT_PARTITION,
    existing: Existing = "error",
) -> Path:
    """Write a GeoParquet dataset partitioned by ``partition_by`` (see :func:`to_parquet`).

    Parameters
    ----------
    df
        A GeoDataFrame, or a property frame turned into one with
        :func:`propertykit.views._geo.to_geodataframe` (``geometry`` says which).
    path, partition_by, existing
        As for :func:`to_parquet`.
    geometry
        For a property frame: ``"point"`` (from lat/lng) or ``"boundary"``.

    Returns
    -------
    pathlib.Path
        The folder; ``geopandas.read_parquet(folder)`` or ``dask_geopandas.read_parquet``
        read it back.

    Examples
    --------
    >>> import tempfile, geopandas as gpd, pandas as pd
    >>> df = pd.DataFrame({"address.outcode": ["SW1A", "M1"],
    ...                    "spatial.lat": [51.5, 53.48], "spatial.lng": [-0.14, -2.24]})
    >>> folder = to_geoparquet(df, tempfile.mkdtemp() + "/map")
    >>> gpd.read_parquet(folder).crs.to_epsg()
    4326
    """
    import geopandas as gpd
    import pyarrow as pa
    import shapely

    if not isinstance(df, gpd.GeoDataFrame):
        from propertykit.views._geo import to_geodataframe

        df = to_geodataframe(df, geometry=geometry)
    gdf: gpd.GeoDataFrame = df
    name = gdf.geometry.name
    table = _arrow_table(
        nested_as_json(pd.DataFrame(gdf.drop(columns=name)), dtype="string", arrow=False)
    )
    wkb = pa.array(shapely.to_wkb(gdf.geometry.array), type=pa.binary())
    table = table.append_column(name, wkb)
    metadata = dict(table.schema.metadata or {})
    metadata[b"geo"] = json.dumps(_geo_metadata(gdf)).encode()
    table = table.replace_schema_metadata(metadata)
    return _write(table, Path(path), _columns(gdf, partition_by), existing)


def _columns(df: pd.DataFrame, partition_by: str | list[str] | None) -> list[str]:
    columns = [partition_by] if isinstance(partition_by, str) else list(partition_by or [])
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InvalidInput(f"Cannot partition by {missing}: the frame has no such column")
    return columns


def _arrow_table(df: pd.DataFrame) -> pa.Table:
    """The frame as Arrow, with pandas metadata every reader's ``to_pandas`` understands.

    pandas records an Arrow-backed nested column's dtype as e.g. ``list<item: struct<...>>
    [pyarrow]``, which ``to_pandas`` (so ``pd.read_parquet`` and dask) cannot parse back; such
    columns are recorded as ``object`` (lists of dicts), the classic form.
    """
    import pyarrow as pa

    table = pa.Table.from_pandas(df, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    if b"pandas" in metadata:
        described = json.loads(metadata[b"pandas"])
        for column in described.get("columns", []):
            if _unreadable_dtype(column.get("numpy_type")):
                column["numpy_type"] = "object"
        metadata[b"pandas"] = json.dumps(described).encode()
        table = table.replace_schema_metadata(metadata)
    return _money_fields_said(table, df)


def _money_fields_said(table: pa.Table, df: pd.DataFrame) -> pa.Table:
    """``table`` with each money column's field saying its unit and currency (readers other
    than pandas do not read ``attrs``)."""
    import pyarrow as pa

    unit, money = money_unit_of(df), set(money_columns_of(df))
    if unit is None or not money:
        return table
    said = {
        b"unit": UNIT_WORDS[unit].encode(),
        b"currency": str(df.attrs.get("currency") or "").encode(),
    }
    fields = [f.with_metadata(said) if f.name in money else f for f in table.schema]
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


def _unreadable_dtype(name: Any) -> bool:
    if not isinstance(name, str) or not name.endswith("[pyarrow]"):
        return False
    try:
        pd.api.types.pandas_dtype(name)
    except TypeError:
        return True
    return False


def _geo_metadata(gdf: gpd.GeoDataFrame) -> dict[str, Any]:
    """The ``geo`` key of GeoParquet 1.0 for the frame's geometry column."""
    geometries = gdf.geometry
    present = geometries[~(geometries.isna() | geometries.is_empty)]
    column: dict[str, Any] = {
        "encoding": "WKB",
        "geometry_types": sorted(set(present.geom_type)),
    }
    if gdf.crs is not None:
        column["crs"] = gdf.crs.to_json_dict()
    if len(present):
        column["bbox"] = [float(v) for v in present.total_bounds]
    return {
        "version": "1.0.0",
        "primary_column": geometries.name,
        "columns": {geometries.name: column},
    }


def _write(table: pa.Table, folder: Path, partition_by: list[str], existing: Existing) -> Path:
    import pyarrow.dataset as ds

    if existing not in ("error", *_BEHAVIOUR):
        raise InvalidInput(
            f'existing must be "error", "replace_partitions" or "append", got {existing!r}'
        )
    if existing == "error" and folder.exists() and any(folder.iterdir()):
        raise InvalidInput(
            f"{folder} already holds files; pass existing='replace_partitions' or 'append'"
        )
    ds.write_dataset(
        table,
        folder,
        format="parquet",
        partitioning=partition_by or None,
        partitioning_flavor="hive" if partition_by else None,
        basename_template=f"part-{uuid.uuid4().hex[:8]}-{{i}}.parquet"
        if existing == "append"
        else "part-{i}.parquet",
        existing_data_behavior=_BEHAVIOUR.get(existing, "overwrite_or_ignore"),
    )
    return folder
