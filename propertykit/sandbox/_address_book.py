"""A world's addresses for tests and benchmarks, and the same addresses typed as clients type them,
each with the truth.

:func:`world_addresses` draws the ``address`` of every home of a world without drawing the rest
of the records (about 20 µs a home). :func:`typed_addresses` draws rows of a client's list from
it: the address of a home written the way people write addresses (case, punctuation, ``Rd``/
``St``/``Ave``/``Gdns``, locality and county there or not, the postcode with or without its
space or missing, a shop's or company's name in front, two letters of the street swapped or one
dropped, the flat after the street: ``72 high street flat 6 mk401nn``), or as another register
writes it (``register``: ``FLAT 6, ST JOHNS COURT, 72, HIGH STREET, KEMPSTON, BEDFORD,
BEDFORDSHIRE, MK40 1NN``), and negative rows: a house number the street does not have, a
building's address without the flat, the number and street written with another town and that
town's postcode (``other_town``), a house's name with a word left out (``subset_name``: "The
Forge" where the house is "The Old Forge"). Each row carries what a careful matcher should
answer: the home's ``locationId``, ``"absent"`` (no home of the world has that address) or
``"ambiguous"`` (several do: then ``candidates`` lists them).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from propertykit.sandbox import _data as data
from propertykit.sandbox import _ids as sandbox_ids

#: How clients shorten street types (and sub-building words).
ABBREVIATIONS = {"Street": "St", "Road": "Rd", "Avenue": "Ave", "Gardens": "Gdns", "Lane": "Ln",
                 "Close": "Cl", "Drive": "Dr", "Terrace": "Terr", "Apartment": "Apt"}  # fmt: skip
_BUSINESSES = ("THE CORNER CAFE", "Smith & Sons Ltd", "Acme Lettings", "c/o J. Patel",
               "Bloom Florists", "Northern Estates plc")  # fmt: skip
#: Row kinds and their weights: positives first, then the two negatives.
KINDS = {"standard": 30, "abbreviated": 14, "no_postcode": 8, "flat_after": 10, "business": 8,
         "transposed": 8, "dropped": 6, "bare": 10, "wrong_number": 6, "no_flat": 6,
         "house_name": 4, "other_town": 4, "subset_name": 3, "register": 0}  # fmt: skip
#: Kinds whose rows name no home of the world (or several): the negatives.
NEGATIVE_KINDS = ("wrong_number", "no_flat", "other_town", "subset_name")


@dataclass(frozen=True)
class TypedAddress:
    """One row of a client's list: the text, what it should match, and how it was made."""

    text: str
    expected: str  # a locationId, "absent" or "ambiguous"
    kind: str
    index: int  # the home it was typed from
    candidates: tuple[str, ...] = ()  # the location ids an ambiguous row could be


def world_addresses(n: int, seed: int = 0, *, realism: str = "real") -> list[dict[str, Any]]:
    """The ``address`` of each of the first ``n`` homes of a world (position = index).

    Examples
    --------
    >>> addresses = world_addresses(3)
    >>> addresses[0] == data.generate_record(0, realism="real")["address"]
    True
    """
    return data.drawn_addresses(n, seed, realism=realism)


def _key(sub: object, number: object, street: object) -> tuple[str, str, str]:
    return (str(sub or "").casefold(), str(number or "").casefold(), str(street).casefold())


class _World:
    """The homes of a world by what identifies them in a typed address."""

    def __init__(self, addresses: list[dict[str, Any]]) -> None:
        self.addresses = addresses
        self.by_key: dict[tuple[str, str, str], list[int]] = {}
        self.by_place: dict[tuple[str, str], list[int]] = {}
        #: Houses known by their name alone (no number, no flat).
        self.named = [i for i, a in enumerate(addresses)
                      if not a.get("streetNumber") and not a.get("subBuilding")
                      and a.get("buildingName")]  # fmt: skip
        for index, address in enumerate(addresses):
            sub, number = address.get("subBuilding"), address.get("streetNumber")
            display = str(address["displayAddress"])
            if sub is None and display.startswith("Flat "):  # the textbook world's flats
                sub = display.split(",", 1)[0]
            key = _key(sub, number, address["streetName"])
            self.by_key.setdefault(key, []).append(index)
            self.by_place.setdefault(key[1:], []).append(index)

    def at(self, number: object, street: object, said: Mapping[str, Any]) -> list[int]:
        """Homes (any flat, any name) at that number of that street, in the places ``said``."""
        found = self.by_place.get(_key(None, number, street)[1:], [])
        return [i for i in found if _same_place(self.addresses[i], said)]

    def matching(self, fields: Mapping[str, Any]) -> list[int]:
        """Homes whose address has every field given (``None``: not said)."""
        key = _key(fields.get("sub"), fields.get("number"), fields["street"])
        found = []
        for index in self.by_key.get(key, []):
            address = self.addresses[index]
            if all(
                fields.get(name) is None or str(address.get(field) or "") == fields[name]
                for name, field in (("name", "buildingName"), ("town", "town"),
                                    ("locality", "locality"), ("postcode", "postcode"))
            ):  # fmt: skip
                found.append(index)
        return found


