"""The time and randomness a client runs on, injected as one value (as httpx injects a transport).

The real clock sleeps, reads the system's time and draws jitter from a fresh random generator.
Tests pass a :class:`Clock` of their own (a list's ``append`` for ``sleep``, a fixed ``now``, a
seeded generator) so that retries and daily caps are checked without waiting.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Clock:
    """How a client waits, tells the time and draws its retries' jitter.

    Parameters
    ----------
    sleep
        Waits the given seconds (between retries, through a short ``Retry-After``).
    now
        The current time, timezone-aware (daily caps reset at midnight UTC).
    monotonic
        Seconds from a clock that never goes back (a call's deadline).
    random
        The generator of the retries' jitter.

    Examples
    --------
    >>> import random
    >>> waits = []
    >>> clock = pk.client.Clock(sleep=waits.append, random=random.Random(0))
    >>> with pk.Client(sb.api_key, sb.url, cache=False, clock=clock) as quick:
    ...     quick.health()["status"]
    'ok'
    >>> waits
    []
    """

    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], datetime] = _utc_now
    monotonic: Callable[[], float] = time.monotonic
    random: random.Random = field(default_factory=random.Random)
