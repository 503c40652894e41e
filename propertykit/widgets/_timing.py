"""Timing for the forms, with no ipywidgets in it: debounced typing and a per-minute window.

* :class:`Debouncer` runs a callback once typing pauses (a timer thread by default, so it works
  in a running kernel; tests inject a scheduler they fire by hand);
* :class:`RateWindow` keeps search-suggest within a per-minute limit without ever sleeping
  (its clock is injected).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")


class Cancellable(Protocol):
    """A scheduled call that can be called off (``threading.Timer`` is one)."""

    def cancel(self) -> None: ...


#: ``scheduler(delay_seconds, callback) -> Cancellable``: run ``callback`` once, later.
Scheduler = Callable[[float, Callable[[], None]], Cancellable]


def start_timer(delay: float, callback: Callable[[], None]) -> threading.Timer:
    """The default :data:`Scheduler`: a daemon ``threading.Timer``, already started.

    Examples
    --------
    >>> start_timer(60, lambda: None).cancel()
    """
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer


class Debouncer(Generic[T]):
    """Call ``callback(value)`` once no new value arrived for ``delay`` seconds.

    Examples
    --------
    >>> seen = []
    >>> debounce = Debouncer(0.3, seen.append, scheduler=lambda delay, run: run() or _Noop())
    >>> debounce("Mill")
    >>> seen
    ['Mill']
    """

    def __init__(
        self, delay: float, callback: Callable[[T], None], *, scheduler: Scheduler = start_timer
    ) -> None:
        self.delay = delay
        self._callback = callback
        self._scheduler = scheduler
        self._pending: Cancellable | None = None
        self._lock = threading.Lock()

    def __call__(self, value: T) -> None:
        with self._lock:
            if self._pending is not None:
                self._pending.cancel()
            self._pending = self._scheduler(self.delay, lambda: self._callback(value))

    def cancel(self) -> None:
        """Call off the pending call, if any."""
        with self._lock:
            if self._pending is not None:
                self._pending.cancel()
                self._pending = None


class _Noop:
    def cancel(self) -> None:
        pass


class RateWindow:
    """At most ``per_minute`` calls in any 60 seconds; asking never sleeps.

    Parameters
    ----------
    per_minute
        Calls allowed per minute (``None``: no limit).
    clock
        Seconds from any fixed point (default ``time.monotonic``).

    Examples
    --------
    >>> now = [0.0]
    >>> window = RateWindow(2, clock=lambda: now[0])
    >>> window.acquire(), window.acquire(), window.acquire()
    (0.0, 0.0, 60.0)
    >>> now[0] = 61.0
    >>> window.acquire()
    0.0
    """

    def __init__(
        self, per_minute: float | None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._calls: deque[float] = deque()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take a slot and return 0, or return the seconds until one frees (taking none)."""
        if self.per_minute is None:
            return 0.0
        capacity = max(1, int(self.per_minute))
        with self._lock:
            now = self._clock()
            while self._calls and now - self._calls[0] >= 60.0:
                self._calls.popleft()
            if len(self._calls) >= capacity:
                return max(0.0, 60.0 - (now - self._calls[0]))
            self._calls.append(now)
            return 0.0
