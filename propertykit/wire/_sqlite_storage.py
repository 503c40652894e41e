"""propertykit's SQLite cache: a requests-cache backend of its own, in one file kernels share.

requests-cache documents custom backends as a ``BaseCache`` holding ``BaseStorage`` mappings;
:class:`SQLiteAnswers` is one. Its storage, :class:`SQLiteStorage`, is ours from the table up,
so it may offer what the warm replay needs and requests-cache does not:

- :meth:`SQLiteStorage.get_many`: many stored values in one query per chunk, not deserialised;
- :meth:`SQLiteStorage.get_heads`: only the first bytes of many (SQLite's incremental blob
  reads: the rest of a large value is not read from the file at all);
- a write that fails (disk full, file size limit) raises, instead of being rolled back without a
  word: :meth:`SQLiteAnswers.save_response` turns that into a count of answers not stored
  (:mod:`propertykit.wire._write_failures`), and the answer is still returned;
- the stamps of the answers it wrote last (``written``, a
  :class:`~propertykit.wire._stored_answer.Written`), to keep a value beside an answer just
  fetched without reading it back;
- values kept beside an answer (:meth:`SQLiteStorage.get_kept`, :meth:`SQLiteStorage.keep`),
  in a table of ours, filed by request; each names the answer it was made from, and is used
  only with it (:mod:`propertykit.wire._derived_cache`). Clearing the cache deletes them.

Each thread has a connection of its own (WAL mode, a busy timeout), so a read in one thread
never pins the view another thread reads. Entries use requests-cache's table layout (``key``,
``value``, ``expires``), so a file written before still opens; its old entries are read through
requests-cache's own serializer.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from requests import Response
from requests_cache.backends.base import BaseCache, BaseStorage
from requests_cache.serializers import SerializerType

from propertykit.wire._derived_cache import FRAMES_TABLE
from propertykit.wire._stored_answer import ANSWER_SERIALIZER, HEAD_BYTES, Written
from propertykit.wire._write_failures import answer_not_stored

#: Keys per query (under SQLite's limit of bound parameters).
CHUNK = 500
#: The table of values kept beside the answers (see :meth:`SQLiteStorage.keep`).
KEPT_TABLE = FRAMES_TABLE
_OLD_TRIGGERS = (
    "propertykit_kept_on_insert",
    "propertykit_kept_on_update",
    "propertykit_kept_on_delete",
)


class SQLiteStorage(BaseStorage):  # type: ignore[type-arg]
    """One table of a SQLite file as a requests-cache storage (a ``MutableMapping``).

    Parameters
    ----------
    db_path
        The file.
    table_name
        The table (``responses`` or ``redirects``).
    serializer
        How values are stored (``None``: as they are, e.g. the redirects' keys).
    busy_timeout
        Seconds a write waits for another process's.
    """

    def __init__(
        self,
        db_path: str | Path,
        table_name: str,
        *,
        serializer: SerializerType | None = None,
        busy_timeout: float = 30.0,
    ) -> None:
        super().__init__(serializer=serializer)
        self.db_path = Path(db_path)
        self.table_name = table_name
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self.written = Written()  # the stamps of the answers written last
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        with self._writing() as connection:
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {table_name} "
                "(key TEXT PRIMARY KEY, value BLOB, expires INTEGER)"
            )
            with suppress(sqlite3.Error):  # without it, only keeping fails
                connection.execute(  # key: the request (a request_id)
                    f"CREATE TABLE IF NOT EXISTS {KEPT_TABLE} (key TEXT NOT NULL, "
                    "form TEXT NOT NULL, value BLOB, PRIMARY KEY (key, form))"
                )
            for old in _OLD_TRIGGERS:  # propertykit before 0.2 kept values by triggers
                connection.execute(f"DROP TRIGGER IF EXISTS {old}")

    # -- connections ------------------------------------------------------------------------------

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection (autocommit: every statement is its own transaction)."""
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(
                self.db_path,
                timeout=self.busy_timeout,
                isolation_level=None,
                check_same_thread=False,
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
            with self._opened_lock:
                self._opened.append(connection)
        yield connection

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction, committed, or rolled back and raised."""
        with self.connection() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close every thread's connection."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()
        self._local = threading.local()

    # -- the mapping ------------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        with self.connection() as connection:
            row = connection.execute(
                f"SELECT value FROM {self.table_name} WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            raise KeyError(key)
        return self.deserialize(key, row[0])

    def __setitem__(self, key: str, value: Any) -> None:
        expires = getattr(value, "expires_unix", None)
        stored = self.serialize(value)
        with self._writing() as connection:
            connection.execute(
                f"INSERT OR REPLACE INTO {self.table_name} (key, value, expires) VALUES (?, ?, ?)",
                (key, stored, expires),
            )
        self.written.note(key, stored)

    def __delitem__(self, key: str) -> None:
        with self._writing() as connection:
            deleted = connection.execute(
                f"DELETE FROM {self.table_name} WHERE key = ?", (key,)
            ).rowcount
        if not deleted:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        with self.connection() as connection:
            keys = [key for (key,) in connection.execute(f"SELECT key FROM {self.table_name}")]
        return iter(keys)

    def __len__(self) -> int:
        with self.connection() as connection:
            (count,) = connection.execute(f"SELECT count(*) FROM {self.table_name}").fetchone()
        return int(count)

    def bulk_delete(self, keys: Iterable[str]) -> None:
        """Delete ``keys``; missing ones are no error."""
        keys = list(keys)
        with self._writing() as connection:
            for start in range(0, len(keys), CHUNK):
                chunk = keys[start : start + CHUNK]
                marks = ",".join("?" * len(chunk))
                connection.execute(f"DELETE FROM {self.table_name} WHERE key IN ({marks})", chunk)

    def clear(self) -> None:
        """Delete every entry (and everything kept beside them)."""
        with self._writing() as connection:
            connection.execute(f"DELETE FROM {self.table_name}")
            with suppress(sqlite3.Error):  # a kept table made unwritable by hand: not our answers
                connection.execute(f"DELETE FROM {KEPT_TABLE}")

    def read_afresh(self, key: str) -> Any:
        """The entry for ``key`` (``None``: absent), read on a second connection of this thread
        used for nothing else (autocommit, every read finished at once): it sees every commit,
        whatever reads this thread's own connection has under way. Opened once per thread: a
        connection opened for each read cost about as much as the read
        (``benchmarks/pay_once.py``)."""
        connection: sqlite3.Connection | None = getattr(self._local, "afresh", None)
        if connection is None:
            connection = sqlite3.connect(
                self.db_path,
                timeout=self.busy_timeout,
                isolation_level=None,
                check_same_thread=False,  # closed by close(), from any thread
            )
            self._local.afresh = connection
            with self._opened_lock:
                self._opened.append(connection)
        rows = connection.execute(
            f"SELECT value FROM {self.table_name} WHERE key = ?", (key,)
        ).fetchall()
        return None if not rows else self.deserialize(key, rows[0][0])

    def clear_kept(self) -> None:
        """Delete every value kept beside the answers."""
        with self._writing() as connection:
            connection.execute(f"DELETE FROM {KEPT_TABLE}")

    # -- in bulk ----------------------------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """The stored (serialised) values of ``keys``, ``None`` each where absent."""
        return self._select(self.table_name, keys, ())

    def get_heads(self, keys: Sequence[str]) -> list[bytes | None]:
        """The first :data:`~propertykit.wire._stored_answer.HEAD_BYTES` of the stored values
        of ``keys``, ``None`` each where absent: read alone, not the whole of each value."""
        rows = self._select(self.table_name, keys, (), column="rowid")
        heads: list[bytes | None] = []
        with self.connection() as connection:
            for row in rows:
                heads.append(None if row is None else _read_head(connection, self.table_name, row))
        return heads

    def get_kept(self, requests: Sequence[str], form: str) -> list[bytes | None]:
        """The values kept for ``requests`` in ``form``, ``None`` each where absent."""
        return self._select(KEPT_TABLE, requests, (form,))

    def keep(self, entries: Sequence[tuple[str, str, bytes]], form: str) -> None:
        """Keep a value for each ``(request, answer key, value)`` (the value names its answer:
        whether that is still the one stored is checked on reading)."""
        rows = [(request, form, value) for request, _, value in entries]
        with self._writing() as connection:
            connection.executemany(
                f"INSERT OR REPLACE INTO {KEPT_TABLE} (key, form, value) VALUES (?, ?, ?)", rows
            )

    def _select(
        self, table: str, keys: Sequence[str], form: tuple[str, ...], *, column: str = "value"
    ) -> list[Any]:
        found: dict[str, Any] = {}
        extra = " AND form = ?" if form else ""
        with self.connection() as connection:
            for start in range(0, len(keys), CHUNK):
                chunk = list(keys[start : start + CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT key, {column} FROM {table} WHERE key IN ({marks}){extra}",
                    [*chunk, *form],
                )
                found.update(rows.fetchall())
        return [found.get(key) for key in keys]


def _read_head(connection: sqlite3.Connection, table: str, row: int) -> bytes | None:
    """The first bytes of the value in ``row`` (``None``: deleted since, or not a blob). A row
    stored anew since may have taken the number: its stamp tells it apart."""
    try:
        with connection.blobopen(table, "value", row, readonly=True) as blob:
            return blob.read(HEAD_BYTES)
    except sqlite3.Error:
        return None


class SQLiteAnswers(BaseCache):
    """propertykit's SQLite cache backend: answers and redirects in one file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> cache = SQLiteAnswers(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
    >>> len(cache.responses), cache.responses.get_many(["nothing"])
    (0, [None])
    >>> cache.close()
    """

    def __init__(self, db_path: str | Path, *, busy_timeout: float = 30.0) -> None:
        super().__init__(cache_name=str(db_path))
        self.responses: SQLiteStorage = SQLiteStorage(
            db_path, "responses", serializer=ANSWER_SERIALIZER, busy_timeout=busy_timeout
        )
        self.redirects: SQLiteStorage = SQLiteStorage(
            db_path, "redirects", busy_timeout=busy_timeout
        )

    @property
    def db_path(self) -> Path:
        """The cache file."""
        return self.responses.db_path

    def save_response(
        self, response: Response, cache_key: str | None = None, expires: Any = None
    ) -> None:
        """Store an answer; one that cannot be written is counted (and warned of), not raised."""
        try:
            super().save_response(response, cache_key, expires)
        except (sqlite3.Error, OSError) as exc:
            answer_not_stored(str(self.db_path), exc)
