"""Re-running a lookup from a warm cache: kept Arrow forms, else cached bodies read by Arrow.

``client.properties(ids)`` and ``client.sources(ids)`` (without ``max_results``) come here. A
lookup walks one way: the cache is read once (:func:`propertykit.wire.cached_forms`), the frames
layer reads what it holds once, the envelopes are screened by the one paging rule, the frame is
made, and what was read is kept for the next re-run (the route, measured, is in
``docs/performance.md``):

1. Every batch kept as read into Arrow beside its cached answer, from that very answer and still
   usable: the shares are put together (:func:`~propertykit.frames._stored_form.decode_shares`)
   and framed; no body is read, no JSON parsed.
2. Else, every batch's first page cached and usable (fresh 200s only, any age offline): the
   bodies go, undecoded, to :func:`propertykit.frame`'s bytes route (Arrow's JSON reader, GIL
   released), which returns each envelope's top-level fields as it read them
   (:attr:`~propertykit.frames._stored_form.BodiesRead.envelopes`). They are screened by the one
   rule of :func:`~propertykit.client._envelope.paging`: ``success: false``, no ``result`` list,
   or a page with more after it sends that batch down the normal path, which refuses or follows
   it exactly as before. Otherwise the frame is made from that read, and each batch's share of
   it kept beside its answer (:func:`~propertykit.wire.keep_as_read`).
3. Else (some batches missing or expired, or a paged first page) the batches run through
   :func:`~propertykit.client._bulk.run_batches`: a usable single cached page is decoded and read
   as the normal path reads it (and its share of the frame kept), the rest go the normal path
   (:mod:`propertykit.client._lookups`), so budgets, single flight, retries and ``.partial`` are
   unchanged. A batch the cache held no entry for is sent ``known_missing``: requests-cache
   does not look it up again before the send (the single-flight lock still reads the cache
   again, :mod:`propertykit.wire._single_flight`). The frame is made from the records, read
   once, and each batch that came in one page keeps its share of that read
   (:func:`~propertykit.wire.keep_as_read`: a fetched one beside the answer just stored, named
   by the stamp its storage noted as it wrote it; nothing is read back), so the first re-run
   parses nothing (``benchmarks/replay.py``: without that, the first re-run took 5.6 times the
   Arrow floor, reading every body back).

Each batch served from the cache counts one cache hit in ``client.usage``, as the normal path
counts it.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from propertykit.client._arguments import attribute_params, check_paging
from propertykit.client._bulk import Batch, run_batches
from propertykit.client._envelope import PAGING_FIELDS, Page, paging, read_page
from propertykit.client._ids import validate_ids
from propertykit.client._lookups import Lookups
from propertykit.client._progress import progress_bar
from propertykit.errors import MissingIdsWarning, PropertyKitError, outside_stacklevel
from propertykit.frames import (
    BodiesRead,
    decode_shares,
    format_name,
    frame_and_shares,
    frame_from_read,
    read_for_keeping,
    records_frame_and_shares,
)
from propertykit.jsonio import Record, loads, paused_gc
from propertykit.wire import (
    CachedForms,
    cached_forms,
    keep_as_read,
)

if TYPE_CHECKING:
    import pandas as pd

    from propertykit.client._context import LookupContext

#: How many missing ids a warning names (all of them are in ``df.attrs["missing_ids"]``).
_NAMED = 5

logger = logging.getLogger("propertykit")  # the one logger, whose filter spells out controls

#: The envelope fields :func:`_odd_pages` looks at (asked of the reader beforehand).
_ENVELOPE_NAMES = ("success", *PAGING_FIELDS)


def single_page(body: bytes, *, left_out: list[Any] | None = None) -> Page | None:
    """The page of a cached body the normal path would take as it is, else ``None``.

    ``None`` for a body that is not a usable envelope or says more pages follow: the normal path
    reads (and refuses, or follows) it itself. Items that are not records: as
    :func:`~propertykit.client._envelope.read_page` says.

    Examples
    --------
    >>> single_page(b'{"success":true,"result":[{"propertyId":"P1"}],"hasMore":false}').records
    [{'propertyId': 'P1'}]
    >>> single_page(b'{"success":true,"result":[],"hasMore":true,"nextOffset":50}') is None
    True
    >>> single_page(b'{"success":false,"error":"maintenance"}') is None
    True
    """
    try:
        page = read_page(loads(body), left_out=left_out)
    except (ValueError, RecursionError, PropertyKitError):
        return None
    return None if page.has_more else page


def _odd_pages(bodies: list[bytes], read: BodiesRead) -> list[int]:
    """Positions of the framed bodies the normal path must read: unusable, or paged.

    ``read.envelopes`` are the envelopes' top-level fields as Arrow read them. When some list
    items were not records, each body is decoded and read as the normal path reads it.
    """
    lengths = [envelope.get("result") for envelope in read.envelopes]
    if len(lengths) != len(bodies) or sum(n or 0 for n in lengths) != len(read.records):
        counted: list[Any] = []  # the frame counts them
        return [i for i, body in enumerate(bodies) if single_page(body, left_out=counted) is None]
    odd = []
    for i, (count, fields) in enumerate(zip(lengths, read.envelopes, strict=True)):
        # Arrow reads an absent field as null: the envelope as the rule sees it has neither,
        # which can only make the rule say "more pages" (or "not placed") more often, and such
        # a page goes to the normal path, which reads it decoded.
        envelope = {name: value for name, value in fields.items() if value is not None}
        if count is None or envelope.get("success") is False:
            odd.append(i)
            continue
        said = paging(envelope, count)
        if said.has_more or said.unplaced is not None:
            odd.append(i)
    return odd


@dataclass(frozen=True)
class _Lookup:
    """One call's batches, and how the normal path fetches one of them."""

    endpoint: Literal["properties", "sources"]
    batches: list[Batch]
    first: Mapping[str, Any]  # the query of each batch's first page (its cache key)
    base: Mapping[str, Any]  # the attributes asked for
    page_size: int | None = None

    def fetch(
        self, lookups: Lookups, batch: Batch, known_missing: bool, single: set[int]
    ) -> list[Record]:
        """The batch by the normal path (``known_missing``: the cache has just held none; its
        index added to ``single`` if its answer came whole in one page)."""
        if self.endpoint == "properties":
            return lookups.fetch_properties(
                batch, self.base, known_missing=known_missing, single=single
            )
        return lookups.fetch_sources(
            batch, self.base, self.page_size, None, known_missing=known_missing, single=single
        )


