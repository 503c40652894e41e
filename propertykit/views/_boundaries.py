"""Boundaries in any readable form -> one GeoSeries, never raising on bad data.

The service does not say what ``spatial.boundary`` holds, so :func:`read_boundaries` reads every
form seen in practice, in one pass:

- GeoJSON geometries of any type, and GeoJSON Features / FeatureCollections, as dicts or JSON text;
- WKT text (``"POLYGON ((...))"``) and WKB bytes;
- bare coordinate rings: a list of ``[lng, lat]`` pairs (one ring), a list of rings (shell then
  holes), or a list of those (a multipolygon);
- shapely geometries, passed through.

The common case, one polygon per property given as rings of ``[x, y]`` pairs, is built with
shapely's vectorised :func:`shapely.from_ragged_array` from one flat coordinate array; everything
else falls back to one constructor call per item. Anything unreadable (bad JSON, bad WKT, rings
too short, non-finite or out-of-range coordinates) becomes a missing geometry, and a single
:class:`GeometryWarning` counts them; nothing here raises on bad data.

Invalid polygons (self-intersecting rings, "bow-ties") are repaired with
``shapely.make_valid(method="structure")``, which keeps polygonal areas polygonal (parts left
sharing an edge are dissolved with a zero buffer), and counted in the same warning; a polygon
that collapses to nothing (empty, or a sliver with no area) becomes missing. Pass
``repair=False`` to keep them as given.

Coordinates are taken as x = longitude, y = latitude in EPSG:4326 unless ``boundary_crs`` says
otherwise (the service leaves this open); other CRSs are transformed to EPSG:4326.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from propertykit.errors import GeometryWarning, outside_stacklevel

#: The coordinate reference system of every GeoDataFrame propertykit returns.
WGS84 = "EPSG:4326"


def read_boundaries(
    values: Iterable[Any],
    *,
    crs: str | CRS = WGS84,
    repair: bool = True,
) -> gpd.GeoSeries:
    """Read boundaries given in any supported form into one GeoSeries.

    Parameters
    ----------
    values
        One boundary per item: GeoJSON geometry or Feature (dict or JSON text), WKT text, WKB
        bytes, bare coordinate rings, a shapely geometry, or ``None``. A pandas Series keeps its
        index.
    crs
        The CRS the coordinates are written in (default EPSG:4326, x = longitude). Coordinates
        outside longitude/latitude range are unreadable when the CRS is geographic.
    repair
        Repair invalid polygons with ``shapely.make_valid(method="structure")``.

    Returns
    -------
    geopandas.GeoSeries
        One geometry (or ``None``) per input item, in ``crs``. Unreadable items are ``None``
        and one :class:`GeometryWarning` says how many there were.

    Examples
    --------
    >>> from propertykit.views import read_boundaries
    >>> square = [[-0.1, 51.5], [-0.09, 51.5], [-0.09, 51.51], [-0.1, 51.51]]
    >>> shapes = read_boundaries([square, "POINT (-0.1 51.5)", None])
    >>> shapes.geom_type.tolist()[:2], shapes.isna().tolist()
    (['Polygon', 'Point'], [False, False, True])
    """
    index = values.index if isinstance(values, pd.Series) else None
    items = list(values)
    crs = CRS.from_user_input(crs)
    geometries, unreadable, repaired = _read_all(items, repair=repair, geographic=crs.is_geographic)
    warn_unread(unreadable, repaired, len(items), what="boundaries")
    return gpd.GeoSeries(geometries, index=index, crs=crs)


@dataclass
class _Sorted:
    """Items sorted by how they will be built: positions in the input, and the payloads."""

    rings: tuple[list[int], list[Any]] = field(default_factory=lambda: ([], []))
    texts: tuple[list[int], list[str]] = field(default_factory=lambda: ([], []))
    blobs: tuple[list[int], list[bytes]] = field(default_factory=lambda: ([], []))
    mappings: tuple[list[int], list[Any]] = field(default_factory=lambda: ([], []))
    geometries: tuple[list[int], list[Any]] = field(default_factory=lambda: ([], []))
    unreadable: int = 0


def _read_all(
    items: Sequence[Any], *, repair: bool, geographic: bool
) -> tuple[np.ndarray, int, int]:
    """Read every item; return (geometries, unreadable count, repaired count)."""
    out = np.full(len(items), None, dtype=object)
    found = _sort_items(items)
    unreadable = found.unreadable

    positions, polygons = found.rings
    if polygons:
        built = _build_polygons(polygons)
        if built is None:  # some polygon's rings are not lists of pairs: set those aside
            usable = [all(_is_ring(ring) for ring in rings) for rings in polygons]
            built = _build_polygons([p for p, ok in zip(polygons, usable, strict=True) if ok])
            positions = [i for i, ok in zip(positions, usable, strict=True) if ok]
            unreadable += usable.count(False)
        if built is None:  # mixed 2-D/3-D or non-numeric coordinates: one at a time
            for position, rings in zip(positions, polygons, strict=True):
                found.mappings[0].append(position)
                found.mappings[1].append({"type": "Polygon", "coordinates": rings})
        else:
            out[positions] = built
            unreadable += int(shapely.is_missing(built).sum())
    for (positions, payloads), reader in (
        (found.texts, shapely.from_wkt),
        (found.blobs, shapely.from_wkb),
    ):
        if payloads:
            read = reader(np.array(payloads, dtype=object), on_invalid="ignore")
            out[positions] = read
            unreadable += int(shapely.is_missing(read).sum())
    for position, mapping in zip(*found.mappings, strict=True):
        out[position] = _shape_or_none(mapping)
        unreadable += out[position] is None
    for position, geometry in zip(*found.geometries, strict=True):
        out[position] = geometry

    return _finish(out, unreadable, repair=repair, geographic=geographic)


def _sort_items(items: Sequence[Any]) -> _Sorted:
    found = _Sorted()
    ring_positions, ring_polygons = found.rings
    for position, raw in enumerate(items):
        value = raw
        # fast path for the common case: a GeoJSON Polygon as a dict
        if type(value) is dict and value.get("type") == "Polygon":
            coordinates = value.get("coordinates")
            if type(coordinates) is list or type(coordinates) is tuple:
                ring_positions.append(position)
                ring_polygons.append(coordinates)
                continue
        if isinstance(value, str):
            value = value.strip()
            if not value:
                continue
            if value[0] not in "{[":
                found.texts[0].append(position)
                found.texts[1].append(value)
                continue
            try:
                value = json.loads(value)
            except ValueError:
                found.unreadable += 1
                continue
        if isinstance(value, dict):
            value = _geometry_mapping(value)
            if value is None:
                continue
            coordinates = value.get("coordinates")
            if str(value.get("type")).lower() == "polygon" and isinstance(
                coordinates, list | tuple
            ):
                found.rings[0].append(position)
                found.rings[1].append(coordinates)
            else:
                found.mappings[0].append(position)
                found.mappings[1].append(value)
        elif isinstance(value, list | tuple | np.ndarray):
            _sort_coordinates(found, position, value)
        elif isinstance(value, shapely.Geometry):
            found.geometries[0].append(position)
            found.geometries[1].append(value)
        elif isinstance(value, bytes | bytearray | memoryview):
            found.blobs[0].append(position)
            found.blobs[1].append(bytes(value))
        elif not _is_missing(value):
            found.unreadable += 1
    return found


def _sort_coordinates(found: _Sorted, position: int, value: Any) -> None:
    """Bare coordinates: a ring (depth 2), rings (3), or polygons of rings (4)."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    depth = _nesting_depth(value)
    if depth == 0:
        return
    if depth in (2, 3):
        found.rings[0].append(position)
        found.rings[1].append(value if depth == 3 else [value])
    elif depth == 4:
        found.mappings[0].append(position)
        found.mappings[1].append({"type": "MultiPolygon", "coordinates": value})
    else:
        found.unreadable += 1


