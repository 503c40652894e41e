"""Small notes people wrote, kept beside the cache: in Redis for a team, in a file for a machine.

What a person decided (which property an address is, that the service does not hold it) is no
answer of the service: it never expires, and clearing the cache must not lose it. It is kept
where the cache is, so everyone who shares the cache shares the notes: a Redis hash
``<namespace>:notes:<book>`` beside a team's Redis cache, or a SQLite file
(``propertykit_notes.sqlite``) in the folder of the SQLite cache file, which every kernel of the
machine opens (WAL mode, a busy timeout). A client without a cache keeps them in memory.

A book is a name (``"address-matches"``); its entries are text keys and text values (JSON, for
the callers). Nothing here knows what a note means.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Protocol

#: The notes file, in the folder of the SQLite cache file.
NOTES_FILE_NAME = "propertykit_notes.sqlite"
_BUSY_SECONDS = 30.0
_CHUNK = 500


class Notes(Protocol):
    """One book of notes: text values by text key."""

    where: str

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        """The value of each key (``None``: no note)."""
        ...

    def put(self, key: str, value: str) -> None:
        """Write (or replace) one note."""
        ...

    def delete(self, key: str) -> None:
        """Remove one note (nothing when there is none)."""
        ...

    def count(self) -> int:
        """Notes in the book."""
        ...

    def items(self) -> list[tuple[str, str]]:
        """Every note of the book: (key, value)."""
        ...


class MemoryNotes:
    """Notes in this process only (a client without a cache).

    Examples
    --------
    >>> notes = MemoryNotes()
    >>> notes.put("a", "1"); notes.get_many(["a", "b"])
    ['1', None]
    """

    where = "memory (this client only)"

    def __init__(self) -> None:
        self._values: dict[str, str] = {}

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        return [self._values.get(key) for key in keys]

    def put(self, key: str, value: str) -> None:
        self._values[key] = value

    def delete(self, key: str) -> None:
        self._values.pop(key, None)

    def count(self) -> int:
        return len(self._values)

    def items(self) -> list[tuple[str, str]]:
        return list(self._values.items())


class FileNotes:
    """Notes in a SQLite file that the processes of one machine share.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> notes = FileNotes(pathlib.Path(tempfile.mkdtemp()) / NOTES_FILE_NAME, "demo")
    >>> notes.put("a", "1"); FileNotes(notes.path, "demo").get_many(["a"])
    ['1']
    """

    def __init__(self, path: str | Path, book: str) -> None:
        self.path = Path(path)
        self.book = book
        self.where = str(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connection() as connection:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS notes (book TEXT NOT NULL, key TEXT NOT NULL, "
                "value TEXT NOT NULL, PRIMARY KEY (book, key))"
            )

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        connecting = closing(sqlite3.connect(self.path, timeout=_BUSY_SECONDS))
        with connecting as connection, connection:  # one transaction, committed on leaving
            yield connection

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        found: dict[str, str] = {}
        with self._connection() as connection:
            for start in range(0, len(keys), _CHUNK):
                chunk = list(keys[start : start + _CHUNK])
                marks = ",".join("?" * len(chunk))
                rows = connection.execute(
                    f"SELECT key, value FROM notes WHERE book = ? AND key IN ({marks})",
                    [self.book, *chunk],
                )
                found.update(rows)
        return [found.get(key) for key in keys]

    def put(self, key: str, value: str) -> None:
        with self._connection() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO notes (book, key, value) VALUES (?, ?, ?)",
                (self.book, key, value),
            )

    def delete(self, key: str) -> None:
        with self._connection() as connection:
            connection.execute("DELETE FROM notes WHERE book = ? AND key = ?", (self.book, key))

    def count(self) -> int:
        with self._connection() as connection:
            row = connection.execute("SELECT COUNT(*) FROM notes WHERE book = ?", (self.book,))
            return int(row.fetchone()[0])

    def items(self) -> list[tuple[str, str]]:
        with self._connection() as connection:
            rows = connection.execute("SELECT key, value FROM notes WHERE book = ?", (self.book,))
            return [(str(key), str(value)) for key, value in rows]


class RedisNotes:
    """Notes in a Redis hash that a team shares (never expiring).

    Examples
    --------
    >>> import redis
    >>> RedisNotes(redis.Redis(), "demo").key
    'propertykit:notes:demo'
    """

    def __init__(self, connection: Any, book: str, namespace: str = "propertykit") -> None:
        from propertykit.wire._team import describe_redis

        self.connection = connection
        self.key = f"{namespace}:notes:{book}"
        self.where = f"{describe_redis(connection)} ({self.key})"

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        values: list[str | None] = []
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            if chunk:
                raw = self.connection.hmget(self.key, chunk)
                values.extend(None if value is None else _text(value) for value in raw)
        return values

    def put(self, key: str, value: str) -> None:
        self.connection.hset(self.key, key, value)

    def delete(self, key: str) -> None:
        self.connection.hdel(self.key, key)

    def count(self) -> int:
        return int(self.connection.hlen(self.key))

    def items(self) -> list[tuple[str, str]]:
        return [
            (_text(key), _text(value))
            for key, value in self.connection.hscan_iter(self.key, count=_CHUNK)
        ]


def _text(value: bytes | str) -> str:
    """A Redis answer as text (a connection may decode answers, or not)."""
    return value if isinstance(value, str) else value.decode()


def notes_for(cache: Any, book: str) -> Notes:
    """The notes of ``book`` where ``cache`` (a requests-cache backend, or ``None``) keeps
    answers: its Redis, the folder of its SQLite file, or this process's memory.

    Examples
    --------
    >>> notes_for(None, "address-matches").where
    'memory (this client only)'
    """
    from propertykit.wire._team import redis_connection_of

    redis = redis_connection_of(cache)
    if redis is not None:
        namespace = getattr(getattr(cache, "responses", None), "namespace", "propertykit")
        return RedisNotes(redis, book, namespace=namespace)
    db_path = getattr(cache, "db_path", None)
    if db_path is not None and str(db_path) != ":memory:":
        return FileNotes(Path(db_path).parent / NOTES_FILE_NAME, book)
    return MemoryNotes()
