"""Where the homes of a ``realism="real"`` world stand: postcode units, streets, buildings.

A record's town and whether it is a flat are the first two draws of its own generator
(:func:`record_rng`), so the homes of :data:`CHUNK` consecutive indexes can be laid out
together without drawing whole records: each town's homes of a chunk, in index order, fall into
postcode units of 10 to 40 (usually 12 to 32), and every unit gets

- a postcode of its own (no two units of a town share one: the inward code is a permutation of
  the unit's serial number, unique for the first 16 units of the first 250 chunks of a town's
  outcode, that is worlds up to about half a million homes);
- one to three streets, each a straight line through (or near) the unit's centre, its homes
  numbered along it, on one side (odd or even numbers) or both, with a gap now and then;
- its flats and maisonettes gathered into buildings of two to nine (one when a unit has a single
  flat), each on one number of a street and sometimes named ("Oak House"); their
  sub-buildings are "Flat 3", sometimes "Apartment 3" or "Unit 3";
- houses with a number, a range of two (``13-14``, or ``13-15`` on one side), a name and a
  number ("Rose Cottage, 4 Mill Lane"), or a name alone ("The Old Rectory, Mill Lane");
- a centre: uniform over the town's box as before, or (one unit in sixteen) 6 to 20 km out in
  the country (:func:`~propertykit.sandbox._valuation.real_place`); homes stand along their
  street within about 130 m of it, a building's flats within a few metres of one point.

The result for an index depends only on ``(seed, index)``, never on how many homes a world
holds; a world's last chunk may hold only part of some units.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from propertykit.sandbox._tables import (
    BUILDING_NAMES,
    HOUSE_NAMES,
    INCODE_LETTERS,
    PROPERTY_TYPES,
    STREET_NAMES,
    STREET_SUFFIXES,
    TOWNS,
    Town,
)
from propertykit.sandbox._valuation import real_place

#: Indexes laid out together (a town's homes of one chunk make its postcode units there).
CHUNK = 2000
_UNITS_PER_CHUNK = 16  # most units one town has in one chunk (about 48 homes: 2 to 4 units)
_TYPE_WEIGHTS = tuple(t[1] for t in PROPERTY_TYPES)
_TYPE_CUMULATIVE = tuple(sum(_TYPE_WEIGHTS[: i + 1]) for i in range(len(PROPERTY_TYPES)))
_FLAT_CODE = "RD06"
_METRES_PER_DEGREE = 111_320.0


def record_rng(index: int, seed: int) -> random.Random:
    """The generator a record's fields are drawn from, in a fixed order."""
    return random.Random(f"propertykit:{seed}:{index}")


def town_of(rng: random.Random) -> Town:
    """The record's town: always the first draw of its generator."""
    return TOWNS[int(rng.random() * len(TOWNS))]


def type_position(rng: random.Random) -> int:
    """Which of :data:`~propertykit.sandbox._tables.PROPERTY_TYPES`: the second draw."""
    return min(bisect.bisect_left(_TYPE_CUMULATIVE, rng.random()), len(PROPERTY_TYPES) - 1)


@dataclass(frozen=True)
class Home:
    """Where one home of a real world is: its address (the record's ``address``) and point."""

    address: dict[str, Any]
    lat: float
    lng: float


