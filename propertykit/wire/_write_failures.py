"""Answers paid for that the cache could not store: counted, and said once per call.

A cache backend of propertykit's (:mod:`propertykit.wire._sqlite_storage`,
:mod:`propertykit.wire._redis_storage`) calls :func:`answer_not_stored` when a write fails (disk
full, file size limit, Redis refusing it) instead of raising: the answer is still returned to the
caller, since it was paid for. The transport notes each one for the call under way
(:meth:`WriteFailures.one_warning`'s ``sink``), counts it in ``usage``, and :class:`WriteFailures`
gives one :class:`~propertykit.errors.CacheWriteWarning` per call saying how many were not stored.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from propertykit.errors import CacheWriteWarning, outside_stacklevel

logger = logging.getLogger("propertykit")

Sink = Callable[[str, BaseException], None]

_SINK: contextvars.ContextVar[Sink | None] = contextvars.ContextVar(
    "propertykit_write_failures", default=None
)


def answer_not_stored(cache: str, error: BaseException) -> None:
    """A backend could not store an answer in ``cache`` (a path or address, never a secret)."""
    sink = _SINK.get()
    if sink is not None:
        sink(cache, error)
        return
    warnings.warn(_message(1, cache, error), CacheWriteWarning, stacklevel=outside_stacklevel())


class WriteFailures:
    """Answers not stored during a call, said in one warning when the outermost call ends.

    Examples
    --------
    >>> import warnings
    >>> failures = WriteFailures()
    >>> with warnings.catch_warnings(record=True) as said:
    ...     warnings.simplefilter("always")
    ...     with failures.one_warning():
    ...         failures.note("c.sqlite", OSError(27, "File too large"))
    ...         failures.note("c.sqlite", OSError(27, "File too large"))
    >>> print(said[0].message)  # doctest: +ELLIPSIS
    2 answers paid for could not be stored in the cache (c.sqlite: ...File too large); ...
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._count = 0
        self._last: tuple[str, BaseException] | None = None

    def note(self, cache: str, error: BaseException) -> None:
        """One answer not stored."""
        logger.info("an answer could not be stored in the cache: %s", type(error).__name__)
        with self._lock:
            self._count += 1
            self._last = (cache, error)

    @contextmanager
    def one_warning(self, sink: Sink | None = None) -> Iterator[None]:
        """Warn once, when the outermost of these ends, of the answers noted meanwhile; and
        send the write failures of this thread's requests to ``sink`` meanwhile (as they
        happen: the caller counts and notes them)."""
        with self._lock:
            self._depth += 1
        token = _SINK.set(sink) if sink is not None else None
        try:
            yield
        finally:
            if token is not None:
                _SINK.reset(token)
            with self._lock:
                self._depth -= 1
                outermost, count, last = self._depth == 0, self._count, self._last
                if outermost:
                    self._count, self._last = 0, None
            if outermost and count and last is not None:
                message = _message(count, *last)
                warnings.warn(message, CacheWriteWarning, stacklevel=outside_stacklevel())


def _message(count: int, cache: str, error: BaseException) -> str:
    answers = "1 answer" if count == 1 else f"{count:,} answers"
    return (
        f"{answers} paid for could not be stored in the cache ({cache}: "
        f"{type(error).__name__}: {error}); the records are returned, but asking for them again "
        "will pay again. Free some disk space, or point cache= somewhere with room"
    )
