"""Valuation accuracy, point in time, on held-out sales of the sandbox's real-shaped world.

Each home's last sale from June 2023 on is taken out of the frame; the home is valued as of that
sale's day on what is left (``df.pk.valuation(ids, as_of=dates)``), and the estimate and 80 %
range are set against the price it sold for. Printed per world size: how many were valued (not
thin), the median absolute error, the share within 10 % and 20 %, and the share of prices inside
the 80 % range (its coverage; the target is 75-85 %), each with a 95 % interval.

One world of 5,000 homes leaves only some 60 held-out sales valued, too few to tell methods
apart (one home is 1.7 points), so a size is measured over several independent worlds (seeds
``0 .. worlds - 1`` of :func:`propertykit.sandbox.generate_records`) and their sales pooled. The
shares' intervals are Wilson score intervals; the median error's is a percentile bootstrap over
worlds and homes within them (2,000 draws, a fixed seed), since homes of one world share its
evidence. ``--compare`` sets two saved runs side by side on the homes both valued, with the
paired bootstrap interval of each difference.

The same script runs against any version of propertykit whose ``df.pk.valuation`` takes
``as_of`` per subject, so today's method and an earlier one can be set side by side on the same
held-out sales: ``--records DIR`` keeps the worlds drawn (pickled, by today's sandbox) so another
checkout values the very same records (``PYTHONPATH=<other checkout> python
benchmarks/valuation_accuracy.py --records DIR``; its sandbox may draw a different world).

Taking the held-out sales out also takes them out of the calibration: in the quarters after June
2023 only sales followed by a resale remain, quick resales that vary most, so the range comes out
a little wide there. A point-in-time method needs no holding out (a sale is never its own
evidence, nor is anything after it): ``--whole`` values the same sales on the whole frame. An
earlier method that fitted its index on every sale would see the future that way; compare it
held out only.

Measured (95 % intervals in brackets; "today": the subject's own earlier sale counted at any
age; 6416e79: before that; 298c093: the method before point in time), held out:

20,000 homes      today                6416e79              298c093
valued / 3,252    2,145                2,004                1,887
median error      9.7 % [9.2, 10.2]    10.9 % [10.3, 11.4]  11.2 % [10.7, 11.9]
within 10 %       50.9 % [48.8, 53.0]  46.5 % [44.3, 48.6]  45.2 % [42.9, 47.4]
range holds       82.4 % [80.8, 84.0]  83.2 % [81.5, 84.8]  81.0 % [79.2, 82.7]

5,000 homes x 20  today                6416e79              298c093
valued / 16,447   2,619                1,860                1,526
median error      9.3 % [8.9, 9.7]     10.2 % [9.7, 11.0]   10.7 % [9.8, 11.4]
within 10 %       53.3 % [51.4, 55.2]  48.7 % [46.4, 50.9]  47.1 % [44.6, 49.6]
range holds       82.9 % [81.4, 84.3]  82.0 % [80.2, 83.7]  79.8 % [77.7, 81.8]

Paired on the homes both valued, today - 298c093: median error -1.5 points [-1.9, -1.1] at
20,000 (1,887 homes), -1.3 [-1.9, -0.7] at 5,000 (1,526); within 10 % +5.9 [+4.3, +7.5] and
+6.2 [+3.5, +8.7]. On the whole frame (``--whole``), today / 6416e79: 20,000 homes 9.2 / 9.8 %
median error, 54.0 / 50.9 % within 10 %, range 81.9 / 82.8 %; 5,000 x 20: 9.0 / 9.9 %,
54.2 / 50.5 %, 81.8 / 82.0 % (docs/valuation.md has the intervals).

Run: ``.venv/bin/python benchmarks/valuation_accuracy.py`` (20 worlds of 5,000 homes and one of
20,000, held out: about two minutes on a shared 2-core machine, most of it the per-quarter fits
and blind valuations; ``--whole`` takes about twice as long); ``--properties 5000 --worlds 10``
for one size; ``--records DIR`` to keep the worlds drawn; ``--save DIR`` to keep each home's
figures, and ``--compare DIR_A DIR_B`` to set two such runs side by side.
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import propertykit as pk
from propertykit.sandbox import generate_records

HELD_OUT_FROM = "2023-06-01"
_Z95 = 1.959963984540054
_DRAWS = 2_000


@dataclass
class HeldOut:
    """A frame whose recent last sales were taken out, and those sales."""

    df: pd.DataFrame
    ids: list[str]
    dates: list[str]
    prices: np.ndarray


def hold_out(records: list[dict[str, Any]], since: str = HELD_OUT_FROM) -> HeldOut:
    """Take each home's last sale made on or after ``since`` out of its history."""
    ids, dates, prices = [], [], []
    for record in records:
        history = record.get("saleHistory") or []
        if history and history[-1]["date"] >= since:
            ids.append(record["propertyId"])
            dates.append(history[-1]["date"])
            prices.append(history[-1]["price"])
            record["saleHistory"] = history[:-1]
    return HeldOut(pk.frame(records), ids, dates, np.array(prices, dtype=float))


