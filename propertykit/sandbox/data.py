"""Deterministic synthetic UK property records for the sandbox.

Each record depends only on ``(seed, index)``, so a sandbox of any size builds records lazily,
and every identifier encodes its index, so a lookup never generates more than the block of
:data:`BLOCK` records that holds the one asked for.

Identifiers
-----------
=================  =====================================  ===================================
what               format                                  example (index 42)
=================  =====================================  ===================================
locationId         ``L`` + 8 digits (the index)            ``L00000042``
propertyId         ``PK`` + 8 digits (the index)           ``PK00000042``
source ids         ``rightmove::`` 100000000 + 3 x index   ``rightmove::100000126``
                   ``zoopla::`` 50000000 + 7 x index       ``zoopla::50000294``
                   ``onthemarket::OTM`` + 7 digits          ``onthemarket::OTM0000042``
                   (not when ``index % 4 == 3``)
                   ``epc::`` 4-4-4-4 digit groups           ``epc::8200-0000-0000-0042``
                   (not when ``index % 5 == 4``)
title number       Land Registry office prefix + 6 digits  ``NGL100042``
                   (100000 + index; prefix of the town)
=================  =====================================  ===================================

Money is in whole pounds (GBP); rents are per calendar month. Dates in ``saleHistory`` and
``epc`` are ``YYYY-MM-DD``; date-times are ISO 8601 with ``Z``. Data is anchored to
:data:`REFERENCE_DATE`, not the wall clock, so it never changes between runs. EPC certificates
improve over the years they were lodged in a known way (:mod:`propertykit.sandbox.epc_trend`).
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

from propertykit.sandbox.epc_trend import draw_certificate, energy_rating
from propertykit.sandbox.geography import home, record_rng, town_of, type_position
from propertykit.sandbox.price_index import REALISMS, sale_history
from propertykit.sandbox.tables import (
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
from propertykit.sandbox.valuation import real_value

__all__ = [
    "BLOCK",
    "PROVIDERS",
    "REFERENCE_DATE",
    "drawn_address",
    "drawn_addresses",
    "drawn_block",
    "energy_rating",
    "generate_record",
    "generate_records",
    "index_from_location_id",
    "index_from_source_id",
    "index_from_title_number",
    "location_id",
    "source_id",
    "source_ids_for",
    "title_number",
]

#: The day the synthetic data describes ("today" for listing ages and price growth).
REFERENCE_DATE = date(2025, 6, 1)

_REFERENCE_ORDINAL = REFERENCE_DATE.toordinal()

#: Source-id providers, in the order :func:`source_ids_for` lists them.
PROVIDERS = ("rightmove", "zoopla", "onthemarket", "epc")


def location_id(index: int) -> str:
    """The locationId of the record at ``index``.

    Examples
    --------
    >>> location_id(42)
    'L00000042'
    """
    return f"L{index:08d}"


def index_from_location_id(value: str) -> int | None:
    """The record index a locationId encodes, or ``None`` when it is not one of ours.

    Examples
    --------
    >>> index_from_location_id("L00000042")
    42
    """
    if len(value) == 9 and value[0] == "L" and value[1:].isdigit() and value[1:].isascii():
        return int(value[1:])
    return None


def source_id(index: int, provider: str) -> str:
    """The ``<provider>::<id>`` source id of the record at ``index`` (whether or not it exists).

    Examples
    --------
    >>> source_id(42, "zoopla")
    'zoopla::50000294'
    """
    if provider == "rightmove":
        return f"rightmove::{100_000_000 + 3 * index}"
    if provider == "zoopla":
        return f"zoopla::{50_000_000 + 7 * index}"
    if provider == "onthemarket":
        return f"onthemarket::OTM{index:07d}"
    if provider == "epc":
        digits = f"8200{index:012d}"
        return "epc::" + "-".join(digits[i : i + 4] for i in range(0, 16, 4))
    raise ValueError(f"unknown provider {provider!r}; expected one of {PROVIDERS}")


def _has_source(index: int, provider: str) -> bool:
    if provider == "onthemarket":
        return index % 4 != 3
    if provider == "epc":
        return index % 5 != 4
    return True


def source_ids_for(index: int) -> list[str]:
    """Every source id that resolves to the record at ``index`` (two to four of them).

    Examples
    --------
    >>> source_ids_for(3)
    ['rightmove::100000009', 'zoopla::50000021', 'epc::8200-0000-0000-0003']
    """
    return [source_id(index, p) for p in PROVIDERS if _has_source(index, p)]


def _decode_source(provider: str, local: str) -> int | None:
    if provider == "rightmove" and local.isdigit():
        offset = int(local) - 100_000_000
        return offset // 3 if offset >= 0 and offset % 3 == 0 else None
    if provider == "zoopla" and local.isdigit():
        offset = int(local) - 50_000_000
        return offset // 7 if offset >= 0 and offset % 7 == 0 else None
    if provider == "onthemarket" and local.startswith("OTM") and local[3:].isdigit():
        return int(local[3:])
    if provider == "epc":
        digits = local.replace("-", "")
        if len(local) == 19 and len(digits) == 16 and digits.isdigit() and digits[:4] == "8200":
            return int(digits[4:])
    return None


def index_from_source_id(value: str) -> int | None:
    """The record index a ``<provider>::<id>`` source id resolves to, or ``None``.

    Examples
    --------
    >>> index_from_source_id("rightmove::100000126")
    42
    """
    provider, sep, local = value.partition("::")
    if not sep or not local.isascii():
        return None
    index = _decode_source(provider, local)
    if index is None or not _has_source(index, provider) or source_id(index, provider) != value:
        return None
    return index


_rng = record_rng
_town_of = town_of  # the first draw of a record's generator: title numbers are checked cheaply


def title_number(index: int, seed: int = 0) -> str:
    """The title number of the record at ``index``: its town's registry prefix + 6 digits.

    Examples
    --------
    >>> title_number(42)[-6:]
    '100042'
    """
    return f"{_town_of(_rng(index, seed)).title_prefix}{100_000 + index}"


def index_from_title_number(value: str, seed: int = 0) -> int | None:
    """The record index a title number belongs to (for this ``seed``), or ``None``.

    Examples
    --------
    >>> index_from_title_number(title_number(42))
    42
    """
    prefix = value.rstrip("0123456789")
    digits = value[len(prefix) :]
    if not (prefix.isalpha() and prefix.isascii() and len(digits) == 6):
        return None
    index = int(digits) - 100_000
    if index < 0 or title_number(index, seed) != value:
        return None
    return index


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
    town = _town_of(rng)
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
    rng = _rng(index, seed)
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
        (:mod:`propertykit.sandbox.valuation`), dispersion falling with the time a home is held,
        outlier sales (:mod:`propertykit.sandbox.price_index`), and one home in sixteen out in
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
    rng = _rng(index, seed)
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
        place = home(index, seed)  # postcode units, streets, buildings (sandbox.geography)
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
        # certificates come from a stream of their own (see propertykit.sandbox.epc_trend);
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
