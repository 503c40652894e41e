"""Level of detail: what a map can show at its extent.

- Many features on a wide map: more than :data:`DETAIL_LIMIT` points or boundaries are drawn as
  one marker per outcode (or town, or grid cell), sized by count. Drawing 50,000 SVG shapes is
  what makes a big map slow, and at national scale each would be sub-pixel anyway.
- Small boundaries on a wide map: plots 10-30 m across are invisible at a 15 km extent, so a
  boundary map becomes up to four maps, one per cluster of plots, each zoomed until the median
  plot is at least :data:`MIN_PLOT_PX` pixels across.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import shapely

from propertykit.views import _figures as shared
from propertykit.views._context import KM_PER_DEGREE, PLOT_HEIGHT, PLOT_WIDTH, Extent, fit_extent

#: More features than this on one map are aggregated (``detail="auto"``).
DETAIL_LIMIT = 5_000
#: A boundary map zooms in until its median plot is at least this many pixels across.
MIN_PLOT_PX = 10.0
#: Columns to aggregate by, most detailed first.
AREA_COLUMNS = ("address.outcode", "address.town")  # the outcode is the postcode district


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


def boundary_windows(geometries: np.ndarray, *, most: int = 4) -> list[tuple[Extent, np.ndarray]]:
    """Where to draw boundaries: one map, or up to ``most`` maps, one per cluster of plots.

    Returns ``(extent, which boundaries it holds)`` per map. One extent fitted to every
    boundary when the median plot is visible there; otherwise windows small enough to show the
    median plot at :data:`MIN_PLOT_PX` in a 2 x 2 grid, each over the densest cluster of the
    plots not yet shown, until every plot is shown or there are ``most`` maps.
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
        return [(everything, np.ones(len(geometries), dtype=bool))]
    share = 0.5 if most > 1 else 1.0
    width_km = median_km * PLOT_WIDTH * share / MIN_PLOT_PX  # the widest window showing it
    half_lon = width_km / 2 / (KM_PER_DEGREE * everything.cos_lat)
    half_lat = width_km / 2 / KM_PER_DEGREE * PLOT_HEIGHT / PLOT_WIDTH
    left = np.ones(len(geometries), dtype=bool)
    windows: list[tuple[Extent, np.ndarray]] = []
    while left.any() and len(windows) < most:
        # the plot whose window holds the most plots not yet shown (sampled: at most 500 tries)
        candidates = np.flatnonzero(left)
        sample = candidates[
            np.linspace(0, len(candidates) - 1, min(len(candidates), 500)).astype(int)
        ]
        counts = [
            int(
                (
                    left
                    & (np.abs(centre_lon - centre_lon[i]) <= half_lon)
                    & (np.abs(centre_lat - centre_lat[i]) <= half_lat)
                ).sum()
            )
            for i in sample
        ]
        best = int(sample[int(np.argmax(counts))])
        near = (
            left
            & (np.abs(centre_lon - centre_lon[best]) <= half_lon)
            & (np.abs(centre_lat - centre_lat[best]) <= half_lat)
        )
        window = fit_extent(
            np.concatenate([bounds[near, 0], bounds[near, 2]]),
            np.concatenate([bounds[near, 1], bounds[near, 3]]),
            min_km=median_km * 8,
            share=share,
        )
        inside = window.contains(centre_lon, centre_lat)
        windows.append((window, inside & left))
        left &= ~inside
    if len(windows) == 1:  # one cluster after all: a single map at full size
        window, inside = windows[0]
        return [(Extent(window.west, window.south, window.east, window.north), inside)]
    return windows


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