def world(properties: int, seed: int, records_dir: str | None) -> list[dict[str, Any]]:
    """The real-shaped world ``seed`` of ``properties`` homes; kept in (or read from)
    ``records_dir`` when given, so another checkout values the very same records."""
    if records_dir is None:
        return generate_records(properties, seed, realism="real")
    path = os.path.join(records_dir, f"world-{properties}-{seed}.pickle")
    if os.path.exists(path):
        with open(path, "rb") as file:
            kept: list[dict[str, Any]] = pickle.load(file)  # written by this script
        return kept
    records = generate_records(properties, seed, realism="real")
    os.makedirs(records_dir, exist_ok=True)
    with open(path, "wb") as file:
        pickle.dump(records, file)
    return records


def value_world(
    properties: int, seed: int, *, whole: bool = False, records_dir: str | None = None
) -> pd.DataFrame:
    """Each held-out sale of one world: its price, estimate and range (``thin`` when not
    valued); ``whole``: valued on the whole frame rather than the one without them."""
    records = world(properties, seed, records_dir)
    held = hold_out([dict(record) for record in records])
    df = pk.frame(records) if whole else held.df
    values = df.pk.valuation(held.ids, as_of=held.dates)
    return values[["propertyId", "estimate", "lower", "upper", "thin"]].assign(
        world=seed, as_of=held.dates, price=held.prices
    )


