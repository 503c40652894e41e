"""UK addresses as people type them, read into parts: postcode, numbers, street, names, places.

Pure string work, the first half of :meth:`propertykit.Client.match_addresses` (the second,
comparing two read addresses, is :mod:`propertykit.client._address_match`). The same reader reads
the client's text and the service's suggestions, so both sides are spelled alike:

- the postcode is found anywhere in the text, with or without its space, in any case
  (``mk401nn``, ``MK40 1NN``) and written ``MK40 1NN``;
- case, punctuation and abbreviations are evened out: ``Rd`` reads ``road``, ``Gdns``
  ``gardens``, ``St`` ``street`` after a word and ``saint`` before one (``12 St Johns Rd``);
- numbers keep their role: a number after ``Flat``, ``Unit``, ``Apartment``... is the
  sub-building's (wherever it stands: ``72 high street flat 6``), the last number or range
  (``13-14``) before the street is the building's, and any other number before it a
  sub-building's too (``6, 72 High St``);
- the words of the street run from the building number to a street word such as ``lane``;
  words before the number are names (a building, a house, a shop or company in front), and the
  parts after the street are places (locality, town, county).

Examples
--------
>>> parsed = read_address("THE CORNER CAFE, 4 High St, Bedford mk401nn")
>>> parsed.postcode, parsed.building_numbers, parsed.street, parsed.names, parsed.places
('MK40 1NN', ('4',), 'high street', ('the corner cafe',), ('bedford',))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The last word of a street's name: where a street ends and the places begin.
_STREET_WORDS = (
    "road street lane avenue gardens close crescent drive place square terrace court grove "
    "park way walk row rise hill green mews parade boulevard view vale wharf yard hollow "
    "gate mount heights end embankment circus approach passage broadway causeway"
)
STREET_WORDS = frozenset(_STREET_WORDS.split())
#: Street words that end a street and never begin one ("Park Street" exists; "Road Street" not).
_ENDINGS = "road lane avenue close crescent drive gardens terrace street"
_STREET_ENDINGS = frozenset(_ENDINGS.split())

#: Abbreviations read as the full word (``st`` is decided by where it stands).
_ABBREVIATIONS = {
    "rd": "road", "ave": "avenue", "av": "avenue", "avn": "avenue", "gdns": "gardens",
    "gdn": "garden", "ln": "lane", "cl": "close", "cres": "crescent", "cresc": "crescent",
    "dr": "drive", "pl": "place", "sq": "square", "ter": "terrace", "terr": "terrace",
    "tce": "terrace", "ct": "court", "crt": "court", "gr": "grove", "gro": "grove",
    "grv": "grove", "pk": "park", "wy": "way", "wk": "walk", "hse": "house", "ho": "house",
    "bldg": "building", "bldgs": "buildings", "cott": "cottage", "cotts": "cottages",
    "mt": "mount", "hts": "heights", "pde": "parade", "blvd": "boulevard", "est": "estate",
    "apt": "apartment", "apts": "apartments", "flt": "flat", "grn": "green", "sth": "south",
    "nth": "north", "upr": "upper", "lwr": "lower", "gt": "great", "lt": "little",
}  # fmt: skip

#: Words that announce a sub-building's number (``Flat 3``, ``Unit 2``).
_SUB_BUILDING_WORDS = "flat apartment unit suite studio room maisonette shop office workshop bay"
SUB_BUILDING_WORDS = frozenset(_SUB_BUILDING_WORDS.split())

_POSTCODE = re.compile(
    r"(?<![a-z0-9])([a-z]{1,2}[0-9][a-z0-9]?)\s*([0-9][a-z]{2})(?![a-z0-9])", re.IGNORECASE
)
_NUMBER = re.compile(r"[0-9]+[a-z]?")
_RANGE = re.compile(r"(?<![a-z0-9])([0-9]+[a-z]?)\s*-\s*([0-9]+[a-z]?)(?![a-z0-9])")
_NOT_WORD = re.compile(r"[^a-z0-9,]+")
_NOT_RANGE_WORD = re.compile(r"[^a-z0-9\-]+")


@dataclass(frozen=True)
class ReadAddress:
    """An address read into parts (see the module's docstring for how).

    Attributes
    ----------
    postcode
        ``"MK40 1NN"``, or ``None`` when the text holds none.
    sub_numbers
        Numbers of the flat or unit (``("3",)``), empty when there is none.
    building_numbers
        The building's number, or both ends of a range (``("13", "14")``).
    street
        The street's words, normalised (``"mill lane"``); empty when none was found.
    names
        Name parts before the number (building or house names, a shop or company in front).
    places
        Parts after the street (locality, town, county), each normalised.
    """

    postcode: str | None
    sub_numbers: tuple[str, ...]
    building_numbers: tuple[str, ...]
    street: str
    names: tuple[str, ...]
    places: tuple[str, ...]

    @property
    def numbers(self) -> tuple[str, ...]:
        """Every number of the address (sub-building first)."""
        return self.sub_numbers + self.building_numbers

    @property
    def postcode_token(self) -> str | None:
        """The postcode as one search token, without its space (``mk401nn``)."""
        return None if self.postcode is None else self.postcode.replace(" ", "").lower()

    def words(self) -> str:
        """The whole address normalised, without its postcode: for an overall similarity."""
        parts = [*self.names, " ".join(self.numbers), self.street, *self.places]
        return " ".join(part for part in parts if part)


def find_postcode(text: str) -> tuple[str | None, str]:
    """The postcode in ``text`` (``"MK40 1NN"``) and the text without it.

    The last postcode-shaped group wins (a postcode ends an address; a flat called ``B1 2AA`` is
    unheard of).

    Examples
    --------
    >>> find_postcode("72 high street flat 6 mk401nn")
    ('MK40 1NN', '72 high street flat 6 ')
    >>> find_postcode("12 Mill Lane")
    (None, '12 Mill Lane')
    """
    found = list(_POSTCODE.finditer(text))
    if not found:
        return None, text
    last = found[-1]
    postcode = f"{last.group(1)} {last.group(2)}".upper()
    return postcode, text[: last.start()] + text[last.end() :]


def normalise(words: str) -> str:
    """Words case-folded, punctuation gone, abbreviations written out (``st`` by position).

    Examples
    --------
    >>> normalise("High St."), normalise("St. John's Rd"), normalise("Rose Gdns")
    ('high street', 'saint john s road', 'rose gardens')
    """
    tokens = _NOT_WORD.sub(" ", words.casefold()).replace(",", " ").split()
    return " ".join(_expanded(tokens))


def _expanded(tokens: list[str]) -> list[str]:
    out: list[str] = []
    for index, token in enumerate(tokens):
        if token == "st":  # "High St" is a street; "12 St Johns Rd", "Mill Rd St Albans" saints
            before = out[-1] if out else ""  # as read: "st st dunstans" is street saint
            after_name = bool(before) and not _NUMBER.fullmatch(before)
            after_street = before in _STREET_ENDINGS
            last = index + 1 == len(tokens)
            out.append("street" if (after_name and not after_street) or last else "saint")
        else:
            out.append(_ABBREVIATIONS.get(token, token))
    return out


def read_address(text: str) -> ReadAddress:
    """Read an address typed by a person (or answered by the service) into its parts.

    Examples
    --------
    >>> read_address("Flat 6, 72 High St, MK40 1NN").numbers
    ('6', '72')
    >>> read_address("72 high street flat 6 mk401nn").sub_numbers
    ('6',)
    >>> read_address("13-14 Mill Lane, Kempston").building_numbers
    ('13', '14')
    >>> read_address("Rose Cottage, Mill Lane").names
    ('rose cottage',)
    """
    postcode, rest = find_postcode(text)
    rest = _RANGE.sub(lambda m: f" {m.group(1)}-{m.group(2)} ", rest.casefold())
    rest = rest.replace("/", " ")
    segments = [_expanded(_split_words(segment)) for segment in rest.split(",")]
    tokens = [(t, i) for i, segment in enumerate(segments) for t in segment]
    sub, tokens = _sub_building_numbers(tokens)
    number_at = [k for k, (t, _) in enumerate(tokens) if _is_number(t)]
    if not number_at:
        return _without_numbers(postcode, sub, tokens)
    last = number_at[-1]
    sub += tuple(n for k in number_at[:-1] for n in _numbers_of(tokens[k][0]))
    building = _numbers_of(tokens[last][0])
    names = _segments_of([(t, i) for k, (t, i) in enumerate(tokens[:last]) if k not in number_at])
    street, places = _street_and_places(tokens[last + 1 :])
    return ReadAddress(postcode, sub, building, street, names, places)


def _split_words(segment: str) -> list[str]:
    """A part's words; a range (``13-14``) stays one token, other hyphens separate words."""
    words: list[str] = []
    for token in _NOT_RANGE_WORD.sub(" ", segment).split():
        words.extend([token] if _RANGE.fullmatch(token) else token.replace("-", " ").split())
    return words


def _is_number(token: str) -> bool:
    return bool(_NUMBER.fullmatch(token) or _RANGE.fullmatch(token))


def _numbers_of(token: str) -> tuple[str, ...]:
    return tuple(part for part in token.split("-") if part)


def _sub_building_numbers(
    tokens: list[tuple[str, int]],
) -> tuple[tuple[str, ...], list[tuple[str, int]]]:
    """Numbers announced by ``Flat``/``Unit``...: taken out with their word, wherever they are."""
    sub: list[str] = []
    kept: list[tuple[str, int]] = []
    skip = False
    for k, (token, segment) in enumerate(tokens):
        if skip:
            skip = False
            continue
        following = tokens[k + 1][0] if k + 1 < len(tokens) else ""
        if token in SUB_BUILDING_WORDS and _is_number(following):
            sub.extend(_numbers_of(following))
            skip = True
            continue
        kept.append((token, segment))
    return tuple(sub), kept


def _without_numbers(
    postcode: str | None, sub: tuple[str, ...], tokens: list[tuple[str, int]]
) -> ReadAddress:
    """An address whose building has no number: names, then a street, then places.

    The street is a street word and the word before it: the first part that ends in one,
    unless the next part does too (``Meadow View, Mill Lane``: the house is Meadow View;
    ``Mill Lane, Clarendon Park``: the place is Clarendon Park); without commas, the last.
    """
    ends = [k for k, (t, _s) in enumerate(tokens) if t in STREET_WORDS and k > 0]
    whole = [k for k in ends if k + 1 == len(tokens) or tokens[k + 1][1] != tokens[k][1]]
    if not ends:
        parts = _segments_of(tokens)
        return ReadAddress(postcode, sub, (), "", parts[:1], parts[1:])
    end = ends[-1]
    if whole:  # the first part ending in a street word, unless the next one does too
        first_part = tokens[0][1]
        end = whole[0]
        if tokens[end][1] == first_part and len(whole) > 1:
            end = whole[1]
    start = end - 1
    if tokens[start][0] == "s" and start > 0:
        start -= 1  # "queen s road" (Queen's Road): the possessive's letter is a token
    street = " ".join(t for t, _s in tokens[start : end + 1])
    return ReadAddress(postcode, sub, (), street, _segments_of(tokens[:start]),
                       _segments_of(tokens[end + 1 :]))  # fmt: skip


def _street_and_places(tokens: list[tuple[str, int]]) -> tuple[str, tuple[str, ...]]:
    """The street's words (to its street word, or the end of its part), then the places."""
    if not tokens:
        return "", ()
    first_segment = tokens[0][1]
    end = 0
    while end < len(tokens) and tokens[end][1] == first_segment:
        end += 1
        if tokens[end - 1][0] in STREET_WORDS and end > 1:
            break
    street = " ".join(t for t, _ in tokens[:end])
    return street, _segments_of(tokens[end:])


def _segments_of(tokens: list[tuple[str, int]]) -> tuple[str, ...]:
    """Tokens grouped back into the comma-separated parts they came from."""
    parts: dict[int, list[str]] = {}
    for token, segment in tokens:
        parts.setdefault(segment, []).append(token)
    return tuple(" ".join(words) for words in parts.values())
