"""``client.query(area=..., **filters)`` against the sandbox's query endpoint, for both profiles.

Every area form, every filter, paging, caching (a second call is free), and bad input refused
with nothing sent.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
from propertykit.sandbox import Sandbox
from tests._serving import serving, url_of

#: Every test here talks to a local server: none may hang.
pytestmark = pytest.mark.timeout(60)

UK = {
    "type": "polygon",
    "coordinates": [[[-8.5, 49.5], [2.0, 49.5], [2.0, 61.0], [-8.5, 61.0], [-8.5, 49.5]]],
}
#: Money filters are given in the profile's unit: pence under vepler.
FACTOR = {"spec": 1, "vepler": 100}
#: The homes of the shared sandboxes: enough for each filter and condition to match some. Each
#: query reads every home of the world it is asked of.
SHARED_WORLD = 400
#: The homes of the sandboxes of one test: DH1 fills more than one page of either profile's
#: default size there (32 homes), CT1 seven homes and more (15). The worlds are one (seed 0) cut
#: at two sizes, so that every sandbox here shares the records drawn, and those of one size the
#: answers of the queries asked before.
WORLD = 1000


@pytest.fixture(scope="module", params=["spec", "vepler"])
def shared_sb(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """One read-only sandbox per profile for this module (never steered)."""
    with pk.sandbox.serve(profile=request.param, n_properties=SHARED_WORLD) as sb:
        yield sb


@pytest.fixture
def own_sb(profile: str) -> Iterator[Sandbox]:
    """A new sandbox of :data:`WORLD` for one test, once per profile; free to steer."""
    with pk.sandbox.serve(profile=profile, n_properties=WORLD) as sb:
        yield sb


@pytest.fixture
def client(shared_sb: Sandbox, make_client: Callable[..., pk.Client]) -> pk.Client:
    """A client of ``shared_sb`` without a cache: the caching tests below make their own."""
    return make_client(shared_sb, max_retries=0, cache=False)


def query_requests(sb: Sandbox) -> list[Any]:
    return [r for r in sb.requests if r.path == "/v1/property/query"]


def distance_m(lng1: float, lat1: float, lng2: float, lat2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (
        math.sin((p2 - p1) / 2) ** 2
        + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lng2 - lng1) / 2) ** 2
    )
    return 2 * 6_371_008.8 * math.asin(math.sqrt(h))


# -- areas ------------------------------------------------------------------------------------


def test_postcode_area_finds_the_homes_of_that_postcode(shared_sb, client):
    postcode = shared_sb.record(0)["address"]["postcode"]
    df = client.query({"type": "postcode", "value": postcode})
    assert "L00000000" in set(df["locationId"])
    assert set(df["address.postcode"]) == {postcode}


def test_postcode_without_its_space_is_the_same_area(shared_sb, client):
    postcode = shared_sb.record(0)["address"]["postcode"]
    spaced = client.query({"type": "postcode", "value": postcode})
    bare = client.query({"type": "postcode", "value": postcode.replace(" ", "").lower()})
    assert list(bare["locationId"]) == list(spaced["locationId"])


def test_outcode_area_returns_every_home_of_the_district_over_several_pages(own_sb, make_client):
    sb, outcode = own_sb, "DH1"
    client = make_client(sb, max_retries=0, cache=False)
    expected = {
        f"L{i:08d}" for i in range(sb.n_properties) if sb.record(i)["address"]["outcode"] == outcode
    }
    df = client.query({"type": "outcode", "value": outcode})
    assert set(df["locationId"]) == expected
    pages = math.ceil(len(expected) / (20 if sb.profile == "spec" else 25))
    assert len(df) == len(expected) and pages >= 2  # more than one page of the default size
    assert len(query_requests(sb)) == pages


def test_point_and_radius_returns_only_homes_within_the_radius(shared_sb, client):
    centre = shared_sb.record(0)["spatial"]
    df = client.query(
        {"type": "point", "coordinates": [centre["lng"], centre["lat"]], "radius": 1500}
    )
    assert "L00000000" in set(df["locationId"])
    distances = [
        distance_m(centre["lng"], centre["lat"], lng, lat)
        for lng, lat in zip(df["spatial.lng"], df["spatial.lat"], strict=True)
    ]
    assert max(distances) <= 1500
    everyone = [shared_sb.record(i)["spatial"] for i in range(shared_sb.n_properties)]
    inside = sum(
        distance_m(centre["lng"], centre["lat"], s["lng"], s["lat"]) <= 1500 for s in everyone
    )
    assert len(df) == inside


@pytest.mark.parametrize("single_ring", [False, True], ids=["rings", "one-ring"])
def test_polygon_area_returns_only_homes_inside_it(shared_sb, client, single_ring):
    centre = shared_sb.record(0)["spatial"]
    lng, lat = centre["lng"], centre["lat"]
    ring = [[lng - 0.02, lat - 0.01], [lng + 0.02, lat - 0.01], [lng + 0.02, lat + 0.01],
            [lng - 0.02, lat + 0.01], [lng - 0.02, lat - 0.01]]  # fmt: skip
    df = client.query({"type": "polygon", "coordinates": ring if single_ring else [ring]})
    assert "L00000000" in set(df["locationId"])
    assert df["spatial.lng"].between(lng - 0.02, lng + 0.02).all()
    assert df["spatial.lat"].between(lat - 0.01, lat + 0.01).all()


def test_a_multipolygon_is_the_union_of_its_polygons(shared_sb, client):
    def box(index: int) -> list[list[float]]:
        s = shared_sb.record(index)["spatial"]
        lng, lat = s["lng"], s["lat"]
        return [[lng - 0.01, lat - 0.01], [lng + 0.01, lat - 0.01], [lng + 0.01, lat + 0.01],
                [lng - 0.01, lat + 0.01], [lng - 0.01, lat - 0.01]]  # fmt: skip

    one = client.query({"type": "polygon", "coordinates": [box(0)]})
    two = client.query({"type": "polygon", "coordinates": [box(1)]})
    both = client.query({"type": "multipolygon", "coordinates": [box(0), [box(1)]]})
    assert set(both["locationId"]) == set(one["locationId"]) | set(two["locationId"])
    assert {"L00000000", "L00000001"} <= set(both["locationId"])


def test_a_list_of_areas_is_their_union(shared_sb, client):
    one = client.query({"type": "outcode", "value": "SA1"})
    two = client.query({"type": "outcode", "value": "SA2"})
    both = client.query([{"type": "outcode", "value": "SA1"}, {"type": "outcode", "value": "SA2"}])
    assert set(both["locationId"]) == set(one["locationId"]) | set(two["locationId"])


# -- filters ----------------------------------------------------------------------------------


def flat(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``record`` with nested objects spelt out as the frame's dotted column names."""
    out: dict[str, Any] = {}
    for name, value in record.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = value
    return out


