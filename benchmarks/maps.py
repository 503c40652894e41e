"""Map benchmarks: figure size and time to first draw in headless Chromium, before and after.

- **before**: ``property_map`` as it was on ``main`` before issue 17 (``scattergeo`` with the geo
  layers off), loaded from git (commit :data:`BEFORE`) so the comparison is with the real code;
- **after**: today's ``property_map`` with the bundled outline basemap, place labels and scale bar
  (level of detail on: more than 5,000 features are drawn as one marker per outcode);
- **after, no aggregation**: the same with ``detail_limit=None``: every point (in WebGL); for
  boundaries, the overview of every plot as a dot plus close-ups of up to three clusters (a
  boundary map never draws 50,000 shapes at once: at national scale they are sub-pixel).

Sizes are the figure's HTML (``to_html`` without plotly.js, which is the same ~4.6 MB for all).
Time to first draw is from the start of the figure's script (plotly.js already loaded from a
local file) to the end of ``Plotly.newPlot``: parsing the figure and drawing it. The page time,
from navigation start (plotly.js's ~1-2 s of loading included), is printed beside it. Debian's
Chromium under Playwright, best of two.

**Street tiles** (``--tiles`` for this case alone; it also runs after the others): the report
of 300 sandbox properties built without tiles, with street tiles from a cold tile cache (a tile
server of our own on 127.0.0.1 answering each tile after ``--tile-delay-ms``, like one across
the internet, with streets and names drawn on its tiles so they compress about as badly as
real ones), and again from the warm cache; then each printed to PDF. Build time, requests sent
to the tile server, file size.

**Build time** (``--build`` for this case alone; it also runs first): CPU seconds to build
figures in Python, this tree's code against the code at :data:`BUILD_BEFORE` (before the maps
set their annotations, shapes, traces and axes at once instead of one ``add_*`` or
``update_layout`` call each), each in a fresh process of its own, alternately, best of five
builds in each of three processes per version: a point map of 300 and of 3,000 properties, a
boundary map of the busiest town of 3,000 (close-ups beside an overview), and the whole report
of 300 properties and of 3,000 with one property's comparable evidence.

Run: ``.venv/bin/python benchmarks/maps.py`` (``--quick`` for 1k/1k only).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from propertykit.frames import frame
from propertykit.sandbox import generate_records
from propertykit.views import build_report, property_map, write_report

#: The commit of ``main`` that issue 17 started from.
BEFORE = "abf0506"
#: The commit before the maps set their annotations, shapes, traces and axes at once.
BUILD_BEFORE = "0e5f7f0"
CHROMIUM = "/usr/bin/chromium"
#: SwiftShader gives headless Chromium WebGL (scattergl) without a GPU.
FLAGS = ["--headless", "--no-sandbox", "--enable-unsafe-swiftshader", "--use-angle=swiftshader"]
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the tile server of the tests


def before_module() -> types.ModuleType:
    """``propertykit/views/_maps.py`` as it was at :data:`BEFORE`, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:propertykit/views/_maps.py"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    spec = importlib.util.spec_from_loader("propertykit_maps_before", loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, "maps_before.py", "exec"), module.__dict__)
    return module


def html_of(figure: go.Figure) -> str:
    """The figure's page; it notes when its script starts (plotly.js loaded) and newPlot ends."""
    page = figure.to_html(
        full_html=True,
        include_plotlyjs="plotly.min.js",
        div_id="map",
        post_script="window.__drawn = performance.now();",
    )
    return page.replace(
        '<div id="map"', '<script>window.__start = performance.now();</script><div id="map"', 1
    )


def draw_ms(browser: Any, folder: Path, html: str, name: str) -> tuple[float, float, list[str]]:
    """Best of two: milliseconds from the figure's script to the end of newPlot (parse and
    draw), from navigation to the end of newPlot (page), and console errors."""
    path = folder / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    best, page_best, problems = float("inf"), float("inf"), []
    for _ in range(2):
        page = browser.new_page(viewport={"width": 1100, "height": 700})
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto(path.as_uri())
        page.wait_for_function("() => window.__drawn !== undefined", timeout=120_000)
        drawn, start = page.evaluate("[window.__drawn, window.__start]")
        best, page_best = min(best, drawn - start), min(page_best, drawn)
        page.close()
    return best, page_best, problems


