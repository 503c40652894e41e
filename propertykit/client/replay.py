"""Re-running a lookup from a warm cache: cached bodies read in bulk, framed as bytes by Arrow.

``client.properties(ids)`` and ``client.sources(ids)`` (without ``max_results``) come here. Every
batch's first-page answer is looked up in the cache at once
(:func:`propertykit.wire.bulk_cache.cached_answers`: fresh 200s only, any age offline). When every
batch is there, the bodies go, undecoded, to :func:`propertykit.frame`'s bytes route (Arrow's JSON
reader, GIL released): no request object, no deserialised response, no Python dict per record.
The envelopes are checked from the top-level fields Arrow read on the way (the reader returns
them, :attr:`~propertykit.frames.stored_form.BodiesRead.envelopes`), by the one rule of
:func:`~propertykit.client.envelope.paging`: ``success: false``, no ``result`` list, or
a page with more after it (``hasMore``, or a total without ``hasMore: false``) sends that batch
down the normal path, which refuses or follows it exactly as before. Each batch served counts one
cache hit in ``client.usage``, as the normal path counts it.

A run that fetched batches (and, failing that, the first re-run) also keeps each batch's body as
Arrow read it beside its cached answer (:func:`~propertykit.frames.stored_form.encode_shares`,
:func:`~propertykit.wire.keep_beside`); re-runs, when every batch has one made from the very
answer cached and still usable (:func:`~propertykit.wire.kept_values`: no body is read then),
frame from those (:func:`~propertykit.frames.stored_form.decode_shares`) and parse nothing.

Otherwise (some batches missing or expired, or a paged first page) the batches run through
:func:`~propertykit.client.bulk.run_batches` as before: a cached body is decoded and read as
:func:`~propertykit.client.envelope.read_page` reads it, the rest go the normal path
(:mod:`propertykit.client.lookups`), so budgets, single flight, retries and ``.partial`` are
unchanged and the frame is built from records as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from propertykit.client.arguments import attribute_params, check_paging
from propertykit.client.bulk import Batch, run_batches
from propertykit.client.envelope import PAGING_FIELDS, Page, paging, read_page
from propertykit.client.ids import validate_ids
from propertykit.client.lookups import note_missing_ids
from propertykit.client.progress import progress_bar
from propertykit.errors import PropertyKitError
from propertykit.frames import (
    BodiesRead,
    decode_shares,
    encode_shares,
    format_name,
    frame,
    frame_from_read,
    read_for_keeping,
)
from propertykit.jsonio import Record, loads, paused_gc
from propertykit.wire import CachedAnswer, cached_answers, keep_beside, kept_values

if TYPE_CHECKING:
    import pandas as pd

    from propertykit.client.context import LookupContext

__all__ = ["properties_frame", "sources_frame"]

logger = logging.getLogger("propertykit")  # the one logger, whose filter spells out controls

#: The envelope fields :func:`_odd_pages` looks at (asked of the reader beforehand).
_ENVELOPE_NAMES = ("success", *PAGING_FIELDS)


def single_page(body: bytes, *, left_out: list[Any] | None = None) -> Page | None:
    """The page of a cached body the normal path would take as it is, else ``None``.

    ``None`` for a body that is not a usable envelope or says more pages follow: the normal path
    reads (and refuses, or follows) it itself. Items that are not records: as
    :func:`~propertykit.client.envelope.read_page` says.

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


def properties_frame(
    context: LookupContext, location_ids: str | Iterable[str], attributes: Iterable[str] | None
) -> pd.DataFrame:
    """``client.properties(location_ids, attributes=...)``: cached bodies first, then the rest."""
    ids = validate_ids(location_ids, source=False)
    params = attribute_params(context.endpoints, attributes)
    lookups = context.lookups
    batches = lookups.property_batches(ids, params)
    df = _replayed(
        context,
        batches,
        lambda batch: params,
        lambda batch: lookups.fetch_properties(batch, params),
        endpoint="properties",
    )
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
    df = _replayed(
        context,
        batches,
        lambda batch: first,
        lambda batch: lookups.fetch_sources(batch, base, page_size, None),
        endpoint="sources",
    )
    return note_missing_ids(df, ids, by_location=False)  # said, never silent


