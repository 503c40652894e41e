"""The real world's address geography: postcode units, streets, buildings, and records that
agree with their addresses."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import pytest

from propertykit.sandbox import generate_records, world_addresses
from propertykit.sandbox._geography import CHUNK, home

pytestmark = pytest.mark.timeout(120)

N = 2 * CHUNK  # whole chunks: every unit of them is complete


def _units() -> dict[str, list[int]]:
    units: dict[str, list[int]] = defaultdict(list)
    for index, address in enumerate(world_addresses(N)):
        units[address["postcode"]].append(index)
    return units


def _metres(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(
        (a[0] - b[0]) * 111_320, (a[1] - b[1]) * 111_320 * math.cos(math.radians(a[0]))
    )


def test_postcode_units_hold_10_to_40_homes_on_one_to_three_streets() -> None:
    units = _units()
    addresses = world_addresses(N)
    assert all(10 <= len(members) <= 40 for members in units.values())
    streets = [{addresses[i]["streetName"] for i in members} for members in units.values()]
    assert {len(names) for names in streets} == {1, 2, 3}
    towns = [{addresses[i]["town"] for i in members} for members in units.values()]
    assert all(len(names) == 1 for names in towns)  # a unit lies in one town and one locality


def test_a_units_homes_stand_within_a_few_hundred_metres_and_units_are_apart() -> None:
    units = _units()
    points = {index: (home(index).lat, home(index).lng) for index in range(N)}
    centres = {}
    for postcode, members in units.items():
        lat = sum(points[i][0] for i in members) / len(members)
        lng = sum(points[i][1] for i in members) / len(members)
        centres[postcode] = (lat, lng)
        assert max(_metres(points[i], (lat, lng)) for i in members) < 300
    first = next(iter(centres.values()))
    assert max(_metres(first, centre) for centre in centres.values()) > 2_000


def test_flats_share_a_numbered_building_on_one_street_and_houses_are_numbered_or_named() -> None:
    records = generate_records(N, realism="real")
    buildings: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        address = record["address"]
        if "subBuilding" in address:
            assert record["classificationCode"] == "RD06"  # a flat or a maisonette
            key = (address["postcode"], address["streetName"], address["streetNumber"])
            buildings[key].append(record)
            assert address["displayAddress"].startswith(address["subBuilding"] + ", ")
        else:
            assert record["classificationCode"] != "RD06"
            assert address["streetNumber"] or address["buildingName"]
    assert max(len(flats) for flats in buildings.values()) >= 5
    for flats in buildings.values():
        spots = [(f["spatial"]["lat"], f["spatial"]["lng"]) for f in flats]
        assert max(_metres(spots[0], spot) for spot in spots) < 10
        names = {f["address"].get("buildingName") for f in flats}
        assert len(names) == 1
        subs = [f["address"]["subBuilding"] for f in flats]
        assert len(set(subs)) == len(subs)
    displays = [r["address"]["displayAddress"] for r in records]
    assert len(set(displays)) == len(displays)  # no two homes share an address
    assert any("-" in (r["address"]["streetNumber"] or "") for r in records)  # ranges
    assert any(r["address"].get("buildingName") and "subBuilding" not in r["address"]
               for r in records)  # fmt: skip


def test_no_two_units_share_a_postcode_and_a_record_is_its_address() -> None:
    addresses = world_addresses(N)
    by_postcode: dict[str, set[str]] = defaultdict(set)
    for address in addresses:
        by_postcode[address["postcode"]].add(address["locality"])
        assert address["postcode"] == f"{address['outcode']} {address['incode']}"
        assert address["postcodeNoSpace"] == address["outcode"] + address["incode"]
    assert all(len(localities) == 1 for localities in by_postcode.values())
    records = generate_records(300, realism="real")
    assert [r["address"] for r in records] == addresses[:300]
    assert world_addresses(300, realism="textbook") == [r["address"] for r in generate_records(300)]
