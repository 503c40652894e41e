"""The sandbox's property catalogue: finds records by id, trims attributes, answers suggest.

Records are generated on demand by :mod:`propertykit.sandbox._data`, a block of
:data:`~propertykit.sandbox._data.BLOCK` at a time, and memoised, so a sandbox of any size starts
instantly; only search-suggest builds an index over every address (drawn without the rest of
the records, :func:`~propertykit.sandbox._data.drawn_addresses`), once per
``(seed, n_properties, realism)`` and process. The blocks are the ones
:func:`~propertykit.sandbox._data.generate_records` keeps, so a world a process has already
generated (a test's fixture, a notebook's frame) is not drawn again to be served.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from propertykit.sandbox import _data as data
from propertykit.sandbox import _ids as sandbox_ids
from propertykit.sandbox._profiles import PROFILES, SandboxProfile
from propertykit.sandbox._search import AddressIndex, check_style

#: Top-level record attributes the ``attributes`` query parameter may name.
ATTRIBUTES = (
    "propertyId", "locationId", "address", "spatial", "classificationCode", "propertyType",
    "propertySubType", "roomDetails", "pricing", "marketStatus", "epc", "saleHistory", "tenure",
    "councilTax", "tags", "floorAreaSqM", "plotSizeSqM", "yearBuilt", "lastUpdated",
)  # fmt: skip
#: Attributes returned whatever ``attributes`` says.
ALWAYS_KEPT = ("propertyId", "locationId")
#: Most suggestions one search-suggest answer holds.
MAX_SUGGESTIONS = 10


@lru_cache(maxsize=500)
def _block(block: int, seed: int, realism: str) -> tuple[dict[str, Any], ...]:
    return tuple(data.drawn_block(block, seed, realism=realism))


def _record(index: int, seed: int, realism: str = "textbook") -> dict[str, Any]:
    return _block(index // data.BLOCK, seed, realism)[index % data.BLOCK]


@lru_cache(maxsize=50_000)
def _profiled_record(index: int, seed: int, profile: str, realism: str) -> dict[str, Any]:
    return PROFILES[profile].adapt_record(_record(index, seed, realism))


@lru_cache(maxsize=4)
def _address_index(seed: int, n_properties: int, realism: str) -> AddressIndex:
    return AddressIndex(data.drawn_addresses(n_properties, seed, realism=realism))


#: Structured address fields a suggestion carries besides its display address, where present.
SUGGESTION_FIELDS = ("streetNumber", "streetName", "subBuilding", "buildingName")


def suggestion(index: int, address: dict[str, Any]) -> dict[str, str]:
    """What search-suggest says of the address at ``index``.

    Examples
    --------
    >>> address = {"displayAddress": "4 Mill Lane, Bedford, MK40 1NN", "postcode": "MK40 1NN",
    ...            "town": "Bedford", "streetNumber": "4", "streetName": "Mill Lane"}
    >>> suggestion(3, address)["locationId"], suggestion(3, address)["streetNumber"]
    ('L00000003', '4')
    """
    found = {
        "locationId": sandbox_ids.location_id(index),
        "displayAddress": address["displayAddress"],
        "postcode": address["postcode"],
        "town": address["town"],
    }
    found.update((name, address[name]) for name in SUGGESTION_FIELDS if address.get(name))
    return found


def display_only(index: int, address: dict[str, Any]) -> dict[str, str]:
    """What a display-only search says of the address at ``index``: its id and its display text
    without the postcode (no postcode, town or other field).

    Examples
    --------
    >>> display_only(3, {"displayAddress": "4 Mill Lane, Bedford, MK40 1NN",
    ...                  "postcode": "MK40 1NN"})
    {'locationId': 'L00000003', 'displayAddress': '4 Mill Lane, Bedford'}
    """
    display = str(address["displayAddress"])
    postcode = str(address.get("postcode") or "")
    if postcode and display.endswith(postcode):
        display = display[: -len(postcode)].rstrip(", ")
    return {"locationId": sandbox_ids.location_id(index), "displayAddress": display}


class Catalogue:
    """The first ``n_properties`` records of the world ``seed`` (prices as ``realism`` says:
    see :func:`propertykit.sandbox._data.generate_record`).

    Examples
    --------
    >>> catalogue = Catalogue(seed=0, n_properties=10)
    >>> [r["locationId"] for r in catalogue.by_location_ids(["L00000003", "nope"])]
    ['L00000003']
    """

    def __init__(
        self,
        *,
        seed: int,
        n_properties: int,
        profile: SandboxProfile = PROFILES["spec"],
        realism: str = "textbook",
        search_style: str | None = None,
    ) -> None:
        if n_properties < 1:
            raise ValueError("n_properties must be at least 1")
        self.seed = seed
        self.n_properties = n_properties
        self.profile = profile
        self.realism = realism
        #: How search-suggest and the autocomplete answer (``None``: every word for suggest,
        #: ranked for the vepler profile's autocomplete, as Elasticsearch answers).
        self.search_style = None if search_style is None else check_style(search_style)

    def _known(self, index: int | None) -> bool:
        return index is not None and 0 <= index < self.n_properties

    def record(self, index: int) -> dict[str, Any]:
        """The record at ``index`` as the profile serves it (shared: copy before changing it)."""
        if not self.profile.vepler_style:
            return _record(index, self.seed, self.realism)
        return _profiled_record(index, self.seed, self.profile.name, self.realism)

    def by_location_ids(self, ids: list[str]) -> list[dict[str, Any]]:
        """Records for the known ids, once each, in the order asked; unknown ids are skipped."""
        indexes = [sandbox_ids.index_from_location_id(value) for value in ids]
        return [self.record(i) for i in dict.fromkeys(indexes) if i is not None and self._known(i)]

    def by_source_ids(self, ids: list[str]) -> list[dict[str, Any]]:
        """Distinct records the source ids resolve to, in order of first mention."""
        indexes = [sandbox_ids.index_from_source_id(value) for value in ids]
        return [self.record(i) for i in dict.fromkeys(indexes) if i is not None and self._known(i)]

    def title_index(self, title_number: str) -> int | None:
        index = sandbox_ids.index_from_title_number(title_number, self.seed)
        return index if self._known(index) else None

    def search(
        self,
        q: str,
        limit: int = MAX_SUGGESTIONS,
        offset: int = 0,
        *,
        postcode_first: bool = False,
        street_first: bool = False,
        style: str = "every-word",
    ) -> tuple[list[dict[str, str]], int]:
        """The suggestions for ``q`` in ``style`` (see :mod:`propertykit.sandbox._search`), and
        how many match.

        Examples
        --------
        >>> Catalogue(seed=0, n_properties=50).search("zzz")
        ([], 0)
        """
        index = _address_index(self.seed, self.n_properties, self.realism)
        found, total = index.search(
            q, limit, offset, postcode_first=postcode_first, street_first=street_first, style=style
        )
        answer = display_only if style == "display-only" else suggestion
        return [answer(i, self.address(i)) for i in found], total

    def style_of(self, endpoint: str) -> str:
        """The search style ``endpoint`` (``suggest``, ``autocomplete``) answers in.

        Examples
        --------
        >>> Catalogue(seed=0, n_properties=5).style_of("autocomplete")
        'ranked'
        """
        if self.search_style is not None:
            return self.search_style
        return "ranked" if endpoint == "autocomplete" else "every-word"

    def suggest(self, q: str, limit: int = MAX_SUGGESTIONS) -> list[dict[str, str]]:
        """Up to ``limit`` suggestions holding every token of ``q``, best first.

        Examples
        --------
        >>> Catalogue(seed=0, n_properties=50).suggest("zzz")
        []
        """
        return self.search(q, limit)[0]

    def address(self, index: int) -> dict[str, Any]:
        """The address of the record at ``index`` (drawn alone: the record is not built)."""
        return data.drawn_address(index, self.seed, realism=self.realism)


def select_attributes(record: dict[str, Any], attributes: tuple[str, ...] | None) -> dict[str, Any]:
    """``record`` cut to ``attributes`` plus :data:`ALWAYS_KEPT`; all of it when ``None``.

    Examples
    --------
    >>> select_attributes({"locationId": "L1", "epc": None, "tags": {}}, ("tags",))
    {'locationId': 'L1', 'tags': {}}
    """
    if attributes is None:
        return record
    wanted = set(attributes).union(ALWAYS_KEPT)
    return {name: value for name, value in record.items() if name in wanted}