def _replayed(
    context: LookupContext,
    batches: list[Batch],
    params_of: Callable[[Batch], Mapping[str, Any]],
    fetch: Callable[[Batch], list[Record]],
    *,
    endpoint: str,
) -> pd.DataFrame:
    transport = context.transport
    money_unit = context.endpoints.money_unit
    offline = transport.offline
    wanted = [(transport.base_url + batch.path, params_of(batch)) for batch in batches]
    with progress_bar(len(batches), endpoint, show=context.progress) as bar:
        kept = kept_values(transport.session, wanted, format_name(), offline=offline)
        with paused_gc():  # a few large buffers and the frame: no cycles worth a collection
            shares = [share for share in kept if share is not None]
            read = decode_shares(shares) if shares and len(shares) == len(kept) else None
            df = None if read is None else frame_from_read(read, money_unit=money_unit)
        if df is not None:  # every batch kept as read: nothing to parse
            for _ in batches:
                transport.usage.record_cache_hit(endpoint)
            bar.update(len(batches))
            return df
        answers = cached_answers(transport.session, wanted)
        now = datetime.now(UTC)
        bodies = [None if a is None else a.body(now, offline=offline) for a in answers]
        odd: list[int] = []
        ready = {
            batch.index: body
            for batch, body in zip(batches, bodies, strict=True)
            if body is not None
        }
        if ready and len(ready) == len(batches):
            framed = [ready[batch.index] for batch in batches]
            read = read_for_keeping(framed, _ENVELOPE_NAMES)
            df = frame_from_read(read, money_unit=money_unit)
            odd = _odd_pages(framed, read)
            if not odd:
                for _ in batches:
                    transport.usage.record_cache_hit(endpoint)
                bar.update(len(batches))
                _keep_as_read(transport.session, wanted, answers, kept, read)
                return df
            for i in odd:  # rare: a paged or unusable first page; the normal path reads them
                del ready[batches[i].index]

        fetched: list[int] = []

        def fetch_or_replay(batch: Batch) -> list[Record]:
            body = ready.get(batch.index)
            page = single_page(body) if body is not None else None
            if page is None:
                fetched.append(batch.index)
                return fetch(batch)
            transport.usage.record_cache_hit(endpoint)  # when the normal path would count it
            return page.records

        records = run_batches(
            batches, fetch_or_replay, max_in_flight=context.max_in_flight, progress=bar
        )
    df = frame(records, money_unit=money_unit)
    if fetched and not odd:  # keep them all as read, for re-runs (never paged ones)
        _keep_fetched(transport, wanted)
    return df


def _keep_fetched(transport: Any, wanted: list[tuple[str, Mapping[str, Any]]]) -> None:
    """After a run that fetched batches: keep each as read, so the first re-run parses nothing.

    Only when every batch's answer is now cached, usable and a single page; best effort (the
    bodies are read again, a fraction of the time fetching them took): a body that cannot be
    read is simply not kept, and the normal path will read it when it is asked for.
    """
    offline = transport.offline
    kept = kept_values(transport.session, wanted, format_name(), offline=offline)
    if None not in kept:
        return
    answers = cached_answers(transport.session, wanted)
    now = datetime.now(UTC)
    bodies = [None if a is None else a.body(now, offline=offline) for a in answers]
    if None in bodies:
        return
    framed = [body for body in bodies if body is not None]
    try:
        read = read_for_keeping(framed, _ENVELOPE_NAMES)
        if not _odd_pages(framed, read):
            _keep_as_read(transport.session, wanted, answers, kept, read)
    except Exception:  # the lookup itself is done and paid for: keeping must never undo it
        logger.warning("could not keep the batches as read for re-runs", exc_info=True)


def _keep_as_read(
    session: Any,
    wanted: list[tuple[str, Mapping[str, Any]]],
    answers: list[CachedAnswer | None],
    kept: list[memoryview | None],
    read: BodiesRead,
) -> None:
    """Keep each batch's share of ``read`` beside its cached answer, for the next re-run.

    Only when every body's records were counted (its envelope read), and only for the batches
    not kept already.
    """
    lengths = [envelope.get("result") for envelope in read.envelopes]
    counts = [n for n in lengths if isinstance(n, int)]
    if len(counts) != len(answers) or sum(counts) != len(read.records):
        return
    shares = encode_shares(read, counts)
    entries = [
        (request, answer, share)
        for request, answer, share, already in zip(wanted, answers, shares, kept, strict=True)
        if answer is not None and share is not None and already is None
    ]
    try:
        keep_beside(session, entries, format_name())
    except Exception as exc:  # a read-only file, a full disk, Redis gone: only speed is lost
        logger.debug("batches not kept as read: %s", type(exc).__name__)