def properties_frame(
    context: LookupContext, location_ids: str | Iterable[str], attributes: Iterable[str] | None
) -> pd.DataFrame:
    """``client.properties(location_ids, attributes=...)``: cached bodies first, then the rest."""
    ids = validate_ids(location_ids, source=False)
    params = attribute_params(context.endpoints, attributes)
    batches = context.lookups.property_batches(ids, params)
    df = _replayed(context, _Lookup("properties", batches, params, params))
    return note_missing_ids(df, ids, by_location=True)  # said, never silent


def sources_frame(
    context: LookupContext,
    source_ids: str | Iterable[str],
    attributes: Iterable[str] | None,
    page_size: int | None,
) -> pd.DataFrame:
    """``client.sources(source_ids, ...)`` without ``max_results``: cached first pages first."""
    ids = validate_ids(source_ids, source=True)
    check_paging(page_size, None)
    base = attribute_params(context.endpoints, attributes)
    lookups = context.lookups
    batches = lookups.source_batches(ids, base, page_size, None)
    first = lookups.page_params(base, 0, page_size, None, 0) or {}
    df = _replayed(context, _Lookup("sources", batches, first, base, page_size))
    return note_missing_ids(df, ids, by_location=False)  # said, never silent


def _replayed(context: LookupContext, lookup: _Lookup) -> pd.DataFrame:
    transport = context.transport
    session, offline = transport.session, transport.offline
    money_unit = context.endpoints.money_unit
    batches = lookup.batches
    wanted = [(transport.base_url + batch.path, lookup.first) for batch in batches]
    cached = cached_forms(session, wanted, format_name(), offline=offline)
    if batches and not cached.answers:  # every batch kept as read: nothing to parse
        with paused_gc():  # a few large buffers and the frame: no cycles worth a collection
            read = decode_shares([share for share in cached.kept if share is not None])
            df = None if read is None else frame_from_read(read, money_unit=money_unit)
        if df is not None:
            _served_from_cache(transport, lookup, context.progress)
            return df
        cached = cached_forms(session, wanted, "", offline=offline)  # rare: a share unread
    bodies = cached.bodies
    ready = {i: body for i, body in enumerate(bodies) if body is not None}
    if ready and len(ready) == len(batches):
        framed = [body for body in bodies if body is not None]
        read = read_for_keeping(framed, _ENVELOPE_NAMES)
        odd = _odd_pages(framed, read)
        if not odd:
            found = [envelope.get("result") for envelope in read.envelopes]
            lengths = [n if isinstance(n, int) else 0 for n in found]  # not all: none kept
            unkept = {i for i, kept in enumerate(cached.kept) if kept is None}
            df, shares = frame_and_shares(read, lengths, money_unit=money_unit, only=unkept)
            _keep_as_read(session, wanted, cached, unkept, shares)
            _served_from_cache(transport, lookup, context.progress)
            return df
        for i in odd:  # rare: a paged or unusable first page; the normal path reads them
            del ready[i]
    single: set[int] = set()  # batches whose answer came whole in one page
    fetched: set[int] = set()  # batches fetched now (the others: their cached page read)
    served: dict[int, int] = {}  # records per batch

    def fetch_or_replay(batch: Batch) -> list[Record]:
        body = ready.get(batch.index)
        page = single_page(body) if body is not None else None
        if page is None:
            fetched.add(batch.index)
            missing = batch.index in cached.missing
            records = lookup.fetch(context.lookups, batch, missing, single)
        else:
            transport.usage.record_cache_hit(lookup.endpoint)  # as the normal path counts
            if page.whole:
                single.add(batch.index)
            records = page.records
        served[batch.index] = len(records)
        return records

    bar = partial(progress_bar, len(batches), lookup.endpoint, show=context.progress)
    records = run_batches(
        batches, fetch_or_replay, max_in_flight=context.max_in_flight, progress=bar
    )
    lengths = [served[batch.index] for batch in batches]
    unkept = {i for i in single if cached.kept[i] is None}  # the others are kept already
    df, shares = records_frame_and_shares(records, lengths, money_unit=money_unit, only=unkept)
    _keep_as_read(session, wanted, cached, unkept, shares, fetched=fetched)
    return df


