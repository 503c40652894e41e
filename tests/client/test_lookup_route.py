"""One way through a lookup, as a user meets it: what the service received and charged, and
what each run gave back, cold and re-run from the cache.

How many times a lookup enters each module (the visits ``docs/performance.md`` reports) is a
diagnostic, printed by ``benchmarks/visits.py``; no test holds it.
"""

from __future__ import annotations

import sqlite3
from http.server import BaseHTTPRequestHandler
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
from propertykit.frames import _bodies as frames_bodies
from propertykit.wire._derived_cache import FRAMES_TABLE
from tests.hostile._servers import KEY, Seen, envelope, hostile, offset_of, records, send

#: The runs of a lookup a notebook makes: the fetch, then re-runs from the cache.
RUNS = ("cold", "first re-run", "warm, kept form", "warm, no kept form")


@pytest.mark.timeout(120)
def test_a_lookup_is_paid_once_and_every_re_run_gives_the_same_frame(
    fresh_sandbox, make_client, cache_file
):
    sb = fresh_sandbox
    ids = sb.location_ids[:40]  # one batch
    frames = {}
    for label in RUNS:
        if label == "warm, no kept form":
            with sqlite3.connect(cache_file) as connection:
                connection.execute(f"DELETE FROM {FRAMES_TABLE}")
        with make_client(sb, max_in_flight=1) as client:
            frames[label] = client.properties(ids)
            assert client.usage.requests_sent == int(label == "cold"), label
            assert client.usage.cache_hits == int(label != "cold"), label
    assert len(sb.requests) == len(sb.ledger) == 1  # received once, charged once
    assert frames["cold"]["locationId"].tolist() == ids
    for label in RUNS[1:]:
        pd.testing.assert_frame_equal(frames[label], frames["cold"])


#: Pages of the paged lookup.
PAGES = 3


def _paging(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
    """A lookup answered in pages of 2, the third page saying where the next starts as text."""
    offset = offset_of(handler.path)
    following: Any = offset + 2 if offset < 4 else str(offset + 2)
    send(handler, 200, envelope(records(offset, 2), hasMore=True, nextOffset=following))


@pytest.mark.timeout(60)
@pytest.mark.filterwarnings("ignore::propertykit.errors.MissingIdsWarning")
def test_a_paged_lookup_fetches_each_page_once_and_stops_at_an_odd_offset(cache_file):
    ids = [f"L{i}" for i in range(8)]
    frames = {}
    with hostile(_paging) as server:
        for label in ("cold", "warm"):  # the fetching run, then a re-run from the cache
            with pk.Client(KEY, server.url, cache=cache_file, progress=False) as client:
                with pytest.warns(pk.errors.PagingWarning, match="nextOffset '6'") as caught:
                    frames[label] = client.properties(ids)
                assert len([w for w in caught if w.category is pk.errors.PagingWarning]) == 1
                assert client.usage.requests_sent == (PAGES if label == "cold" else 0)
        assert [offset_of(seen.path) for seen in server.requests] == [0, 2, 4]  # once each
    assert frames["cold"]["locationId"].tolist() == ids[:6]  # up to the odd offset
    pd.testing.assert_frame_equal(frames["warm"], frames["cold"])


@pytest.mark.timeout(60)
def test_bodies_are_parsed_by_one_run_only_and_every_run_gives_the_same_frame(
    fresh_sandbox, make_client, monkeypatch
):
    """The cost a user feels on a re-run (``benchmarks/replay.py``): response bodies parsed
    by Arrow. Parsed by one run of the notebook only; later re-runs parse none."""
    sb = fresh_sandbox
    ids = sb.location_ids[:230]  # 5 batches
    parsed: list[int] = []
    read_json = frames_bodies.pa_json.read_json
    monkeypatch.setattr(
        frames_bodies.pa_json, "read_json", lambda *a, **k: parsed.append(1) or read_json(*a, **k)
    )
    runs = {}
    for run in ("cold", "first re-run", "second re-run", "third re-run"):
        before = len(parsed)
        with make_client(sb) as client:
            runs[run] = client.properties(ids)
            assert client.usage.requests_sent == 5 * (run == "cold"), run
        runs[run].attrs["parsed"] = len(parsed) - before
    assert len(sb.requests) == len(sb.ledger) == 5  # each batch received and charged once
    assert [df.attrs.pop("parsed") > 0 for df in runs.values()].count(True) <= 1
    for run in ("first re-run", "second re-run", "third re-run"):
        pd.testing.assert_frame_equal(runs[run], runs["cold"])
    assert runs["cold"]["locationId"].tolist() == ids


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