def home(index: int, seed: int = 0) -> Home:
    """The address and point of the home at ``index`` of the world ``seed`` (real geography).

    Examples
    --------
    >>> place = home(0)
    >>> place.address["postcode"] == place.address["outcode"] + " " + place.address["incode"]
    True
    """
    return _chunk(index // CHUNK, seed)[index % CHUNK]


@lru_cache(maxsize=128)
def _chunk(chunk: int, seed: int) -> tuple[Home, ...]:
    start = chunk * CHUNK
    by_town: dict[int, list[tuple[int, bool]]] = {}
    for index in range(start, start + CHUNK):
        rng = record_rng(index, seed)
        town = int(rng.random() * len(TOWNS))
        is_flat = PROPERTY_TYPES[type_position(rng)][2] == _FLAT_CODE
        by_town.setdefault(town, []).append((index, is_flat))
    homes: dict[int, Home] = {}
    for town_number, members in by_town.items():
        draws = random.Random(f"propertykit:{seed}:units:{chunk}:{town_number}")
        for serial, unit in enumerate(_split(draws, members)):
            serial += chunk * _UNITS_PER_CHUNK
            homes.update(_lay_out_unit(draws, TOWNS[town_number], town_number, serial, unit))
    return tuple(homes[index] for index in range(start, start + CHUNK))


def _split(draws: random.Random, members: list[tuple[int, bool]]) -> list[list[tuple[int, bool]]]:
    """Consecutive units of 12-32 homes; a remainder under 10 joins the last unit (<= 41)."""
    units: list[list[tuple[int, bool]]] = []
    position = 0
    while position < len(members):
        size = draws.randint(12, 32)
        rest = len(members) - position - size
        if 0 < rest < 10:
            size += rest
        units.append(members[position : position + size])
        position += size
    return units[:_UNITS_PER_CHUNK] if len(units) <= _UNITS_PER_CHUNK else _merge_tail(units)


def _merge_tail(units: list[list[tuple[int, bool]]]) -> list[list[tuple[int, bool]]]:
    head = units[: _UNITS_PER_CHUNK - 1]
    return [*head, [member for unit in units[_UNITS_PER_CHUNK - 1 :] for member in unit]]


def _postcode(town: Town, town_number: int, serial: int) -> tuple[str, str, str]:
    """(outcode, incode, locality): a permutation of ``serial``, so units never share one."""
    codes_per_outcode = 10 * len(INCODE_LETTERS) ** 2
    space = codes_per_outcode * len(town.outcodes)
    code = (7919 * serial + 104_729 * town_number) % space
    outcode_position, rest = divmod(code, codes_per_outcode)
    digit, letters = divmod(rest, len(INCODE_LETTERS) ** 2)
    first, second = divmod(letters, len(INCODE_LETTERS))
    incode = f"{digit}{INCODE_LETTERS[first]}{INCODE_LETTERS[second]}"
    return town.outcodes[outcode_position], incode, town.localities[outcode_position]


@dataclass
class _Plot:
    """A house, or a building of flats, on one street number (or a name, or a range)."""

    members: list[int]
    is_building: bool
    number: str | None = None
    name: str | None = None
    label: str = "Flat"
    along: float = 0.0  # metres along the street from the unit's centre


@dataclass
class _Street:
    name: str
    angle: float
    offset: float  # metres from the unit's centre, across the street
    plots: list[_Plot]


def _plots(draws: random.Random, unit: list[tuple[int, bool]]) -> list[_Plot]:
    flats = [index for index, is_flat in unit if is_flat]
    plots = [_Plot([index], False) for index, is_flat in unit if not is_flat]
    while flats:
        size = min(len(flats), draws.randint(2, 9))
        if 0 < len(flats) - size < 2:
            size = len(flats)
        plots.append(_Plot(flats[:size], True))
        flats = flats[size:]
    draws.shuffle(plots)
    return plots


def _streets(draws: random.Random, plots: list[_Plot]) -> list[_Street]:
    count = 1 if len(plots) < 6 else draws.choice((1, 2, 2, 3))
    names: list[str] = []
    while len(names) < count:
        name = f"{draws.choice(STREET_NAMES)} {draws.choice(STREET_SUFFIXES)}"
        if name not in names:
            names.append(name)
    streets = [
        _Street(name, draws.uniform(0, math.pi), draws.uniform(-40, 40), []) for name in names
    ]
    for position, plot in enumerate(plots):
        street = streets[position % count if position < count else int(draws.random() * count)]
        street.plots.append(plot)
    return streets


def _name(draws: random.Random, names: tuple[str, ...], used: set[str]) -> str | None:
    """A name no other plot of the unit has (``None`` when every one is taken)."""
    name = draws.choice(names)
    if name in used:
        return None
    used.add(name)
    return name


def _number(draws: random.Random, street: _Street, used: set[str]) -> None:
    """Numbers (or names, or ranges) for the plots of one street, in order along it."""
    step = 2 if draws.random() < 0.6 else 1
    current = 1 + (step * int(draws.random() * 30) if step == 2 else int(draws.random() * 60))
    spacing = min(12.0, 250.0 / max(1, len(street.plots)))
    along = -spacing * (len(street.plots) - 1) / 2
    for plot in street.plots:
        plot.along = along
        along += spacing
        kind = draws.random()
        if plot.is_building:
            plot.name = _name(draws, BUILDING_NAMES, used) if kind < 0.4 else None
            plot.label = "Flat" if kind < 0.75 else ("Apartment" if kind < 0.9 else "Unit")
        elif kind < 0.1:
            plot.name = _name(draws, HOUSE_NAMES, used)
            if kind < 0.04 and plot.name is not None:
                continue  # a name and no number
        elif kind < 0.14:
            plot.number = f"{current}-{current + step}"
            current += 2 * step
            continue
        plot.number = str(current)
        current += step * (2 if draws.random() < 0.08 else 1)


def _lay_out_unit(
    draws: random.Random, town: Town, town_number: int, serial: int, unit: list[tuple[int, bool]]
) -> dict[int, Home]:
    outcode, incode, locality = _postcode(town, town_number, serial)
    lat = town.lat + (draws.random() - 0.5) * 0.05
    lng = town.lng + (draws.random() - 0.5) * 0.08
    lat, lng = real_place(draws, lat, lng)
    per_lng = _METRES_PER_DEGREE * math.cos(math.radians(lat))
    common = {"locality": locality, "town": town.name, "county": town.county,
              "postcode": f"{outcode} {incode}", "postcodeNoSpace": outcode + incode,
              "outcode": outcode, "incode": incode,
              "tail": f", {locality}, {town.name}, {outcode} {incode}"}  # fmt: skip
    homes: dict[int, Home] = {}
    used: set[str] = set()
    for street in _streets(draws, _plots(draws, unit)):
        _number(draws, street, used)
        cos, sin = math.cos(street.angle), math.sin(street.angle)
        for plot in street.plots:
            side = 6.0 if draws.random() < 0.5 else -6.0
            x = plot.along * cos - (street.offset + side) * sin + draws.uniform(-3, 3)
            y = plot.along * sin + (street.offset + side) * cos + draws.uniform(-3, 3)
            for flat_number, index in enumerate(plot.members, start=1):
                sub = f"{plot.label} {flat_number}" if plot.is_building else None
                point_lat = lat + (y + draws.uniform(-2, 2)) / _METRES_PER_DEGREE
                point_lng = lng + (x + draws.uniform(-2, 2)) / per_lng
                address = _address(sub, plot, street.name, common)
                homes[index] = Home(address, int(point_lat * 1e6) / 1e6, int(point_lng * 1e6) / 1e6)
    return homes


def _address(sub: str | None, plot: _Plot, street: str, common: dict[str, str]) -> dict[str, Any]:
    parts = [part for part in (sub, plot.name) if part]
    parts.append(f"{plot.number} {street}" if plot.number else street)
    address: dict[str, Any] = {
        "displayAddress": ", ".join(parts) + common["tail"],
        "postcode": common["postcode"],
        "streetName": street,
        "streetNumber": plot.number,
        "locality": common["locality"],
        "town": common["town"],
        "county": common["county"],
        "postcodeNoSpace": common["postcodeNoSpace"],
        "outcode": common["outcode"],
        "incode": common["incode"],
        "country": "GB",
    }
    if sub:
        address["subBuilding"] = sub
    if plot.name:
        address["buildingName"] = plot.name
    return address
