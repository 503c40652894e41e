"""GeoDataFrames export to GeoParquet and GeoPackage and read back the same."""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest

from propertykit.views import to_geodataframe


@pytest.mark.parametrize("geometry", ["point", "boundary"])
def test_geoparquet_round_trip_keeps_geometry_crs_and_types(
    properties: pd.DataFrame, tmp_path: Path, geometry: str
) -> None:
    gdf = to_geodataframe(properties, geometry=geometry)  # type: ignore[arg-type]
    gdf.to_parquet(tmp_path / "properties.parquet")
    back = gpd.read_parquet(tmp_path / "properties.parquet")
    assert back.crs.to_epsg() == 4326
    assert (
        back.geometry.geom_equals_exact(gdf.geometry, tolerance=0).sum()
        == gdf.geometry.notna().sum()
    )
    assert back.geometry.isna().tolist() == gdf.geometry.isna().tolist()
    pd.testing.assert_series_equal(back.dtypes, gdf.dtypes)
    assert back["epc.currentEnergyRating"].cat.ordered


@pytest.mark.parametrize("geometry", ["point", "boundary"])
def test_geopackage_round_trip_keeps_geometry_crs_and_values(
    properties: pd.DataFrame, tmp_path: Path, geometry: str
) -> None:
    gdf = to_geodataframe(properties, geometry=geometry)  # type: ignore[arg-type]
    gdf.to_file(tmp_path / "properties.gpkg", driver="GPKG", layer="properties")
    back = gpd.read_file(tmp_path / "properties.gpkg", layer="properties")
    assert back.crs.to_epsg() == 4326
    assert len(back) == len(gdf)
    assert back.geometry.isna().tolist() == gdf.geometry.isna().tolist()
    present = gdf.geometry.notna().to_numpy()
    assert (
        back.geometry[present]
        .geom_equals_exact(gdf.geometry[present].set_axis(back.index[present]), 0)
        .all()
    )
    assert back["propertyId"].tolist() == gdf["propertyId"].tolist()
    for column in ("epc.currentEnergyRating", "pricing.estimatedSaleValue", "tags.chainFree"):
        assert (
            back[column].astype(object).fillna("-").tolist()
            == gdf[column].astype(object).fillna("-").tolist()
        )


def test_nested_columns_become_json_text_that_reads_back(properties: pd.DataFrame) -> None:
    gdf = to_geodataframe(properties)
    histories = properties["saleHistory"]
    with_history = histories.notna()
    assert (
        gdf["saleHistory"][with_history].map(json.loads).tolist()
        == histories[with_history].tolist()
    )
    assert gdf["saleHistory"][~with_history].isna().all()


def test_nested_columns_can_be_kept_or_dropped(properties: pd.DataFrame) -> None:
    kept = to_geodataframe(properties, nested="keep")
    assert kept["saleHistory"].tolist() == properties["saleHistory"].tolist()
    dropped = to_geodataframe(properties, nested="drop")
    assert "saleHistory" not in dropped.columns and "spatial.boundary" not in dropped.columns
    assert "propertyId" in dropped.columns


def test_a_parquet_dataset_says_its_money_unit_to_pandas_and_to_other_readers(
    properties: pd.DataFrame, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    from propertykit.frames import money_unit_of

    pence = properties.head(30).copy()
    pence.attrs = {**properties.attrs, "money_unit": "minor"}
    folder = pence.pk.to_parquet(tmp_path / "book")
    assert money_unit_of(pd.read_parquet(folder)) == "minor"  # pandas reads attrs back
    schema = pq.read_schema(next(folder.rglob("*.parquet")))  # DuckDB and Spark read fields
    said = {b"unit": b"pence", b"currency": b"GBP"}
    assert schema.field("pricing.estimatedSaleValue").metadata == said
    assert schema.field("floorAreaSqM").metadata is None
