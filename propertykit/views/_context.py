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

#: The plot area a map is laid out for, in CSS pixels (the report's map cards are this size).
PLOT_WIDTH, PLOT_HEIGHT = 900, 500
KM_PER_DEGREE = 111.32
#: Label font size and the estimated width of one character at that size, in pixels.
LABEL_FONT, CHAR_WIDTH, LABEL_HEIGHT = 12, 7.6, 20.0
#: A label sits this many pixels off its place, so it does not hide the data there.
LABEL_LIFT = 6
#: Labels are laid out for the narrowest plot area a map is read at: an 800 px wide figure
#: less its legend and margins. Wider, they only have more room.
NARROWEST_PLOT = 620
#: Empty pixels kept between two labels.
LABEL_GAP = 4


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
    """A place name to write on the map beside ``lon``/``lat``: its box is anchored there by
    ``xanchor``/``yanchor`` and moved by ``xshift``/``yshift`` pixels (plotly's annotation
    arguments)."""

    text: str
    lon: float
    lat: float
    count: int
    xanchor: str = "center"
    yanchor: str = "bottom"
    xshift: float = 0.0
    yshift: float = LABEL_LIFT


#: Where a label may sit around its place, in order of preference: above, below, right, left,
#: the four corners; then the same again further out (clear of a big place's own markers).
_SIDES = tuple(
    (xanchor, yanchor, dx * LABEL_LIFT * reach, dy * LABEL_LIFT * reach)
    for reach in (1.0, 2.5)
    for xanchor, yanchor, dx, dy in (
        ("center", "bottom", 0.0, 1.0),
        ("center", "top", 0.0, -1.0),
        ("left", "middle", 1.0, 0.0),
        ("right", "middle", -1.0, 0.0),
        ("left", "bottom", 0.5, 0.5),
        ("right", "bottom", -0.5, 0.5),
        ("left", "top", 0.5, -0.5),
        ("right", "top", -0.5, -0.5),
    )
)
#: A label may hide at most this share of the map's markers (at least one); where every side
#: would hide more, the place goes unnamed (all but the busiest): the data matters more.
MOST_HIDDEN = 0.002


def place_labels(
    df: pd.DataFrame,
    lon: np.ndarray,
    lat: np.ndarray,
    extent: Extent,
    *,
    limit: int = 14,
) -> list[Label]:
    """Place names from the data, most properties first, none overlapping another, each on the
    side of its place where it hides the fewest of the map's markers.

    Towns when the map spans more than ~40 km, else localities (or local authorities); each is
    written beside the median position of its properties: above, below, right, left or at a
    corner, whichever box covers the fewest properties (ties in that order). A label is dropped
    when every side would overlap one already placed, leave the map, or (all but the first)
    hide more than :data:`MOST_HIDDEN` of the markers. Boxes are estimated for the narrowest
    plot the map is read at (:data:`NARROWEST_PLOT` pixels wide).
    """
    column = _label_column(df, extent)
    if column is None:
        return []
    names = df[column].astype("object").to_numpy()
    frame = pd.DataFrame({"name": names, "lon": lon, "lat": lat}).dropna()
    frame = frame[extent.contains(frame["lon"].to_numpy(), frame["lat"].to_numpy())]
    if frame.empty:
        return []
    by_name = frame.groupby("name")
    grouped = by_name[["lon", "lat"]].median()  # (a third of the time of a named .agg)
    grouped["count"] = by_name.size()
    grouped = grouped.sort_values("count", ascending=False, kind="stable")
    scale = extent.px_per_km * min(1.0, NARROWEST_PLOT / PLOT_WIDTH)
    markers_x, markers_y = _pixels(frame["lon"].to_numpy(), frame["lat"].to_numpy(), extent, scale)
    placed: list[tuple[float, float, float, float]] = []  # boxes in pixels from the south-west
    labels: list[Label] = []
    frame_w, frame_h = extent.width_km * scale, extent.height_km * scale
    for name, row in grouped.iterrows():
        text = str(name)
        x, y = _pixels(np.array([row["lon"]]), np.array([row["lat"]]), extent, scale)
        best: tuple[int, tuple[float, float, float, float], int] | None = None
        for side, (xanchor, yanchor, dx, dy) in enumerate(_SIDES):
            box = _box(float(x[0]) + dx, float(y[0]) + dy, text, xanchor, yanchor)
            if box[0] < 0 or box[1] < 0 or box[2] > frame_w or box[3] > frame_h:
                continue
            if any(_overlap(box, other) for other in placed):
                continue
            covered = int(
                np.count_nonzero(
                    (markers_x >= box[0]) & (markers_x <= box[2])
                    & (markers_y >= box[1]) & (markers_y <= box[3])
                )
            )  # fmt: skip
            if best is None or covered < best[0]:
                best = (covered, box, side)
        if best is None or (labels and best[0] > max(1, MOST_HIDDEN * len(markers_x))):
            continue  # (the busiest place is always named where it can be)
        placed.append(best[1])
        xanchor, yanchor, dx, dy = _SIDES[best[2]]
        labels.append(
            Label(
                text, float(row["lon"]), float(row["lat"]), int(row["count"]),
                xanchor, yanchor, dx, dy,
            )
        )  # fmt: skip
        if len(labels) >= limit:
            break
    return labels


def _pixels(
    lon: np.ndarray, lat: np.ndarray, extent: Extent, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Pixels from the map's south-west corner, at ``scale`` pixels per kilometre."""
    x = (lon - extent.west) * KM_PER_DEGREE * extent.cos_lat * scale
    return x, (lat - extent.south) * KM_PER_DEGREE * scale


def _box(
    x: float, y: float, text: str, xanchor: str, yanchor: str
) -> tuple[float, float, float, float]:
    """The label's box (west, south, east, north) in pixels, ``LABEL_GAP`` wider all round."""
    width = len(text) * CHAR_WIDTH + 10
    west = {"center": x - width / 2, "left": x, "right": x - width}[xanchor]
    south = {"bottom": y, "top": y - LABEL_HEIGHT, "middle": y - LABEL_HEIGHT / 2}[yanchor]
    return (
        west - LABEL_GAP / 2,
        south - LABEL_GAP / 2,
        west + width + LABEL_GAP / 2,
        south + LABEL_HEIGHT + LABEL_GAP / 2,
    )


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