def wilson(hits: int, count: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a share ``hits / count``.

    Examples
    --------
    >>> [round(end, 3) for end in wilson(80, 100)]
    [0.711, 0.867]
    """
    if count == 0:
        return (float("nan"), float("nan"))
    share, z2 = hits / count, _Z95**2
    centre = (share + z2 / (2 * count)) / (1 + z2 / count)
    half = _Z95 * np.sqrt(share * (1 - share) / count + z2 / (4 * count**2)) / (1 + z2 / count)
    return (float(centre - half), float(centre + half))


def _resampled(worlds: np.ndarray, draws: int, seed: int = 0) -> list[np.ndarray]:
    """Row positions of ``draws`` bootstrap samples: worlds drawn with replacement, then homes
    within each drawn world (a single world: homes only)."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(worlds == label) for label in np.unique(worlds)]
    samples = []
    for _ in range(draws):
        chosen = rng.integers(len(members), size=len(members)) if len(members) > 1 else [0]
        samples.append(
            np.concatenate(
                [
                    members[at][rng.integers(len(members[at]), size=len(members[at]))]
                    for at in chosen
                ]
            )
        )
    return samples


def figures(homes: pd.DataFrame) -> dict[str, Any]:
    """The pooled figures of valued homes, each share with its 95 % interval."""
    valued = homes[~homes["thin"].astype(bool)]
    price = valued["price"].to_numpy(dtype=float)
    error = np.abs(valued["estimate"].to_numpy(dtype=float) / price - 1)
    lower, upper = valued["lower"].to_numpy(dtype=float), valued["upper"].to_numpy(dtype=float)
    inside = (lower <= price) & (price <= upper)
    count = len(valued)
    medians = [np.median(error[at]) for at in _resampled(valued["world"].to_numpy(), _DRAWS)]
    found: dict[str, Any] = {
        "worlds": homes["world"].nunique(),
        "subjects": len(homes),
        "valued": count,
        "median error": (float(np.median(error)), *np.percentile(medians, [2.5, 97.5])),
    }
    for name, hit in (
        ("within 10 %", error <= 0.1),
        ("within 20 %", error <= 0.2),
        ("80 % range holds", inside),
    ):
        found[name] = (float(hit.mean()), *wilson(int(hit.sum()), count))
    found["median upper / lower"] = float(np.median(upper / lower))
    return found


def paired(now: pd.DataFrame, before: pd.DataFrame) -> dict[str, Any]:
    """Two runs on the same homes: each figure for both, on the homes both valued, and the
    paired bootstrap 95 % interval of the difference (now - before)."""
    both = now.merge(before, on=["world", "propertyId", "as_of"], suffixes=("", "_before"))
    both = both[~both["thin"].astype(bool) & ~both["thin_before"].astype(bool)]
    price = both["price"].to_numpy(dtype=float)

    def measures(suffix: str) -> dict[str, np.ndarray]:
        error = np.abs(both["estimate" + suffix].to_numpy(dtype=float) / price - 1)
        inside = (both["lower" + suffix].to_numpy(dtype=float) <= price) & (
            price <= both["upper" + suffix].to_numpy(dtype=float)
        )
        return {"median error": error, "within 10 %": error <= 0.1,
                "within 20 %": error <= 0.2, "80 % range holds": inside}  # fmt: skip

    a, b = measures(""), measures("_before")
    samples = _resampled(both["world"].to_numpy(), _DRAWS)
    found: dict[str, Any] = {"both valued": len(both)}
    for name in a:
        pick = np.median if name == "median error" else np.mean
        differences = [pick(a[name][at]) - pick(b[name][at]) for at in samples]
        found[name] = (
            float(pick(a[name])),
            float(pick(b[name])),
            *np.percentile(differences, [2.5, 97.5]),
        )
    return found


def shown(found: dict[str, Any]) -> str:
    """One line of figures, an interval as ``[low, high]``."""
    parts = []
    for name, value in found.items():
        if isinstance(value, tuple):
            parts.append(f"{name} {value[0]:.3f} [{value[1]:.3f}, {value[2]:.3f}]")
        elif isinstance(value, float):
            parts.append(f"{name} {value:.3f}")
        else:
            parts.append(f"{name} {value}")
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--properties", type=int, nargs="+", default=[5_000, 20_000])
    parser.add_argument(
        "--worlds",
        type=int,
        nargs="+",
        default=[20, 1],
        help="how many worlds (seeds 0, 1, ...) of each size, pooled (one number: every size)",
    )
    parser.add_argument(
        "--whole",
        action="store_true",
        help="value on the whole frame (fair only for a point-in-time method: the sale valued "
        "is never its own evidence, but an earlier method would see later sales)",
    )
    parser.add_argument("--records", help="keep the worlds drawn in this directory, or read them")
    parser.add_argument("--save", help="write each home's figures to CSVs in this directory")
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("NOW", "BEFORE"),
        help="set two --save directories side by side (nothing is valued)",
    )
    args = parser.parse_args(argv)
    if args.compare:
        for name in sorted(os.listdir(args.compare[0])):
            now = pd.read_csv(os.path.join(args.compare[0], name))
            before = pd.read_csv(os.path.join(args.compare[1], name))
            found = paired(now, before)
            print(f"{name}: both valued {found.pop('both valued')}")
            for figure, (a, b, low, high) in found.items():
                print(f"  {figure}: now {a:.3f}, before {b:.3f}, difference {a - b:+.3f} "
                      f"[{low:+.3f}, {high:+.3f}]")  # fmt: skip
        return
    worlds = args.worlds * len(args.properties) if len(args.worlds) == 1 else args.worlds
    if len(worlds) != len(args.properties):
        parser.error("give one --worlds number, or one per --properties")
    for properties, count in zip(args.properties, worlds, strict=True):
        start = time.perf_counter()
        homes = pd.concat(
            [value_world(properties, seed, whole=args.whole, records_dir=args.records)
             for seed in range(count)],
            ignore_index=True,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        if args.save:
            os.makedirs(args.save, exist_ok=True)
            homes.to_csv(os.path.join(args.save, f"homes-{properties}.csv"), index=False)
        whole = " (whole frame)" if args.whole else ""
        print(f"{properties:,} homes x {count} worlds{whole}: {shown(figures(homes))}; "
              f"{seconds:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
