"""Boundaries in any readable form; unreadable ones become missing with one counting warning."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import shapely
from hypothesis import example, given, settings
from hypothesis import strategies as st
from shapely.geometry import shape

from propertykit.errors import GeometryWarning
from propertykit.views._boundaries import read_boundaries
from propertykit.views._geo import to_geodataframe
from tests._hypothesis import examples

RING = [[-0.12, 51.50], [-0.11, 51.50], [-0.11, 51.51], [-0.12, 51.51], [-0.12, 51.50]]
HOLE = [[-0.118, 51.502], [-0.114, 51.502], [-0.114, 51.506], [-0.118, 51.502]]
SQUARE = shapely.Polygon(RING)
WITH_HOLE = shapely.Polygon(RING, [HOLE])
POLYGON = {"type": "Polygon", "coordinates": [RING]}


def read_quietly(values: object, **kwargs: object) -> list[shapely.Geometry | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return list(read_boundaries(values, **kwargs))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(POLYGON, SQUARE, id="geojson-dict"),
        pytest.param(json.dumps(POLYGON), SQUARE, id="geojson-text"),
        pytest.param(
            {"type": "Feature", "properties": {}, "geometry": POLYGON}, SQUARE, id="feature"
        ),
        pytest.param(
            json.dumps({"type": "Feature", "geometry": POLYGON}), SQUARE, id="feature-text"
        ),
        pytest.param(
            {"type": "MultiPolygon", "coordinates": [[RING]]},
            shapely.MultiPolygon([SQUARE]),
            id="multipolygon",
        ),
        pytest.param(
            {"type": "Point", "coordinates": [-0.12, 51.5]}, shapely.Point(-0.12, 51.5), id="point"
        ),
        pytest.param(SQUARE.wkt, SQUARE, id="wkt"),
        pytest.param(SQUARE.wkb, SQUARE, id="wkb"),
        pytest.param(RING, SQUARE, id="closed-ring"),
        pytest.param(RING[:-1], SQUARE, id="open-ring"),
        pytest.param([RING, HOLE], WITH_HOLE, id="rings-with-hole"),
        pytest.param([[RING]], shapely.MultiPolygon([SQUARE]), id="polygons-of-rings"),
        pytest.param(json.dumps(RING), SQUARE, id="ring-as-json-text"),
        pytest.param(np.array(RING), SQUARE, id="numpy-ring"),
        pytest.param(SQUARE, SQUARE, id="shapely"),
        pytest.param(
            {"type": "Polygon", "coordinates": [[[*p, 12.0] for p in RING]]},
            SQUARE,
            id="3d-dropped",
        ),
    ],
)
def test_every_supported_form_reads_to_the_same_shape(
    value: object, expected: shapely.Geometry
) -> None:
    (geometry,) = read_quietly([value])
    assert geometry is not None
    assert geometry.equals(expected)
    assert not geometry.has_z


def test_feature_collection_reads_as_a_collection_of_its_geometries() -> None:
    collection = {
        "type": "FeatureCollection",
        "features": [{"type": "Feature", "geometry": POLYGON}],
    }
    (geometry,) = read_quietly([collection])
    assert geometry.geom_type == "GeometryCollection" and geometry.geoms[0].equals(SQUARE)


def test_mixed_forms_keep_their_order_and_index() -> None:
    values = pd.Series([SQUARE.wkt, None, POLYGON, RING, "{}"], index=[10, 11, 12, 13, 14])
    with pytest.warns(GeometryWarning, match="1 of 5"):
        result = read_boundaries(values)
    assert result.index.tolist() == [10, 11, 12, 13, 14]
    assert result.crs.to_epsg() == 4326
    assert [g is not None and g.equals(SQUARE) for g in result] == [True, False, True, True, False]


def test_x_is_longitude_in_boundaries() -> None:
    (geometry,) = read_quietly([POLYGON])
    assert geometry.centroid.x == pytest.approx(-0.115) and geometry.centroid.y == pytest.approx(
        51.505
    )


def test_missing_values_are_missing_without_warning() -> None:
    assert (
        read_quietly(
            [None, float("nan"), pd.NA, "", "   ", [], {"type": "Feature", "geometry": None}]
        )
        == [None] * 7
    )


def test_unreadable_values_are_missing_and_counted_in_one_warning() -> None:
    values = [
        POLYGON,
        "not wkt at all",
        "{not json",
        [[1.0, 2.0]],  # a ring of one point
        {"type": "Polygon", "coordinates": [[1, 2], [3, 4]]},  # rings are not lists of pairs
        {"type": "Hexagon", "coordinates": []},
        [[-0.1, 51.5], [-0.1, np.inf], [0.0, 51.6]],  # not finite
        [[500.0, 0.0], [501.0, 0.0], [501.0, 1.0]],  # not a longitude
        42,
    ]
    with pytest.warns(GeometryWarning, match=r"^8 of 9 boundaries could not be read") as caught:
        result = read_boundaries(values)
    assert len(caught) == 1
    assert result.isna().tolist() == [False] + [True] * 8


def test_one_odd_polygon_does_not_spoil_the_others() -> None:
    # mixed 2-D/3-D coordinates cannot form one array: the batch is built one by one instead
    mixed = {"type": "Polygon", "coordinates": [[[0, 0, 1], [1, 0], [1, 1], [0, 0]]]}
    with pytest.warns(GeometryWarning, match="1 of 4"):
        first, odd, last, also_3d = read_boundaries(
            [POLYGON, mixed, RING, [[*p, 5.0] for p in RING]]
        )
    assert odd is None
    assert first.equals(SQUARE) and last.equals(SQUARE) and also_3d.equals(SQUARE)


def test_invalid_polygons_are_repaired_and_counted() -> None:
    bow_tie = [[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    with pytest.warns(GeometryWarning, match="1 invalid polygons were repaired"):
        (geometry,) = read_boundaries([bow_tie])
    assert geometry.is_valid and geometry.geom_type == "MultiPolygon"
    assert geometry.area == pytest.approx(0.5)


def test_repair_can_be_switched_off() -> None:
    bow_tie = [[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    (geometry,) = read_quietly([bow_tie], repair=False)
    assert not geometry.is_valid


def test_sandbox_boundaries_are_valid_polygons_around_their_point(properties: pd.DataFrame) -> None:
    gdf = to_geodataframe(properties, geometry="boundary")
    present = gdf[gdf.geometry.notna()]
    assert len(present) > 30
    assert (present.geom_type == "Polygon").all() and present.is_valid.all()
    points = to_geodataframe(properties).geometry.loc[present.index]
    assert present.geometry.contains(points).all()
    assert gdf.geometry.isna().sum() == properties["spatial.boundary"].isna().sum()
    assert "spatial.boundary" not in gdf.columns


def test_boundaries_in_another_crs_are_transformed_to_wgs84() -> None:
    # a 10 m square at British National Grid TQ 30000 80000 (51.5040 N, 0.1283 W), Westminster
    ring = [[529995, 179995], [530005, 179995], [530005, 180005], [529995, 180005]]
    df = pd.DataFrame({"spatial.boundary": [ring]})
    gdf = to_geodataframe(df, geometry="boundary", boundary_crs="EPSG:27700")
    centroid = gdf.geometry.iloc[0].centroid
    assert gdf.crs.to_epsg() == 4326
    assert centroid.x == pytest.approx(-0.1283, abs=1e-4) and centroid.y == pytest.approx(
        51.5040, abs=1e-4
    )


coordinate = st.floats(min_value=-10, max_value=10, allow_nan=False, width=32)
rings = st.lists(st.tuples(coordinate, coordinate).map(list), min_size=3, max_size=12)


@settings(max_examples=examples(60), deadline=None)
@example(
    [[[[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, -1.0], [0.0, 0.0]]]]
)  # shared edge
@given(st.lists(st.lists(rings, min_size=1, max_size=3), min_size=1, max_size=20))
@example(  # a shell cancelled by an identical hole: the repair used to leave a zero-area sliver
    [
        [[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]],
        [
            [[0.0, -1.375], [1.0, 0.0], [0.5, 9.0]],
            [[0.0, -1.375], [1.0, 0.0], [0.5, 9.0]],
            [[0.0, -1.0], [0.0, -0.697191596031189], [0.390625, 0.0]],
        ],
    ]
)
def test_vectorised_polygons_match_shapely_shape(polygons: list[list[list[list[float]]]]) -> None:
    mappings = [{"type": "Polygon", "coordinates": rings} for rings in polygons]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeometryWarning)
        fast = read_boundaries(mappings)
    for mapping, geometry in zip(mappings, fast, strict=True):
        try:
            expected = shape(mapping)
        except ValueError:  # too few coordinates for a ring
            expected = None
        if expected is not None and expected.is_valid:
            assert geometry is not None and geometry.equals_exact(expected, tolerance=0)
        else:  # unreadable, or invalid and then repaired (or collapsed to nothing)
            assert geometry is None or (geometry.is_valid and geometry.area > 0)
