"""``ddf.pk`` on Dask DataFrames: the same tables and GeoDataFrames, partition by partition.

Registered when :mod:`propertykit.dask` is imported. Each method maps the pandas function of
``df.pk`` over the partitions, with the ``meta`` that function gives for an empty property frame.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import dask
import dask.dataframe as dd
import pandas as pd

from propertykit import views
from propertykit.dask._extra_fields import packed, unpack_extra_fields, with_extra_fields_column
from propertykit.frames import epc_table, explode_sales, frame

if TYPE_CHECKING:
    import dask_geopandas


@dd.extensions.register_dataframe_accessor("pk")  # type: ignore[no-untyped-call]
class DaskPropertyAccessor:
    """``ddf.pk``: ``sales()``, ``epc()``, ``to_geodataframe()``, ``to_parquet()``,
    ``to_geoparquet()`` on a Dask DataFrame from :func:`propertykit.dask.properties`.

    Examples
    --------
    >>> import propertykit.dask as pkd
    >>> ddf = pkd.properties(sb.location_ids[:100], client=client, partition_size=50)
    >>> len(ddf.pk.sales().compute()) > 100
    True
    """

    def __init__(self, ddf: dd.DataFrame) -> None:
        self._ddf = ddf

    def sales(self) -> dd.DataFrame:
        """One row per sale (:func:`propertykit.frames.explode_sales` on each partition); a
        sale's own fields in its ``extra_fields``."""
        sales: dd.DataFrame = self._map(_sales_of)
        return sales

    def epc(self, *, today: date | datetime | str | None = None) -> dd.DataFrame:
        """One row per property of EPC data (:func:`propertykit.frames.epc_table`).

        ``today`` (for validity) is fixed when the graph is built, so every partition agrees.
        """
        fixed = today if today is not None else datetime.now(UTC).date()
        table: dd.DataFrame = self._map(epc_table, today=fixed)
        return table

    def to_geodataframe(
        self, geometry: Literal["point", "boundary"] = "point", **kwargs: Any
    ) -> dask_geopandas.GeoDataFrame:
        """Points or boundaries in EPSG:4326, as a ``dask_geopandas.GeoDataFrame``.

        Examples
        --------
        >>> import propertykit.dask as pkd
        >>> ddf = pkd.properties(sb.location_ids[:100], client=client, partition_size=50)
        >>> gddf = ddf.pk.to_geodataframe()
        >>> type(gddf).__module__.split(".")[0], gddf.crs.to_epsg()
        ('dask_geopandas', 4326)
        """
        import dask_geopandas  # noqa: F401  (makes GeoDataFrame partitions a dask-geopandas frame)

        from propertykit.views import to_geodataframe

        result: dask_geopandas.GeoDataFrame = self._map(
            to_geodataframe, geometry=geometry, **kwargs
        )
        return result

    def to_parquet(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        """A partitioned Parquet dataset (see :func:`propertykit.dask.to_parquet`)."""
        from propertykit.dask._parquet import to_parquet

        return to_parquet(self._ddf, path, **kwargs)

    def to_geoparquet(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        """A partitioned GeoParquet dataset (see :func:`propertykit.dask.to_geoparquet`)."""
        from propertykit.dask._parquet import to_geoparquet

        return to_geoparquet(self._ddf, path, **kwargs)

    def _map(self, function: Any, **kwargs: Any) -> Any:
        meta = function(self._ddf._meta, **kwargs)
        with dask.config.set({"dataframe.convert-string": False}):
            return self._ddf.map_partitions(function, meta=meta, **kwargs)  # type: ignore[no-untyped-call]


def _sales_of(part: pd.DataFrame) -> pd.DataFrame:
    sales = explode_sales(unpack_extra_fields(part))
    return packed(sales, with_extra_fields_column(explode_sales(frame([]))))


_ = views  # importing views registers df.pk on the pandas partitions
