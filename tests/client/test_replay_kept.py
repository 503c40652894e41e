"""A warm re-run reads each cached body as already read into Arrow, and never a stale one.

A lookup that fetched its batches stores their answers and keeps every batch's records as read
into Arrow beside them (a re-run that reads a body from the cache keeps it too); re-runs frame
from those and parse no JSON. A kept
form is used only while its response is the very one it was made from (the stamp drawn when the
response was written) and the response itself would be used.
"""

from __future__ import annotations

import sqlite3
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
from propertykit.frames import _bodies as frames_bodies
from propertykit.wire._derived_cache import FRAMES_TABLE
from tests.client.test_replay import _same_frame, _table_bytes
from tests.hostile._servers import KEY, Seen, envelope, hostile, send

IDS = [f"L{i}" for i in range(120)]  # 3 batches of 50, 50 and 20


def _kept_rows(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        try:
            return int(connection.execute(f"SELECT count(*) FROM {FRAMES_TABLE}").fetchone()[0])
        except sqlite3.OperationalError:  # no table: nothing kept
            return 0


@pytest.mark.timeout(60)
def test_later_warm_runs_parse_no_json_and_give_the_same_tables(
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
        sales = network.pk.sales()
    sb.reset_log()
    with make_client(sb) as first_warm:
        first = first_warm.properties(ids)
    with make_client(sb) as warm:
        replayed = warm.properties(ids)
        assert warm.usage.requests_sent == 0
        assert warm.usage.cache_hits == 5
    assert parsed == []  # no body was parsed by any re-run: the fetching run kept all five
    assert sb.requests == []
    for df in (first, replayed):
        assert _table_bytes(df) == _table_bytes(network)
        assert df.attrs == network.attrs
        _same_frame(df, network)
    pd.testing.assert_frame_equal(replayed.pk.sales(), sales)


@pytest.mark.timeout(60)
def test_sources_replay_from_the_kept_form_too(fresh_sandbox, make_client, monkeypatch):
    sb = fresh_sandbox
    ids = sb.source_ids[:120]
    with make_client(sb) as cold:
        network = cold.sources(ids, page_size=50)
    parsed: list[int] = []
    read_json = frames_bodies.pa_json.read_json
    monkeypatch.setattr(
        frames_bodies.pa_json, "read_json", lambda *a, **k: parsed.append(1) or read_json(*a, **k)
    )
    sb.reset_log()
    with make_client(sb, offline=True) as warm:
        replayed = warm.sources(ids, page_size=50)
        assert warm.usage.cache_hits == 3
    assert parsed == []  # read as the fetch kept them
    assert sb.requests == []
    _same_frame(replayed, network)


# -- a server whose answers change ------------------------------------------------------------


def _record(location_id: str, version: int) -> dict[str, Any]:
    n = int(location_id[1:])
    return {
        "propertyId": f"P{n}",
        "locationId": location_id,
        "address": {"postcode": f"AB{n % 9} {version}CD", "town": "Leeds"},
        "spatial": {
            "lat": 53.8 + n / 1000,
            "lng": -1.5,
            "boundary": {"type": "Polygon", "coordinates": [[[0.5, 1.5], [2.5, 1.5], [0.5, 1.5]]]}
            if n % 3
            else None,
        },
        "pricing": {"currentSalePrice": 100_000.0 * version + n, "currency": "GBP"},
        "epc": {"currentEnergyRating": "C", "validFrom": "2020-01-02"},
        "saleHistory": [{"date": "2019-05-01", "price": 90_000.0 * version, "newBuild": False}],
        "lastUpdated": f"2024-0{version}-01T10:00:00Z",
    }


def _changing_server(state: dict[str, Any], **headers: str):  # type: ignore[no-untyped-def]
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        wanted = handler.path.split("/v1/property/", 1)[1].split("?", 1)[0].split(",")
        body = envelope([state["record"](i, state["version"]) for i in wanted], hasMore=False)
        send(handler, 200, body, headers=headers)

    return hostile(behaviour)


def _client(server: Any, cache: Any, **options: Any) -> pk.Client:
    return pk.Client(KEY, server.url, cache=cache, progress=False, **options)


def _lookups(server: Any) -> int:
    return sum(1 for r in server.requests if r.path.startswith("/v1/property/"))


def changed_response_is_never_replayed_stale(cache: Any) -> None:
    """The story a stale kept form must not spoil."""
    state: dict[str, Any] = {"version": 1, "record": _record}
    with _changing_server(state) as server:
        with _client(server, cache, expire_after=1) as cold:
            old = cold.properties(IDS)
        with _client(server, cache) as first_warm:  # keeps the three batches as read
            first_warm.properties(IDS)
            assert first_warm.usage.requests_sent == 0
        time.sleep(1)  # the responses, fetched over a second ago by now, expire; the answers change
        state["version"] = 2
        sent = _lookups(server)
        with _client(server, cache, offline=True) as offline:  # offline: any age, as before
            _same_frame(offline.properties(IDS), old)
        with _client(server, cache, expire_after=3600) as online:  # expired: fetched again
            new = online.properties(IDS)
            assert online.usage.requests_sent == 3
            assert online.usage.cache_hits == 0
        assert _lookups(server) == sent + 3
        assert new["pricing.currentSalePrice"].tolist() != old["pricing.currentSalePrice"].tolist()
        for _ in range(2):  # the kept forms of the old answers are never used again
            with _client(server, cache) as warm:
                _same_frame(warm.properties(IDS), new)
                assert warm.usage.requests_sent == 0
                assert warm.usage.cache_hits == 3
        assert _lookups(server) == sent + 3
        # Answers re-fetched while the kept forms of the ones before are still fresh (another
        # kernel refreshing them): only the response itself, not its age, tells them apart.
        state["version"] = 3
        with _client(server, cache) as other:
            session = other._transport.session
            for batch in other._lookups.property_batches(IDS, {}):
                url = other._transport.base_url + batch.path
                assert not session.get(
                    url, headers={"x-api-key": KEY}, force_refresh=True
                ).from_cache
        with _client(server, False) as network_only:
            newest = network_only.properties(IDS)
        for _ in range(2):
            with _client(server, cache) as warm:
                _same_frame(warm.properties(IDS), newest)
                assert warm.usage.requests_sent == 0
        assert _lookups(server) == sent + 9


@pytest.mark.timeout(60)
def test_a_kept_form_is_never_used_once_its_response_changed(tmp_path):
    path = tmp_path / "cache.sqlite"
    changed_response_is_never_replayed_stale(path)


def _fetched_then_replayed_twice(server: Any, path: Path) -> pd.DataFrame:
    """The lookup fetched once, then twice replayed from the cache alone, always the same."""
    with _client(server, path) as cold:
        network = cold.properties(IDS)
    for _ in range(2):
        with _client(server, path) as warm:
            _same_frame(warm.properties(IDS), network)
            assert warm.usage.requests_sent == 0
            assert warm.usage.cache_hits == 3
    assert _lookups(server) == 3
    return network


@pytest.mark.timeout(60)
def test_bodies_the_arrow_reader_cannot_read_exactly_are_not_kept(tmp_path):
    def untidy(location_id: str, version: int) -> dict[str, Any]:
        record = _record(location_id, version)
        record["spatial"]["boundary"] = "POLYGON ((0 0, 1 0, 1 1, 0 0))"  # WKT: not GeoJSON
        return record

    path = tmp_path / "cache.sqlite"
    state: dict[str, Any] = {"version": 1, "record": untidy}
    with _changing_server(state) as server:
        network = _fetched_then_replayed_twice(server, path)
    assert network["spatial.boundary"].iloc[1] == "POLYGON ((0 0, 1 0, 1 1, 0 0))"


@pytest.mark.timeout(60)
def test_answers_that_vary_are_neither_read_in_bulk_nor_kept(tmp_path):
    path = tmp_path / "cache.sqlite"
    state: dict[str, Any] = {"version": 1, "record": _record}
    with _changing_server(state, Vary="Accept-Language") as server:
        _fetched_then_replayed_twice(server, path)


@pytest.mark.timeout(60)
def test_clearing_the_cache_drops_the_kept_forms(fresh_sandbox, make_client, cache_file):
    from propertykit.cli import main

    sb = fresh_sandbox
    with make_client(sb) as cold:
        cold.properties(sb.location_ids[:100])
    assert main(["cache", "clear", "--path", str(cache_file)]) == 0
    # what a user asked for: nothing of the answers left in the file, the kept forms included
    assert _kept_rows(cache_file) == 0
    with make_client(sb) as again:
        again.properties(sb.location_ids[:100])
        assert again.usage.requests_sent == 2


@pytest.mark.timeout(60)
def test_a_failed_keep_costs_only_speed(fresh_sandbox, make_client, cache_file):
    """Kept forms that cannot be written leave the lookup and the cache working as before."""
    sb = fresh_sandbox
    ids = sb.location_ids[:150]
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(cache_file) as connection:  # a table nothing can be written to
        connection.execute(
            f"CREATE VIEW {FRAMES_TABLE} AS SELECT 'k' AS key, 'f' AS form, x'00' AS value"
        )
    with make_client(sb) as cold:
        network = cold.properties(ids[:100])
        assert cold.usage.requests_sent == 2
    with make_client(sb) as warm:  # keeping what it read fails: the lookup does not
        _same_frame(warm.properties(ids[:100]), network)
        assert warm.usage.requests_sent == 0
        warm.properties(ids)  # the cache still takes new answers
        assert warm.usage.requests_sent == 1
    sb.reset_log()
    with make_client(sb) as again:
        assert len(again.properties(ids)) == 150
        assert again.usage.requests_sent == 0
    assert sb.requests == []


@pytest.mark.timeout(60)
def test_kept_forms_outliving_a_cache_cleared_by_another_tool_are_not_used(tmp_path):
    """Clearing with requests-cache itself drops the responses, not the kept forms: those name
    answers no longer stored, are never trusted, and the next keep replaces them."""
    import requests_cache

    path = tmp_path / "cache.sqlite"
    state: dict[str, Any] = {"version": 1, "record": _record}
    with _changing_server(state) as server:
        for _ in range(2):  # fetched, then kept
            with _client(server, path) as client:
                client.properties(IDS)
        other_tool = requests_cache.SQLiteCache(path)
        other_tool.clear()
        other_tool.close()
        state["version"] = 2
        with _client(server, path) as refill:
            new = refill.properties(IDS)
            assert refill.usage.requests_sent == 3
        for _ in range(2):
            with _client(server, path) as warm:
                _same_frame(warm.properties(IDS), new)
                assert warm.usage.requests_sent == 0


@pytest.mark.timeout(60)
def test_a_kept_table_dropped_by_hand_never_stops_answers_being_cached(tmp_path):
    path = tmp_path / "cache.sqlite"
    state: dict[str, Any] = {"version": 1, "record": _record}
    with _changing_server(state) as server:
        for _ in range(2):
            with _client(server, path) as client:
                client.properties(IDS[:50])
        with sqlite3.connect(path) as connection:
            connection.execute(f"DROP TABLE {FRAMES_TABLE}")
        with _client(server, path) as client:
            client.property_records(IDS[50:])  # new answers, stored while opening healed it
            assert client.usage.requests_sent == 2
        with _client(server, path) as warm:
            warm.property_records(IDS)
            assert warm.usage.requests_sent == 0
            assert warm.usage.cache_hits == 3


@pytest.mark.timeout(120)
def test_threads_sharing_one_client_fetch_keep_and_replay_together(
    fresh_sandbox, make_client, cache_file, monkeypatch
):
    """Dask's threads call one client at once: fetching, keeping and reading the kept forms on
    the same cache file side by side never breaks a lookup, and the re-runs parse nothing."""
    from concurrent.futures import ThreadPoolExecutor

    sb = fresh_sandbox
    parts = [sb.location_ids[i * 60 : (i + 1) * 60] for i in range(4)]  # one per thread: 50 + 10
    parsed: list[int] = []
    read_json = frames_bodies.pa_json.read_json
    with make_client(sb) as client, ThreadPoolExecutor(4) as pool:
        cold = list(pool.map(client.properties, parts))  # each part fetched in its own thread
        sent = client.usage.requests_sent
        # one first attempt per batch; a retry the loaded sandbox provokes now and then (seen
        # once in CI: a resend of the same batch) is a resend, not a second lookup
        assert sent - client.usage.retries == 8
        for run in range(3):  # the first re-run reads the bodies and keeps them
            again = list(pool.map(client.properties, parts))
            for df, first in zip(again, cold, strict=True):
                _same_frame(df, first)
            if run == 0:
                monkeypatch.setattr(
                    frames_bodies.pa_json,
                    "read_json",
                    lambda *a, **k: parsed.append(1) or read_json(*a, **k),
                )
        assert client.usage.requests_sent == sent
    assert parsed == []  # the later re-runs parsed nothing


@pytest.mark.timeout(60)
def test_kept_forms_are_used_only_where_the_session_files_its_answers(tmp_path):
    """A kept form names its answer's cache key as the session made it then: a session that
    files the same requests under other keys (another key function) is never given it."""
    import requests_cache
    from requests_cache.cache_keys import create_key

    from propertykit.frames import format_name
    from propertykit.wire import kept_values
    from propertykit.wire._sqlite_storage import SQLiteAnswers

    path = tmp_path / "cache.sqlite"
    state: dict[str, Any] = {"version": 1, "record": _record}
    with _changing_server(state) as server:
        with _client(server, path) as client:
            client.properties(IDS)  # fetched
            client.properties(IDS)  # read from the cache, and kept as read
            batches = client._lookups.property_batches(IDS, {})
            wanted = [(client._transport.base_url + batch.path, {}) for batch in batches]
            own = kept_values(client._transport.session, wanted, format_name(), offline=False)
        assert all(value is not None for value in own)

        def other_keys(request: Any, **options: Any) -> str:
            return "other-" + create_key(request, **options)

        other = requests_cache.CachedSession(backend=SQLiteAnswers(path), key_fn=other_keys)
        with other:
            for url, _ in wanted:  # the same requests, stored under the other keys
                assert not other.get(url, headers={"x-api-key": KEY}).from_cache
            assert kept_values(other, wanted, format_name(), offline=False) == [None] * 3
        assert _lookups(server) == 6


def _as_written_before_stamps(path: Path) -> None:
    """Rewrite every stored answer with the head an earlier propertykit wrote (``PKA1``: no
    stamp), and drop what was kept."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute("SELECT key, value FROM responses").fetchall()
        for key, value in rows:
            assert value[:4] == b"PKA2"
            older = b"PKA1" + value[4:13] + value[29:]  # the same head without its 16-byte stamp
            connection.execute("UPDATE responses SET value = ? WHERE key = ?", (older, key))
        connection.execute(f"DELETE FROM {FRAMES_TABLE}")


@pytest.mark.timeout(60)
def test_answers_cached_before_stamps_replay_unchanged_and_are_kept_once_fetched_again(tmp_path):
    path = tmp_path / "cache.sqlite"
    state: dict[str, Any] = {"version": 1, "record": _record}
    with _changing_server(state) as server:
        with _client(server, path) as cold:
            network = cold.properties(IDS)
        _as_written_before_stamps(path)
        for _ in range(2):  # read as before, from the bodies; nothing can name them
            with _client(server, path) as warm:
                _same_frame(warm.properties(IDS), network)
                assert warm.usage.requests_sent == 0
                assert warm.usage.cache_hits == 3
        state["version"] = 2
        with _client(server, path, expire_after=3600) as refresh:
            session = refresh._transport.session
            for batch in refresh._lookups.property_batches(IDS, {}):
                url = refresh._transport.base_url + batch.path
                session.get(url, headers={"x-api-key": KEY}, force_refresh=True)
        with _client(server, path) as warm:
            new = warm.properties(IDS)
            assert warm.usage.requests_sent == 0
        assert (
            new["pricing.currentSalePrice"].tolist() != network["pricing.currentSalePrice"].tolist()
        )
        with _client(server, path) as warm:
            _same_frame(warm.properties(IDS), new)
        assert _lookups(server) == 6
