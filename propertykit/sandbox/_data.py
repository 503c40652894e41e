"""Deterministic synthetic UK property records for the sandbox.

Each record depends only on ``(seed, index)``, so a sandbox of any size builds records lazily,
and every identifier encodes its index, so a lookup never generates more than the block of
:data:`BLOCK` records that holds the one asked for.

Identifiers encode the index (:mod:`propertykit.sandbox._ids`, whose names are also here).

Money is in whole pounds (GBP); rents are per calendar month. Dates in ``saleHistory`` and
``epc`` are ``YYYY-MM-DD``; date-times are ISO 8601 with ``Z``. Data is anchored to
:data:`REFERENCE_DATE`, not the wall clock, so it never changes between runs. EPC certificates
improve over the years they were lodged in a known way (:mod:`propertykit.sandbox._epc_trend`).
"""

from __future__ import annotations

import math
import pickle
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from propertykit.sandbox._epc_trend import draw_certificate
from propertykit.sandbox._geography import home, record_rng, town_of, type_position
from propertykit.sandbox._ids import (
    location_id,
)
from propertykit.sandbox._price_index import REALISMS, sale_history
from propertykit.sandbox._tables import (
    BAND_LIMITS,
    BAND_RATIOS,
    INCODE_LETTERS,
    PROPERTY_TYPES,
    REGION_PRICES,
    STREET_NAMES,
    STREET_SUFFIXES,
    TAGS,
    Town,
)
from propertykit.sandbox._valuation import real_value

#: The day the synthetic data describes ("today" for listing ages and price growth).
REFERENCE_DATE = date(2025, 6, 1)

_REFERENCE_ORDINAL = REFERENCE_DATE.toordinal()


