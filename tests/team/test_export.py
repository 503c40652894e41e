"""Frames bigger than memory: Parquet and GeoParquet datasets partitioned by outcode."""

from __future__ import annotations

import json

import geopandas as gpd
import pandas as pd
import pyarrow.dataset as ds
import pytest

import propertykit as pk
from propertykit.frames import frame
from propertykit.sandbox import generate_records
from propertykit.views import to_geoparquet, to_parquet


@pytest.fixture(scope="module")
def portfolio() -> pd.DataFrame:
    records = generate_records(200)
    records[3]["spatial"]["boundary"] = "POLYGON ((0 0, 1 0, 1 1, 0 0))"  # another form: WKT
    return frame(records)


def read_back(folder) -> pd.DataFrame:
    table = ds.dataset(folder, format="parquet", partitioning="hive").to_table()
    return table.to_pandas().sort_values("propertyId", ignore_index=True)


def test_one_folder_per_outcode_and_every_row_back(portfolio, tmp_path):
    folder = to_parquet(portfolio, tmp_path / "portfolio")

    names = sorted(p.name for p in folder.iterdir())
    outcodes = sorted(portfolio["address.outcode"].unique())
    assert names == [f"address.outcode={code}" for code in outcodes]
    back = read_back(folder)
    want = portfolio.sort_values("propertyId", ignore_index=True)
    assert len(back) == len(want) == 200
    assert back["address.outcode"].astype(str).tolist() == want["address.outcode"].tolist()
    for column in ("pricing.estimatedSaleValue", "pricing.currentSalePrice", "yearBuilt"):
        pd.testing.assert_series_equal(back[column], want[column], check_dtype=False)
    assert back["epc.currentEnergyRating"].astype(str).tolist() == (
        want["epc.currentEnergyRating"].astype(str).tolist()
    )
    assert back["lastUpdated"].tolist() == want["lastUpdated"].tolist()
    sales = back.loc[0, "saleHistory"]
    assert [s["price"] for s in sales] == [s["price"] for s in want.loc[0, "saleHistory"]]


def test_boundaries_of_any_form_are_json_text_with_one_schema(portfolio, tmp_path):
    folder = to_parquet(portfolio, tmp_path / "portfolio")
    schemas = {ds.dataset(f, format="parquet").schema for f in folder.rglob("*.parquet")}
    assert len(schemas) == 1  # the same in every file, so a reader can combine them
    back = read_back(folder).set_index("propertyId")["spatial.boundary"]
    assert back[portfolio.loc[3, "propertyId"]] == "POLYGON ((0 0, 1 0, 1 1, 0 0))"
    geojson = portfolio["spatial.boundary"].map(lambda b: isinstance(b, dict))
    first = portfolio.loc[geojson.idxmax()]
    assert json.loads(back[first["propertyId"]]) == first["spatial.boundary"]


def test_an_existing_folder_is_not_overwritten_unless_asked(portfolio, tmp_path):
    folder = to_parquet(portfolio, tmp_path / "portfolio")
    with pytest.raises(pk.InvalidInput, match="already holds files"):
        to_parquet(portfolio, folder)
    to_parquet(portfolio.head(10), folder, existing="append")
    assert len(read_back(folder)) == 210
    to_parquet(portfolio, folder, existing="replace_partitions")
    assert len(read_back(folder)) == 200


def test_partitioning_by_a_missing_column_is_invalid_input(portfolio, tmp_path):
    with pytest.raises(pk.InvalidInput, match="no such column"):
        to_parquet(portfolio, tmp_path / "x", partition_by="address.sector")


def test_geoparquet_reads_back_with_geopandas(portfolio, tmp_path):
    folder = to_geoparquet(portfolio, tmp_path / "map")

    back = gpd.read_parquet(folder).sort_values("propertyId", ignore_index=True)
    want = portfolio.sort_values("propertyId", ignore_index=True)
    assert back.crs.to_epsg() == 4326
    assert back.geometry.x.round(6).tolist() == want["spatial.lng"].round(6).tolist()
    assert back.geometry.y.round(6).tolist() == want["spatial.lat"].round(6).tolist()
    one_file = gpd.read_parquet(next(folder.rglob("*.parquet")))  # each file stands alone
    assert one_file.crs.to_epsg() == 4326
    assert set(one_file.geom_type) == {"Point"}


def test_the_accessor_writes_the_same_datasets(portfolio, tmp_path):
    folder = portfolio.pk.to_parquet(tmp_path / "via-accessor")
    assert read_back(folder)["propertyId"].tolist() == sorted(portfolio["propertyId"])
    geo_folder = portfolio.pk.to_geoparquet(tmp_path / "via-accessor-geo")
    points = gpd.read_parquet(geo_folder)
    assert points.crs.to_epsg() == 4326 and len(points) == len(portfolio)
