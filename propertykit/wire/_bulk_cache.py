"""Many cached answers read at once: what a warm cache holds for a list of GETs.

The session answers a cache hit by deserialising one stored ``CachedResponse`` per request, behind
``requests``' per-request overhead. Re-running a notebook from a warm cache is mostly that, so
:func:`cached_answers` reads the same entries in bulk instead, through propertykit's own cache
backends (:mod:`propertykit.wire._sqlite_storage`, :mod:`propertykit.wire._redis_storage`):

- each request's key is ``cache.create_key`` of the request the session would prepare (the only
  source of cache keys; it never includes the API key, an ignored parameter);
- the entries come from the backend's ``get_many`` (one query per chunk; Redis: ``MGET``), and
  only their head is read (:mod:`propertykit.wire._stored_answer`), nothing is deserialised;
- an entry is used only when the session would answer with it as it stands: a 200 without
  ``Vary``, fresh (offline: any age, as ``stale_if_error`` allows there). Anything else is
  ``None``, and the caller sends that request down the normal path.

Any other backend (one passed as ``cache=``) answers ``None`` for every request: the normal path
serves it. Values kept beside an answer (:mod:`propertykit.wire._derived_cache`) are read
(:func:`kept_values`) and written (:func:`keep_as_read`) here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import requests

from propertykit.wire._derived_cache import Kept, pack_kept, read_kept, request_id
from propertykit.wire._stored_answer import StoredAnswer, read_answer, read_head

Wanted = Sequence[tuple[str, Mapping[str, Any] | None]]


@dataclass(frozen=True)
class CachedAnswer:
    """One entry the bulk read found: its cache key and what it holds."""

    key: str
    answer: StoredAnswer

    def body(self, now: datetime, *, offline: bool) -> bytes | None:
        """The body, if the session would answer with this entry as it stands."""
        return bytes(self.answer.body) if self.answer.head.usable(now, offline=offline) else None


def cached_bodies(
    session: requests.Session, wanted: Wanted, *, offline: bool
) -> list[bytes | None]:
    """The body the cache would answer each ``(url, params)`` GET with, or ``None``.

    Nothing is sent and nothing is counted; the caller counts the hits it uses.

    Examples
    --------
    >>> import propertykit as pk
    >>> with pk.sandbox.serve() as sb, pk.Client(sb.api_key, sb.url, cache=False) as client:
    ...     cached_bodies(client._transport.session, [(sb.url + "/v1/health", None)],
    ...                   offline=False)
    [None]
    """
    now = datetime.now(UTC)
    answers, _ = cached_answers(session, wanted)
    return [None if found is None else found.body(now, offline=offline) for found in answers]


def cached_answers(
    session: requests.Session, wanted: Wanted
) -> tuple[list[CachedAnswer | None], frozenset[int]]:
    """What the cache stores for each ``(url, params)`` GET (``None``: nothing readable in bulk),
    and the positions of the GETs it holds no entry for at all (not even as a redirect's)."""
    storage = _bulk_storage(session)
    if storage is None or not wanted:
        return [None] * len(wanted), frozenset()
    keys = _cache_keys(session, wanted)
    values = storage.get_many(keys)
    absent = [i for i, value in enumerate(values) if value is None]  # unreadable ones are there
    redirects = getattr(getattr(session, "cache", None), "redirects", None)
    missing: frozenset[int] = frozenset()
    if absent and hasattr(redirects, "get_many"):  # read here, beside the answers: one stay
        # an answer stored under another key (a redirect's) is found by requests-cache
        aliases = redirects.get_many([keys[i] for i in absent])  # type: ignore[union-attr]
        missing = frozenset(i for i, alias in zip(absent, aliases, strict=True) if alias is None)
    found: list[CachedAnswer | None] = []
    for key, value in zip(keys, values, strict=True):
        answer = read_answer(value)
        found.append(None if answer is None else CachedAnswer(key, answer))
    return found, missing


def kept_values(
    session: requests.Session, wanted: Wanted, form: str, *, offline: bool
) -> list[memoryview | None]:
    """The value kept in ``form`` for each ``(url, params)`` GET, or ``None``.

    Only a value made from the very answer the session would answer that GET with now: the
    entry under the cache key the value names still has the stamp it names, and is usable.
    Neither the answers' bodies nor a cache key per request are read or computed: a value
    names the key the session filed its answer under when it was kept, and one key computed
    now for comparison shows the session still files these GETs so (else each is computed).
    """
    storage = _bulk_storage(session)
    if storage is None or not wanted:
        return [None] * len(wanted)
    requests = [request_id(url, params) for url, params in wanted]
    # read here, beside the answers' read that follows when some have none (one stay in storage)
    kept = [None if v is None else read_kept(v) for v in storage.get_kept(requests, form)]
    present = [i for i, found in enumerate(kept) if found is not None]
    values: list[memoryview | None] = [None] * len(wanted)
    if present and _cache_keys(session, [wanted[present[0]]]) != [_key(kept[present[0]])]:
        keys = _cache_keys(session, wanted)  # filed otherwise now: each value checked
        present = [i for i in present if _key(kept[i]) == keys[i]]
    heads = storage.get_heads([_key(kept[i]) for i in present]) if present else []
    now = datetime.now(UTC)
    for i, value in zip(present, heads, strict=True):
        found, head = kept[i], read_head(value)
        if found and head and head.stamp == found.stamp and head.usable(now, offline=offline):
            values[i] = found.payload
    return values


@dataclass(frozen=True)
class CachedForms:
    """What the cache holds for a re-run of many GETs: the value kept in a form for each
    (``None`` where not), and, unless every GET has one, each one's answer and the body the
    session would answer with now (``None`` where none; both lists empty when all are kept).

    ``missing``: the positions of the GETs the cache held no entry for at all: to send
    ``known_missing`` (see :meth:`~propertykit.wire._transport.Transport.fetch_json`), not
    looked up again before the send."""

    kept: list[memoryview | None]
    answers: list[CachedAnswer | None]
    bodies: list[bytes | None]
    missing: frozenset[int] = frozenset()


def cached_forms(
    session: requests.Session, wanted: Wanted, form: str, *, offline: bool
) -> CachedForms:
    """The kept values of ``wanted`` (:func:`kept_values`; none read when ``form`` is empty),
    and, unless every GET has one, the cached answers of all of them (:func:`cached_answers`)
    and their usable bodies: one read for a re-run.

    Examples
    --------
    >>> import propertykit as pk
    >>> with pk.sandbox.serve() as sb, pk.Client(sb.api_key, sb.url, cache=False) as client:
    ...     cached_forms(client._transport.session, [(sb.url + "/v1/health", None)], "f",
    ...                  offline=False)  # doctest: +ELLIPSIS
    CachedForms(kept=[None], answers=[None], bodies=[None], missing=frozenset())
    """
    kept: list[memoryview | None] = [None] * len(wanted)
    if form:
        kept = kept_values(session, wanted, form, offline=offline)
    if wanted and None not in kept:
        return CachedForms(kept=kept, answers=[], bodies=[])
    answers, missing = cached_answers(session, wanted)
    now = datetime.now(UTC)
    bodies = [None if found is None else found.body(now, offline=offline) for found in answers]
    return CachedForms(kept=kept, answers=answers, bodies=bodies, missing=missing)


def keep_as_read(
    session: requests.Session,
    entries: Sequence[tuple[tuple[str, Mapping[str, Any] | None], CachedAnswer | None, bytes]],
    form: str,
) -> None:
    """Keep a value for each ``((url, params), answer, value)``, in ``form``, beside the answer
    it was made from, for the next re-run (:func:`kept_values`).

    ``answer`` is the cached answer whose body was read (:func:`cached_forms`), or ``None`` for
    one this session fetched and stored just now: that one is named by the stamp its storage
    noted as it wrote it, so nothing is read back, and should another process store the same
    GET in between, the value names the answer it replaced and is never used. An answer
    stored before stamps, or not stored at all, gets nothing kept.
    """
    storage = _bulk_storage(session)
    if storage is None or not entries:
        return
    fetched = [request for request, answer, _ in entries if answer is None]
    keys = iter(_cache_keys(session, fetched) if fetched else [])
    named = []
    for request, answer, value in entries:
        if answer is None:
            key = next(keys)
            stamp = storage.written.pop(key, None)  # the stamp of this session's own write
        else:
            key, stamp = answer.key, answer.answer.head.stamp
        if stamp is not None:
            named.append((request, key, stamp, value))
    packed = [
        (request_id(*request), key, pack_kept(key, stamp, value))
        for request, key, stamp, value in named
    ]
    if packed:
        storage.keep(packed, form)


def _key(kept: Kept | None) -> str:
    """The cache key of the answer a kept value was made from."""
    return "" if kept is None else kept.answer_key


def _bulk_storage(session: requests.Session) -> Any:
    """The storage of the session's cache, when it is one of propertykit's (else ``None``)."""
    cache = getattr(session, "cache", None)
    settings = getattr(session, "settings", None)
    if cache is None or settings is None or settings.disabled:
        return None
    storage = cache.responses
    ours = all(hasattr(storage, name) for name in ("get_heads", "get_kept", "keep", "written"))
    return storage if ours else None


def _cache_keys(session: requests.Session, wanted: Wanted) -> list[str]:
    """The key the session's cache files each GET under: ``cache.create_key``, nothing else."""
    cache: Any = getattr(session, "cache", None)
    verify = session.merge_environment_settings(wanted[0][0], {}, None, None, None)["verify"]
    keys = []
    for url, params in wanted:
        prepared = requests.PreparedRequest()
        prepared.prepare(method="GET", url=url, params=dict(params or {}))
        keys.append(cache.create_key(prepared, verify=verify))
    return keys
