"""Level of detail: what a map can show at its extent.

- Many features on a wide map: more than :data:`DETAIL_LIMIT` points or boundaries are drawn as
  one marker per outcode (or town, or grid cell), sized by count. Drawing 50,000 SVG shapes is
  what makes a big map slow, and at national scale each would be sub-pixel anyway.
- Small boundaries on a wide map: plots 10-30 m across are invisible at a 15 km extent, so a
  boundary map zooms to the window, holding the most plots, in which the median plot is at least
  :data:`MIN_PLOT_PX` pixels across.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import shapely

from propertykit.views import figures as shared
from propertykit.views.context import KM_PER_DEGREE, PLOT_WIDTH, Extent, fit_extent

__all__ = ["DETAIL_LIMIT", "MIN_PLOT_PX", "aggregate", "boundary_window"]

#: More features than this on one map are aggregated (``detail="auto"``).
DETAIL_LIMIT = 5_000
#: A boundary map zooms in until its median plot is at least this many pixels across.
MIN_PLOT_PX = 10.0
#: Columns to aggregate by, most detailed first.
AREA_COLUMNS = ("address.outcode", "address.postcodeDistrict", "address.town")


def aggregate(
    df: pd.DataFrame, lon: np.ndarray, lat: np.ndarray, color: str | None
) -> pd.DataFrame:
    """One row per area: ``area``, median ``lon``/``lat``, ``count`` and the coloured ``value``
    (the median of a number, the most common category)."""
    key = _area_key(df, lon, lat)
    frame = pd.DataFrame({"area": key, "lon": lon, "lat": lat}, index=df.index)
    if color is not None:
        frame["value"] = df[color]
    grouped = frame.groupby("area", sort=True, observed=True)
    out = grouped.agg(lon=("lon", "median"), lat=("lat", "median"), count=("lon", "size"))
    if color is not None:
        values = df[color]
        if shared.is_numeric(values):
            out["value"] = grouped["value"].median()
        else:
            out["value"] = grouped["value"].agg(_mode)
            if isinstance(values.dtype, pd.CategoricalDtype):
                out["value"] = pd.Categorical(out["value"], categories=values.cat.categories)
    return out.reset_index()


def boundary_window(geometries: np.ndarray) -> tuple[Extent, int]:
    """The extent to draw boundaries at, and how many boundaries it holds.

    The extent fitted to every boundary if the median plot is visible there; otherwise the
    window of the smallest scale that shows the median plot at :data:`MIN_PLOT_PX`, placed over
    the densest cluster of plots.
    """
    bounds = shapely.bounds(geometries)
    centre_lon = (bounds[:, 0] + bounds[:, 2]) / 2
    centre_lat = (bounds[:, 1] + bounds[:, 3]) / 2
    everything = fit_extent(bounds[:, [0, 2]].ravel(), bounds[:, [1, 3]].ravel())
    size_km = np.maximum(
        (bounds[:, 2] - bounds[:, 0]) * KM_PER_DEGREE * everything.cos_lat,
        (bounds[:, 3] - bounds[:, 1]) * KM_PER_DEGREE,
    )
    median_km = float(np.median(size_km))
    if median_km * everything.px_per_km >= MIN_PLOT_PX:
        return everything, len(geometries)
    width_km = median_km * PLOT_WIDTH / MIN_PLOT_PX  # the widest window that still shows it
    half_lon = width_km / 2 / (KM_PER_DEGREE * everything.cos_lat)
    half_lat = half_lon * everything.cos_lat * 0.8
    # the plot whose window holds the most other plots (sampled: O(n * 500) at most)
    sample = np.linspace(0, len(geometries) - 1, min(len(geometries), 500)).astype(int)
    counts = [
        int(
            (
                (np.abs(centre_lon - centre_lon[i]) <= half_lon)
                & (np.abs(centre_lat - centre_lat[i]) <= half_lat)
            ).sum()
        )
        for i in sample
    ]
    best = int(sample[int(np.argmax(counts))])
    inside = (np.abs(centre_lon - centre_lon[best]) <= half_lon) & (
        np.abs(centre_lat - centre_lat[best]) <= half_lat
    )
    window = fit_extent(
        np.concatenate([bounds[inside, 0], bounds[inside, 2]]),
        np.concatenate([bounds[inside, 1], bounds[inside, 3]]),
        min_km=median_km * 8,
    )
    return window, int(window.contains(centre_lon, centre_lat).sum())


def _area_key(df: pd.DataFrame, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    for column in AREA_COLUMNS:
        if column in df.columns and df[column].notna().any():
            key: np.ndarray = (
                df[column].astype("object").fillna("(no postcode)").astype(str).to_numpy()
            )
            return key
    # no area column: a grid of cells about 2 km across
    cell = 2 / KM_PER_DEGREE
    row = np.floor(lat / cell).astype(int)
    col = np.floor(lon * math.cos(math.radians(float(np.nanmedian(lat)))) / cell).astype(int)
    return np.char.add(np.char.add(row.astype(str), ":"), col.astype(str))


def _mode(values: pd.Series) -> object:
    counts = values.dropna().astype("object").value_counts()
    return counts.index[0] if len(counts) else None