def _fields(address: Mapping[str, Any]) -> dict[str, Any]:
    sub = address.get("subBuilding")
    display = str(address["displayAddress"])
    if sub is None and display.startswith("Flat "):
        sub = display.split(",", 1)[0]
    return {"sub": sub, "name": address.get("buildingName"), "number": address.get("streetNumber"),
            "street": address["streetName"], "locality": address["locality"],
            "town": address["town"], "county": address["county"],
            "postcode": address["postcode"]}  # fmt: skip


def _abbreviate(text: str) -> str:
    return re.sub(r"\b(" + "|".join(ABBREVIATIONS) + r")\b", lambda m: ABBREVIATIONS[m[1]], text)


def _transpose(draws: random.Random, street: str) -> str:
    word = street.split(" ")[0]
    if len(word) < 4 or not word.isalpha():
        return street
    at = draws.randint(1, len(word) - 2)
    swapped = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    return street.replace(word, swapped, 1) if swapped != word else street


def _drop_letter(draws: random.Random, street: str) -> str:
    word = street.split(" ")[0]
    if len(word) < 5 or not word.isalpha():
        return street
    at = draws.randint(1, len(word) - 2)
    return street.replace(word, word[:at] + word[at + 1 :], 1)


def _register(fields: Mapping[str, Any]) -> str:
    """As another register writes the address: capitals, the number a part of its own, the
    county there, apostrophes gone."""
    parts = [fields["sub"], fields["name"], fields["number"], fields["street"],
             fields["locality"], fields["town"], fields["county"], fields["postcode"]]  # fmt: skip
    return ", ".join(str(p) for p in parts if p).upper().replace("'", "")


def _write(
    draws: random.Random, fields: Mapping[str, Any], kind: str
) -> tuple[str, dict[str, Any]]:
    """The typed text, and the fields it states (for finding every home it could be)."""
    said = dict(fields)
    street = fields["street"]
    if kind in ("abbreviated", "bare", "flat_after") or draws.random() < 0.15:
        street = _abbreviate(street)
    if kind == "transposed":
        street = _transpose(draws, street)
    if kind == "dropped":
        street = _drop_letter(draws, street)
    sub = fields["sub"]
    if sub and kind in ("abbreviated", "bare"):
        sub = _abbreviate(sub)
    line = f"{fields['number']} {street}" if fields["number"] else street
    postcode = fields["postcode"]
    if kind == "no_postcode" or draws.random() < 0.05:
        postcode, said["postcode"] = None, None
    elif draws.random() < 0.4:
        postcode = postcode.replace(" ", "")
    locality = fields["locality"] if draws.random() < 0.6 else None
    said["locality"] = locality
    county = fields["county"] if draws.random() < 0.25 else None
    town = fields["town"]
    if postcode and draws.random() < 0.2:
        town, said["town"] = None, None
    if kind == "flat_after" and sub:
        said["locality"] = None
        parts = [fields["name"], line, sub, town, postcode]
        text = " ".join(str(p) for p in parts if p)
    else:
        parts = [sub, fields["name"], line, locality, town, county, postcode]
        text = ", ".join(str(p) for p in parts if p)
    if kind == "business":
        text = f"{draws.choice(_BUSINESSES)} {text}"
    if kind in ("bare", "flat_after"):
        text = re.sub(r"[,.]", "", text).lower()
    else:
        text = draws.choice((text, text, text.upper(), text.lower(), text.replace(",", "")))
    return text, said


def _missing_number(world: _World, fields: Mapping[str, Any]) -> str | None:
    """A number near the home's that no home of the world has on a street of that name."""
    number = str(fields["number"] or "")
    if not number.isdigit():
        return None
    for step in (2, -2, 4, -4, 6, 8, 10, 1, -1):
        guess = int(number) + step
        if guess > 0 and not world.at(str(guess), fields["street"], {}):
            return str(guess)
    return None


def typed_addresses(
    rows: int,
    *,
    n_properties: int,
    seed: int = 0,
    realism: str = "real",
    draw_seed: int = 0,
    kinds: Mapping[str, float] | None = None,
) -> list[TypedAddress]:
    """``rows`` addresses of homes of the world ``(seed, n_properties)``, typed as clients do.

    ``kinds``: which kinds of row to draw and how often (default :data:`KINDS`); ``draw_seed``
    selects a different but equally deterministic list.

    Examples
    --------
    >>> rows = typed_addresses(20, n_properties=2_000)
    >>> {row.kind for row in rows} <= set(KINDS)
    True
    >>> all(row.expected in ("absent", "ambiguous") or row.expected.startswith("L") for row in rows)
    True
    """
    weights = dict(kinds or KINDS)
    unknown = sorted(set(weights) - set(KINDS))
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; choose from {', '.join(KINDS)}")
    world = _World(world_addresses(n_properties, seed, realism=realism))
    draws = random.Random(f"propertykit:typed:{seed}:{draw_seed}")
    names, chances = list(weights), list(weights.values())
    made: list[TypedAddress] = []
    while len(made) < rows:
        index = draws.randrange(n_properties)
        kind = draws.choices(names, chances)[0]
        row = _row(world, draws, index, kind)
        if row is not None:
            made.append(row)
    return made