def _finish(
    out: np.ndarray, unreadable: int, *, repair: bool, geographic: bool
) -> tuple[np.ndarray, int, int]:
    """Drop empties and out-of-range shapes, repair invalid ones; count what was lost or fixed."""
    present = ~shapely.is_missing(out)
    empty = present & shapely.is_empty(out)
    out[empty] = None
    unreadable += int(empty.sum())
    present &= ~empty
    with_z = np.flatnonzero(present)[shapely.has_z(out[present])]
    out[with_z] = shapely.force_2d(out[with_z])
    if geographic and present.any():
        bounds = shapely.bounds(out[present])
        outside = ~(
            np.isfinite(bounds).all(axis=1)
            & (bounds[:, 0] >= -180)
            & (bounds[:, 2] <= 180)
            & (bounds[:, 1] >= -90)
            & (bounds[:, 3] <= 90)
        )
        positions = np.flatnonzero(present)[outside]
        out[positions] = None
        unreadable += len(positions)
        present[positions] = False
    repaired = 0
    if repair and present.any():
        invalid = np.flatnonzero(present)[~shapely.is_valid(out[present])]
        if len(invalid):
            fixed = shapely.make_valid(out[invalid], method="structure", keep_collapsed=False)
            # "structure" can leave parts that share an edge; a zero buffer dissolves them
            still = ~shapely.is_valid(fixed)
            fixed[still] = shapely.buffer(fixed[still], 0)
            # A repair may leave a sliver: valid, but with no area. That is no boundary either.
            collapsed = shapely.is_empty(fixed) | (shapely.area(fixed) == 0)
            fixed[collapsed] = None
            out[invalid] = fixed
            unreadable += int(collapsed.sum())
            repaired = int((~collapsed).sum())
    return out, unreadable, repaired