def _price(row: pd.Series) -> float:
    current = row["pricing.currentSalePrice"]
    return row["pricing.estimatedSaleValue"] if pd.isna(current) else current


def _rent(row: pd.Series) -> float:
    current = row["pricing.currentRentPrice"]
    return row["pricing.estimatedRentValue"] if pd.isna(current) else current


#: Each filter, and what it means for a record (flattened by :func:`flat`) or a frame's row.
FILTER_CASES: list[tuple[str, dict[str, Any], Callable[[Any, int], bool]]] = [
    ("priceMin", {"priceMin": 400_000}, lambda r, f: _price(r) >= 400_000 * f),
    ("priceMax", {"priceMax": 150_000}, lambda r, f: _price(r) <= 150_000 * f),
    ("price range", {"priceMin": 200_000, "priceMax": 300_000},
     lambda r, f: 200_000 * f <= _price(r) <= 300_000 * f),
    ("rentMin", {"rentMin": 2_000}, lambda r, f: _rent(r) >= 2_000 * f),
    ("rentMax", {"rentMax": 900}, lambda r, f: _rent(r) <= 900 * f),
    ("beds", {"beds": [2, 3]}, lambda r, f: r["roomDetails.beds"] in (2, 3)),
    ("baths", {"baths": [2]}, lambda r, f: r["roomDetails.baths"] == 2),
    ("propertyType", {"propertyType": ["detached", "bungalow"]},
     lambda r, f: r["propertyType"] in ("detached", "bungalow")),
    ("epcRating", {"epcRating": ["A", "B"]},
     lambda r, f: r["epc.currentEnergyRating"] in ("A", "B")),
    ("tenure", {"tenure": ["leasehold"]}, lambda r, f: r["tenure.type"] == "leasehold"),
    ("councilTaxBand", {"councilTaxBand": ["A"]}, lambda r, f: r["councilTax.taxBand"] == "A"),
    ("saleStatus live", {"saleStatus": ["live"]}, lambda r, f: r["marketStatus.forSale"] == "live"),
    ("saleStatus sstc", {"saleStatus": ["sstc"]},
     lambda r, f: r["marketStatus.forSale"] in ("sstc", "soldSTC", "underOffer")),
    ("rentStatus", {"rentStatus": ["live"]}, lambda r, f: r["marketStatus.forRent"] == "live"),
    ("tags", {"tags": {"chainFree": True}}, lambda r, f: bool(r["tags.chainFree"])),
    ("tags false", {"tags": {"chainFree": False}}, lambda r, f: not r["tags.chainFree"]),
    ("yearBuiltMin", {"yearBuiltMin": 2000}, lambda r, f: r["yearBuilt"] >= 2000),
    ("yearBuiltMax", {"yearBuiltMax": 1900}, lambda r, f: r["yearBuilt"] <= 1900),
    ("floorAreaMin", {"floorAreaMin": 150}, lambda r, f: r["floorAreaSqM"] >= 150),
    ("floorAreaMax", {"floorAreaMax": 60}, lambda r, f: r["floorAreaSqM"] <= 60),
    ("combined", {"beds": [3], "propertyType": ["terraced"], "epcRating": ["C", "D"]},
     lambda r, f: r["roomDetails.beds"] == 3 and r["propertyType"] == "terraced"
     and r["epc.currentEnergyRating"] in ("C", "D")),
]  # fmt: skip


