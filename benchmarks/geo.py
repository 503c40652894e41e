"""Geometry and report benchmarks, measured in one run (not a timed test).

- points for 100,000 records: ``to_geodataframe`` (``points_from_xy``) vs ``Point(lng, lat)``
  per row;
- boundaries for 50,000 GeoJSON polygons: ``read_boundaries`` (one ``shapely.from_ragged_array``
  call) vs ``shapely.geometry.shape()`` per item;
- the HTML report's size and build time for 1,000 and 10,000 properties.

Run: ``.venv/bin/python benchmarks/geo.py``. Each timing is the best of a few repeats.
"""

from __future__ import annotations

import gc
import itertools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import shapely
from shapely.geometry import Point, mapping, shape

from propertykit.frames import frame
from propertykit.sandbox import generate_records
from propertykit.views import read_boundaries, to_geodataframe, write_report


def best_of(function: Callable[[], Any], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - started)
    return best


def naive_points(df: pd.DataFrame) -> list[Point | None]:
    return [
        None if pd.isna(lat) or pd.isna(lng) else Point(lng, lat)
        for lat, lng in zip(df["spatial.lat"], df["spatial.lng"], strict=True)
    ]


def naive_boundaries(values: list[Any]) -> list[Any]:
    return [None if value is None else shape(value) for value in values]


def main() -> None:
    records = generate_records(100_000)
    df = frame(records)
    boundaries = [r["spatial"]["boundary"] for r in records if r["spatial"].get("boundary")]
    boundaries = list(itertools.islice(itertools.cycle(boundaries), 50_000))
    located = df[["spatial.lng", "spatial.lat"]].dropna().to_numpy()
    # keep the garbage collector from re-scanning the test data on every pass of both contenders
    gc.collect()
    gc.freeze()

    naive = best_of(lambda: naive_points(df))
    fast = best_of(lambda: to_geodataframe(df, nested="keep"))
    print(
        f"points, {len(df):,} records: Point() loop {naive:.3f} s, to_geodataframe {fast:.3f} s, "
        f"{naive / fast:.1f}x faster"
    )

    # the sandbox's plots are rectangles (5 coordinates); real outlines have more corners
    outlines = [
        mapping(p) for p in shapely.buffer(shapely.points(located[:50_000]), 1e-4, quad_segs=3)
    ]
    for name, polygons in (("sandbox rectangles", boundaries), ("13-point outlines", outlines)):
        naive = best_of(lambda polygons=polygons: naive_boundaries(polygons))
        fast = best_of(lambda polygons=polygons: read_boundaries(polygons))
        print(
            f"boundaries, {len(polygons):,} {name}: shape() loop {naive:.3f} s, "
            f"read_boundaries {fast:.3f} s, {naive / fast:.1f}x faster"
        )

    folder = Path(tempfile.mkdtemp(prefix="pk-bench-"))
    for count in (1_000, 10_000):
        subset = df.head(count)
        started = time.perf_counter()
        path = write_report(subset, folder / f"report-{count}.html", source="benchmark")
        took = time.perf_counter() - started
        print(
            f"report, {count:,} properties: built in {took:.2f} s, "
            f"{path.stat().st_size / 1e6:.1f} MB"
        )


if __name__ == "__main__":
    main()