def cases(quick: bool) -> list[tuple[str, str, int]]:
    if quick:
        return [("points", "point", 1_000), ("boundaries", "boundary", 1_000)]
    points = [("points", "point", n) for n in (1_000, 10_000, 100_000)]
    boundaries = [("boundaries", "boundary", n) for n in (1_000, 10_000, 50_000)]
    return points + boundaries


def tiles_case(delay_ms: float) -> None:
    """The report without street tiles, with them (cold cache, warm cache), as HTML and PDF."""
    import os
    import time

    from tests.views.tile_server import TileServer

    df = frame(generate_records(300))
    rows = []
    with tempfile.TemporaryDirectory() as temporary, TileServer() as server:
        folder = Path(temporary)
        os.environ["PROPERTYKIT_CACHE_DIR"] = str(folder / "cache")
        server.delay, server.busy = delay_ms / 1000, True
        options = {"tiles": server.template, "attribution": "Test tiles"}
        build_report(df)  # warm-up: imports, plotly.js read once
        for name, tiles in (("no tiles", {}), ("tiles, cold", options), ("tiles, warm", options)):
            sent = len(server.requests)
            start = time.perf_counter()
            size = len(build_report(df, **tiles).encode())  # type: ignore[arg-type]
            seconds = time.perf_counter() - start
            rows.append((name, seconds, len(server.requests) - sent, size))
        for name, tiles in (("PDF, no tiles", {}), ("PDF, tiles (warm)", options)):
            start = time.perf_counter()
            pdf = write_report(df, folder / "report.pdf", **tiles)  # type: ignore[arg-type]
            rows.append((name, time.perf_counter() - start, 0, pdf.stat().st_size))
    print(f"\nstreet tiles: report of {len(df)} properties, tile server {delay_ms:.0f} ms a tile")
    for name, seconds, sent, size in rows:
        print(f"  {name:<18} {seconds:7.1f} s  {sent:>4} tile requests  {size:>12,} B")
    by = {name: (seconds, size) for name, seconds, _, size in rows}
    print(
        f"  tiles cost {by['tiles, cold'][0] / by['no tiles'][0]:.1f}x the build time cold, "
        f"{by['tiles, warm'][0] / by['no tiles'][0]:.1f}x warm; the HTML is "
        f"{by['tiles, cold'][1] / by['no tiles'][1]:.2f}x the size, the PDF "
        f"{by['PDF, tiles (warm)'][1] / by['PDF, no tiles'][1]:.1f}x"
    )


def build_times() -> dict[str, float]:
    """Best-of-five CPU seconds of each build, with the ``propertykit`` this process imports."""
    import json
    import time
    import warnings
    from datetime import UTC, datetime

    warnings.simplefilter("ignore")  # thin indexes warn; the figures are the same either way
    small, big = frame(generate_records(300)), frame(generate_records(3_000))
    boundaries = big[big["spatial.boundary"].notna()]
    town = big[big["address.town"] == boundaries["address.town"].value_counts().index[0]]
    when = datetime(2025, 1, 2, tzinfo=UTC)
    builds: dict[str, Callable[[], object]] = {
        "point map, 300": lambda: property_map(
            small, color="epc.currentEnergyRating", basemap="outline"
        ),
        "point map, 3,000": lambda: property_map(
            big, color="pricing.estimatedSaleValue", basemap="outline"
        ),
        f"boundary map, {len(town):,} (close-ups)": lambda: property_map(
            town, geometry="boundary", color="pricing.estimatedSaleValue", basemap="outline"
        ),
        "report, 300": lambda: build_report(small, generated_at=when),
        "report, 3,000 + evidence": lambda: build_report(
            big, generated_at=when, subject="PK00000007", as_of="2025-01-01"
        ),
    }
    seconds = {}
    for name, build in builds.items():
        build()  # warm-up: imports, caches
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            build()
            best = min(best, time.process_time() - start)
        seconds[name] = best
    print(json.dumps(seconds))
    return seconds


