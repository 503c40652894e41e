"""The sandbox's address search, in the styles real searches answer in (chosen when served).

Text is split into case-folded runs of letters and digits (:func:`tokens`): spaces and
punctuation only separate them, so ``"Queen's"`` is ``queen`` and ``s`` and ``"13-14"`` is
``13`` and ``14``. An address's tokens are those of its ``displayAddress`` and ``county``, plus
its postcode without the space as one more (``mk401nn``). The styles (:data:`STYLES`):

- ``"every-word"``: a plain full-text search, as PostgreSQL's ``plainto_tsquery``. A query
  matches an address that holds **every** token of the query as a whole token, except the last,
  which may also be the start of one (as a user types: ``mill la`` finds Mill Lane). No
  abbreviations (``rd`` is not ``road``), no spelling tolerance; a token the address lacks finds
  nothing. Ranked by the share of the address's distinct tokens the query covers, highest first;
  then addresses holding the query's last token whole; then by index (location id).
- ``"ranked"``: as an Elasticsearch ``match`` query: **any** token counts, each address scored
  by BM25 (:data:`BM25_K1`, :data:`BM25_B`; a token counted once an address), best first, then by
  index. Ten addresses sharing one word of the query fill a page of ten.
- ``"fuzzy"``: ranked, and a query token of 3-5 characters also matches index tokens one edit
  away, of 6 or more two (Elasticsearch's ``fuzziness: AUTO``; a transposed pair is one edit,
  a dropped letter one), scored by how near (``1 - edits / length`` of the BM25 score).
- ``"display-only"``: ranked; the answers carry only ``locationId`` and the display text without
  its postcode (see :mod:`propertykit.sandbox._catalogue`): no postcode or town field.

The index maps each token to the sorted array of the addresses holding it, built once per world
and process, when first asked (0.6-1.1 s for 100,000 addresses, after 1.9-4.9 s to draw them;
``benchmarks/address_search.py``); an every-word query takes about 0.2 ms (median), against
16-26 ms reading every address; a ranked one adds the scores of its tokens' postings.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from rapidfuzz import process
from rapidfuzz.distance import OSA

_TOKEN = re.compile(r"[^\W_]+")
_Indexes = npt.NDArray[np.int64]

#: The search styles, in the order the docs list them.
STYLES = ("every-word", "ranked", "fuzzy", "display-only")
#: BM25's term-saturation and length-normalisation constants (Elasticsearch's defaults).
BM25_K1 = 1.2
BM25_B = 0.75


def check_style(style: str) -> str:
    """``style`` if it is one of :data:`STYLES`, else ``ValueError`` naming them.

    Examples
    --------
    >>> check_style("ranked")
    'ranked'
    """
    if style not in STYLES:
        raise ValueError(f"search_style must be one of {', '.join(STYLES)}, got {style!r}")
    return style


def fuzzy_edits(word: str) -> int:
    """Edits a query token may be off by under ``fuzziness: AUTO``: 0 up to 2 characters, 1 up
    to 5, else 2.

    Examples
    --------
    >>> [fuzzy_edits(w) for w in ("12", "high", "hampstead")]
    [0, 1, 2]
    """
    return 0 if len(word) <= 2 else 1 if len(word) <= 5 else 2


def tokens(text: str) -> list[str]:
    """The search tokens of ``text``: case-folded runs of letters and digits, in order.

    Examples
    --------
    >>> tokens("Flat 3, St John's Court, 13-14 HIGH St., MK40 1NN")
    ['flat', '3', 'st', 'john', 's', 'court', '13', '14', 'high', 'st', 'mk40', '1nn']
    """
    return _TOKEN.findall(text.casefold())


def address_tokens(address: Mapping[str, Any]) -> set[str]:
    """The distinct tokens an address is found by (display address, county, postcode unspaced).

    Examples
    --------
    >>> sorted(address_tokens({"displayAddress": "4 Mill Lane, Bedford, MK40 1NN",
    ...                        "county": "Bedfordshire", "postcodeNoSpace": "MK401NN"}))
    ['1nn', '4', 'bedford', 'bedfordshire', 'lane', 'mill', 'mk40', 'mk401nn']
    """
    found = set(tokens(str(address.get("displayAddress") or "")))
    found.update(tokens(str(address.get("county") or "")))
    found.update(tokens(str(address.get("postcodeNoSpace") or "")))
    return found


class AddressIndex:
    """An inverted index over addresses (position = the address's index in the world).

    Examples
    --------
    >>> index = AddressIndex([{"displayAddress": "4 Mill Lane, Bedford"},
    ...                       {"displayAddress": "14 Mill Lane, Bedford"},
    ...                       {"displayAddress": "4 Mill Road, Bedford"}])
    >>> index.search("mill lane 4")
    ([0], 1)
    >>> index.search("4 mill l")
    ([0], 1)
    >>> index.search("4 mill rd")
    ([], 0)
    """

    def __init__(self, addresses: Iterable[Mapping[str, Any]]) -> None:
        postings: dict[str, list[int]] = {}
        counts: list[int] = []
        self._postcodes: list[str] = []
        self._streets: list[tuple[str, ...]] = []
        seen: dict[str, list[str]] = {}  # the tokens of each part of an address, worked out once
        for position, address in enumerate(addresses):
            found: set[str] = set()
            parts = str(address.get("displayAddress") or "").split(", ")
            parts += [str(address.get("county") or ""), str(address.get("postcodeNoSpace") or "")]
            for part in parts:
                known = seen.get(part)
                if known is None:
                    known = seen[part] = tokens(part)
                found.update(known)
            counts.append(len(found))
            self._postcodes.append(str(address.get("postcodeNoSpace") or "").casefold())
            self._streets.append(tuple(tokens(str(address.get("streetName") or ""))))
            for token in found:
                postings.setdefault(token, []).append(position)
        self._postings = {token: np.array(ids, dtype=np.int64) for token, ids in postings.items()}
        self._vocabulary = sorted(postings)
        self._counts = np.array(counts, dtype=np.float64)
        self.size = len(counts)
        average = float(self._counts.mean()) if self.size else 1.0
        self._length_norm = (BM25_K1 + 1) / (
            1 + BM25_K1 * (1 - BM25_B + BM25_B * self._counts / average)
        )

    def _prefixed(self, start: str) -> list[str]:
        """Tokens of the index that start with ``start`` (itself included)."""
        first = bisect.bisect_left(self._vocabulary, start)
        last = bisect.bisect_left(self._vocabulary, start + "\U0010ffff", first)
        return self._vocabulary[first:last]

    def search(
        self,
        query: str,
        limit: int = 10,
        offset: int = 0,
        *,
        postcode_first: bool = False,
        street_first: bool = False,
        style: str = "every-word",
    ) -> tuple[list[int], int]:
        """The indexes of the best ``limit`` matches after ``offset``, and how many match.

        See the module docstring for what matches and in which order in each ``style``.
        ``postcode_first``: addresses whose whole postcode the query names (with or without its
        space) come before the others; ``street_first``: those whose every street-name token the
        query holds (after the postcode ones when both are asked).
        """
        words = tokens(query)
        if not words or limit < 1:
            return [], 0
        if style != "every-word":
            return self._ranked(words, limit, offset, check_style(style) == "fuzzy",
                                postcode_first=postcode_first,
                                street_first=street_first)  # fmt: skip
        whole, last = set(words[:-1]), words[-1]
        if any(word not in self._postings for word in whole):
            return [], 0
        candidates = self._intersect(whole)
        covered = np.full(len(candidates) if candidates is not None else 0, float(len(whole)))
        if last not in whole:
            candidates, covered = self._with_prefix(last, whole, candidates, covered)
        if candidates is None or not len(candidates):
            return [], 0
        share = covered / self._counts[candidates]
        exact = self._postings.get(last)
        holds_last = np.isin(candidates, exact) if exact is not None else np.zeros(len(share), bool)
        keys = [candidates, ~holds_last, -share]
        keys += self._priorities(words, candidates, postcode_first, street_first)
        order = np.lexsort(keys)
        chosen = candidates[order[offset : offset + limit]]
        return [int(i) for i in chosen], len(candidates)

    def _priorities(
        self, words: list[str], candidates: _Indexes, postcode_first: bool, street_first: bool
    ) -> list[npt.NDArray[np.bool_]]:
        """Sort keys putting the named postcode's and street's addresses first, when asked."""
        keys = []
        if street_first:
            said = set(words)
            keys.append(~np.array([set(self._streets[i]) <= said for i in candidates], bool))
        if postcode_first:
            named = set(words) | {a + b for a, b in itertools.pairwise(words)}
            keys.append(~np.array([self._postcodes[i] in named for i in candidates], bool))
        return keys

    def _ranked(
        self,
        words: list[str],
        limit: int,
        offset: int,
        fuzzy: bool,
        *,
        postcode_first: bool,
        street_first: bool,
    ) -> tuple[list[int], int]:
        """Any token counts: BM25 over the addresses holding one (or one near it, ``fuzzy``)."""
        scores = np.zeros(self.size, dtype=np.float64)
        for word in dict.fromkeys(words):
            best = np.zeros(self.size, dtype=np.float64)
            for found, weight in self._variants(word, fuzzy):
                postings = self._postings[found]
                frequency = len(postings)
                idf = np.log(1 + (self.size - frequency + 0.5) / (frequency + 0.5))
                best[postings] = np.maximum(best[postings], idf * weight)
            scores += best
        candidates = np.flatnonzero(scores > 0)
        if not len(candidates):
            return [], 0
        scored = scores[candidates] * self._length_norm[candidates]
        keys: list[npt.NDArray[Any]] = [candidates, -np.round(scored, 9)]
        keys += self._priorities(words, candidates, postcode_first, street_first)
        order = np.lexsort(keys)
        chosen = candidates[order[offset : offset + limit]]
        return [int(i) for i in chosen], len(candidates)

    def _variants(self, word: str, fuzzy: bool) -> list[tuple[str, float]]:
        """Index tokens a query token matches, each with its weight (1 when exact)."""
        found = [(word, 1.0)] if word in self._postings else []
        edits = fuzzy_edits(word) if fuzzy else 0
        if edits:
            near = process.extract(
                word, self._vocabulary, scorer=OSA.distance, score_cutoff=edits, limit=None
            )
            found += [(token, 1 - distance / len(word)) for token, distance, _ in near if distance]
        return found

    def _intersect(self, whole: set[str]) -> _Indexes | None:
        """Addresses holding every token of ``whole`` (``None``: no condition, i.e. all)."""
        arrays = sorted((self._postings[word] for word in whole), key=len)
        if not arrays:
            return None
        found = arrays[0]
        for other in arrays[1:]:
            found = np.intersect1d(found, other, assume_unique=True)
            if not len(found):
                break
        return found

    def _with_prefix(
        self,
        last: str,
        whole: set[str],
        candidates: _Indexes | None,
        covered: npt.NDArray[np.float64],
    ) -> tuple[_Indexes | None, npt.NDArray[np.float64]]:
        """Keep the candidates with a token starting with ``last``; count those it covers."""
        prefixed = self._prefixed(last)
        new = [self._postings[token] for token in prefixed if token not in whole]
        satisfied_by_whole = len(new) < len(prefixed)  # a token of ``whole`` starts with it
        if new:
            ids, extra = np.unique(np.concatenate(new), return_counts=True)
        else:
            ids, extra = np.array([], dtype=np.int64), np.array([], dtype=np.int64)
        if candidates is None:
            return ids, extra.astype(np.float64)
        where = np.searchsorted(ids, candidates)
        inside = where < len(ids)
        hit = np.zeros(len(candidates), dtype=bool)
        hit[inside] = ids[where[inside]] == candidates[inside]
        added = np.zeros(len(candidates), dtype=np.float64)
        added[hit] = extra[where[hit]]
        if satisfied_by_whole:
            return candidates, covered + added
        return candidates[hit], (covered + added)[hit]
