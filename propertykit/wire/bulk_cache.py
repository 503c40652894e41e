"""Many cached answers read at once: what a warm cache holds for a list of GETs.

The session answers a cache hit by deserialising one stored ``CachedResponse`` per request, behind
``requests``' per-request overhead. Re-running a notebook from a warm cache is mostly that, so
:func:`cached_answers` reads the same entries in bulk instead, through propertykit's own cache
backends (:mod:`propertykit.wire.sqlite_storage`, :mod:`propertykit.wire.redis_storage`):

- each request's key is ``cache.create_key`` of the request the session would prepare (the only
  source of cache keys; it never includes the API key, an ignored parameter);
- the entries come from the backend's ``get_many`` (one query per chunk; Redis: ``MGET``), and
  only their head is read (:mod:`propertykit.wire.stored_answer`), nothing is deserialised;
- an entry is used only when the session would answer with it as it stands: a 200 without
  ``Vary``, fresh (offline: any age, as ``stale_if_error`` allows there). Anything else is
  ``None``, and the caller sends that request down the normal path.

Any other backend (one passed as ``cache=``) answers ``None`` for every request: the normal path
serves it. Values kept beside an answer (:mod:`propertykit.wire.derived_cache`) are read and
written here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import requests

from propertykit.wire.derived_cache import kept_payload, pack_kept
from propertykit.wire.stored_answer import StoredAnswer, read_answer

__all__ = ["CachedAnswer", "cached_answers", "cached_bodies", "keep_beside"]

Wanted = Sequence[tuple[str, Mapping[str, Any] | None]]


@dataclass(frozen=True)
class CachedAnswer:
    """One entry the bulk read found: its cache key, the value as stored, what it says, and the
    value kept beside it in the form asked for (not yet checked: :meth:`kept_payload`)."""

    key: str
    stored: bytes
    answer: StoredAnswer
    kept: bytes | None = None

    def body(self, now: datetime, *, offline: bool) -> bytes | None:
        """The body, if the session would answer with this entry as it stands."""
        return bytes(self.answer.body) if self.answer.usable(now, offline=offline) else None

    def kept_payload(self, now: datetime, *, offline: bool) -> memoryview | None:
        """The kept value, if made from this very entry and the entry is still usable."""
        if not self.answer.usable(now, offline=offline):
            return None
        return kept_payload(self.kept, self.stored)


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
    return [
        None if found is None else found.body(now, offline=offline)
        for found in cached_answers(session, wanted)
    ]


def cached_answers(
    session: requests.Session, wanted: Wanted, *, kept_form: str | None = None
) -> list[CachedAnswer | None]:
    """What the cache stores for each ``(url, params)`` GET (``None``: nothing readable in bulk).

    With ``kept_form``, each answer also carries the value kept beside it in that form.
    """
    storage = _bulk_storage(session)
    if storage is None or not wanted:
        return [None] * len(wanted)
    keys = _cache_keys(session, wanted)
    stored = storage.get_many(keys)
    kept: list[bytes | None] = [None] * len(keys)
    if kept_form is not None and any(value is not None for value in stored):
        kept = storage.get_kept(keys, kept_form)
    found: list[CachedAnswer | None] = []
    for key, value, extra in zip(keys, stored, kept, strict=True):
        answer = read_answer(value)
        found.append(None if answer is None else CachedAnswer(key, bytes(value), answer, extra))
    return found


def keep_beside(
    session: requests.Session, entries: Sequence[tuple[CachedAnswer, bytes]], form: str
) -> None:
    """Keep a value beside each ``(answer, value)``, in ``form``, for the next re-run."""
    storage = _bulk_storage(session)
    if storage is not None and entries:
        packed = [(a.key, a.stored, pack_kept(a.stored, value)) for a, value in entries]
        storage.keep(packed, form)


def _bulk_storage(session: requests.Session) -> Any:
    """The storage of the session's cache, when it is one of propertykit's (else ``None``)."""
    cache = getattr(session, "cache", None)
    settings = getattr(session, "settings", None)
    if cache is None or settings is None or settings.disabled:
        return None
    storage = cache.responses
    return storage if hasattr(storage, "get_many") and hasattr(storage, "keep") else None


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
