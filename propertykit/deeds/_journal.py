"""The title-deed purchase journal: an append-only file of JSON lines, one event per line.

Every purchase writes an ``intent`` line *before* the request is sent and an ``outcome`` line
after its money state is established (``charged`` or ``not_charged``). When the outcome cannot be
established, an ``uncertain`` line is written and the intent stays open. Each line is written
with one ``os.write`` on a file opened with ``O_APPEND`` and then ``os.fsync``-ed, so a kernel that
dies mid-purchase leaves at worst a torn last line, which readers skip and writers step over.

An *open intent* is an intent without an outcome: a purchase whose request may have reached the
service and whose money state nobody has established. A new client resolves it through
purchase-status before the same title is bought again.

The journal holds title numbers, idempotency keys, the service's address (without any user
information) and the bodies the service answered with. It never holds the API key.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from propertykit import config

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: purchases are not serialised across kernels
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger("propertykit")

#: Name of the journal file in :func:`propertykit.config.cache_dir`.
JOURNAL_FILENAME = "title-deeds.jsonl"

EventKind = Literal["intent", "outcome", "uncertain"]
_EVENT_KINDS = ("intent", "outcome", "uncertain")


def default_journal_path() -> Path:
    """Where the journal lives unless ``journal=`` names a file: the user cache directory.

    Examples
    --------
    >>> default_journal_path().name
    'title-deeds.jsonl'
    """
    return config.cache_dir() / JOURNAL_FILENAME


def service_address(base_url: str) -> str:
    """The service's address as the journal stores it: no user information, query or fragment.

    Examples
    --------
    >>> service_address("https://user:secret@api.example.com/v1/?x=1")
    'https://api.example.com/v1'
    """
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


@dataclass(frozen=True)
class JournalEvent:
    """One line of the journal.

    Attributes
    ----------
    event
        ``intent`` (written before sending), ``outcome`` (money state established) or
        ``uncertain`` (a try whose outcome could not be established; the intent stays open).
    title_number, idempotency_key, service
        Which purchase, and at which service address.
    at
        When the line was written (aware UTC).
    money_state, status
        For outcomes: ``charged``/``not_charged`` and ``delivered``/``delivering`` (or ``None``).
    detail
        A short human sentence (the error, or how the outcome was established).
    data
        The service's answer (parsed JSON or text), or the payload for an intent.
    """

    event: EventKind
    title_number: str
    idempotency_key: str
    service: str
    at: datetime
    money_state: str | None = None
    status: str | None = None
    detail: str | None = None
    data: Any = None

    def to_line(self) -> str:
        """Serialise as one JSON line (with the trailing newline)."""
        record = {
            "event": self.event,
            "at": self.at.isoformat(),
            "title_number": self.title_number,
            "idempotency_key": self.idempotency_key,
            "service": self.service,
            "money_state": self.money_state,
            "status": self.status,
            "detail": self.detail,
            "data": self.data,
        }
        return json.dumps(record, separators=(",", ":"), default=str) + "\n"

    @classmethod
    def from_line(cls, line: str) -> JournalEvent:
        """Parse one JSON line; raises ``ValueError`` when it is not a journal event."""
        record = json.loads(line)
        if not isinstance(record, dict) or record.get("event") not in _EVENT_KINDS:
            raise ValueError("not a journal event")
        at = datetime.fromisoformat(str(record["at"]))
        return cls(
            event=record["event"],
            title_number=str(record["title_number"]),
            idempotency_key=str(record["idempotency_key"]),
            service=str(record.get("service") or ""),
            at=at,
            money_state=record.get("money_state"),
            status=record.get("status"),
            detail=record.get("detail"),
            data=record.get("data"),
        )


@dataclass
class PurchaseRecord:
    """Everything the journal knows about one logical purchase (one idempotency key).

    Attributes
    ----------
    money_state
        ``charged`` or ``not_charged`` once an outcome was recorded; ``None`` while open.
    status
        ``delivered``/``delivering`` as last recorded, else ``None``.
    is_open
        True when the intent has no outcome: the money state is not known.
    """

    title_number: str
    idempotency_key: str
    service: str
    intent_at: datetime
    payload: Any = None
    money_state: str | None = None
    status: str | None = None
    outcome_at: datetime | None = None
    detail: str | None = None
    data: Any = None
    events: list[JournalEvent] = field(default_factory=list)

    @property
    def is_open(self) -> bool:
        return self.money_state is None


class Journal:
    """The append-only purchase journal at ``path`` (default: :func:`default_journal_path`).

    Parameters
    ----------
    path
        The journal file; created with its folder on first write.
    clock
        Returns the current aware UTC time (injectable for tests).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> journal = Journal(pathlib.Path(tempfile.mkdtemp()) / "deeds.jsonl")
    >>> journal.record_intent("NGL1", "key-1", service="http://127.0.0.1:8000")
    >>> [record.title_number for record in journal.open_intents()]
    ['NGL1']
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else default_journal_path()
        self._clock: Callable[[], datetime] = clock or (lambda: datetime.now(UTC))

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold an exclusive lock on this journal, across processes, while a purchase runs.

        Two kernels buying through the same journal take turns, so the second sees what the
        first bought. (POSIX ``flock`` on a ``.lock`` file beside the journal; on platforms
        without it this is a no-op.)
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def append(self, event: JournalEvent) -> None:
        """Append one event, flushed and fsynced before returning."""
        line = event.to_line().encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        created = not self.path.exists()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if not created and not _ends_with_newline(self.path):
                # A crash tore the last line; start ours on a fresh line so it stays readable.
                line = b"\n" + line
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            _fsync_directory(self.path.parent)

    def record_intent(
        self, title_number: str, idempotency_key: str, *, service: str, payload: Any = None
    ) -> None:
        """Record that a purchase is about to be sent (before anything goes on the wire)."""
        self.append(
            JournalEvent(
                "intent",
                title_number,
                idempotency_key,
                service_address(service),
                self._clock(),
                data=payload,
            )
        )

    def record_outcome(
        self,
        title_number: str,
        idempotency_key: str,
        *,
        service: str,
        money_state: str,
        status: str | None = None,
        detail: str | None = None,
        data: Any = None,
    ) -> None:
        """Record an established money state (``charged`` or ``not_charged``); closes the intent."""
        if money_state not in ("charged", "not_charged"):
            raise ValueError(f"an outcome needs an established money state, got {money_state!r}")
        self.append(
            JournalEvent(
                "outcome",
                title_number,
                idempotency_key,
                service_address(service),
                self._clock(),
                money_state=money_state,
                status=status,
                detail=detail,
                data=data,
            )
        )

    def record_uncertain(
        self, title_number: str, idempotency_key: str, *, service: str, detail: str
    ) -> None:
        """Record a try whose outcome could not be established; the intent stays open."""
        self.append(
            JournalEvent(
                "uncertain",
                title_number,
                idempotency_key,
                service_address(service),
                self._clock(),
                money_state="unknown",
                detail=detail,
            )
        )

    # -- reading ---------------------------------------------------------------------------

    def events(self) -> Iterator[JournalEvent]:
        """Every readable event in file order; torn or foreign lines are skipped (and logged)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                yield JournalEvent.from_line(line.decode("utf-8"))
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                logger.info(
                    "skipping unreadable line %d of the purchase journal %s", number, self.path
                )

    def purchases(
        self, *, service: str | None = None, title_number: str | None = None
    ) -> list[PurchaseRecord]:
        """One record per logical purchase, oldest intent first, optionally filtered.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> journal = Journal(pathlib.Path(tempfile.mkdtemp()) / "deeds.jsonl")
        >>> journal.record_intent("NGL1", "k", service="http://x")
        >>> journal.record_outcome("NGL1", "k", service="http://x", money_state="charged")
        >>> journal.purchases()[0].money_state
        'charged'
        """
        wanted_service = service_address(service) if service is not None else None
        records: dict[str, PurchaseRecord] = {}
        for event in self.events():
            if wanted_service is not None and event.service != wanted_service:
                continue
            if title_number is not None and event.title_number != title_number:
                continue
            record = records.get(event.idempotency_key)
            if record is None:
                record = PurchaseRecord(
                    event.title_number, event.idempotency_key, event.service, event.at
                )
                records[event.idempotency_key] = record
            _apply(record, event)
        return sorted(records.values(), key=lambda record: record.intent_at)

    def open_intents(
        self, *, service: str | None = None, title_number: str | None = None
    ) -> list[PurchaseRecord]:
        """Purchases whose intent has no outcome: their money state is not known."""
        return [
            record
            for record in self.purchases(service=service, title_number=title_number)
            if record.is_open
        ]

    def charged(self, *, service: str, title_number: str) -> PurchaseRecord | None:
        """The latest purchase of ``title_number`` at ``service`` known to have been charged."""
        bought = [
            record
            for record in self.purchases(service=service, title_number=title_number)
            if record.money_state == "charged"
        ]
        return bought[-1] if bought else None


def _apply(record: PurchaseRecord, event: JournalEvent) -> None:
    record.events.append(event)
    if event.event == "intent":
        record.intent_at = event.at
        record.payload = event.data
    elif event.event == "outcome":
        record.money_state = event.money_state
        record.status = event.status or record.status
        record.outcome_at = event.at
        record.detail = event.detail
        if event.data is not None:
            record.data = event.data
    elif record.money_state is None:
        record.detail = event.detail


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return True
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"


def _fsync_directory(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def as_rows(records: list[PurchaseRecord]) -> list[Mapping[str, Any]]:
    """Plain rows for display (the ``propertykit deeds list`` table and DataFrames).

    Examples
    --------
    >>> as_rows([])
    []
    """
    return [
        {
            "intent_at": record.intent_at.isoformat(timespec="seconds"),
            "title_number": record.title_number,
            "money_state": record.money_state or "open (unknown)",
            "status": record.status or "",
            "idempotency_key": record.idempotency_key,
            "service": record.service,
            "detail": record.detail or "",
        }
        for record in records
    ]
