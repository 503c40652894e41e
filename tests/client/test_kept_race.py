"""A form kept as a re-run read it names the answer it was read from, whoever writes next.

A re-run that reads a batch from the cache keeps the batch's records, as read into Arrow, beside
the answer it read. Should another process store the same request in between (the read and the
keep), the kept form must not pass for that other answer: it names the very answer it was read
from (its stamp, in the head the bulk read took), so the next re-run reads the answer the cache
holds. The same holds for a batch fetched and kept by the fetching run: its kept form names the
write of that run (the stamp its storage noted), not whatever another process stored after.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

import pandas as pd
import pytest
import requests_cache

import propertykit as pk
from propertykit.wire._sqlite_storage import SQLiteAnswers
from tests.client.test_replay_kept import _record
from tests.hostile._servers import KEY, Seen, envelope, hostile, send

FIRST = [f"L{i}" for i in range(50)]  # one batch of 50
IDS = [*FIRST, "L50"]  # and a second batch, of one


@pytest.mark.timeout(60)
def test_an_answer_stored_again_between_the_read_and_the_keep_is_what_a_rerun_gives(tmp_path):
    cache = tmp_path / "cache.sqlite"
    served: dict[str, int] = {}  # how often each batch was answered
    first_path = "/v1/property/" + ",".join(FIRST)

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        path = handler.path.split("?")[0]
        served[path] = served.get(path, 0) + 1
        if path != first_path and served[path] == 1:
            # The re-run has read the first batch from the cache by now: another process stores
            # it again (its own session on the same file), and the service answers it otherwise.
            with requests_cache.CachedSession(backend=SQLiteAnswers(cache)) as other:
                other.get(server.url + first_path, force_refresh=True).raise_for_status()
        asked = path.rsplit("/", 1)[-1].split(",")
        send(handler, 200, envelope([_record(i, served[path]) for i in asked], hasMore=False))

    with hostile(behaviour) as server:
        with pk.Client(KEY, server.url, cache=cache, progress=False) as cold:
            cold.properties(FIRST)
        with pk.Client(KEY, server.url, cache=cache, progress=False, max_in_flight=1) as rerun:
            read = rerun.properties(IDS)  # the first batch read from the cache, the second fetched
            assert rerun.usage.requests_sent == 1
        assert served == {first_path: 2, "/v1/property/L50": 1}
        stored = _stored_versions(cache, server.url + first_path)
        with pk.Client(KEY, server.url, cache=cache, progress=False) as warm:
            replayed = warm.properties(IDS)
            assert warm.usage.requests_sent == 0
    assert set(_versions(read)[:50]) == {1}  # what the re-run read
    assert stored == {2}  # what the cache holds for the first batch now
    assert set(_versions(replayed)[:50]) == {2}  # the next re-run gives that, not the kept form
    assert _versions(replayed)[50] == 1


@pytest.mark.timeout(60)
def test_an_answer_stored_again_between_the_fetch_and_the_keep_is_what_a_rerun_gives(tmp_path):
    cache = tmp_path / "cache.sqlite"
    ids = [f"L{i}" for i in range(101)]  # batches of 50, 50 and 1, fetched in that order
    second_path = "/v1/property/" + ",".join(ids[50:100])
    served: dict[str, int] = {}

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        path = handler.path.split("?")[0]
        served[path] = served.get(path, 0) + 1
        if path.endswith("/L100") and served[path] == 1:
            # The second batch is fetched and stored by now, not yet kept: another process
            # stores it again, and the service answers it otherwise.
            with requests_cache.CachedSession(backend=SQLiteAnswers(cache)) as other:
                other.get(server.url + second_path, force_refresh=True).raise_for_status()
        asked = path.rsplit("/", 1)[-1].split(",")
        send(handler, 200, envelope([_record(i, served[path]) for i in asked], hasMore=False))

    with hostile(behaviour) as server:
        with pk.Client(KEY, server.url, cache=cache, progress=False, max_in_flight=1) as cold:
            fetched = cold.properties(ids)
            assert cold.usage.requests_sent == 3
        with pk.Client(KEY, server.url, cache=cache, progress=False) as warm:
            replayed = warm.properties(ids)
            assert warm.usage.requests_sent == 0
    assert served[second_path] == 2
    assert set(_versions(fetched)[50:100]) == {1}  # what the fetching run got
    assert set(_versions(replayed)[50:100]) == {2}  # what the cache holds, not the kept form
    assert set(_versions(replayed)[:50]) == {1} and _versions(replayed)[100] == 1


def _versions(df: pd.DataFrame) -> list[int]:
    """Which answer each row came from (``_record`` prices version ``v`` at ``v * 100_000``)."""
    return [int(price // 100_000) for price in df["pricing.currentSalePrice"]]


def _stored_versions(cache: Any, url: str) -> set[int]:
    with requests_cache.CachedSession(backend=SQLiteAnswers(cache)) as reader:
        response = reader.get(url, only_if_cached=True)
    assert response.from_cache
    rows = json.loads(response.content)["result"]
    return {int(row["pricing"]["currentSalePrice"] // 100_000) for row in rows}