@pytest.mark.parametrize(
    ("filters", "holds"), [case[1:] for case in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_each_filter_keeps_only_matching_homes(shared_sb, client, filters, holds):
    factor = FACTOR[shared_sb.profile]
    sent = {
        name: value * factor if name.startswith(("price", "rent")) else value
        for name, value in filters.items()
    }
    records = client.query_records(UK, page_size=60, max_results=60, **sent)
    assert len(records) > 0, "the filter should match some synthetic homes"
    assert all(holds(flat(record), factor) for record in records)


def test_a_filtered_query_frames_the_homes_its_records_hold(shared_sb, client):
    """The frame of a filtered query (``query``) is of the records the filters kept
    (``query_records``, tested filter by filter above), read by the same rules."""
    factor = FACTOR[shared_sb.profile]
    for name, filters, holds in (FILTER_CASES[2], FILTER_CASES[-1]):
        sent = {
            name: value * factor if name.startswith(("price", "rent")) else value
            for name, value in filters.items()
        }
        records = client.query_records(UK, page_size=60, max_results=60, **sent)
        df = client.query(UK, page_size=60, max_results=60, **sent)
        assert list(df["locationId"]) == [record["locationId"] for record in records], name
        assert all(holds(row, factor) for _, row in df.iterrows()), name


def test_filters_are_sent_as_given_in_the_query_object(shared_sb, client):
    from propertykit.client._query import query_body

    body = query_body(UK, {"priceMin": 30_000_000, "beds": (2, 3), "tags": {"chainFree": True}})
    assert body["query"] == {"priceMin": 30_000_000, "beds": [2, 3], "tags": {"chainFree": True}}
    assert body["area"] == [UK]


def test_sort_by_price_descending(shared_sb, client):
    df = client.query({"type": "outcode", "value": "DH1"}, sortBy="price", sortOrder="desc")
    prices = [_price(row) for _, row in df.iterrows()]
    assert prices == sorted(prices, reverse=True)


def test_attributes_trim_the_records(shared_sb, client):
    df = client.query({"type": "outcode", "value": "BA1"}, attributes=["address"])
    assert df["address.outcode"].eq("BA1").all()
    assert df["pricing.estimatedSaleValue"].isna().all()


def test_the_frame_records_the_profiles_money_unit(shared_sb, client):
    df = client.query({"type": "outcode", "value": "BA1"})
    expected = "minor" if shared_sb.profile == "vepler" else "major"
    assert df.attrs["money_unit"] == expected
    first = df.iloc[0]
    served = shared_sb.record(int(first["locationId"][1:]))["pricing"]["estimatedSaleValue"]
    assert first["pricing.estimatedSaleValue"] == served  # as served: never rescaled


# -- paging -----------------------------------------------------------------------------------


@pytest.mark.parametrize("page_size", [1, 7, 50, 100])
def test_pages_of_any_size_give_the_same_homes(own_sb, make_client, page_size):
    client = make_client(own_sb, max_retries=0, cache=False)
    area = {"type": "outcode", "value": "CT1"}
    whole = client.query(area, page_size=100)
    own_sb.reset_log()
    paged = client.query(area, page_size=page_size)
    assert list(paged["locationId"]) == list(whole["locationId"])
    assert len(query_requests(own_sb)) == math.ceil(len(whole) / page_size)


@pytest.mark.parametrize(("page_size", "max_results"), [(None, 5), (10, 25), (7, 7), (None, 0)])
def test_max_results_stops_paying_once_enough_are_in(shared_sb, client, page_size, max_results):
    shared_sb.reset_log()
    df = client.query(UK, page_size=page_size, max_results=max_results)
    assert len(df) == max_results
    per_page = page_size or max_results
    expected = 0 if max_results == 0 else math.ceil(max_results / per_page)
    assert len(query_requests(shared_sb)) == expected


def test_a_failure_part_way_keeps_the_pages_already_paid_for(own_sb, make_client):
    sb = own_sb
    client = make_client(sb, max_retries=0)
    area = {"type": "outcode", "value": "DH1"}  # 32 homes: four pages of 10
    client.query(area, page_size=10, max_results=10)  # first page now cached
    sb.inject_fault("error", status=503, path_contains="/v1/property/query")
    with pytest.raises(pk.ServerError) as caught:
        client.query(area, page_size=10)
    partial = caught.value.partial
    assert partial is not None and len(partial.records) == 10 and partial.resume_offset == 10


# -- caching ----------------------------------------------------------------------------------


def test_the_same_query_again_is_free(own_sb, make_client):
    sb = own_sb
    client = make_client(sb)
    area = {"type": "outcode", "value": "DH1"}
    first = client.query(area, beds=[2, 3], page_size=10)
    charged, sent = sb.credits_charged, len(query_requests(sb))
    again = client.query(area, beds=[2, 3], page_size=10)
    pd.testing.assert_frame_equal(again, first)
    assert (sb.credits_charged, len(query_requests(sb))) == (charged, sent)
    assert client.usage.cache_hits == sent
    assert client.usage.by_endpoint.loc["query", "billable_requests"] == sent


def test_a_different_body_is_a_different_cache_entry(own_sb, make_client):
    sb = own_sb
    client = make_client(sb)
    area = {"type": "outcode", "value": "BA1"}
    two = client.query(area, beds=[2], page_size=100)
    three = client.query(area, beds=[3], page_size=100)
    assert set(two["roomDetails.beds"]) == {2} and set(three["roomDetails.beds"]) == {3}
    assert len(query_requests(sb)) == 2 and client.usage.cache_hits == 0


def test_a_new_client_with_another_key_shares_the_cache_and_no_key_is_stored(
    own_sb, make_client, cache_file
):
    sb = own_sb
    area = {"type": "outcode", "value": "BA1"}
    make_client(sb).query(area, tenure=["freehold"])
    sb.reset_log()
    other = make_client(sb, api_key=sb.restricted_key)
    other.query(area, tenure=["freehold"])
    assert sb.requests == []  # the key is not part of the cache key
    for path in cache_file.parent.rglob("*"):  # the cache, and the query's lock files too
        if path.is_file():
            data = path.read_bytes()
            assert sb.api_key.encode() not in data and sb.restricted_key.encode() not in data


def test_offline_replays_a_cached_query_and_refuses_a_new_one(own_sb, make_client):
    sb = own_sb
    make_client(sb).query({"type": "outcode", "value": "BA1"})
    sb.reset_log()
    offline = make_client(sb, offline=True)
    assert len(offline.query({"type": "outcode", "value": "BA1"})) > 0
    with pytest.raises(pk.NotCached):
        offline.query({"type": "outcode", "value": "SA1"})
    assert sb.requests == []


def test_a_budget_counts_query_pages(own_sb, make_client):
    sb = own_sb
    client = make_client(sb, budget=2)
    with pytest.raises(pk.BudgetExceeded):
        client.query({"type": "outcode", "value": "DH1"}, page_size=10)
    assert len(query_requests(sb)) == 2


# -- bad input: refused before anything is sent -------------------------------------------------

BAD_CALLS: list[tuple[str, object, dict[str, Any]]] = [
    ("unknown filter", UK, {"bedrooms": [2]}),
    ("misspelt filter", UK, {"pricemin": 1}),
    ("beds not a list", UK, {"beds": 2}),
    ("beds of text", UK, {"beds": ["two"]}),
    ("empty list", UK, {"propertyType": []}),
    ("type as text", UK, {"propertyType": "detached"}),
    ("negative price", UK, {"priceMin": -1}),
    ("price as text", UK, {"priceMax": "500k"}),
    ("price as bool", UK, {"priceMax": True}),
    ("NaN price", UK, {"priceMin": float("nan")}),
    ("min above max", UK, {"priceMin": 10, "priceMax": 5}),
    ("EPC letter", UK, {"epcRating": ["H"]}),
    ("tags not a dict", UK, {"tags": ["garden"]}),
    ("tags not bool", UK, {"tags": {"garden": "yes"}}),
    ("sortOrder", UK, {"sortOrder": "up"}),
    ("sortBy empty", UK, {"sortBy": ""}),
    ("limit by hand", UK, {"limit": 10}),
    ("attributes empty", UK, {"attributes": []}),
    ("area missing type", {"value": "SW1A 1AA"}, {}),
    ("area unknown type", {"type": "city", "value": "Bath"}, {}),
    ("area as text", "SW1A 1AA", {}),
    ("empty area list", [], {}),
    ("bad postcode", {"type": "postcode", "value": "NOT A CODE"}, {}),
    ("bad outcode", {"type": "outcode", "value": "SW1A 1AA"}, {}),
    ("postcode not text", {"type": "postcode", "value": 12}, {}),
    ("extra area key", {"type": "postcode", "value": "SW1A 1AA", "radius": 5}, {}),
    ("point without radius", {"type": "point", "coordinates": [-0.1, 51.5]}, {}),
    ("point zero radius", {"type": "point", "coordinates": [-0.1, 51.5], "radius": 0}, {}),
    ("point lat out of range", {"type": "point", "coordinates": [-0.1, 151.5], "radius": 5}, {}),
    ("point one number", {"type": "point", "coordinates": [-0.1], "radius": 5}, {}),
    ("open polygon", {"type": "polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}, {}),
    ("short polygon", {"type": "polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]}, {}),
    ("polygon of text", {"type": "polygon", "coordinates": "POLYGON((0 0))"}, {}),
    ("empty multipolygon", {"type": "multipolygon", "coordinates": []}, {}),
    ("page_size zero", UK, {"page_size": 0}),
    ("max_results negative", UK, {"max_results": -1}),
]


@pytest.mark.parametrize(
    ("area", "kwargs"), [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS]
)
def test_bad_input_is_refused_with_nothing_sent(shared_sb, client, area, kwargs):
    shared_sb.reset_log()
    charged = shared_sb.credits_charged
    with pytest.raises(pk.InvalidInput):
        client.query(area, **kwargs)
    assert shared_sb.requests == [] and shared_sb.credits_charged == charged
    assert client.usage.requests_sent == 0


# -- condition groups: the grammar of the service's own SDK ------------------------------------


def where(*conditions: dict[str, Any], operator: str = "AND") -> list[dict[str, Any]]:
    """One query group of one group holding ``conditions`` (as the SDK's builder makes them)."""
    return [{"operator": operator, "groups": [{"conditions": list(conditions)}]}]


def cond(field: str, comparator: str, value: Any) -> dict[str, Any]:
    return {"field": field, "comparator": comparator, "value": value}


#: Each comparator, and what it means for a record (flattened by :func:`flat`).
CONDITION_CASES: list[tuple[str, list[dict[str, Any]], Callable[[Any, int], bool]]] = [
    ("eq", where(cond("roomDetails.beds", "eq", 3)), lambda r, f: r["roomDetails.beds"] == 3),
    ("ne", where(cond("propertyType", "ne", "flat")), lambda r, f: r["propertyType"] != "flat"),
    ("gt money", where(cond("pricing.estimatedSaleValue", "gt", 400_000)),
     lambda r, f: r["pricing.estimatedSaleValue"] > 400_000 * f),
    ("gte and lte", where(cond("floorAreaSqM", "gte", 80), cond("floorAreaSqM", "lte", 90)),
     lambda r, f: 80 <= r["floorAreaSqM"] <= 90),
    ("lt date", where(cond("epc.validFrom", "lt", "2012-01-01")),
     lambda r, f: r["epc.validFrom"] < "2012-01-01"),  # ISO 8601 dates sort as text
    ("in", where(cond("epc.currentEnergyRating", "in", ["A", "B"])),
     lambda r, f: r["epc.currentEnergyRating"] in ("A", "B")),
    ("nin", where(cond("tenure.type", "nin", ["freehold"])),
     lambda r, f: r["tenure.type"] != "freehold"),
    ("startswith", where(cond("address.postcode", "startswith", "ba1")),
     lambda r, f: r["address.postcode"].startswith("BA1")),
    ("contains", where(cond("address.displayAddress", "contains", "flat")),
     lambda r, f: "flat" in r["address.displayAddress"].lower()),
    ("endswith", where(cond("address.town", "endswith", "ford")),
     lambda r, f: r["address.town"].lower().endswith("ford")),
    ("regex", where(cond("address.outcode", "regex", "^(BA|DH)1$")),
     lambda r, f: r["address.outcode"] in ("BA1", "DH1")),
    ("flag", where(cond("tags.chainFree", "eq", True)), lambda r, f: bool(r["tags.chainFree"])),
    ("OR of groups", [{"operator": "OR", "groups": [
        {"conditions": [cond("roomDetails.beds", "eq", 1)]},
        {"conditions": [cond("roomDetails.beds", "gte", 5),
                        cond("propertyType", "eq", "detached")]},
    ]}], lambda r, f: r["roomDetails.beds"] == 1
        or (r["roomDetails.beds"] >= 5 and r["propertyType"] == "detached")),
    ("items all hold", [*where(cond("roomDetails.beds", "eq", 2)),
                        *where(cond("propertyType", "eq", "flat"))],
     lambda r, f: r["roomDetails.beds"] == 2 and r["propertyType"] == "flat"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "holds"), [c[1:] for c in CONDITION_CASES], ids=[c[0] for c in CONDITION_CASES]
)
def test_each_condition_keeps_only_matching_homes(shared_sb, client, query, holds):
    factor = FACTOR[shared_sb.profile]
    sent = [
        {**item, "groups": [{"conditions": [
            {**c, "value": c["value"] * factor} if c["field"].startswith("pricing.") else c
            for c in group["conditions"]]} for group in item["groups"]]}
        for item in query
    ]  # fmt: skip
    records = client.query_records(UK, page_size=60, max_results=60, query=sent)
    assert len(records) > 0, "the condition should match some synthetic homes"
    assert all(holds(flat(record), factor) for record in records)


def test_a_query_of_conditions_frames_the_homes_its_records_hold(shared_sb, client):
    """As for filters: the frame of a condition query holds the records the conditions kept,
    its dates typed as dates."""
    since = pd.Timestamp("2012-01-01")
    query = where(cond("epc.validFrom", "lt", "2012-01-01"), cond("roomDetails.beds", "gte", 3))
    records = client.query_records(UK, page_size=60, max_results=60, query=query)
    df = client.query(UK, page_size=60, max_results=60, query=query)
    assert len(df) > 0
    assert list(df["locationId"]) == [record["locationId"] for record in records]
    assert (df["epc.validFrom"] < since).all() and (df["roomDetails.beds"] >= 3).all()


def test_an_or_group_finds_what_either_side_finds(own_sb, make_client):
    client = make_client(own_sb, max_retries=0, cache=False)
    area = {"type": "outcode", "value": "DH1"}
    ones = client.query(area, query=where(cond("roomDetails.beds", "eq", 1)))
    fours = client.query(area, query=where(cond("roomDetails.beds", "eq", 4)))
    either = client.query(area, query=[{"operator": "OR", "groups": [
        {"conditions": [cond("roomDetails.beds", "eq", 1)]},
        {"conditions": [cond("roomDetails.beds", "eq", 4)]}]}])  # fmt: skip
    assert len(ones) and len(fours)
    assert set(either["propertyId"]) == set(ones["propertyId"]) | set(fours["propertyId"])


def test_conditions_go_on_the_wire_as_the_sdk_sends_them(profile, tmp_path):
    bodies: list[Any] = []

    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # answers written in pieces leave at once

        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            answer = json.dumps({"success": True, "result": [], "totalSize": 0, "size": 0,
                                 "hasMore": False, "nextOffset": 0}).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    query = where(cond("roomDetails.beds", "in", (2, 3)), cond("propertyType", "eq", "flat"))
    with serving(Handler) as server:
        url = url_of(server)
        with pk.Client("pk_live_test", url, cache=False, progress=False, profile=profile) as c:
            c.query({"type": "outcode", "value": "SW1A"}, query=query, page_size=10)
    assert bodies == [{
        "area": [{"type": "outcode", "value": "SW1A"}],
        "query": [{"operator": "AND", "groups": [{"conditions": [
            {"field": "roomDetails.beds", "comparator": "in", "value": [2, 3]},
            {"field": "propertyType", "comparator": "eq", "value": "flat"}]}]}],
        "offset": 0, "limit": 10,
    }]  # fmt: skip


def test_the_client_and_the_sandbox_know_the_same_condition_fields():
    from propertykit.client._query_conditions import COMPARATORS, CONDITION_FIELDS
    from propertykit.sandbox import _query_conditions as served

    assert set(CONDITION_FIELDS) == set(served.FIELDS)
    assert COMPARATORS == served.COMPARATORS
    same_kind = {"int": "number", "number": "number", "date": "date", "datetime": "date",
                 "flag": "flag", "text": "text", "category": "text", "level": "text"}  # fmt: skip
    assert {n: same_kind[k] for n, k in CONDITION_FIELDS.items()} == served.FIELDS


BAD_CONDITIONS: list[tuple[str, Any, str]] = [
    ("not a list", {"operator": "AND", "groups": []}, r"query: must be a list"),
    ("empty list", [], r"query: must be a list"),
    ("unknown operator", [{"operator": "XOR", "groups": [{"conditions": [
        cond("roomDetails.beds", "eq", 2)]}]}], r"query\[0\]\.operator"),
    ("lower-case operator", [{"operator": "and", "groups": [{"conditions": [
        cond("roomDetails.beds", "eq", 2)]}]}], r"'AND' or 'OR'"),
    ("no groups", [{"operator": "AND", "groups": []}], r"query\[0\]\.groups"),
    ("extra key", [{"operator": "AND", "groups": [], "not": True}], r"unknown key 'not'"),
    ("no conditions", [{"operator": "AND", "groups": [{"conditions": []}]}], r"conditions"),
    ("unknown field", where(cond("bedrooms", "eq", 2)), r"unknown field 'bedrooms'"),
    ("misspelt field", where(cond("roomDetails.bed", "eq", 2)), r"roomDetails\.beds"),
    ("sale history", where(cond("saleHistory", "eq", 2)), r"unknown field 'saleHistory'"),
    ("unknown comparator", where(cond("roomDetails.beds", "between", [2, 3])),
     r"unknown comparator 'between'"),
    ("gt on text", where(cond("address.postcode", "gt", "BA1")), r"'gt' needs a number"),
    ("contains on a number", where(cond("floorAreaSqM", "contains", "8")), r"needs a text"),
    ("text for a number", where(cond("roomDetails.beds", "eq", "three")), r"takes a number"),
    ("bool for a number", where(cond("roomDetails.beds", "eq", True)), r"takes a number"),
    ("NaN", where(cond("floorAreaSqM", "gte", float("nan"))), r"takes a number"),
    ("single value for in", where(cond("roomDetails.beds", "in", 2)), r"non-empty list"),
    ("empty in", where(cond("roomDetails.beds", "in", [])), r"non-empty list"),
    ("bad item in nin", where(cond("propertyType", "nin", ["flat", 3])), r"takes text"),
    ("not a date", where(cond("epc.validFrom", "gte", "last year")), r"ISO 8601"),
    ("text for a flag", where(cond("tags.auction", "eq", "yes")), r"true or false"),
    ("bad regex", where(cond("address.town", "regex", "(unclosed")), r"regular expression"),
    ("missing value", where({"field": "propertyType", "comparator": "eq"}), r"missing 'value'"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("query", "said"), [c[1:] for c in BAD_CONDITIONS], ids=[c[0] for c in BAD_CONDITIONS]
)
def test_bad_conditions_are_refused_in_words_with_nothing_sent(shared_sb, client, query, said):
    shared_sb.reset_log()
    charged = shared_sb.credits_charged
    with pytest.raises(pk.InvalidInput, match=said):
        client.query(UK, query=query)
    assert shared_sb.requests == [] and shared_sb.credits_charged == charged
    assert client.usage.requests_sent == 0


def test_named_filters_and_conditions_together_are_refused(own_sb, make_client):
    sb = own_sb
    with pytest.raises(pk.InvalidInput, match=r"not both"):
        make_client(sb).query(UK, beds=[2], query=where(cond("roomDetails.beds", "eq", 2)))
    assert sb.requests == []
