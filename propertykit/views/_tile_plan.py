"""Which street tiles cover a map, and where a place falls on them (Web Mercator, numpy).

Written with numpy rather than taken from mercantile: the reprojection in
:mod:`~propertykit.views._street` needs the Web Mercator position of every pixel column and row
of a map at once (vectorised), which mercantile computes one point at a time in Python; it would
replace only the few lines of :func:`plan_tiles`'s block, for a dependency whose last release
was in 2021.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: At most this many tiles are fetched for one map (all its panels together).
MAX_TILES = 48
#: The deepest zoom asked of a tile server (OpenStreetMap's standard tiles stop at 19).
MAX_ZOOM = 19
#: Width in image pixels a single map is drawn at (about 170 dpi across an A4 page).
TARGET_WIDTH = 1200


@dataclass(frozen=True)
class TilePlan:
    """The block of tiles that covers one map panel."""

    zoom: int
    #: first and last tile column and row (inclusive)
    x0: int
    x1: int
    y0: int
    y1: int

    @property
    def count(self) -> int:
        return (self.x1 - self.x0 + 1) * (self.y1 - self.y0 + 1)

    def tiles(self) -> list[tuple[int, int, int]]:
        """``(z, x, y)`` of every tile, row by row."""
        return [
            (self.zoom, x, y)
            for y in range(self.y0, self.y1 + 1)
            for x in range(self.x0, self.x1 + 1)
        ]


def plan_tiles(
    west: float,
    south: float,
    east: float,
    north: float,
    *,
    width: int = TARGET_WIDTH,
    max_tiles: int = MAX_TILES,
    max_zoom: int = MAX_ZOOM,
) -> TilePlan:
    """The tiles covering a lon/lat box: the zoom that gives ``width`` pixels across, or less
    when that would take more than ``max_tiles`` tiles.

    Examples
    --------
    >>> plan = plan_tiles(-0.15, 51.49, -0.10, 51.52)   # a slice of central London
    >>> plan.zoom, plan.count <= MAX_TILES
    (15, True)
    """
    south, north = max(south, -85.05), min(north, 85.05)
    wanted = math.log2(width * 360 / (max(east - west, 1e-9) * 256))
    zoom = int(min(max(math.ceil(wanted), 0), max_zoom))
    while True:
        plan = _block(west, south, east, north, zoom)
        if plan.count <= max_tiles or zoom == 0:
            return plan
        zoom -= 1


def _block(west: float, south: float, east: float, north: float, zoom: int) -> TilePlan:
    last = 2**zoom - 1
    x0, x1 = (
        int(np.clip(math.floor(v * 2**zoom), 0, last)) for v in mercator_x(np.array([west, east]))
    )
    y0, y1 = (
        int(np.clip(math.floor(v * 2**zoom), 0, last)) for v in mercator_y(np.array([north, south]))
    )
    return TilePlan(zoom, x0, x1, y0, y1)


def mercator_x(lon: np.ndarray) -> np.ndarray:
    """Web Mercator x of longitudes, 0..1 across the world."""
    return (np.asarray(lon, dtype=float) + 180.0) / 360.0


def mercator_y(lat: np.ndarray) -> np.ndarray:
    """Web Mercator y of latitudes, 0 (north) .. 1 (south)."""
    radians = np.radians(np.clip(np.asarray(lat, dtype=float), -85.05, 85.05))
    mercator: np.ndarray = np.log(np.tan(radians) + 1.0 / np.cos(radians))
    return (1.0 - mercator / math.pi) / 2.0
