"""wire — the one HTTP session, and everything about bytes on the network.

The requests-cache session (SQLite or Redis), pacing, retries and 429s decided as plain data
(:mod:`~propertykit.wire._retries`) and carried out by the :class:`Transport`, error bodies read
into typed errors (:mod:`~propertykit.wire._error_bodies`), the ``cache=`` setting, usage counts,
the Redis parts a team shares, one fetch per batch across processes
(:mod:`~propertykit.wire._single_flight`) and a budget they share
(:mod:`~propertykit.wire._shared_budget`), all applied at one seam: the adapter every real send
passes (:mod:`~propertykit.wire._metered`). propertykit's own cache backends
(:mod:`~propertykit.wire._sqlite_storage`, :mod:`~propertykit.wire._redis_storage`) with their own
serializer (:mod:`~propertykit.wire._stored_answer`): cached answers read in bulk
(:mod:`~propertykit.wire._bulk_cache`) with values kept beside them
(:mod:`~propertykit.wire._derived_cache`), and notes people wrote kept beside them
(:mod:`~propertykit.wire._notes`); answers that could not be stored, counted
(:mod:`~propertykit.wire._write_failures`); street-map tiles for maps made at build time, with a
cache of their own (:mod:`~propertykit.wire._tiles`). No requests-cache name beginning with ``_``
is used.

May import: core only (``config``, ``errors``, ``jsonio``). Nothing here knows an endpoint's
meaning, a record's shape or a purchase.
"""

from __future__ import annotations

from propertykit._public import public_dir
from propertykit.wire._bounded import DEFAULT_MAX_BODY_BYTES
from propertykit.wire._bulk_cache import (
    CachedForms,
    cached_bodies,
    cached_forms,
    keep_as_read,
    kept_values,
)
from propertykit.wire._cache_faults import raising_cache_unavailable
from propertykit.wire._cache_setting import (
    describe_cache_setting,
    open_cache,
    open_cache_file,
    remove_cache_file,
)
from propertykit.wire._clock import Clock
from propertykit.wire._derived_cache import clear_derived
from propertykit.wire._notes import MemoryNotes, Notes, notes_for
from propertykit.wire._retries import RetrySettings, backoff_delay
from propertykit.wire._session import CACHE_FILE_NAME, describe_cache, open_sqlite_cache
from propertykit.wire._team import redis_connection_of
from propertykit.wire._tiles import fetch_tile, tile_cache_info
from propertykit.wire._transport import Transport
from propertykit.wire._usage import Usage

__all__ = [
    "CACHE_FILE_NAME",
    "DEFAULT_MAX_BODY_BYTES",
    "CachedForms",
    "Clock",
    "MemoryNotes",
    "Notes",
    "RetrySettings",
    "Transport",
    "Usage",
    "backoff_delay",
    "cached_bodies",
    "cached_forms",
    "clear_derived",
    "describe_cache",
    "describe_cache_setting",
    "fetch_tile",
    "keep_as_read",
    "kept_values",
    "notes_for",
    "open_cache",
    "open_cache_file",
    "open_sqlite_cache",
    "raising_cache_unavailable",
    "redis_connection_of",
    "remove_cache_file",
    "tile_cache_info",
]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
