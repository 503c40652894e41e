"""A diagnostic, not a gate: how many times one lookup enters each module of its layers.

A *visit* is a call into a module of the lookup path (``client``, ``frames``, ``wire``) from
code in another one (callbacks included); a caller's calls into one module one after another
are one visit. ``docs/performance.md`` quotes these tables from earlier rounds. No test holds
them: a user feels requests, credits and time, which the tests and the other benchmarks
measure; a count of visits fails on a refactor and passes on a bug (lowering one of them once
removed the read that kept a batch from being paid twice).

    python benchmarks/visits.py
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import propertykit as pk
from propertykit.wire._derived_cache import FRAMES_TABLE

ROOT = Path(pk.__file__).parent
#: Every module of the layers a lookup passes through: the client, the frames and the wire.
PATH = {
    path.relative_to(ROOT).as_posix()
    for layer in ("client", "frames", "wire")
    for path in (ROOT / layer).glob("*.py")
}


def _module(frame: FrameType | None) -> str | None:
    """The lookup-path module of the nearest frame that runs in one, from ``frame`` up."""
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(str(ROOT)):
            relative = Path(name).relative_to(ROOT).as_posix()
            if relative in PATH:
                return relative
        frame = frame.f_back
    return None


def _visits(work: Callable[[], Any]) -> Counter[str]:
    route: list[tuple[str | None, str]] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        entered = _own(frame)
        if entered not in PATH:
            return
        caller = _module(frame.f_back)
        if caller != entered and (not route or route[-1] != (caller, entered)):
            route.append((caller, entered))

    threading.setprofile(profile)  # type: ignore[arg-type]
    sys.setprofile(profile)  # type: ignore[arg-type]
    try:
        work()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return Counter(module for _, module in route)


def _own(frame: FrameType) -> str | None:
    name = frame.f_code.co_filename
    if not name.startswith(str(ROOT)):
        return None
    return Path(name).relative_to(ROOT).as_posix()


def main() -> int:
    with tempfile.TemporaryDirectory() as folder, pk.sandbox.serve() as sb:
        cache = Path(folder) / "http_cache.sqlite"
        ids = sb.location_ids[:40]  # one batch

        def client() -> pk.Client:
            return pk.Client(sb.api_key, sb.url, cache=cache, progress=False, max_in_flight=1)

        with client() as warm_up:
            warm_up.properties(sb.location_ids[100:101])  # first use's set-up out of the way
        for label in ("cold", "first re-run", "warm, kept form", "warm, no kept form"):
            if label == "warm, no kept form":
                with sqlite3.connect(cache) as connection:
                    connection.execute(f"DELETE FROM {FRAMES_TABLE}")
            with client() as looking:
                visits = _visits(lambda looking=looking: looking.properties(ids))
            busiest = ", ".join(f"{m} {n}" for m, n in visits.most_common(6))
            print(f"{label}: {sum(visits.values())} visits; most: {busiest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