def _build_polygons(polygons: list[Any]) -> np.ndarray | None:
    """Build polygons given as lists of rings in one vectorised call.

    Returns one geometry per polygon (``None`` where a ring is too short or has non-finite
    coordinates), or ``None`` when the coordinates do not form one numeric array (then the
    caller sorts out the odd ones).
    """
    try:  # three passes at C speed rather than one Python loop over rings
        rings_per_polygon = list(map(len, polygons))
        ring_lengths = list(map(len, chain.from_iterable(polygons)))
        coordinates = list(chain.from_iterable(chain.from_iterable(polygons)))
    except TypeError:
        return None
    flat = _coordinate_array(coordinates)
    if flat is None:
        return None

    per_polygon = np.asarray(rings_per_polygon, dtype=np.int64)
    lengths = np.asarray(ring_lengths, dtype=np.int64)
    ring_ends = np.cumsum(lengths)
    ring_starts = ring_ends - lengths
    ring_owner = np.repeat(np.arange(len(polygons)), per_polygon)
    coordinate_ring = np.repeat(np.arange(len(lengths)), lengths)

    xy = flat[:, :2]
    nonfinite = np.bincount(
        coordinate_ring, weights=~np.isfinite(xy).all(axis=1), minlength=len(lengths)
    )
    nonempty = lengths > 0
    closed = np.zeros(len(lengths), dtype=bool)
    closed[nonempty] = (xy[ring_starts[nonempty]] == xy[ring_ends[nonempty] - 1]).all(axis=1)
    bad_ring = (nonfinite > 0) | (lengths < np.where(closed, 4, 3))
    good = ~(np.bincount(ring_owner, weights=bad_ring, minlength=len(polygons)) > 0) & (
        per_polygon > 0
    )

    keep_ring = good[ring_owner]
    built = np.full(len(polygons), None, dtype=object)
    built[good] = shapely.from_ragged_array(
        shapely.GeometryType.POLYGON,
        np.ascontiguousarray(xy[keep_ring[coordinate_ring]]),
        offsets=(
            np.concatenate([[0], np.cumsum(lengths[keep_ring])]),
            np.concatenate([[0], np.cumsum(per_polygon[good])]),
        ),
    )
    return built


def _coordinate_array(coordinates: list[Any]) -> np.ndarray | None:
    """One (n, 2|3) float array from a list of coordinate pairs; ``None`` if they differ in size.

    ``np.fromiter`` over the chained pairs is ~3x faster than ``np.asarray`` on a list of lists.
    """
    if not coordinates:
        return np.empty((0, 2))
    try:
        sizes = np.fromiter(map(len, coordinates), dtype=np.int64, count=len(coordinates))
        width = int(sizes[0])
        if width not in (2, 3) or not (sizes == width).all():
            return None
        values = np.fromiter(
            chain.from_iterable(coordinates), dtype=float, count=width * len(coordinates)
        )
    except (TypeError, ValueError):
        return None
    return values.reshape(-1, width)


def _is_ring(ring: Any) -> bool:
    return isinstance(ring, list | tuple) and (not ring or isinstance(ring[0], list | tuple))


def _geometry_mapping(value: dict[str, Any]) -> dict[str, Any] | None:
    """The geometry inside a GeoJSON Feature/FeatureCollection, or the mapping itself."""
    kind = str(value.get("type", "")).lower()
    if kind == "feature":
        geometry = value.get("geometry")
        return geometry if isinstance(geometry, dict) else None
    if kind == "featurecollection":
        features = value.get("features") or []
        parts = [f.get("geometry") for f in features if isinstance(f, dict)]
        return {"type": "GeometryCollection", "geometries": [p for p in parts if p]}
    return value


def _shape_or_none(item: Any) -> shapely.Geometry | None:
    try:
        if isinstance(item, dict):
            return shapely.geometry.shape(item)
        return None
    except Exception:  # any malformed GeoJSON: unreadable, never fatal (counted by the caller)
        return None


def _nesting_depth(value: Any) -> int:
    """How deeply lists nest before the first number: 1 = a pair, 2 = a ring, 3 = rings, ..."""
    depth = 0
    while isinstance(value, list | tuple | np.ndarray):
        if len(value) == 0:
            return depth if depth else 0
        depth += 1
        value = value[0]
    return depth if isinstance(value, int | float) else -1


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def warn_unread(unreadable: int, repaired: int, total: int, *, what: str) -> None:
    if not unreadable and not repaired:
        return
    parts = []
    if unreadable:
        parts.append(f"{unreadable} of {total} {what} could not be read and are missing geometries")
    if repaired:
        parts.append(f"{repaired} invalid polygons were repaired with shapely.make_valid")
    warnings.warn(GeometryWarning("; ".join(parts) + "."), stacklevel=outside_stacklevel())
