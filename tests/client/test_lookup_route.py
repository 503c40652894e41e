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
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import FrameType
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
from propertykit.frames import _bodies as frames_bodies
from propertykit.wire._derived_cache import FRAMES_TABLE
from tests.hostile._servers import KEY, Seen, envelope, hostile, offset_of, records, send

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


def _over_twice(visits: Counter[str]) -> dict[str, int]:
    """Modules entered more than twice."""
    return {module: n for module, n in visits.items() if n > 2}


@pytest.mark.timeout(120)
def test_a_lookup_visits_each_module_of_its_layers_at_most_twice(
    fresh_sandbox, make_client, cache_file
):
    sb = fresh_sandbox
    ids = sb.location_ids[:40]  # one batch
    with make_client(sb, max_in_flight=1) as warm_up:
        warm_up.properties(sb.location_ids[100:101])  # first use's set-up out of the way
    runs = {}
    for label in ("cold", "first re-run", "warm, kept form", "warm, no kept form"):
        if label == "warm, no kept form":
            with sqlite3.connect(cache_file) as connection:
                connection.execute(f"DELETE FROM {FRAMES_TABLE}")
        with make_client(sb, max_in_flight=1) as client:
            runs[label] = _visits(lambda client=client: client.properties(ids))
    for label, visits in runs.items():
        assert visits["client/_replay.py"] >= 1, label  # the route was seen at all
        assert _over_twice(visits) == {}, f"{label}: {dict(visits)}"
    cold = runs["cold"]
    assert cold["client/_envelope.py"] == 2  # checked once on arrival, read once
    # the cache looked at once, in bulk; the answer stored once: not looked up again before
    # the send, nor under the lock (nobody fetched it since), nothing kept beside it
    assert cold["wire/_sqlite_storage.py"] == 2
    assert cold["wire/_bulk_cache.py"] == 1
    assert cold["wire/_stored_answer.py"] == 2  # the (absent) answers read, the answer written
    assert "frames/_bodies.py" not in cold  # nothing read back
    assert runs["first re-run"]["frames/_bodies.py"] == 2  # the bodies read once, and kept
    assert runs["warm, kept form"]["wire/_stored_answer.py"] == 1  # the heads of the answers


#: Pages of the paged lookup, and the modules that see the whole lookup rather than one page.
PAGES = 3
WHOLE = {"client/_replay.py", "client/_bulk.py", "wire/_bulk_cache.py", "wire/_derived_cache.py"}


def _paging(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
    """A lookup answered in pages of 2, the third page saying where the next starts as text."""
    offset = offset_of(handler.path)
    following: Any = offset + 2 if offset < 4 else str(offset + 2)
    send(handler, 200, envelope(records(offset, 2), hasMore=True, nextOffset=following))


@pytest.mark.timeout(60)
@pytest.mark.filterwarnings("ignore::propertykit.errors.MissingIdsWarning")
def test_a_paged_lookup_visits_each_module_at_most_twice_and_stops_at_an_odd_offset(
    cache_file,
):
    ids = [f"L{i}" for i in range(8)]
    runs = {}
    with hostile(_paging) as server:
        for label in ("cold", "warm"):  # the fetching run, then a re-run from the cache
            with pk.Client(KEY, server.url, cache=cache_file, progress=False) as client:
                with pytest.warns(pk.errors.PagingWarning, match="nextOffset '6'") as caught:
                    runs[label] = _visits(lambda client=client: client.properties(ids))
                assert len([w for w in caught if w.category is pk.errors.PagingWarning]) == 1
        assert [offset_of(seen.path) for seen in server.requests] == [0, 2, 4]  # once each
    for label, visits in runs.items():
        assert visits["client/_replay.py"] >= 1, label
        # the whole lookup's modules at most twice; those a page passes through, twice a page
        whole = {m: n for m, n in visits.items() if m.startswith("frames/") or m in WHOLE}
        # warm: the cached first pages read by Arrow, found paged, then decoded: still twice
        over = _over_twice(Counter(whole))
        assert over == {}, f"{label}: {dict(visits)}"
        screened = int(label == "warm")  # the cached first pages screened by the paging rule
        assert visits["client/_envelope.py"] == screened + 2 * PAGES, label  # each page: 2
        visits["client/_envelope.py"] -= screened
        per_page = {m: -(-n // PAGES) for m, n in visits.items() if m not in whole}
        assert _over_twice(Counter(per_page)) == {}, f"{label}: {dict(visits)}"


@pytest.mark.timeout(60)
def test_a_fetching_run_stores_each_answer_and_the_first_re_run_keeps_it_as_read(
    fresh_sandbox, make_client, cache_file, monkeypatch
):
    sb = fresh_sandbox
    ids = sb.location_ids[:230]  # 5 batches
    parsed: list[int] = []
    read_json = frames_bodies.pa_json.read_json
    monkeypatch.setattr(
        frames_bodies.pa_json, "read_json", lambda *a, **k: parsed.append(1) or read_json(*a, **k)
    )

    def kept() -> int:
        with sqlite3.connect(cache_file) as connection:
            return int(connection.execute(f"SELECT count(*) FROM {FRAMES_TABLE}").fetchone()[0])

    with make_client(sb) as cold:
        network = cold.properties(ids)
        assert cold.usage.requests_sent == 5
    assert parsed == [] and kept() == 0  # no fetched body read back, nothing kept beside it
    reads = []
    for run in ("first re-run", "second re-run"):
        with make_client(sb) as warm:
            replayed = warm.properties(ids)
            assert warm.usage.requests_sent == 0, run
        pd.testing.assert_frame_equal(replayed, network)
        assert kept() == 5, run  # the first re-run keeps every batch as it read it
        reads.append(len(parsed))
    assert reads[0] > 0 and reads[1] == reads[0]  # the bodies read by the first re-run only


def _answers(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
    wanted = handler.path.split("/v1/property/", 1)[1].split("?", 1)[0].split(",")
    send(handler, 200, envelope([{"propertyId": f"P{i}", "locationId": i} for i in wanted]))


@pytest.mark.timeout(60)
def test_an_answer_the_cache_holds_under_a_redirect_is_not_paid_again(cache_file):
    """The bulk read finds no answer under a request's own key, but requests-cache finds it
    through the redirects table (an alias to the key it is stored under): such a batch is not
    taken as missing, so the session still looks it up, and it is not paid again."""
    ids = [f"L{i}" for i in range(60)]  # two batches
    with hostile(_answers) as server:
        with pk.Client(KEY, server.url, cache=cache_file, progress=False) as cold:
            cold.properties(ids)
        with sqlite3.connect(cache_file) as connection:  # each answer filed under an alias
            for (key,) in connection.execute("SELECT key FROM responses").fetchall():
                connection.execute("UPDATE responses SET key = ? WHERE key = ?", (f"at-{key}", key))
                connection.execute("INSERT INTO redirects VALUES (?, ?, NULL)", (key, f"at-{key}"))
        with pk.Client(KEY, server.url, cache=cache_file, progress=False) as warm:
            assert warm.properties(ids)["locationId"].tolist() == ids
            assert warm.usage.requests_sent == 0 and warm.usage.cache_hits == 2
    assert len(server.requests) == 2  # each batch answered once
