"""What lets a reader place a map: a north-up extent fitted to the data, place labels that never
overlap, and a kilometre scale bar.

Maps are drawn on ordinary x/y axes (x = longitude, y = latitude) with the y axis scaled by
``1 / cos(latitude)`` against x, so a kilometre is as long east-west as north-south at the map's
centre (an equirectangular projection, exact enough for Britain at any report scale). Label
boxes are estimated in pixels from the figure's plot size and the extent, so the decluttering
can be done here in Python, before the browser draws anything.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "PLOT_HEIGHT",
    "PLOT_WIDTH",
    "Extent",
    "Label",
    "fit_extent",
    "place_labels",
    "scale_bar",
]

#: The plot area a map is laid out for, in CSS pixels (the report's map cards are this size).
PLOT_WIDTH, PLOT_HEIGHT = 900, 500
KM_PER_DEGREE = 111.32
#: Label font size and the estimated width of one character at that size, in pixels.
LABEL_FONT, CHAR_WIDTH, LABEL_HEIGHT = 12, 7.6, 20.0
#: A label sits this many pixels above its place, so it does not hide the data there.
LABEL_LIFT = 6


@dataclass(frozen=True)
class Extent:
    """A lon/lat box: what a map shows."""

    west: float
    south: float
    east: float
    north: float
    #: the share of the plot area's width and height the map gets (0.5 in a 2 x 2 grid)
    share: float = 1.0

    @property
    def cos_lat(self) -> float:
        return math.cos(math.radians((self.south + self.north) / 2))

    @property
    def width_km(self) -> float:
        return (self.east - self.west) * KM_PER_DEGREE * self.cos_lat

    @property
    def height_km(self) -> float:
        return (self.north - self.south) * KM_PER_DEGREE

    @property
    def px_per_km(self) -> float:
        """Pixels per kilometre when the map fills as much of the plot area as it can."""
        return min(
            PLOT_WIDTH * self.share / self.width_km, PLOT_HEIGHT * self.share / self.height_km
        )

    def contains(self, lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
        inside: np.ndarray = (
            (lon >= self.west) & (lon <= self.east) & (lat >= self.south) & (lat <= self.north)
        )
        return inside


def fit_extent(
    lon: np.ndarray, lat: np.ndarray, *, pad: float = 0.08, min_km: float = 1.0, share: float = 1.0
) -> Extent:
    """The data's bounding box, padded on every side, at least ``min_km`` across, and widened
    to the plot area's shape so no side is wasted."""
    west, east = float(np.nanmin(lon)), float(np.nanmax(lon))
    south, north = float(np.nanmin(lat)), float(np.nanmax(lat))
    cos_lat = math.cos(math.radians((south + north) / 2))
    width = max((east - west) * cos_lat, min_km / KM_PER_DEGREE)  # in degrees of latitude
    height = max(north - south, min_km / KM_PER_DEGREE)
    width, height = width * (1 + 2 * pad), height * (1 + 2 * pad)
    aspect = PLOT_WIDTH / PLOT_HEIGHT
    if width / height < aspect:
        width = height * aspect
    else:
        height = width / aspect
    x, y = (west + east) / 2, (south + north) / 2
    half_lon = width / cos_lat / 2
    return Extent(x - half_lon, y - height / 2, x + half_lon, y + height / 2, share)


@dataclass(frozen=True)
class Label:
    """A place name to write on the map, just above ``lon``/``lat``."""

    text: str
    lon: float
    lat: float
    count: int


def place_labels(
    df: pd.DataFrame,
    lon: np.ndarray,
    lat: np.ndarray,
    extent: Extent,
    *,
    limit: int = 14,
) -> list[Label]:
    """Place names from the data, most properties first, none overlapping another.

    Towns when the map spans more than ~40 km, else localities (or local authorities); each is
    written at the median position of its properties. A label is dropped when its estimated box
    would overlap one already placed or leave the map.
    """
    column = _label_column(df, extent)
    if column is None:
        return []
    names = df[column].astype("object").to_numpy()
    frame = pd.DataFrame({"name": names, "lon": lon, "lat": lat}).dropna()
    frame = frame[extent.contains(frame["lon"].to_numpy(), frame["lat"].to_numpy())]
    if frame.empty:
        return []
    grouped = frame.groupby("name").agg(
        lon=("lon", "median"), lat=("lat", "median"), count=("lon", "size")
    )
    grouped = grouped.sort_values("count", ascending=False, kind="stable")
    scale = extent.px_per_km
    placed: list[tuple[float, float, float, float]] = []  # boxes in pixels from the south-west
    labels: list[Label] = []
    frame_w, frame_h = extent.width_km * scale, extent.height_km * scale
    for name, row in grouped.iterrows():
        text = str(name)
        x = (row["lon"] - extent.west) * KM_PER_DEGREE * extent.cos_lat * scale
        y = (row["lat"] - extent.south) * KM_PER_DEGREE * scale
        half_w = (len(text) * CHAR_WIDTH + 10) / 2
        box = (x - half_w, y + LABEL_LIFT, x + half_w, y + LABEL_LIFT + LABEL_HEIGHT)
        if box[0] < 0 or box[1] < 0 or box[2] > frame_w or box[3] > frame_h:
            continue
        if any(_overlap(box, other) for other in placed):
            continue
        placed.append(box)
        labels.append(Label(text, float(row["lon"]), float(row["lat"]), int(row["count"])))
        if len(labels) >= limit:
            break
    return labels


def scale_bar(extent: Extent) -> tuple[float, float, float, str]:
    """A scale bar of a round length about a fifth of the map's width.

    Returns ``(x0, x1, y, text)``: longitudes of its ends, its latitude (near the south-west
    corner) and its caption.
    """
    target = extent.width_km / 5
    length = _round_length(target)
    degrees = length / (KM_PER_DEGREE * extent.cos_lat)
    x0 = extent.west + (extent.east - extent.west) * 0.04
    y = extent.south + (extent.north - extent.south) * 0.06
    text = f"{length:g} km" if length >= 1 else f"{length * 1000:g} m"
    return x0, x0 + degrees, y, text


def _round_length(km: float) -> float:
    exponent = math.floor(math.log10(km))
    for step in (5, 2, 1):
        if step * 10**exponent <= km:
            return float(step * 10**exponent)
    return float(10**exponent)


def _label_column(df: pd.DataFrame, extent: Extent) -> str | None:
    wide = extent.width_km > 40
    order = (
        ("address.town", "councilTax.localAuthority", "address.locality")
        if wide
        else ("address.locality", "councilTax.localAuthority", "address.town")
    )
    for column in order:
        if column in df.columns and df[column].notna().any():
            return column
    return None


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
