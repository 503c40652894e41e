"""Valuation accuracy, point in time, on held-out sales of the sandbox's real-shaped world.

Each home's last sale from June 2023 on is taken out of the frame; the home is valued as of that
sale's day on what is left (``df.pk.valuation(ids, as_of=dates)``), and the estimate and 80 %
range are set against the price it sold for. Printed per world size: how many were valued (not
thin), the median absolute error, the share within 10 % and 20 %, and the share of prices inside
the 80 % range (its coverage; the target is 75-85 %). The same script runs against any version
of propertykit whose ``df.pk.valuation`` takes ``as_of`` per subject, so today's method and an
earlier one can be set side by side on the same held-out sales
(``PYTHONPATH=<other checkout> python benchmarks/valuation_accuracy.py``).

Taking the held-out sales out also takes them out of the calibration: in the quarters after June
2023 only sales followed by a resale remain, quick resales that vary most, so the range comes out
a little wide there. A point-in-time method needs no holding out (a sale is never its own
evidence, nor is anything after it): ``--whole`` values the same sales on the whole frame. An
earlier method that fitted its index on every sale would see the future that way; compare it
held out only.

Run: ``.venv/bin/python benchmarks/valuation_accuracy.py`` (``--properties 5000`` for one size;
``--whole`` on the whole frame).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

import propertykit as pk
from propertykit.sandbox import generate_records

HELD_OUT_FROM = "2023-06-01"


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


def accuracy(values: pd.DataFrame, prices: np.ndarray) -> dict[str, float]:
    """How the valued subjects' estimates and ranges met the prices they sold for."""
    valued = ~values["thin"].to_numpy(dtype=bool)
    error = np.abs(values["estimate"].to_numpy(dtype=float) / prices - 1)[valued]
    lower = values["lower"].to_numpy(dtype=float)[valued]
    upper = values["upper"].to_numpy(dtype=float)[valued]
    inside = (lower <= prices[valued]) & (prices[valued] <= upper)
    return {
        "subjects": float(len(values)),
        "valued": float(valued.sum()),
        "median error": float(np.median(error)),
        "within 10 %": float(np.mean(error <= 0.1)),
        "within 20 %": float(np.mean(error <= 0.2)),
        "80 % range holds": float(np.mean(inside)),
        "median upper / lower": float(np.median(upper / lower)),
    }


def measure(properties: int, *, whole: bool = False, save: str | None = None) -> dict[str, float]:
    """The figures for one world size (and the seconds the valuation took); ``whole``: value on
    the whole frame rather than the one without the held-out sales; ``save``: a CSV path to
    write each home's estimate and range to (``{properties}`` in it is the size)."""
    records = generate_records(properties, realism="real")
    held = hold_out([dict(record) for record in records])
    df = pk.frame(records) if whole else held.df
    start = time.perf_counter()
    values = df.pk.valuation(held.ids, as_of=held.dates)
    figures = accuracy(values, held.prices)
    figures["seconds"] = time.perf_counter() - start
    if save:
        kept = values[["propertyId", "estimate", "lower", "upper", "thin"]].assign(
            as_of=held.dates, price=held.prices
        )
        kept.to_csv(save.format(properties=properties), index=False)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--properties", type=int, nargs="+", default=[5_000, 20_000])
    parser.add_argument(
        "--whole",
        action="store_true",
        help="value on the whole frame (fair only for a point-in-time method: the sale valued "
        "is never its own evidence, but an earlier method would see later sales)",
    )
    parser.add_argument("--save", help="write each home's figures to this CSV ({properties})")
    args = parser.parse_args(argv)
    for properties in args.properties:
        figures = measure(properties, whole=args.whole, save=args.save)
        shown = ", ".join(
            f"{name} {value:.0f}" if name in ("subjects", "valued") else f"{name} {value:.3f}"
            for name, value in figures.items()
        )
        print(f"{properties:,} homes{' (whole frame)' if args.whole else ''}: {shown}")


if __name__ == "__main__":
    main()
