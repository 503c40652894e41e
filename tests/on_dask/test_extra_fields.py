"""Fields the interface does not name, on Dask: none dropped, whichever partition holds them.

A Dask frame's columns are fixed before anything is fetched, and Dask keeps only the columns of
the first partition when it joins them; so such fields travel in ``extra_fields``, and
``pkd.unpack_extra_fields`` gives back the frame ``client.properties`` gives. The server here
serves the sandbox's records with fields added to later partitions only.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote, urlsplit

import dask.dataframe as dd
import pandas as pd
import pytest

import propertykit as pk
import propertykit.dask as pkd
from propertykit.sandbox import generate_records
from tests.hostile._servers import Hostile, Seen, envelope, hostile, send
from tests.on_dask.test_frames import _sorted

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning"),
]

POOL = {record["locationId"]: record for record in generate_records(300, seed=28)}
IDS = list(POOL)  # three partitions of 100 ids


def _with_new_fields(location_id: str) -> dict:
    """The record, with fields the interface does not name from its 101st id on."""
    record = copy.deepcopy(POOL[location_id])
    place = IDS.index(location_id)
    if 100 <= place < 200:
        if place % 3 == 0:
            record["lastSale"] = {"date": "2021-03-04", "price": 200_000 + place}
        for sale in record.get("saleHistory") or []:
            sale["buyerType"] = "investor"
            if place % 25 == 0:
                sale["price"] = "about 300k"  # a sale's value no type holds
        record["plotRef"] = place  # a number here, text in the next partition
        if place == 150:
            record["yearBuilt"] = "c. 1930"  # a named field's value no type holds
    elif place >= 200:
        record["listings"] = [{"agent": "Hunters", "price": 300_000 + place}]
        record["plotRef"] = {} if place == 250 else f"R{place}"
    return record


def _by_id(unparsed: pd.DataFrame) -> pd.DataFrame:
    return unparsed.sort_values(["propertyId", "column"]).reset_index(drop=True)


@pytest.fixture
def server() -> Iterator[Hostile]:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        asked = unquote(urlsplit(handler.path).path.rsplit("/", 1)[-1]).split(",")
        send(handler, 200, envelope([_with_new_fields(name) for name in asked]))

    with hostile(behaviour) as running:
        yield running


def test_compute_and_sales_keep_the_fields_a_later_partition_holds(sb, server, sqlite_cache):
    with pk.Client(sb.api_key, server.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(IDS, client=client, partition_size=100)
        got = ddf.compute()
        want = client.properties(IDS)
        sales = ddf.pk.sales().compute()
    assert want.attrs["extra_columns"] == ("lastSale.date", "lastSale.price", "listings", "plotRef")
    assert list(ddf.columns) == [*pk.frames.COLUMNS, pkd.EXTRA_FIELDS]
    assert list(got.columns) == list(ddf.columns)  # meta tells the truth
    added = {name for name in IDS if _with_new_fields(name) != POOL[name]}
    assert len(added) == 200 and IDS.index(min(added)) >= 100  # none in the first partition
    assert set(got.loc[got[pkd.EXTRA_FIELDS].notna(), "locationId"]) == added
    unpacked = pkd.unpack_extra_fields(got)
    assert unpacked.attrs["extra_columns"] == want.attrs["extra_columns"]
    pd.testing.assert_frame_equal(_sorted(unpacked), _sorted(want))
    assert unpacked["lastSale.price"].notna().sum() == len(range(102, 200, 3))
    unparsed = want.pk.unparsed()
    served = list(unparsed["value"])
    assert {"c. 1930", "about 300k"} <= set(map(str, served)) and {} in served
    pd.testing.assert_frame_equal(_by_id(unpacked.pk.unparsed()), _by_id(unparsed))
    want_sales = want.pk.sales()
    assert want_sales.attrs["extra_columns"] == ("buyerType",)
    by_sale = ["propertyId", "date", "price"]
    unpacked_sales = pkd.unpack_extra_fields(sales)
    pd.testing.assert_frame_equal(
        unpacked_sales.sort_values(by_sale).reset_index(drop=True),
        want_sales.sort_values(by_sale).reset_index(drop=True),
    )
    assert "about 300k" in want_sales.pk.unparsed()["value"].tolist()
    pd.testing.assert_frame_equal(
        _by_id(unpacked_sales.pk.unparsed()), _by_id(want_sales.pk.unparsed())
    )


def test_parquet_files_all_carry_every_field(sb, server, sqlite_cache, tmp_path):
    with pk.Client(sb.api_key, server.url, cache=sqlite_cache, progress=False) as client:
        ddf = pkd.properties(IDS, client=client, partition_size=100)
        want = client.properties(IDS)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # nothing to say: every field fits
            # By classification: four folders, a file from each partition in each. (By outcode,
            # 116 of them here, Dask read back some 300 files, one partition each: 13 s.)
            folder = pkd.to_parquet(ddf, tmp_path / "portfolio", partition_by="classificationCode")
    assert len(list(folder.iterdir())) == want["classificationCode"].nunique() == 4
    back = dd.read_parquet(folder).compute()
    back = pkd.unpack_extra_fields(back).sort_values("locationId").reset_index(drop=True)
    want = want.sort_values("locationId").reset_index(drop=True)
    assert back["lastSale.price"].tolist() == want["lastSale.price"].tolist()
    assert back["listings"].tolist() == want["listings"].tolist()
