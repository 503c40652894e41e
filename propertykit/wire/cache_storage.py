"""Which requests-cache storage holds the responses, and SQL on its file beside requests-cache.

:func:`storage_kind` tells the SQLite and Redis storages (and subclasses) apart; the bulk read
(:mod:`propertykit.wire.bulk_cache`), the kept forms (:mod:`propertykit.wire.derived_cache`) and
the single flight's read after a wait (:mod:`propertykit.wire.single_flight`) run their own SQL
on the SQLite file through :func:`own_connection`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["own_connection", "storage_kind"]


def storage_kind(responses: Any) -> str | None:
    """``"SQLiteDict"`` or ``"RedisDict"`` for requests-cache's storages and their subclasses
    (propertykit's own Redis storage is one), else ``None``."""
    for kind in type(responses).__mro__:
        if kind.__module__.startswith("requests_cache.") and kind.__name__ in (
            "SQLiteDict",
            "RedisDict",
        ):
            return kind.__name__
    return None


@contextmanager
def own_connection(responses: Any, *, write: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection of the caller's own to the SQLite file of ``responses``.

    requests-cache shares one connection between threads and reads on it without a lock: a
    statement or transaction of ours on it, beside another thread's (Dask's threads, the bulk
    read's), breaks both (``SystemError`` from ``sqlite3``). With ``write``, the block runs in
    one ``BEGIN IMMEDIATE`` transaction, rolled back on any error. An in-memory cache has no
    file to share: its own connection is used, as before.
    """
    if str(getattr(responses, "db_path", ":memory:")) in ("", ":memory:"):
        with responses.connection(commit=write) as shared:
            yield shared
        return
    connection = sqlite3.connect(responses.db_path, timeout=30, isolation_level=None)
    try:
        if not write:
            yield connection
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
    finally:
        connection.close()
