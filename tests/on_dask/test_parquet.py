"""Partitioned (Geo)Parquet written by the workers, read back by Dask, dask-geopandas, DuckDB."""

from __future__ import annotations

import dask.dataframe as dd
import pytest

import propertykit as pk
import propertykit.dask as pkd

pytestmark = pytest.mark.timeout(300)

#: Outcodes the portfolio is drawn from: a folder each, every one written by both partitions.
OUTCODES = 3


@pytest.fixture(scope="module")
def few_outcodes(dask_sandbox):
    """The ids (88) of the three commonest outcodes among the sandbox's first 1,500 properties.

    Dask reads each file of a dataset as a partition: a portfolio of 600 ids over 126 outcodes
    in 3 partitions wrote about 380 files and took 40 s to read back; this one writes 6.
    """
    places = {}
    for index in range(1500):
        record = dask_sandbox.record(index)
        places.setdefault(record["address"]["outcode"], []).append(record["locationId"])
    chosen = sorted(places, key=lambda outcode: -len(places[outcode]))[:OUTCODES]
    return sorted(location_id for outcode in chosen for location_id in places[outcode])


@pytest.fixture
def portfolio(sb, cluster, sqlite_cache, few_outcodes):
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(few_outcodes, client=client, partition_size=50)
        df = client.properties(few_outcodes)
        assert ddf.npartitions == 2 and len(df) == len(few_outcodes)
        # Each outcode's folder gets a file from each partition (two writers, one folder).
        for part in (few_outcodes[:50], few_outcodes[50:]):
            of_part = df.loc[df["locationId"].isin(part), "address.outcode"]
            assert of_part.nunique() == OUTCODES
        yield ddf, df


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

    ddf, df = portfolio
    # By town: partition_by reaches the workers (test_parquet above partitions by outcode).
    folder = pkd.to_geoparquet(ddf, tmp_path / "map", partition_by="address.town")
    towns = {f"address.town={t}" for t in df["address.town"].unique()}
    assert {p.name for p in folder.iterdir()} == towns
    back = dask_geopandas.read_parquet(folder)
    assert back.crs.to_epsg() == 4326
    points = back.compute()
    assert len(points) == len(df)
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
