"""Re-running a notebook from a warm cache: propertykit against the hand-written route and Arrow.

A local sandbox serves 20,000 properties by location id. Each route fills its own cache once
(cold); propertykit's fetching run keeps each batch as read beside its answer. propertykit's
first re-run (a fresh process) is timed twice, side by side: on that cache, and on a cache
filled by a fetching run that kept nothing (as propertykit did between issues 47 and 54: that
first re-run reads the cached bodies with Arrow and keeps them then). Then, each in a fresh
process, medians of 3:

(a) propertykit: ``client.properties(ids)`` + ``.pk.sales()``, from the warm on-disk cache;
(b) by hand: ``requests_cache.CachedSession`` GET per batch of 50 ids + ``.json()`` +
    ``pd.json_normalize`` (main table, and sales of the records that have a history);
(c) the floor: the same response bodies, one per line in one file, read by ``pyarrow.json``.

The fetching run keeps each batch as read into Arrow beside its answer, in
propertykit's own cache backend (``propertykit.wire._sqlite_storage``), filed by request and
naming the answer it was made from by cache key and per-write stamp
(``propertykit.wire._derived_cache``), so every later warm run reads those, and only the first
bytes of each answer to check its stamp, instead of parsing JSON. The first re-runs are timed
apart, against the same floor; the cold fills of (a) (keeping and not) and (b) are timed too.

The warm runs must send no request: the sandbox's request log is checked after each. The key
reaches the children in their environment (``PROPERTYKIT_API_KEY``), never in a file or argv.
``--profile`` prints where (a)'s time goes (cProfile, cumulative, top 25).

    python benchmarks/replay.py [--ids 20000] [--rounds 3] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUTES = ("propertykit", "by_hand", "arrow_floor")
BATCH = 50


def _batches(ids: list[str]) -> list[list[str]]:
    return [ids[i : i + BATCH] for i in range(0, len(ids), BATCH)]


def propertykit_route(url: str, cache: str, ids: list[str]) -> int:
    import warnings

    import propertykit as pk

    with pk.Client(None, url, cache=cache, progress=False) as client, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = client.properties(ids)
        rows = len(df) + len(df.pk.sales())
        assert client.usage.requests_sent == 0, "the warm run sent requests"
    return rows


def by_hand_route(url: str, cache: str, ids: list[str]) -> int:
    import pandas as pd
    import requests_cache

    key = os.environ["PROPERTYKIT_API_KEY"]
    records: list[dict[str, Any]] = []
    with requests_cache.CachedSession(cache, backend="sqlite", allowable_codes=(200,)) as s:
        for batch in _batches(ids):
            answer = s.get(f"{url}/v1/property/{','.join(batch)}", headers={"x-api-key": key})
            answer.raise_for_status()
            records.extend(answer.json()["result"])
    main = pd.json_normalize(records)
    with_history = [r for r in records if r.get("saleHistory") is not None]
    sales = pd.json_normalize(with_history, record_path="saleHistory", meta=["propertyId"])
    return len(main) + len(sales)


def arrow_floor_route(path: str) -> int:
    import pyarrow.json as pa_json

    table = pa_json.read_json(path)
    return int(sum(len(chunk.flatten()) for chunk in table.column("result").chunks))


def child(route: str, url: str, cache: str, ids_file: str, profile: bool) -> None:
    import pandas  # noqa: F401  (imports are not part of the work)
    import pyarrow.json  # noqa: F401

    import propertykit  # noqa: F401

    ids = json.loads(Path(ids_file).read_text())
    work = {
        "propertykit": lambda: propertykit_route(url, cache, ids),
        "by_hand": lambda: by_hand_route(url, cache, ids),
        "arrow_floor": lambda: arrow_floor_route(cache),
    }[route]
    if profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        work()
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    started = time.perf_counter()
    rows = work() if not profile else 0
    print(json.dumps({"seconds": time.perf_counter() - started, "rows": rows}))


def _run(*args: str, key: str) -> dict[str, Any]:
    env = dict(os.environ, PROPERTYKIT_API_KEY=key)
    done = subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True, env=env
    )
    if args[-1] == "1":  # a profiled child: its report is on stderr
        print(done.stderr)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        route, url, cache, ids_file, profile = args.child
        child(route, url, cache, ids_file, profile == "1")
        return 0

    import propertykit as pk

    with (
        tempfile.TemporaryDirectory() as folder,
        pk.sandbox.serve(n_properties=args.ids, balance=10**9, daily_cap=10**9) as sb,
    ):
        ids = sb.location_ids[: args.ids]
        ids_file = Path(folder) / "ids.json"
        ids_file.write_text(json.dumps(ids))
        caches = {
            "propertykit": str(Path(folder) / "propertykit.sqlite"),
            "by_hand": str(Path(folder) / "by_hand.sqlite"),
            "arrow_floor": str(Path(folder) / "bodies.jsonl"),
        }
        unkept = str(Path(folder) / "propertykit-unkept.sqlite")
        print(f"filling the caches: {len(ids):,} ids ...", flush=True)
        with pk.Client(sb.api_key, sb.url, cache=False, progress=False) as c:
            c.properties(ids)  # the sandbox's records made, first use's set-up: timed by no fill
        started = time.perf_counter()
        with pk.Client(sb.api_key, sb.url, cache=caches["propertykit"], progress=False) as c:
            c.properties(ids)
        cold = {"propertykit": time.perf_counter() - started}
        from propertykit.client import _replay

        keeping = _replay._keep_as_read
        _replay._keep_as_read = lambda *a, **k: None  # type: ignore[assignment]
        started = time.perf_counter()
        with pk.Client(sb.api_key, sb.url, cache=unkept, progress=False) as c:
            c.properties(ids)
        cold["propertykit, keeping nothing"] = time.perf_counter() - started
        _replay._keep_as_read = keeping
        os.environ["PROPERTYKIT_API_KEY"] = sb.api_key  # this process's own environment only
        started = time.perf_counter()
        by_hand_route(sb.url, caches["by_hand"], ids)
        cold["by_hand"] = time.perf_counter() - started
        del os.environ["PROPERTYKIT_API_KEY"]
        import requests

        with Path(caches["arrow_floor"]).open("wb") as out:
            for batch in _batches(ids):
                answer = requests.get(
                    f"{sb.url}/v1/property/{','.join(batch)}",
                    headers={"x-api-key": sb.api_key},
                    timeout=60,
                )
                out.write(answer.content.replace(b"\n", b" ") + b"\n")
        print(f"  cold: {len(sb.requests)} requests in all; " + ", ".join(
            f"{route} {seconds:.2f} s" for route, seconds in cold.items()
        ))  # fmt: skip
        sb.reset_log()
        first = _run(
            "--child", "propertykit", sb.url, caches["propertykit"], str(ids_file), "0",
            key=sb.api_key,
        )  # fmt: skip
        print(f"  first re-run propertykit {first['seconds']:6.2f} s (the fetch kept them)")
        first_unkept = _run(
            "--child", "propertykit", sb.url, unkept, str(ids_file), "0", key=sb.api_key
        )  # fmt: skip
        print(f"  first re-run propertykit {first_unkept['seconds']:6.2f} s (reads, keeps)")
        results: dict[str, list[dict[str, Any]]] = {}
        flag = "1" if args.profile else "0"
        for round_number in range(args.rounds):
            order = ROUTES if round_number % 2 == 0 else ROUTES[::-1]
            for route in order:
                result = _run(
                    "--child", route, sb.url, caches[route], str(ids_file), "0", key=sb.api_key
                )
                results.setdefault(route, []).append(result)
                print(f"  round {round_number + 1} {route:12} {result['seconds']:6.2f} s")
        sent = len(sb.requests)
        if args.profile:
            _run(
                "--child", "propertykit", sb.url, caches["propertykit"], str(ids_file), flag,
                key=sb.api_key,
            )  # fmt: skip
    assert sent == 0, f"the warm runs sent {sent} requests"
    seconds = {
        route: statistics.median(r["seconds"] for r in runs) for route, runs in results.items()
    }
    print(
        f"\n{len(ids):,} ids by location id, warm caches, medians of {args.rounds}; 0 requests sent"
    )
    print(f"(a) propertykit: client.properties + .pk.sales()   {seconds['propertykit']:6.2f} s")
    print(f"(b) CachedSession + .json() + json_normalize       {seconds['by_hand']:6.2f} s")
    print(f"(c) pyarrow.json over the same bodies, one file     {seconds['arrow_floor']:6.2f} s")
    print(f"(a) is {seconds['by_hand'] / seconds['propertykit']:.1f}x faster than (b)")
    print(f"(a) takes {seconds['propertykit'] / seconds['arrow_floor']:.2f}x the time of (c)")
    print(
        f"(a)'s first re-run after a fetch that kept each batch: {first['seconds']:.2f} s, "
        f"{first['seconds'] / seconds['arrow_floor']:.2f}x the time of (c)"
    )
    print(
        f"(a)'s first re-run after a fetch that kept nothing (reads the bodies, keeps them): "
        f"{first_unkept['seconds']:.2f} s, "
        f"{first_unkept['seconds'] / seconds['arrow_floor']:.2f}x the time of (c); keeping in "
        f"the fetch makes the first re-run {first_unkept['seconds'] / first['seconds']:.2f}x "
        "quicker"
    )
    keeping_cost = cold["propertykit"] / cold["propertykit, keeping nothing"]
    print(
        "cold fills (local server, no latency): "
        + ", ".join(f"{route} {taken:.2f} s" for route, taken in cold.items())
        + f"; keeping makes the fetch take {keeping_cost:.2f}x the time"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
