"""Dask frames over the client: the same frame as ``client.properties``, built on the workers."""

from __future__ import annotations

import pandas as pd
import pytest

import propertykit as pk
import propertykit.dask as pkd
from tests.on_dask.conftest import billable

pytestmark = pytest.mark.timeout(300)


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    """Rows by location id; categories in sorted order (a Dask frame's categoricals are the
    union of its partitions' categories in the order they appear, pandas' sorted)."""
    df = df.sort_values("locationId").reset_index(drop=True)
    for name in df.columns:
        if isinstance(df[name].dtype, pd.CategoricalDtype) and not df[name].cat.ordered:
            df[name] = df[name].cat.reorder_categories(sorted(df[name].cat.categories))
    return df


def test_the_dask_frame_equals_client_properties_sorted_all_columns(sb, cluster, sqlite_cache):
    ids = sb.location_ids[:2000]
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(ids, client=client, partition_size=500)
        assert ddf.npartitions == 4
        got = ddf.compute()
        assert billable(sb) == 40  # paid on the workers, once per batch
        want = client.properties(ids)  # every batch now a cache hit
        assert client.usage.requests_sent == 0
    assert list(ddf.columns) == [*want.columns, pkd.EXTRA_FIELDS]
    assert [str(t) for t in ddf.dtypes] == [str(t) for t in got.dtypes]  # meta tells the truth
    assert got[pkd.EXTRA_FIELDS].isna().all()  # the sandbox sends only the named fields
    got = pkd.unpack_extra_fields(got)
    assert [str(t) for t in got.dtypes] == [str(t) for t in want.dtypes]
    pd.testing.assert_frame_equal(_sorted(got), _sorted(want))


def test_object_columns_stay_objects_not_text(sb, cluster, sqlite_cache):
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(sb.location_ids[:300], client=client, partition_size=100)
        got = ddf.compute()
    assert str(ddf.dtypes["spatial.boundary"]) == "object"
    assert str(got["spatial.boundary"].dtype) == "object"
    boundaries = got["spatial.boundary"].dropna()
    assert len(boundaries) and not all(isinstance(b, str) for b in boundaries)
    assert isinstance(got["saleHistory"].dropna().iloc[0], list)


def test_sources_equal_client_sources(sb, cluster, sqlite_cache):
    ids = sb.source_ids[:300]
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        got = pkd.sources(ids, client=client, partition_size=100, page_size=40).compute()
        got = pkd.unpack_extra_fields(got)
        want = client.sources(ids, page_size=40)
        assert client.usage.requests_sent == 0  # the workers' pages are the client's pages
    pd.testing.assert_frame_equal(_sorted(got), _sorted(want))


def test_a_rerun_partition_is_a_cache_hit(sb, cluster, sqlite_cache):
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(sb.location_ids[:400], client=client, partition_size=100)
        ddf.compute()
        paid = billable(sb)
        ddf.compute()
        pkd.properties(sb.location_ids[:400], client=client, partition_size=200).compute()
    assert paid == 8
    assert billable(sb) == paid


def test_pk_tables_and_geodataframe_on_dask_match_pandas(sb, cluster, sqlite_cache):
    import dask_geopandas

    ids = sb.location_ids[:300]
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(ids, client=client, partition_size=100)
        df = client.properties(ids)
    sales = pkd.unpack_extra_fields(ddf.pk.sales().compute())
    want_sales = df.pk.sales()
    pd.testing.assert_frame_equal(
        sales.sort_values(["propertyId", "date"]).reset_index(drop=True),
        want_sales.sort_values(["propertyId", "date"]).reset_index(drop=True),
    )
    epc = ddf.pk.epc(today="2025-06-01").compute()
    pd.testing.assert_frame_equal(
        epc.sort_values("propertyId").reset_index(drop=True),
        df.pk.epc(today="2025-06-01").sort_values("propertyId").reset_index(drop=True),
    )
    gddf = ddf.pk.to_geodataframe()
    assert isinstance(gddf, dask_geopandas.GeoDataFrame)
    assert gddf.crs.to_epsg() == 4326
    points = gddf.compute().sort_values("locationId").reset_index(drop=True)
    want_points = df.pk.to_geodataframe().sort_values("locationId").reset_index(drop=True)
    assert len(points) == 300
    assert points.geometry.geom_equals(want_points.geometry).all()


def test_partition_size_must_be_whole_batches_and_nothing_is_sent(sb, cluster, sqlite_cache):
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        with pytest.raises(pk.InvalidInput, match="multiple of the batch size"):
            pkd.properties(sb.location_ids[:100], client=client, partition_size=75)
        with pytest.raises(pk.InvalidInput):
            pkd.properties(["L1,L2"], client=client)
    assert sb.requests == []


@pytest.mark.parametrize("lookup", ["properties", "sources"])
def test_one_attribute_named_as_text_is_one_attribute(sb, cluster, sqlite_cache, lookup):
    ids = sb.location_ids[:100] if lookup == "properties" else sb.source_ids[:100]
    with pk.Client(sb.api_key, sb.url, cache=sqlite_cache, progress=False) as client:
        # before: "address" was sent as the attributes a,d,d,r,e,s,s (400 on every worker)
        got = getattr(pkd, lookup)(ids, client=client, partition_size=50, attributes="address")
        got = pkd.unpack_extra_fields(got.compute())
        want = getattr(client, lookup)(ids, attributes="address")
    assert got["address.postcode"].notna().all()
    pd.testing.assert_frame_equal(_sorted(got), _sorted(want))
