"""Partitioned (Geo)Parquet written by the workers, read back by Dask, dask-geopandas, DuckDB."""

from __future__ import annotations

import dask.dataframe as dd
import pytest

import propertykit as pk
import propertykit.dask as pkd

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
def portfolio(sb, cluster, sqlite_cache):
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(sb.location_ids[:600], client=client, partition_size=200)
        yield ddf, client.properties(sb.location_ids[:600])


def test_parquet_is_read_back_by_dask_and_duckdb(portfolio, tmp_path):
    import duckdb

    ddf, df = portfolio
    folder = ddf.pk.to_parquet(tmp_path / "portfolio")
    outcodes = {p.name for p in folder.iterdir()}
    assert outcodes == {f"address.outcode={o}" for o in df["address.outcode"].unique()}
    back = dd.read_parquet(folder).compute()
    assert sorted(back["locationId"]) == sorted(df["locationId"])
    assert back["saleHistory"].dropna().map(len).sum() == df["saleHistory"].dropna().map(len).sum()
    pattern = str(folder / "**" / "*.parquet")
    counts = duckdb.sql(
        f"SELECT \"address.outcode\" AS outcode, count(*) AS n FROM read_parquet('{pattern}', "
        "hive_partitioning=true) GROUP BY 1"
    ).df()
    want = df["address.outcode"].value_counts()
    assert dict(zip(counts["outcode"], counts["n"], strict=True)) == want.to_dict()


def test_geoparquet_is_read_back_by_dask_geopandas(portfolio, tmp_path):
    import dask_geopandas

    ddf, _ = portfolio
    # By town: a folder per town, not per outcode (Dask reads each small file as a partition:
    # by outcode, about 300 of them, 40 s; test_parquet above covers partitions by outcode).
    folder = pkd.to_geoparquet(ddf, tmp_path / "map", partition_by="address.town")
    assert {p.name.split("=")[0] for p in folder.iterdir()} == {"address.town"}
    back = dask_geopandas.read_parquet(folder)
    assert back.crs.to_epsg() == 4326
    points = back.compute()
    assert len(points) == 600
    assert set(points.geom_type) == {"Point"}


def test_writing_into_a_folder_with_files_is_refused(portfolio, tmp_path):
    ddf, _ = portfolio
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    with pytest.raises(pk.InvalidInput, match="already holds files"):
        pkd.to_parquet(ddf, tmp_path / "taken")
    with pytest.raises(pk.InvalidInput, match="no such column"):
        pkd.to_parquet(ddf, tmp_path / "new", partition_by="nope")


@pytest.mark.parametrize("write", [pkd.to_parquet, pkd.to_geoparquet])
def test_a_url_is_refused_before_anything_is_written(portfolio, tmp_path, monkeypatch, write):
    ddf, _ = portfolio
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    with pytest.raises(pk.InvalidInput, match="URL"):  # before: a local folder "s3:/bucket/..."
        write(ddf, "s3://bucket/portfolio/")
    assert list((tmp_path / "here").iterdir()) == []