def build_case() -> None:
    """Build times of this tree's code and of :data:`BUILD_BEFORE`'s, side by side, as ratios."""
    import json
    import os

    with tempfile.TemporaryDirectory() as temporary:
        old_tree = Path(temporary)
        archive = subprocess.run(
            ["git", "archive", BUILD_BEFORE, "propertykit"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive, check=True)
        trees = {f"before ({BUILD_BEFORE})": old_tree, "after (this tree)": ROOT}
        best: dict[str, dict[str, float]] = {version: {} for version in trees}
        for _ in range(3):  # alternately, so both versions see the same load on the machine
            for version, tree in trees.items():
                environment = {**os.environ, "PYTHONPATH": str(tree)}
                run = subprocess.run(
                    [sys.executable, __file__, "--build-worker"],
                    env=environment,
                    check=True,
                    capture_output=True,
                    text=True,
                )
                for name, seconds in json.loads(run.stdout.splitlines()[-1]).items():
                    best[version][name] = min(best[version].get(name, float("inf")), seconds)
    before, after = best.values()
    print(f"\nbuild time, CPU seconds (best of 15):  {'  '.join(trees)}  ratio")
    for name in before:
        print(
            f"  {name:<32} {before[name]:8.3f} s {after[name]:18.3f} s"
            f"  {before[name] / after[name]:5.2f}x faster"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k points and 1k boundaries only")
    parser.add_argument("--tiles", action="store_true", help="the street-tiles case only")
    parser.add_argument("--tile-delay-ms", type=float, default=50.0, help="tile server latency")
    parser.add_argument("--build", action="store_true", help="the build-time case only")
    parser.add_argument("--build-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_worker:
        build_times()
        return
    if args.build:
        build_case()
        return
    if args.tiles:
        tiles_case(args.tile_delay_ms)
        return
    build_case()
    quick = args.quick
    from playwright.sync_api import sync_playwright

    old = before_module()
    df = frame(generate_records(2_000 if quick else 120_000))
    with_boundary = df[df["spatial.boundary"].notna()]
    colour = {"point": "epc.currentEnergyRating", "boundary": "pricing.estimatedSaleValue"}
    builders: dict[str, Callable[[pd.DataFrame, str], go.Figure]] = {
        "before": lambda d, g: old.property_map(d, geometry=g, color=colour[g]),
        "after": lambda d, g: property_map(d, geometry=g, color=colour[g], basemap="outline"),
        "after, no aggregation": lambda d, g: property_map(
            d, geometry=g, color=colour[g], basemap="outline", detail_limit=None
        ),
    }
    rows = []
    with tempfile.TemporaryDirectory() as temporary, sync_playwright() as playwright:
        folder = Path(temporary)
        (folder / "plotly.min.js").write_text(get_plotlyjs(), encoding="utf-8")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        for what, geometry, n in cases(quick):
            source = with_boundary if geometry == "boundary" else df
            if len(source) < n:
                print(f"skipping {n:,} {what}: only {len(source):,} in the data", file=sys.stderr)
                continue
            data = source.head(n)
            for version, build in builders.items():
                html = html_of(build(data, geometry))
                ms, page_ms, problems = draw_ms(browser, folder, html, f"{what}{n}-{len(rows)}")
                size = len(html.encode())
                rows.append((f"{n:,} {what}", version, size, ms, page_ms, problems))
                print(
                    f"{n:>7,} {what:<10} {version:<22} {size:>12,} B  draw {ms:>7,.0f} ms"
                    f"  (page {page_ms:>6,.0f} ms)",
                    flush=True,
                )
        browser.close()
    print("\nratios (before / after):")
    table = pd.DataFrame(rows, columns=["case", "version", "bytes", "ms", "page_ms", "problems"])
    for case, group in table.groupby("case", sort=False):
        by = group.set_index("version")
        for version in ("after", "after, no aggregation"):
            size = by.loc["before", "bytes"] / by.loc[version, "bytes"]
            speed = by.loc["before", "ms"] / by.loc[version, "ms"]
            page = by.loc["before", "page_ms"] / by.loc[version, "page_ms"]
            print(
                f"  {case:<18} {version:<22} {size:6.1f}x smaller  {speed:6.1f}x faster to draw"
                f"  ({page:4.1f}x page)"
            )
    errors = [p for problems in table["problems"] for p in problems]
    if errors:
        print(f"\nconsole errors: {sorted(set(errors))[:5]}")
    tiles_case(args.tile_delay_ms)


if __name__ == "__main__":
    main()
