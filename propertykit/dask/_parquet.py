"""Partitioned (Geo)Parquet datasets written by the workers, read back by Dask, DuckDB, Spark.

Each partition is written by the worker that holds it, with
:func:`propertykit.views.to_parquet` / :func:`propertykit.views.to_geoparquet` (Hive layout,
``<folder>/address.outcode=SW1A/part-<uuid>-0.parquet``, one schema for every file: values of
unfixed form such as ``spatial.boundary`` as JSON text, GeoParquet 1.0 metadata), so nothing is
gathered on the driver. Read back with ``dd.read_parquet(folder)``,
``dask_geopandas.read_parquet(folder)``, DuckDB's
``read_parquet('folder/**/*.parquet', hive_partitioning=true)`` or Spark's
``spark.read.parquet(folder)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import dask.dataframe as dd
import pandas as pd

from propertykit.errors import InvalidInput

#: Column the datasets are partitioned by unless told otherwise (as for the pandas writers).
DEFAULT_PARTITION = "address.outcode"


def to_parquet(
    ddf: dd.DataFrame,
    path: str | os.PathLike[str],
    *,
    partition_by: str | list[str] | None = DEFAULT_PARTITION,
) -> Path:
    """Write a Dask property frame as a Parquet dataset partitioned by ``partition_by``.

    The folder must be empty or new, and a path every worker reaches (not a URL). Returns it.

    Examples
    --------
    >>> import dask.dataframe as dd, propertykit.dask as pkd
    >>> ddf = pkd.properties(sb.location_ids[:100], client=client, partition_size=50)
    >>> folder = pkd.to_parquet(ddf, "portfolio")
    >>> len(dd.read_parquet(folder))
    100
    """
    return _write(ddf, path, _write_parquet, {"partition_by": partition_by})


def to_geoparquet(
    ddf: dd.DataFrame,
    path: str | os.PathLike[str],
    *,
    geometry: Literal["point", "boundary"] = "point",
    partition_by: str | list[str] | None = DEFAULT_PARTITION,
) -> Path:
    """Write a GeoParquet dataset (points or boundaries, EPSG:4326) partitioned by
    ``partition_by``; ``dask_geopandas.read_parquet(folder)`` reads it back.

    Examples
    --------
    >>> import dask_geopandas, propertykit.dask as pkd
    >>> ddf = pkd.properties(sb.location_ids[:100], client=client, partition_size=50)
    >>> folder = pkd.to_geoparquet(ddf, "map", partition_by=None)  # one file per partition
    >>> dask_geopandas.read_parquet(folder).crs.to_epsg()
    4326
    """
    options = {"partition_by": partition_by, "geometry": geometry}
    return _write(ddf, path, _write_geoparquet, options)


def _write(
    ddf: dd.DataFrame, path: str | os.PathLike[str], write: Any, options: dict[str, Any]
) -> Path:
    if not isinstance(ddf, dd.DataFrame):
        raise InvalidInput(f"Expected a Dask DataFrame, got {type(ddf).__name__}")
    if "://" in os.fspath(path):
        # Path("s3://bucket/x") is the local folder "s3:/bucket/x" on every worker.
        raise InvalidInput(
            f"{os.fspath(path)!r} is a URL; write to a folder path every worker reaches "
            "(a shared disk), then copy it to object storage"
        )
    folder = Path(path)
    if folder.exists() and any(folder.iterdir()):
        raise InvalidInput(f"{folder} already holds files; write to a new or empty folder")
    partition_by = options["partition_by"]
    columns = [partition_by] if isinstance(partition_by, str) else list(partition_by or [])
    missing = [c for c in columns if c not in ddf.columns]
    if missing:
        raise InvalidInput(f"Cannot partition by {missing}: the frame has no such column")
    folder.mkdir(parents=True, exist_ok=True)
    target = str(folder.resolve())
    meta = pd.Series([], dtype="int64")
    written = ddf.map_partitions(write, target, options, meta=meta)  # type: ignore[no-untyped-call]
    written.compute()
    return folder


def _write_parquet(part: pd.DataFrame, folder: str, options: dict[str, Any]) -> pd.Series:
    from propertykit.views import to_parquet

    if len(part):
        to_parquet(part, folder, partition_by=options["partition_by"], existing="append")
    return pd.Series([len(part)], dtype="int64")


def _write_geoparquet(part: pd.DataFrame, folder: str, options: dict[str, Any]) -> pd.Series:
    from propertykit.views import to_geoparquet

    if len(part):
        to_geoparquet(
            part,
            folder,
            geometry=options["geometry"],
            partition_by=options["partition_by"],
            existing="append",
        )
    return pd.Series([len(part)], dtype="int64")
