"""The synthetic records: deterministic, complete, realistic and consistent."""

from __future__ import annotations

import itertools
import re
from datetime import date, datetime
from typing import Any

import pytest
import shapely.geometry

from propertykit.sandbox import _data as data
from propertykit.sandbox import _ids as sandbox_ids
from propertykit.sandbox._epc_trend import energy_rating
from propertykit.sandbox._tables import TOWNS

RECORDS = data.generate_records(1500)
POSTCODE = re.compile(r"^[A-Z]{1,2}[0-9][0-9A-Z]? [0-9][ABD-HJLNP-UW-Z]{2}$")
GB_BOX = (49.8, 61.0, -8.7, 1.8)  # lat min, lat max, lng min, lng max

RECORD_FIELDS = {
    "propertyId", "locationId", "address", "spatial", "classificationCode", "propertyType",
    "propertySubType", "roomDetails", "pricing", "marketStatus", "epc", "saleHistory", "tenure",
    "councilTax", "tags", "floorAreaSqM", "plotSizeSqM", "yearBuilt", "lastUpdated",
}  # fmt: skip
ADDRESS_FIELDS = {
    "displayAddress", "postcode", "streetName", "streetNumber", "locality", "town", "county",
    "postcodeNoSpace", "outcode", "incode", "country",
}  # fmt: skip


def _with(key: str) -> list[dict[str, Any]]:
    return [r for r in RECORDS if r.get(key)]


def test_records_are_deterministic_per_seed_and_index() -> None:
    assert data.generate_record(7) == data.generate_record(7) == RECORDS[7]
    assert data.generate_record(7, seed=1) != data.generate_record(7)
    assert data.generate_record(7, seed=1) == data.generate_records(8, seed=1)[7]


def test_every_field_of_the_spec_is_present() -> None:
    for record in RECORDS:
        assert set(record) | {"saleHistory"} == RECORD_FIELDS
        assert set(record["address"]) == ADDRESS_FIELDS
        assert {"lat", "lng"} <= set(record["spatial"])
        assert set(record["roomDetails"]) == {"beds", "baths", "receptions"}
        assert set(record["pricing"]) == {
            "currentSalePrice", "currentRentPrice", "estimatedSaleValue", "estimatedRentValue",
            "pricePerSqFt", "currency",
        }  # fmt: skip
        assert set(record["marketStatus"]) == {
            "forSale",
            "forRent",
            "listingDate",
            "soldDate",
            "daysOnMarket",
        }
        assert set(record["councilTax"]) == {"taxBand", "annualCharge", "localAuthority"}
        assert set(record["tags"]) == {
            "newBuild", "chainFree", "auction", "sharedOwnership", "retirement", "cashBuyersOnly",
            "investment",
        }  # fmt: skip
        assert all(isinstance(flag, bool) for flag in record["tags"].values())


@pytest.mark.parametrize(
    ("efficiency", "letter"),
    [(100, "A"), (92, "A"), (91, "B"), (81, "B"), (80, "C"), (69, "C"), (68, "D"), (55, "D"),
     (54, "E"), (39, "E"), (38, "F"), (21, "F"), (20, "G"), (1, "G")],
)  # fmt: skip
def test_energy_rating_bands(efficiency: int, letter: str) -> None:
    assert energy_rating(efficiency) == letter


def test_epc_letters_match_efficiency_and_potential_is_not_lower() -> None:
    epcs = [r["epc"] for r in _with("epc")]
    for epc in epcs:
        assert epc["currentEnergyRating"] == energy_rating(epc["currentEnergyEfficiency"])
        assert epc["potentialEnergyRating"] == energy_rating(epc["potentialEnergyEfficiency"])
        assert 1 <= epc["currentEnergyEfficiency"] <= epc["potentialEnergyEfficiency"] <= 100
    assert {e["currentEnergyRating"] for e in epcs} >= set("BCDEF")


def test_epc_certificates_are_valid_for_ten_years() -> None:
    for record in _with("epc"):
        valid_from = date.fromisoformat(record["epc"]["validFrom"])
        valid_to = date.fromisoformat(record["epc"]["validTo"])
        assert valid_to.year - valid_from.year == 10
        assert (valid_to.month, valid_to.day) in {(valid_from.month, valid_from.day), (2, 28)}


def test_postcodes_are_well_formed_and_consistent() -> None:
    for record in RECORDS:
        address = record["address"]
        assert POSTCODE.match(address["postcode"]), address["postcode"]
        assert address["postcode"] == f"{address['outcode']} {address['incode']}"
        assert address["postcodeNoSpace"] == address["postcode"].replace(" ", "")
        assert address["country"] == "GB"
        assert address["postcode"] in address["displayAddress"]


def test_coordinates_are_inside_gb_and_near_their_town() -> None:
    towns = {(t.name, t.local_authority): t for t in TOWNS}
    for record in RECORDS:
        lat, lng = record["spatial"]["lat"], record["spatial"]["lng"]
        assert GB_BOX[0] < lat < GB_BOX[1] and GB_BOX[2] < lng < GB_BOX[3]
        town = towns[(record["address"]["town"], record["councilTax"]["localAuthority"])]
        assert abs(lat - town.lat) < 0.05 and abs(lng - town.lng) < 0.08


