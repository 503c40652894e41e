"""Where a client's address candidates come from, and ``client.match_addresses`` on the client.

Under the spec's profile, candidates come from search-suggest (``Endpoints.suggest_path``); under
a profile with an address autocomplete (Vepler's ``location.autocompleteAddress``:
``Endpoints.autocomplete_path``, asked for its most answers, ``limit=10``, and paged by its
``offset`` where a full page calls for the next), from that. Both are
free, cached like every answer and paced by the client at ``Endpoints.suggest_per_minute`` (one
limit for both, counted in Redis for a team: the service counts them together). Each answer's
``locationId`` is a property's, for :meth:`propertykit.Client.properties`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd

from propertykit.client._envelope import check_envelope
from propertykit.client._match_decisions import (
    DEFAULT_BOOK,
    MatchDecisions,
    check_book,
    notes_book,
)
from propertykit.client._matching import AddressSearch, MatchDryRun, match_addresses
from propertykit.jsonio import loads, records_of
from propertykit.wire import cached_bodies, notes_for

if TYPE_CHECKING:
    from propertykit.config import Endpoints
    from propertykit.wire import Transport

#: Suggestions asked for per query (search-suggest and the autocomplete answer at most 10).
AT_MOST = 10


class AddressesMixin:
    """``match_addresses`` and ``address_decisions`` for :class:`~propertykit.Client`."""

    _transport: Transport
    _decisions: dict[str, MatchDecisions] | None
    endpoints: Endpoints
    progress: bool | None

    if TYPE_CHECKING:

        def property_records(
            self, location_ids: str | Iterable[str], *, attributes: Iterable[str] | None = None
        ) -> list[dict[str, Any]]: ...

    @overload
    def match_addresses(
        self,
        addresses: Iterable[Any] | pd.Series,
        *,
        book: str | None = ...,
        dry_run: Literal[False] = ...,
        confirm_places: bool = ...,
    ) -> pd.DataFrame: ...

    @overload
    def match_addresses(
        self,
        addresses: Iterable[Any] | pd.Series,
        *,
        book: str | None = ...,
        dry_run: Literal[True],
        confirm_places: bool = ...,
    ) -> MatchDryRun: ...

    def match_addresses(
        self,
        addresses: Iterable[Any] | pd.Series,
        *,
        book: str | None = None,
        dry_run: bool = False,
        confirm_places: bool = True,
    ) -> pd.DataFrame | MatchDryRun:
        """Match address texts to properties: one row per input, in order; never a guess.

        Each address is read (postcode anywhere, numbers by role, abbreviations written out),
        asked of search-suggest in at most three queries, and compared with every suggestion
        (see :mod:`propertykit.client._matching` and ``docs/addresses.md``). Columns: ``input``,
        ``status`` (``matched``, ``ambiguous``, ``unmatched``), ``locationId`` (matched only),
        ``matched_address``, ``score`` (0-100), ``candidates`` (the plausible ids when
        ambiguous; the nearest suggestions when unmatched), ``candidate_addresses``,
        ``reason``. ``attrs``: ``requests_sent``, ``from_cache``, ``charged``,
        ``decisions_applied``, ``book``. Decisions of a review of the same ``book``
        (:class:`propertykit.widgets.MatchReview`, :meth:`match_decisions`) answer their texts
        without asking; ``book=None`` is the book named ``"default"``, and a book never sees
        another's decisions unless copied (:meth:`MatchDecisions.copy_from
        <propertykit.client.MatchDecisions.copy_from>`). A book's name that is not one is
        ``InvalidInput`` before anything is sent. ``dry_run=True`` sends nothing and returns a
        :class:`~propertykit.client._matching.MatchDryRun`.

        Where the answers cannot show the place typed (a search answering with the display
        text alone, and an address typed with a postcode but no town), the one suggestion that
        fits on every other part has its record looked up (:meth:`property_records`: billable,
        batched, cached) and is matched only if the record's postcode (and place) agree
        (``reason``: "postcode ... confirmed from its record"). ``confirm_places=False`` looks
        nothing up: such rows stay unmatched ("could not be confirmed"). ``attrs``:
        ``records_looked_up``, ``lookup_requests_sent``, and ``place_records`` (the records, by
        id: ``propertykit portfolio`` uses them instead of buying them again).

        Examples
        --------
        >>> df = client.match_addresses(["flat 11 96 mill lane se118tf", "95 Mill Lane, SE11 8TF"])
        >>> df["status"].tolist(), df["locationId"].iloc[0]
        (['matched', 'unmatched'], 'L00000033')
        >>> client.match_addresses(["12 Mill Lane, SE11 8TF"], dry_run=True).requests
        1
        """
        decisions = self.match_decisions(book)  # a bad name refused before anything is sent
        return match_addresses(self._address_search(decisions), addresses, dry_run=dry_run,
                               confirm_places=confirm_places)  # fmt: skip

    def match_decisions(self, book: str | None = None) -> MatchDecisions:
        """The decisions of address reviews in ``book`` (``None``: the default book) about this
        service, kept beside the cache and applied by :meth:`match_addresses` with the same
        ``book`` (see :mod:`propertykit.client._match_decisions`).

        Examples
        --------
        >>> client.match_decisions("acme-2026").not_held("1 Nowhere Road, ZZ1 1ZZ")
        >>> df = client.match_addresses(["1 nowhere road, zz1 1zz"], book="acme-2026")
        >>> df["status"].tolist(), df.attrs["book"]
        (['unmatched'], 'acme-2026')
        """
        name = check_book(book)
        if self._decisions is None:
            self._decisions = {}
        if name not in self._decisions:
            notes = notes_for(self._transport.cache, notes_book(name))
            self._decisions[name] = MatchDecisions(
                notes,
                self._transport.base_url,
                book=name,
                profile=self.endpoints.profile,
                notes_of=lambda other: self.match_decisions(other).notes,
            )
        return self._decisions[name]

    @property
    def address_decisions(self) -> MatchDecisions:
        """The default book's decisions: ``match_decisions(None)``.

        Examples
        --------
        >>> client.address_decisions.not_held("1 Nowhere Road, ZZ1 1ZZ")
        >>> client.match_addresses(["1 nowhere road, zz1 1zz"])["status"].tolist()
        ['unmatched']
        """
        return self.match_decisions(DEFAULT_BOOK)

    def _address_search(self, decisions: MatchDecisions) -> AddressSearch:
        """Where candidates come from: the profile's address autocomplete, else search-suggest."""
        endpoints = self.endpoints
        params: dict[str, str | int] = {}
        offset_param: str | None = None
        if endpoints.autocomplete_path:
            path, endpoint = endpoints.autocomplete_path, "autocomplete"
            params[endpoints.autocomplete_limit_param] = AT_MOST
            query_param = endpoints.autocomplete_query_param
            offset_param = endpoints.autocomplete_offset_param or None
        else:
            path, endpoint = endpoints.suggest_path, "suggest"
            query_param = endpoints.suggest_query_param
        transport = self._transport
        billable = endpoint in endpoints.billable_endpoints

        def sending(query: str, offset: int) -> dict[str, str | int]:
            paged = {offset_param: offset} if offset and offset_param else {}
            return {query_param: query, **params, **paged}

        def fetch(query: str, offset: int) -> list[dict[str, Any]]:
            body = transport.fetch_json(path, endpoint=endpoint, params=sending(query, offset),
                                        billable=billable, check=check_envelope)  # fmt: skip
            return list(_suggestions_of(body))

        def cached(requests: list[tuple[str, int]]) -> list[list[dict[str, Any]] | None]:
            wanted = [(transport.base_url + path, sending(q, at)) for q, at in requests]
            bodies = cached_bodies(transport.session, wanted, offline=transport.offline)
            return [None if body is None else _answer_of(body) for body in bodies]

        return AddressSearch(
            fetch=fetch,
            cached=cached,
            endpoint=endpoint,
            usage=transport.usage,
            per_minute=endpoints.suggest_per_minute,
            billable=billable,
            progress=self.progress,
            decisions=decisions,
            pages=offset_param is not None,
            records=lambda ids: self.property_records(ids),
            records_billable="properties" in endpoints.billable_endpoints,
            batch_size=endpoints.batch_size,
        )


def _suggestions_of(body: Any) -> list[Any]:
    records = records_of(body)
    return records if records or not isinstance(body, list) else list(body)


def _answer_of(body: bytes) -> list[dict[str, Any]] | None:
    """The suggestions of a cached body (``None``: not one the normal path would accept)."""
    try:
        parsed = loads(body)
        check_envelope(parsed)
    except ValueError:
        return None
    return list(_suggestions_of(parsed))
