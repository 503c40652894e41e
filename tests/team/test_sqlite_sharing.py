"""Two kernels sharing one SQLite cache file at the same time neither corrupt it nor fail."""

from __future__ import annotations

import sqlite3
import threading
import time

import propertykit as pk
from propertykit.wire import open_sqlite_cache
from tests.team.conftest import finish_worker, start_worker


def test_two_processes_write_one_sqlite_cache_together(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    cache = tmp_path / "shared.sqlite"
    go = tmp_path / "go"
    ids_a = sb.location_ids[:600]
    ids_b = sb.location_ids[400:1000]  # overlapping
    workers = [
        start_worker(sb, cache=str(cache), ids=ids, go_file=str(go),
                     ready_file=str(tmp_path / f"ready-{n}"))
        for n, ids in enumerate((ids_a, ids_b))
    ]  # fmt: skip
    while not all((tmp_path / f"ready-{n}").exists() for n in range(2)):
        time.sleep(0.005)
    go.touch()  # both start their 12 lookups now
    results = [finish_worker(worker) for worker in workers]

    assert [r["location_ids"] for r in results] == [ids_a, ids_b]
    with sqlite3.connect(cache) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # Every batch either process fetched is in the file: an offline kernel reads them all.
    with pk.Client(sb.api_key, sb.url, cache=cache, offline=True, progress=False) as reader:
        assert reader.properties(ids_a)["locationId"].tolist() == ids_a
        assert reader.properties(ids_b)["locationId"].tolist() == ids_b
        assert reader.usage.requests_sent == 0


def test_threads_of_one_client_share_the_sqlite_cache(fresh_sandbox, tmp_path):
    sb = fresh_sandbox
    with pk.Client(sb.api_key, sb.url, cache=tmp_path / "c.sqlite", max_in_flight=8,
                   progress=False) as client:  # fmt: skip
        client.properties(sb.location_ids[:2500])
        assert client.cache_info()["entries"] == 50
        again = client.properties(sb.location_ids[:2500])
        assert client.usage.cache_hits == 50
    assert again["locationId"].tolist() == sb.location_ids[:2500]
    assert len(sb.requests) == 50


def test_opening_a_cache_another_kernel_holds_waits_instead_of_failing(tmp_path):
    # Two kernels opening one new cache at once: the second meets the first's lock while the file
    # is switched to WAL mode, and SQLite answers "database is locked" without waiting.
    path = tmp_path / "shared.sqlite"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE first_kernel (x)")
    holder.execute("BEGIN IMMEDIATE")  # the other kernel is part-way through writing
    release = threading.Timer(0.3, holder.execute, args=("COMMIT",))
    release.start()
    try:
        cache = open_sqlite_cache(path)
    finally:
        release.join()
        holder.close()
    try:
        assert len(cache.responses) == 0
    finally:
        cache.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
