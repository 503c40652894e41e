"""Another kernel: look ids up through propertykit and say what it sent.

The team tests start it (``tests.team.conftest.start_worker``) as a process forked by a
forkserver, a Python process started new that has imported propertykit once: :func:`serve`, with
the environment and folder it is given (the key comes from ``PROPERTYKIT_API_KEY``), answers on
a pipe. ``python _worker.py '<json spec>'`` runs the same lookup and prints it as JSON. With
``ready_file``/``go_file`` it signals it is ready and waits for the go, so two workers start
their lookups together. ``clock_step`` (seconds) steps this process's wall clock (``time.time``,
``time.time_ns`` and the client's :class:`~propertykit.client.Clock`) before it looks, as an NTP
step would; ``writes_no_marks`` makes it a kernel of a propertykit from before lock marks: it
takes the same locks and reads the cache again under them, and leaves nothing beside them.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import propertykit as pk
from propertykit.client import Clock


class _BeforeMarks:
    """The single flight of a propertykit from before marks: the same lock per cache key, and
    nothing written beside it (it read the cache again under every lock)."""

    def __init__(self, flight: Any) -> None:
        self.flight = flight

    @contextmanager
    def hold(self, cache_key: str, within: float | None = None, since: int | None = None) -> Any:
        from propertykit.wire._single_flight import Hold

        if hasattr(self.flight, "lock_path"):
            from filelock import FileLock

            self.flight.folder.mkdir(parents=True, exist_ok=True)
            lock: Any = FileLock(self.flight.lock_path(cache_key), thread_local=False)
        else:
            lock = self.flight.connection.lock(self.flight.lock_name(cache_key), timeout=30)
        with lock:
            yield Hold(True)


def _step_the_wall_clock(seconds: float) -> Clock:
    """Step this process's wall clock by ``seconds``; the client clock that goes with it."""
    step_ns = int(seconds * 1e9)
    wall, wall_ns = time.time, time.time_ns
    time.time = lambda: wall() + seconds  # type: ignore[assignment]
    time.time_ns = lambda: wall_ns() + step_ns  # type: ignore[assignment]
    return Clock(now=lambda: datetime.now(UTC) + timedelta(seconds=seconds))


def look_up(spec: dict[str, Any]) -> dict[str, Any]:
    """Look ``spec["ids"]`` up (after the go, if it has one); the rows and what was sent."""
    clock = _step_the_wall_clock(spec["clock_step"]) if spec.get("clock_step") else Clock()
    if spec.get("go_file"):
        Path(spec["ready_file"]).touch()
        while not Path(spec["go_file"]).exists():
            time.sleep(0.005)
    with pk.Client(
        base_url=spec["base_url"],
        cache=spec["cache"],
        progress=False,
        max_in_flight=spec.get("max_in_flight", 4),
        clock=clock,
    ) as client:
        if spec.get("writes_no_marks"):
            sends = client._transport.session.metered
            sends.flight = _BeforeMarks(sends.flight)
        if spec.get("kind", "properties") == "properties":
            frame = client.properties(spec["ids"])
        else:
            frame = client.sources(spec["ids"], page_size=spec.get("page_size"))
        usage = client.usage
        return {
            "rows": len(frame),
            "location_ids": frame["locationId"].tolist(),
            "sent": usage.requests_sent,
            "cache_hits": usage.cache_hits,
        }


def serve(spec: dict[str, Any], environment: dict[str, str], folder: str, answer: Any) -> None:
    """In a forked process: :func:`look_up` under ``environment`` in ``folder``; its answer,
    or the traceback of what went wrong, sent on the pipe ``answer``."""
    os.environ.clear()
    os.environ.update(environment)
    os.chdir(folder)
    try:
        answer.send(("ok", look_up(spec)))
    except BaseException:
        answer.send(("failed", traceback.format_exc()))
        raise


def main() -> None:
    print(json.dumps(look_up(json.loads(sys.argv[1]))))


if __name__ == "__main__":
    main()
