"""``propertykit demo``: the main job, end to end, against the bundled sandbox.

Starts a sandbox (no key, no network), looks up a few hundred properties, writes the HTML report,
prints what it cost, then does it all again from a new client on the same on-disk cache to show
that the second run sends no request and spends no credit. The report written last counts the
whole demo: the requests and credits of both runs.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from propertykit import sandbox
from propertykit.cli._service import fetch_frame, say_missing
from propertykit.client import Client
from propertykit.frames import in_pounds_for
from propertykit.text import plural, visible
from propertykit.views import write_report


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--properties", type=int, default=300, help="how many to look up")
    parser.add_argument("--out-dir", default="demo-output", help="report and cache go here")
    parser.add_argument("--seed", type=int, default=0, help="sandbox data seed")
    parser.add_argument(
        "--latency", type=float, default=0.05, help="simulated network latency (s) per request"
    )
    parser.add_argument(
        "--keep-cache", action="store_true", help="start from the previous demo's cache"
    )


def run(args: argparse.Namespace) -> int:
    out = Path(args.out_dir)
    cache = out / "cache.sqlite"
    if not args.keep_cache:
        for leftover in out.glob("cache.sqlite*"):  # with SQLite's -wal and -shm files
            leftover.unlink()
    out.mkdir(parents=True, exist_ok=True)
    with sandbox.serve(seed=args.seed, latency=args.latency) as sb:
        latency_ms = args.latency * 1000
        print(f"propertykit: using the local sandbox (made-up data, seed {args.seed})")
        wanted = plural(args.properties, "property", "properties")
        print(f"Sandbox at {sb.url}: {wanted}, {latency_ms:.0f} ms latency")
        ids = "\n".join(sb.location_ids[: args.properties])
        spent = {"requests_sent": 0, "cache_hits": 0, "billable_requests": 0}
        for run_number in (1, 2):
            charged_before = sb.credits_charged
            started = time.perf_counter()
            with Client(sb.api_key, sb.url, cache=cache, progress=False) as client:
                df = fetch_frame(client, ids)
                say_missing(df)
                runs = "the demo's first run" if run_number == 1 else "both runs of the demo"
                for name in spent:  # the footer counts the whole demo, both runs
                    spent[name] += getattr(client.usage, name)
                path = write_report(
                    df,
                    out / "report.html",
                    title="propertykit demo report",
                    usage=dict(spent),
                    source=f"the propertykit sandbox (seed {args.seed}); usage counts {runs}",
                )
                seconds = time.perf_counter() - started
                print(
                    f"\nRun {run_number}: {plural(len(df), 'property', 'properties')} "
                    f"in {seconds:.2f} s"
                )
                print(f"  {client.usage}")
                print(f"  credits charged by the sandbox: {sb.credits_charged - charged_before:,}")
        print(f"\nReport: {path.resolve()}")
        money = in_pounds_for({"the frame": df}, output="the summary")  # read, never assumed
        unit = "£" if money.stated else "unit not stated"
        print(f"\nMedian last sale price by town, top 5 ({unit}):")
        print(
            _top_towns(money.tables["the frame"]).to_string(formatters={"median": "{:,.0f}".format})
        )
    return 0


def _top_towns(df: pd.DataFrame) -> pd.DataFrame:
    sales = df.pk.sales()
    latest = sales.sort_values("date").groupby("propertyId").tail(1)
    table = latest.groupby("address.town", observed=True)["price"].agg(["median", "count"])
    table.index = table.index.map(visible)  # towns as served: shown, never obeyed
    return table.sort_values("median", ascending=False).head(5)