def _served_from_cache(transport: Any, lookup: _Lookup, show: bool | None) -> None:
    """Count every batch a cache hit, and show the bar of the lookup done."""
    for _ in lookup.batches:
        transport.usage.record_cache_hit(lookup.endpoint)
    with progress_bar(len(lookup.batches), lookup.endpoint, show=show) as bar:
        bar.update(len(lookup.batches))


def _keep_as_read(
    session: Any,
    wanted: list[tuple[str, Mapping[str, Any]]],
    cached: CachedForms,
    unkept: set[int],
    shares: list[bytes | None],
    fetched: frozenset[int] | set[int] = frozenset(),
) -> None:
    """Keep the share of the records as read of each batch of ``unkept`` (whole in one page,
    and kept nowhere yet) beside its answer, for the next re-run: the cached answer read, or
    for a batch ``fetched`` now, the answer just stored (named by the stamp its storage noted
    as it wrote it: nothing read back). Best effort: a share that cannot be kept is simply not
    kept (the next re-run reads that body)."""
    entries = [
        (request, None if i in fetched else cached.answers[i], share)
        for i, (request, share) in enumerate(zip(wanted, shares, strict=True))
        if i in unkept and share is not None and (i in fetched or cached.answers[i] is not None)
    ]
    if not entries:
        return
    try:
        keep_as_read(session, entries, format_name())
    except Exception as exc:  # a read-only file, a full disk, Redis gone: only speed is lost
        logger.debug("batches not kept as read: %s", type(exc).__name__)


def note_missing_ids(df: pd.DataFrame, ids: Sequence[str], *, by_location: bool) -> pd.DataFrame:
    """Record in ``df.attrs["missing_ids"]`` the ids that returned no record; warn once if any.

    Location ids are matched to the records' ``locationId``. A source id cannot be matched (a
    record does not say which source id found it, and several can name one property), so
    source ids are named missing only when no record came back at all. The warning
    (:class:`~propertykit.errors.MissingIdsWarning`) counts them and names the first few.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     df = client.properties(["L00000001", "L99999999", "NOPE123"])
    >>> df.attrs["missing_ids"]
    ('L99999999', 'NOPE123')
    >>> print(caught[0].message)
    2 of 3 ids returned no record: L99999999, NOPE123
    """
    asked = list(dict.fromkeys(ids))
    found: set[str] | None = None
    if df.empty:
        found = set()
    elif by_location and "locationId" in df.columns and not df["locationId"].isna().any():
        found = {str(value) for value in df["locationId"]}
    missing = tuple(i for i in asked if i not in found) if found is not None else ()
    df.attrs["missing_ids"] = missing
    if missing:
        named = ", ".join(missing[:_NAMED]) + (", ..." if len(missing) > _NAMED else "")
        noun = "id" if len(asked) == 1 else "ids"
        warnings.warn(
            f"{len(missing)} of {len(asked)} {noun} returned no record: {named}",
            MissingIdsWarning,
            stacklevel=outside_stacklevel(),
        )
    return df