def _row(world: _World, draws: random.Random, index: int, kind: str) -> TypedAddress | None:
    fields = _fields(world.addresses[index])
    if kind == "transposed" and _transpose(draws, fields["street"]) == fields["street"]:
        return None  # a street whose first word is too short to misspell this way
    if kind == "dropped" and _drop_letter(draws, fields["street"]) == fields["street"]:
        return None
    if kind == "register":
        return TypedAddress(_register(fields), _expected(world, fields), kind, index)
    if kind == "other_town":
        return _other_town(world, draws, fields, index)
    if kind == "subset_name":
        return _subset_name(world, draws, fields, index)
    if kind == "house_name":  # a house known by its name alone, typed as any other row
        if not world.named:
            return None
        index = draws.choice(world.named)
        fields = _fields(world.addresses[index])
        kind = "standard" if draws.random() < 0.5 else "abbreviated"
        text, said = _write(draws, fields, kind)
        found = world.matching(said)
        expected = sandbox_ids.location_id(found[0]) if len(found) == 1 else "ambiguous"
        return TypedAddress(
            text, expected, "house_name", index, _ids(found) if len(found) > 1 else ()
        )
    if kind == "wrong_number":
        number = _missing_number(world, fields)
        if number is None:
            return None
        text, _ = _write(draws, {**fields, "sub": None, "name": None, "number": number}, "standard")
        return TypedAddress(text, "absent", kind, index)
    if kind == "no_flat":
        if not fields["sub"]:
            return None
        text, said = _write(draws, {**fields, "sub": None}, "standard")
        same = world.at(fields["number"], fields["street"], said)
        if len(same) < 2:
            return None
        return TypedAddress(text, "ambiguous", kind, index, _ids(same))
    text, said = _write(draws, fields, kind)
    found = world.matching(said)
    if len(found) == 1:
        return TypedAddress(text, sandbox_ids.location_id(found[0]), kind, index)
    return TypedAddress(text, "ambiguous", kind, index, _ids(found))


def _expected(world: _World, fields: Mapping[str, Any]) -> str:
    found = world.matching(fields)
    return sandbox_ids.location_id(found[0]) if len(found) == 1 else "ambiguous"


def _other_town(
    world: _World, draws: random.Random, fields: Mapping[str, Any], index: int
) -> TypedAddress | None:
    """The home's number and street with another town and that town's postcode, where no home
    of the world has that number on that street."""
    if not fields["number"]:
        return None
    other = _fields(world.addresses[draws.randrange(len(world.addresses))])
    if other["town"] == fields["town"]:
        return None
    said = {"town": other["town"], "postcode": other["postcode"]}
    if world.at(fields["number"], fields["street"], said) or world.at(
        fields["number"], fields["street"], {"town": other["town"]}
    ):
        return None
    street = _abbreviate(fields["street"]) if draws.random() < 0.3 else fields["street"]
    text = f"{fields['number']} {street}, {other['town']}, {other['postcode']}"
    return TypedAddress(text, "absent", "other_town", index)


def _subset_name(
    world: _World, draws: random.Random, fields: Mapping[str, Any], index: int
) -> TypedAddress | None:
    """A house known by its name, written with one of its words left out ("The Forge" for
    "The Old Forge"), where no house of that street is called so."""
    if not world.named:
        return None
    index = draws.choice(world.named)
    fields = _fields(world.addresses[index])
    words = str(fields["name"]).split()
    if len(words) < 3:
        return None
    short = " ".join(words[:1] + words[2:])
    same_street = world.by_place.get(("", str(fields["street"]).casefold()), [])
    if any(str(world.addresses[i].get("buildingName") or "") == short for i in same_street):
        return None
    parts = [short, fields["street"], fields["town"]]
    if draws.random() < 0.5:
        parts.append(fields["postcode"])
    return TypedAddress(", ".join(parts), "absent", "subset_name", index)


def _same_place(address: Mapping[str, Any], said: Mapping[str, Any]) -> bool:
    return all(
        said.get(name) is None or address.get(field) == said[name]
        for name, field in (("town", "town"), ("locality", "locality"), ("postcode", "postcode"))
    )


def _ids(indexes: list[int]) -> tuple[str, ...]:
    return tuple(sandbox_ids.location_id(i) for i in sorted(set(indexes)))
