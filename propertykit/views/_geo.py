"""GeoDataFrames from property frames: points from lat/lng, boundaries in any readable form.

Points are built with :func:`geopandas.points_from_xy`; boundaries are read by
:func:`~propertykit.views._boundaries.read_boundaries` (every form seen in practice; unreadable
ones become missing geometries with one :class:`~propertykit.errors.GeometryWarning`).
Coordinates are x = longitude, y = latitude in EPSG:4326.
"""

from __future__ import annotations

from typing import Literal

import geopandas as gpd
import numpy as np
import pandas as pd
from pyproj import CRS

from propertykit.errors import InvalidInput
from propertykit.views._boundaries import WGS84, read_boundaries, warn_unread
from propertykit.views._columns import nested_as_json, nested_columns, require_columns

_GeometryKind = Literal["point", "boundary"]
_NestedPolicy = Literal["json", "keep", "drop"]


def to_geodataframe(
    df: pd.DataFrame,
    *,
    geometry: _GeometryKind = "point",
    lat: str = "spatial.lat",
    lng: str = "spatial.lng",
    boundary: str = "spatial.boundary",
    boundary_crs: str | CRS = WGS84,
    repair: bool = True,
    nested: _NestedPolicy = "json",
) -> gpd.GeoDataFrame:
    """Turn a property frame into a GeoDataFrame in EPSG:4326 (x = longitude, y = latitude).

    Parameters
    ----------
    df
        A property frame (``pk.frame(records)``) or any frame with the named columns.
    geometry
        ``"point"`` builds points from ``lng``/``lat``; ``"boundary"`` reads ``boundary`` with
        :func:`read_boundaries` (the raw column is then dropped: the geometry replaces it).
    lat, lng, boundary
        Column names.
    boundary_crs
        CRS the boundary coordinates are written in; transformed to EPSG:4326.
    repair
        Repair invalid polygons (see :func:`read_boundaries`).
    nested
        What to do with columns holding lists or dicts (``saleHistory``, raw boundaries), which
        GIS formats cannot store: ``"json"`` (default) turns them into JSON text so
        ``to_parquet`` and ``to_file(driver="GPKG")`` work, ``"keep"`` leaves them,
        ``"drop"`` removes them.

    Returns
    -------
    geopandas.GeoDataFrame
        Every row of ``df`` (same index and ``attrs``) with a ``geometry`` column; rows without
        a usable location have a missing geometry. Unreadable values give one
        :class:`GeometryWarning` that counts them.

    Examples
    --------
    >>> import pandas as pd
    >>> from propertykit.views import to_geodataframe
    >>> df = pd.DataFrame({"spatial.lat": [51.5, None], "spatial.lng": [-0.12, None]})
    >>> gdf = to_geodataframe(df)
    >>> float(gdf.geometry.x.iloc[0]), gdf.crs.to_epsg(), gdf.geometry.isna().tolist()
    (-0.12, 4326, [False, True])
    """
    if geometry == "point":
        require_columns(df, (lat, lng))
        geometries = _read_points(df[lng], df[lat])
        data = df
    elif geometry == "boundary":
        require_columns(df, (boundary,))
        geometries = read_boundaries(df[boundary], crs=boundary_crs, repair=repair).to_crs(WGS84)
        data = df.drop(columns=[boundary])
    else:
        raise InvalidInput(f'geometry must be "point" or "boundary", got {geometry!r}')
    data = _convert_nested(data, nested)
    gdf = gpd.GeoDataFrame(data, geometry=geometries.set_axis(df.index), crs=WGS84)
    gdf.attrs = dict(df.attrs)
    return gdf


# --- points ---------------------------------------------------------------------------------


def _read_points(lng: pd.Series, lat: pd.Series) -> gpd.GeoSeries:
    x = pd.to_numeric(lng, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    y = pd.to_numeric(lat, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    given = lng.notna().to_numpy() & lat.notna().to_numpy()
    usable = np.isfinite(x) & np.isfinite(y) & (np.abs(x) <= 180) & (np.abs(y) <= 90)
    points = gpd.points_from_xy(np.where(usable, x, 0.0), np.where(usable, y, 0.0))
    points[~usable] = None
    warn_unread(int((given & ~usable).sum()), 0, len(x), what="locations")
    return gpd.GeoSeries(points, index=lng.index, crs=WGS84)


# --- boundaries -----------------------------------------------------------------------------


# --- shared helpers -------------------------------------------------------------------------


def _convert_nested(df: pd.DataFrame, nested: _NestedPolicy) -> pd.DataFrame:
    if nested == "keep":
        return df
    if nested == "drop":
        return df.drop(columns=nested_columns(df))
    return nested_as_json(df)