def test_sale_history_is_in_date_order_with_integer_pounds() -> None:
    histories = [r["saleHistory"] for r in RECORDS if "saleHistory" in r]
    for history in histories:
        days = [sale["date"] for sale in history]
        assert days == sorted(days)
        assert all(isinstance(sale["price"], int) and sale["price"] > 0 for sale in history)
        assert all(isinstance(sale["newBuild"], bool) for sale in history)
    assert sum(len(h) >= 2 for h in histories) > 300


def test_prices_grow_over_time() -> None:
    rises = falls = 0
    for record in _with("saleHistory"):
        history = record["saleHistory"]
        for earlier, later in itertools.pairwise(history):
            if int(later["date"][:4]) - int(earlier["date"][:4]) >= 5:
                rises += later["price"] > earlier["price"]
                falls += later["price"] <= earlier["price"]
    assert rises > 10 * falls


def test_london_prices_are_higher_than_the_north_east() -> None:
    def median(region: str) -> float:
        towns = {t.local_authority for t in TOWNS if t.region == region}
        values = sorted(
            r["pricing"]["estimatedSaleValue"]
            for r in RECORDS
            if r["councilTax"]["localAuthority"] in towns
        )
        return float(values[len(values) // 2])

    assert median("London") > 2 * median("North East")


def test_about_half_have_valid_polygon_boundaries_around_the_point() -> None:
    shapes = [r["spatial"].get("boundary") for r in RECORDS]
    polygons = [b for b in shapes if b is not None]
    assert 0.4 < len(polygons) / len(RECORDS) < 0.6
    for record in RECORDS:
        boundary = record["spatial"].get("boundary")
        if boundary is None:
            continue
        assert boundary["type"] == "Polygon"
        ring = boundary["coordinates"][0]
        assert ring[0] == ring[-1]
        polygon = shapely.geometry.shape(boundary)
        assert polygon.is_valid
        assert polygon.contains(
            shapely.geometry.Point(record["spatial"]["lng"], record["spatial"]["lat"])
        )
    assert any("boundary" not in r["spatial"] for r in RECORDS)
    assert any("boundary" in r["spatial"] and r["spatial"]["boundary"] is None for r in RECORDS)


def test_some_optional_fields_are_null_or_absent() -> None:
    assert 0.02 < sum(r["epc"] is None for r in RECORDS) / len(RECORDS) < 0.1
    assert any("saleHistory" not in r for r in RECORDS)
    for record in RECORDS:
        tenure = record["tenure"]
        assert ("leaseYearsRemaining" in tenure) == (tenure["type"] == "leasehold")
    assert {r["tenure"]["type"] for r in RECORDS} >= {"freehold", "leasehold"}


def test_money_is_integer_pounds_in_gbp() -> None:
    for record in RECORDS:
        pricing = record["pricing"]
        assert pricing["currency"] == "GBP"
        for name in ("estimatedSaleValue", "estimatedRentValue", "pricePerSqFt"):
            assert isinstance(pricing[name], int)
        live = record["marketStatus"]["forSale"] == "live"
        assert (pricing["currentSalePrice"] is not None) == live


def test_market_status_and_dates_are_iso() -> None:
    statuses = {r["marketStatus"]["forSale"] for r in RECORDS}
    assert {"live", "unavailable"} < statuses
    for record in RECORDS:
        for value in (record["marketStatus"]["listingDate"], record["lastUpdated"]):
            assert value.endswith("Z")
            datetime.fromisoformat(value)


def test_council_tax_bands_are_letters_a_to_h() -> None:
    bands = {r["councilTax"]["taxBand"] for r in RECORDS}
    assert bands <= set("ABCDEFGH") and len(bands) >= 6


def test_several_source_ids_resolve_to_each_property() -> None:
    for index in range(200):
        ids = sandbox_ids.source_ids_for(index)
        assert len(ids) >= 2
        assert len({i.split("::")[0] for i in ids}) == len(ids)
        assert all(sandbox_ids.index_from_source_id(i) == index for i in ids)


@pytest.mark.parametrize(
    "value",
    ["rightmove::100000001", "zoopla::49999993", "epc::8200-0000-0000-000X", "nope", "::", "L1"],
)
def test_ids_that_are_not_ours_resolve_to_nothing(value: str) -> None:
    assert sandbox_ids.index_from_source_id(value) is None
    assert sandbox_ids.index_from_location_id(value) is None
    assert sandbox_ids.index_from_title_number(value) is None


def test_location_ids_and_title_numbers_decode_to_their_index() -> None:
    for index in (0, 1, 42, 4999, 123_456):
        assert sandbox_ids.index_from_location_id(sandbox_ids.location_id(index)) == index
        title = sandbox_ids.title_number(index, seed=3)
        assert re.fullmatch(r"[A-Z]{1,3}[0-9]{6}", title)
        assert sandbox_ids.index_from_title_number(title, seed=3) == index
    assert RECORDS[42]["locationId"] == sandbox_ids.location_id(42)
