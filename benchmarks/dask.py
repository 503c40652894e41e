"""200,000 properties through a Dask LocalCluster against one ``client.properties`` call.

The job, both ways: fetch every property, frame it, and take the median estimated sale value per
outcode (what an analyst does with a national portfolio: a summary, not 200,000 rows on screen).

(a) one kernel: ``client.properties(ids)`` (batches of 50, 4 in flight), then pandas' groupby.
(b) Dask: ``propertykit.dask.properties(ids, client=client)`` on a ``LocalCluster`` of worker
    processes (1 thread each; each worker's client has 4 requests in flight), then Dask's
    groupby: the partitions are fetched, framed and summarised on the workers.

Each is run cold (an empty SQLite cache of its own) and warm (the same again, all cache hits),
each in a fresh driver process so its peak memory (``ru_maxrss``) is its own. The sandbox runs in
this orchestrating process with ``--latency`` seconds per request and counts what reaches it:
cold runs must send exactly one billable request per batch, warm runs none. Finally the warm
Dask run is timed with 1 and with 2 workers.

    python benchmarks/dask.py [--ids 200000] [--latency 0.02] [--partition-size 5000]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This file is named dask.py: keep its folder off the path, or `import dask` would find it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import propertykit as pk  # noqa: E402

_BATCH = 50


def drive(spec: dict[str, object]) -> dict[str, object]:
    """One run in this (child) process; the key comes from ``PROPERTYKIT_API_KEY``."""
    ids = [f"L{index:08d}" for index in range(int(spec["ids"]))]
    started = time.perf_counter()
    client = pk.Client(base_url=str(spec["url"]), cache=str(spec["cache"]), progress=False)
    if spec["mode"] == "single":
        df = client.properties(ids)
        summary = df.groupby("address.outcode", observed=True)["pricing.estimatedSaleValue"]
        medians = summary.median()
        rows = len(df)
    else:
        import dask
        from distributed import Client as DaskClient
        from distributed import LocalCluster

        import propertykit.dask as pkd

        workers = int(spec["workers"])
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            ) as cluster,
            DaskClient(cluster) as dask_client,
        ):
            dask_client.run(importlib.import_module, "propertykit.dask")  # workers up and ready
            started = time.perf_counter()  # the cluster's start-up is not the job
            size = int(spec["partition_size"])
            ddf = pkd.properties(ids, client=client, partition_size=size)
            grouped = ddf.groupby("address.outcode", observed=True)["pricing.estimatedSaleValue"]
            medians, rows = dask.compute(
                grouped.median(shuffle_method="tasks"), ddf["locationId"].count()
            )
    seconds = time.perf_counter() - started
    client.close()
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "rows": int(rows), "outcodes": len(medians), "peak_mib": peak_mib}


def run(sb: pk.sandbox.Sandbox, **spec: object) -> dict[str, object]:
    """Run ``drive`` in a fresh process; add the billable requests the sandbox saw."""
    sb.reset_log()
    env = {**os.environ, "PROPERTYKIT_API_KEY": sb.api_key}
    done = subprocess.run(
        [sys.executable, __file__, "--drive", json.dumps({"url": sb.url, **spec})],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"{spec['mode']} run failed:\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["billable"] = sum(1 for r in sb.requests if r.status == 200)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ids", type=int, default=200_000)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--partition-size", type=int, default=5000)
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        print(json.dumps(drive(json.loads(args.drive))))
        return

    batches = -(-args.ids // _BATCH)
    print(f"{args.ids:,} ids ({batches:,} batches of {_BATCH}); sandbox latency {args.latency} s")
    folder = Path(tempfile.mkdtemp(prefix="pk-bench-dask-"))
    unlimited = {"balance": 10**9, "daily_cap": 10**9}  # two cold runs of 200,000 credits each
    with pk.sandbox.serve(n_properties=args.ids, latency=args.latency, **unlimited) as sb:
        common = {"ids": args.ids, "partition_size": args.partition_size}
        results = {}
        for mode, workers in (("single", 1), ("dask", 2)):
            cache = str(folder / f"{mode}.sqlite")
            for state in ("cold", "warm"):
                results[mode, state] = run(sb, mode=mode, workers=workers, cache=cache, **common)
        warm_one = run(sb, mode="dask", workers=1, cache=str(folder / "dask.sqlite"), **common)

    def line(label: str, r: dict[str, object]) -> None:
        print(
            f"  {label:<34} {r['seconds']:8.1f} s   driver peak {r['peak_mib']:7.0f} MiB   "
            f"{r['billable']:>6,} billable requests   {r['rows']:,} rows"
        )

    for state in ("cold", "warm"):
        print(f"{state}:")
        line("one client.properties call", results["single", state])
        line("propertykit.dask, 2 workers", results["dask", state])
        single, dask = results["single", state], results["dask", state]
        print(
            f"  -> Dask {float(single['seconds']) / float(dask['seconds']):.2f}x the speed, "
            f"driver memory {float(dask['peak_mib']) / float(single['peak_mib']):.2f}x"
        )
    line("warm, propertykit.dask, 1 worker", warm_one)
    scaling = float(warm_one["seconds"]) / float(results["dask", "warm"]["seconds"])
    print(f"  -> warm: 2 workers {scaling:.2f}x the speed of 1")
    for mode in ("single", "dask"):
        cold, warm = results[mode, "cold"], results[mode, "warm"]
        ok = cold["billable"] == batches and warm["billable"] == 0
        verdict = "as expected" if ok else "NOT AS EXPECTED"
        print(
            f"billable requests, {mode}: cold {cold['billable']:,} (batches {batches:,}), "
            f"warm {warm['billable']:,} -> {verdict}"
        )


if __name__ == "__main__":
    main()
