"""Points: EPSG:4326, x is longitude, y is latitude; missing or unusable locations are missing."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from propertykit.errors import GeometryWarning, InvalidInput
from propertykit.views._geo import to_geodataframe


def test_points_are_wgs84_with_x_longitude_and_y_latitude(properties: pd.DataFrame) -> None:
    gdf = to_geodataframe(properties)
    assert gdf.crs.to_epsg() == 4326
    np.testing.assert_array_equal(gdf.geometry.x.to_numpy(), properties["spatial.lng"].to_numpy())
    np.testing.assert_array_equal(gdf.geometry.y.to_numpy(), properties["spatial.lat"].to_numpy())
    # the sandbox is in Great Britain: latitudes ~50-59 N, longitudes ~8 W to 2 E
    assert gdf.geometry.y.between(49, 61).all() and gdf.geometry.x.between(-9, 2).all()


def test_rows_index_and_attrs_are_kept(properties: pd.DataFrame) -> None:
    shuffled = properties.sample(frac=1, random_state=1)
    gdf = to_geodataframe(shuffled)
    assert gdf.index.equals(shuffled.index)
    assert gdf["propertyId"].tolist() == shuffled["propertyId"].tolist()
    assert gdf.attrs["currency"] == "GBP"


def test_missing_coordinates_give_missing_geometry_without_warning() -> None:
    df = pd.DataFrame({"spatial.lat": [51.5, np.nan, 52.0], "spatial.lng": [-0.1, -1.0, None]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gdf = to_geodataframe(df)
    assert gdf.geometry.isna().tolist() == [False, True, True]


def test_unusable_coordinates_are_missing_and_counted_in_one_warning() -> None:
    df = pd.DataFrame(
        {"spatial.lat": [51.5, "north", 95.0, 53.0], "spatial.lng": [-0.1, -1.0, 0.0, -400.0]}
    )
    with pytest.warns(GeometryWarning, match=r"3 of 4 locations") as caught:
        gdf = to_geodataframe(df)
    assert len(caught) == 1
    assert gdf.geometry.isna().tolist() == [False, True, True, True]


def test_unknown_geometry_kind_is_invalid_input(properties: pd.DataFrame) -> None:
    with pytest.raises(InvalidInput, match="point"):
        to_geodataframe(properties, geometry="polygon")  # type: ignore[arg-type]


def test_missing_columns_are_named_in_the_error() -> None:
    with pytest.raises(InvalidInput, match=r"spatial\.lat"):
        to_geodataframe(pd.DataFrame({"spatial.lng": [1.0]}))