def _iso_datetime(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds") + "Z"


def _nearest(value: float, step: int) -> int:
    """``value`` rounded to a multiple of ``step`` (faster than ``round(value, -n)``)."""
    return int(value / step + 0.5) * step


def _boundary(rng: random.Random, lat: float, lng: float, area: float) -> dict[str, Any]:
    """A closed, counter-clockwise rectangle of about ``area`` m² around the point."""
    half_width = math.sqrt(area) / 2
    half_depth = half_width * (0.8 + rng.random() * 0.8)
    angle = rng.random() * math.pi
    cos, sin = math.cos(angle), math.sin(angle)
    per_lat = 1 / 111_320.0
    per_lng = 1 / (111_320.0 * math.cos(math.radians(lat)))
    ring = []
    for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        x, y = dx * half_width, dy * half_depth
        ring.append([lng + (x * cos - y * sin) * per_lng, lat + (x * sin + y * cos) * per_lat])
    ring.append(list(ring[0]))
    return {"type": "Polygon", "coordinates": [ring]}


def _address(rand: Callable[[], float], town: Town, is_flat: bool) -> dict[str, str]:
    position = int(rand() * len(town.outcodes))
    outcode, locality = town.outcodes[position], town.localities[position]
    letters = INCODE_LETTERS
    incode = f"{int(rand() * 10)}{letters[int(rand() * 20)]}{letters[int(rand() * 20)]}"
    street = f"{STREET_NAMES[int(rand() * len(STREET_NAMES))]} {STREET_SUFFIXES[int(rand() * 8)]}"
    number = str(1 + int(rand() * 180))
    flat = f"Flat {1 + int(rand() * 24)}, " if is_flat else ""
    postcode = f"{outcode} {incode}"
    return {
        "displayAddress": f"{flat}{number} {street}, {locality}, {town.name}, {postcode}",
        "postcode": postcode,
        "streetName": street,
        "streetNumber": number,
        "locality": locality,
        "town": town.name,
        "county": town.county,
        "postcodeNoSpace": outcode + incode,
        "outcode": outcode,
        "incode": incode,
        "country": "GB",
    }


def _market_status(
    rand: Callable[[], float], history: list[dict[str, Any]]
) -> dict[str, str | int | None]:
    sale_state = rand()
    for_sale = "live" if sale_state < 0.14 else "unavailable"
    if 0.14 <= sale_state < 0.17:
        for_sale = "underOffer" if sale_state < 0.155 else "soldSTC"
    rent_state = rand()
    for_rent = "unavailable"
    if rent_state < 0.09:
        for_rent = "live" if rent_state < 0.08 else "letAgreed"
    live = "live" in (for_sale, for_rent)
    days_listed = 1 + int(rand() * (150 if live else 2000))
    listed = datetime.fromordinal(_REFERENCE_ORDINAL - days_listed).replace(
        hour=8 + int(rand() * 10)
    )
    return {
        "forSale": for_sale,
        "forRent": for_rent,
        "listingDate": _iso_datetime(listed),
        "soldDate": f"{history[-1]['date']}T00:00:00Z" if history else None,
        "daysOnMarket": days_listed if live else None,
    }


def _tenure(rand: Callable[[], float], is_flat: bool) -> dict[str, Any]:
    draw = rand()
    if (is_flat and draw < 0.93) or (not is_flat and draw < 0.06):
        long_lease = rand() >= 0.85
        years = 900 + int(rand() * 90) if long_lease else 55 + int(rand() * 120)
        charge = _nearest(600 + rand() * 3400, 10) if is_flat else int(rand() * 30) * 10
        return {
            "type": "leasehold",
            "leaseYearsRemaining": years,
            "groundRent": int(rand() * 40) * 10,
            "serviceCharge": charge,
        }
    if is_flat and draw < 0.97:
        charge = _nearest(400 + rand() * 1600, 10)
        return {"type": "share of freehold", "groundRent": 0, "serviceCharge": charge}
    return {"type": "freehold", "groundRent": 0, "serviceCharge": 0}


@dataclass(frozen=True)
class _Head:
    """The first draws of a record: town, type, rooms, size and age (the address comes next)."""

    town: Town
    type_position: int
    kind: str
    is_flat: bool
    beds: int
    baths: int
    receptions: int
    floor_area: float
    year_built: int | None


def _head(rng: random.Random) -> _Head:
    rand = rng.random
    town = town_of(rng)
    position = type_position(rng)
    kind, _, code, _, _, (fewest_beds, most_beds) = PROPERTY_TYPES[position]
    is_flat = code == "RD06"
    beds = fewest_beds + int(rand() * (most_beds - fewest_beds + 1))
    baths = 1 + int(rand() * (1 + beds // 2)) if beds > 1 else 1
    receptions = 0 if is_flat and rand() < 0.3 else 1 + int(rand() * max(1, beds - 1) * 0.6)
    floor_area = int((28 + beds * 22 + rand() * 25 + (15 if kind == "detached" else 0)) * 10) / 10
    built = 1960 + int(rand() ** 1.3 * 66) if is_flat else 1850 + int(rand() ** 0.9 * 176)
    year_built = None if rand() < 0.03 else min(built, REFERENCE_DATE.year)
    return _Head(town, position, kind, is_flat, beds, baths, receptions, floor_area, year_built)


def drawn_address(index: int, seed: int = 0, *, realism: str = "textbook") -> dict[str, Any]:
    """The ``address`` of the record at ``index``, without drawing the rest of the record.

    Examples
    --------
    >>> drawn_address(7) == generate_record(7)["address"]
    True
    """
    if realism == "real":
        return dict(home(index, seed).address)
    rng = record_rng(index, seed)
    head = _head(rng)
    return _address(rng.random, head.town, head.is_flat)


def drawn_addresses(n: int, seed: int = 0, *, realism: str = "textbook") -> list[dict[str, Any]]:
    """The addresses of the first ``n`` records, without drawing the rest of the records.

    Examples
    --------
    >>> [a["displayAddress"] == r["address"]["displayAddress"]
    ...  for a, r in zip(drawn_addresses(3, realism="real"), generate_records(3, realism="real"))]
    [True, True, True]
    """
    if realism not in REALISMS:
        raise ValueError(f"realism must be one of {', '.join(REALISMS)}, got {realism!r}")
    return [drawn_address(index, seed, realism=realism) for index in range(n)]


def generate_record(index: int, seed: int = 0, *, realism: str = "textbook") -> dict[str, Any]:
    """One synthetic property record, the same every time for the same ``(index, seed)``.

    Parameters
    ----------
    index
        Position of the record (0-based); it is encoded in every identifier of the record.
    seed
        Selects a different but equally deterministic world.
    realism
        ``"textbook"`` (the default): prices as the repeat-sales method assumes them.
        ``"real"``: as real sales are: values on a known price-per-m² surface
        (:mod:`propertykit.sandbox._valuation`), dispersion falling with the time a home is held,
        outlier sales (:mod:`propertykit.sandbox._price_index`), and one home in sixteen out in
        the country, 6 to 20 km from its town, where sales are few. Everything else a record
        holds is the same in both.

    Returns
    -------
    dict
        A property record with every field of the service interface; some optional fields are
        ``None`` or absent, as in real data.

    Examples
    --------
    >>> record = generate_record(7)
    >>> record["locationId"], record["address"]["country"]
    ('L00000007', 'GB')
    """
    if index < 0:
        raise ValueError("index must be >= 0")
    if realism not in REALISMS:
        raise ValueError(f"realism must be one of {', '.join(REALISMS)}, got {realism!r}")
    rng = record_rng(index, seed)
    rand = rng.random
    head = _head(rng)
    town, kind, is_flat, floor_area = head.town, head.kind, head.is_flat, head.floor_area
    _, _, code, subtypes, price_factor, _ = PROPERTY_TYPES[head.type_position]
    year_built = head.year_built
    base_price = REGION_PRICES[town.region][0]

    address = _address(rand, town, is_flat)
    lat = int((town.lat + (rand() - 0.5) * 0.05) * 1e6) / 1e6
    lng = int((town.lng + (rand() - 0.5) * 0.08) * 1e6) / 1e6

    value_now = base_price * price_factor * (floor_area / 85) ** 0.8 * math.exp(rand() - 0.5)
    if realism == "real":  # the draws above are still taken, so every other field stays put
        place = home(index, seed)  # postcode units, streets, buildings (sandbox._geography)
        address, lat, lng = dict(place.address), place.lat, place.lng
        value_now = real_value(
            random.Random(f"propertykit:{seed}:{index}:value"),
            lat=lat,
            lng=lng,
            region=town.region,
            kind=kind,
            floor_area=floor_area,
            today=REFERENCE_DATE,
        )
    estimated_sale = _nearest(value_now, 1000)
    estimated_rent = _nearest(value_now * (0.038 + rand() * 0.02) / 12, 10)
    history = sale_history(
        rand,
        random.Random(f"propertykit:{seed}:{index}:sales"),
        value_now=value_now,
        region=town.region,
        year_built=year_built,
        kind=kind,
        today=REFERENCE_DATE,
        realism=realism,
    )
    market_status = _market_status(rand, history)
    asking = _nearest(value_now * (1.0 + rand() * 0.08), 1000)
    rent = _nearest(estimated_rent * (1.0 + rand() * 0.05), 10)
    pricing = {
        "currentSalePrice": asking if market_status["forSale"] == "live" else None,
        "currentRentPrice": rent if market_status["forRent"] == "live" else None,
        "estimatedSaleValue": estimated_sale,
        "estimatedRentValue": estimated_rent,
        "pricePerSqFt": _nearest(estimated_sale / (floor_area * 10.7639), 1),
        "currency": "GBP",
    }

    epc = None
    if rand() >= 0.05:
        # certificates come from a stream of their own (see propertykit.sandbox._epc_trend);
        # the three draws they once took are still taken, so every later field stays as it was
        for _ in range(3):
            rand()
        epc = draw_certificate(index, seed, region=town.region, property_type=kind)
    relative_value = estimated_sale / base_price
    band = next((name for name, limit in BAND_LIMITS if relative_value <= limit), "H")
    tags = {name: rand() < 0.06 for name in TAGS}
    tags["newBuild"] = year_built is not None and year_built >= REFERENCE_DATE.year - 1
    updated = datetime.fromordinal(_REFERENCE_ORDINAL - 365) + timedelta(
        seconds=int(rand() * 31_536_000)
    )
    plot_size = None if is_flat else int(floor_area * (13 + rand() * 40)) / 10

    record: dict[str, Any] = {
        "propertyId": f"PK{index:08d}",
        "locationId": location_id(index),
        "address": address,
        "spatial": {"lat": lat, "lng": lng},
        "classificationCode": code,
        "propertyType": kind,
        "propertySubType": subtypes[int(rand() * len(subtypes))],
        "roomDetails": {"beds": head.beds, "baths": head.baths, "receptions": head.receptions},
        "pricing": pricing,
        "marketStatus": market_status,
        "epc": epc,
        "saleHistory": history,
        "tenure": _tenure(rand, is_flat),
        "councilTax": {
            "taxBand": band,
            "annualCharge": _nearest(town.band_d * BAND_RATIOS[band] / 9, 1),
            "localAuthority": town.local_authority,
        },
        "tags": tags,
        "floorAreaSqM": floor_area if rand() >= 0.02 else None,
        "plotSizeSqM": plot_size,
        "yearBuilt": year_built,
        "lastUpdated": _iso_datetime(updated),
    }
    shape = rand()
    if shape < 0.5:
        record["spatial"]["boundary"] = _boundary(rng, lat, lng, plot_size or floor_area * 1.5)
    elif shape < 0.75:
        record["spatial"]["boundary"] = None
    if rand() < 0.03:
        del record["saleHistory"]
    return record


def generate_records(n: int, seed: int = 0, *, realism: str = "textbook") -> list[dict[str, Any]]:
    """The first ``n`` records of the world selected by ``seed`` (``realism``: as for
    :func:`generate_record`).

    Examples
    --------
    >>> [r["locationId"] for r in generate_records(2)]
    ['L00000000', 'L00000001']

    Each call gives records of its own, free to change. Records are drawn a block of
    :data:`BLOCK` at a time and kept pickled for the process (the latest 60,000 or so), so a
    world asked again, at any size, is unpickled rather than drawn again: several times quicker
    (benchmarks/sandbox.py).
    """
    records: list[dict[str, Any]] = []
    for start in range(0, n, BLOCK):
        records.extend(drawn_block(start // BLOCK, seed, realism=realism)[: n - start])
    return records


#: Records drawn and kept together, by :func:`generate_records` and the sandbox's catalogue.
BLOCK = 100


def drawn_block(block: int, seed: int = 0, *, realism: str = "textbook") -> list[dict[str, Any]]:
    """Records ``block * BLOCK`` up to ``(block + 1) * BLOCK`` of the world ``seed``, copies of
    their own: drawn once a process and kept pickled, so that whoever asks for them next (a
    fixture's :func:`generate_records`, a sandbox serving the same world) unpickles them.

    Examples
    --------
    >>> [r["locationId"] for r in drawn_block(3)[:2]]
    ['L00000300', 'L00000301']
    """
    records: list[dict[str, Any]] = pickle.loads(_pickled_block(block, seed, realism))
    return records


@lru_cache(maxsize=600)
def _pickled_block(block: int, seed: int, realism: str) -> bytes:
    indexes = range(block * BLOCK, (block + 1) * BLOCK)
    records = [generate_record(index, seed, realism=realism) for index in indexes]
    return pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
