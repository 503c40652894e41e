"""One way through a lookup: each fetched body read once, each module visited at most twice.

A *visit* is a call into a module of the lookup path from code in another one (callbacks
included); a caller's calls into one module one after another are one visit. This is what
``docs/performance.md`` reports for a cold and a warm lookup, before and after issue 47.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
from propertykit.frames import _bodies as frames_bodies
from propertykit.wire._derived_cache import FRAMES_TABLE

ROOT = Path(pk.__file__).parent
#: The client and frames modules a lookup's data passes through.
PATH = {
    "client/_replay.py",
    "client/_lookups.py",
    "client/_bulk.py",
    "client/_envelope.py",
    "frames/_bodies.py",
    "frames/_stored_form.py",
    "frames/_tables.py",
    "wire/_bulk_cache.py",
    "wire/_transport.py",
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
        here = _own(frame)
        if here not in PATH:
            return
        caller = _module(frame.f_back)
        if caller != here and (not route or route[-1] != (caller, here)):
            route.append((caller, here))

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


@pytest.mark.timeout(120)
def test_a_lookup_visits_each_client_and_frames_module_at_most_twice(
    fresh_sandbox, make_client, cache_file
):
    sb = fresh_sandbox
    ids = sb.location_ids[:40]  # one batch
    with make_client(sb, max_in_flight=1) as warm_up:
        warm_up.properties(sb.location_ids[100:101])  # first use's set-up out of the way
    runs = {}
    for label in ("cold", "warm, kept form", "warm, no kept form"):
        if label == "warm, no kept form":
            with sqlite3.connect(cache_file) as connection:
                connection.execute(f"DELETE FROM {FRAMES_TABLE}")
        with make_client(sb, max_in_flight=1) as client:
            runs[label] = _visits(lambda client=client: client.properties(ids))
    for label, visits in runs.items():
        assert visits["client/_replay.py"] >= 1, label  # the route was seen at all
        over = {module: n for module, n in visits.items() if n > 2}
        assert over == {}, f"{label}: {dict(visits)}"
    assert runs["cold"]["client/_envelope.py"] == 2  # checked once on arrival, read once


@pytest.mark.timeout(60)
def test_a_fetching_run_reads_no_fetched_body_again_yet_keeps_every_batch(
    fresh_sandbox, make_client, cache_file, monkeypatch
):
    sb = fresh_sandbox
    ids = sb.location_ids[:230]  # 5 batches
    parsed: list[int] = []
    read_json = frames_bodies.pa_json.read_json
    monkeypatch.setattr(
        frames_bodies.pa_json, "read_json", lambda *a, **k: parsed.append(1) or read_json(*a, **k)
    )
    with make_client(sb) as cold:
        network = cold.properties(ids)
    assert parsed == []  # before: every fetched body read again from the cache, by Arrow
    with sqlite3.connect(cache_file) as connection:
        kept = connection.execute(f"SELECT count(*) FROM {FRAMES_TABLE}").fetchone()[0]
    assert kept == 5  # yet every batch is kept as read, for the first re-run
    sb.reset_log()
    with make_client(sb) as warm:
        replayed = warm.properties(ids)
        assert warm.usage.requests_sent == 0
    assert parsed == []  # the re-run parsed nothing either
    pd.testing.assert_frame_equal(replayed, network)
