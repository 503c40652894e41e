"""Address matching on every search style: ``client.match_addresses`` against the truth, one table.

For each world size (``--homes``, default 5,000 and 100,000) and each search style the sandbox
answers in (``every-word``, ``ranked``, ``fuzzy``, ``display-only``;
:mod:`propertykit.sandbox._search`), a sandbox of the real address geography serves
search-suggest over real HTTP (its per-minute limit raised so nothing waits), and two lists drawn
from its world are matched cold, then again (which must send nothing):

- **typed**: ``--addresses`` rows typed as clients type them
  (:func:`propertykit.sandbox.typed_addresses`: case, abbreviations, no postcode, a shop in front,
  a transposed or dropped letter, the flat after the street, houses known by name), and the
  negatives among them, each its own line: **wrong number** (a number the street lacks),
  **no flat** (a building's address without its flat: must be ambiguous, never one flat),
  **other town** (the number and street with another town and that town's postcode), **subset
  name** ("The Forge" where the house is "The Old Forge");
- **register**: ``--register`` rows as another register writes the same homes (capitals, the
  number a part of its own, the county, apostrophes gone).

Columns: right (the home; for a negative line: not matched), wrong (another home; for a
negative line: matched), ambiguous, unmatched, as shares of the line's rows; requests per
distinct address of the list, cold; requests the second run sent; records looked up to confirm
a place the answers cannot show, and the credits the sandbox charged for them (``--no-confirm``:
none looked up, the matcher's behaviour before it confirmed places).

Run: ``.venv/bin/python benchmarks/addresses.py [--homes 5000 100000] [--addresses 2000]
[--register 1000] [--styles every-word ranked fuzzy display-only]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

import propertykit as pk
from propertykit.sandbox import TypedAddress, typed_addresses
from propertykit.sandbox._address_book import NEGATIVE_KINDS
from propertykit.sandbox._search import STYLES

#: A per-minute limit high enough that nothing waits (the sandbox's is raised to match).
FAST = 1_000_000
#: The lines of the table for each style and size, in order.
LINES = ("typed", "register", *NEGATIVE_KINDS)


def outcome(row: TypedAddress, status: str, location_id: object) -> str:
    """right, wrong, ambiguous or unmatched, for the line ``row`` is counted in."""
    if row.kind in NEGATIVE_KINDS:
        if status == "matched":
            return "wrong"
        fits = status == "ambiguous" if row.kind == "no_flat" else True
        return "right" if fits else status
    if status != "matched":
        return status
    return "right" if location_id == row.expected else "wrong"


def line_of(row: TypedAddress) -> str:
    return (
        row.kind
        if row.kind in NEGATIVE_KINDS
        else "register"
        if row.kind == "register"
        else "typed"
    )


def run_style(
    style: str, homes: int, lists: dict[str, list[TypedAddress]], confirm: bool = True
) -> list[dict[str, object]]:
    """Match each list on a sandbox answering in ``style``: one record per line of the table."""
    records: list[dict[str, object]] = []
    with (
        tempfile.TemporaryDirectory() as folder,
        pk.sandbox.serve(realism="real", n_properties=homes, search_style=style) as sb,
    ):
        sb.set_suggest_limit(FAST)
        endpoints = pk.Endpoints(suggest_per_minute=FAST)
        for name, rows in lists.items():
            cache = Path(folder) / name
            with pk.Client(sb.api_key, sb.url, cache=cache, endpoints=endpoints,
                           progress=False) as client:  # fmt: skip
                texts = [row.text for row in rows]
                started = time.perf_counter()
                charged = sb.credits_charged
                cold = client.match_addresses(texts, confirm_places=confirm)
                seconds = time.perf_counter() - started
                credits = sb.credits_charged - charged
                again = client.match_addresses(texts, confirm_places=confirm)
            per_address = cold.attrs["requests_sent"] / len(set(texts))
            counts: dict[str, Counter[str]] = {}
            for row, status, location_id in zip(rows, cold["status"], cold["locationId"],
                                                strict=True):  # fmt: skip
                counts.setdefault(line_of(row), Counter())[outcome(row, status, location_id)] += 1
            for line in LINES:
                if line not in counts:
                    continue
                found = counts[line]
                total = sum(found.values())
                whole = line in ("typed", "register")  # the list's own figures on its line
                records.append({
                    "homes": homes, "style": style, "line": line, "rows": total,
                    **{k: found[k] / total for k in ("right", "wrong", "ambiguous", "unmatched")},
                    "req/address": per_address if whole else None,
                    "again": again.attrs["requests_sent"] if whole else None,
                    "lookups": cold.attrs["records_looked_up"] if whole else None,
                    "credits": credits if whole else None,
                    "seconds": seconds if whole else None,
                })  # fmt: skip
    return records


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--homes", type=int, nargs="+", default=[5_000, 100_000])
    parser.add_argument("--addresses", type=int, default=2_000)
    parser.add_argument("--register", type=int, default=1_000)
    parser.add_argument("--styles", nargs="+", choices=STYLES, default=list(STYLES))
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="match with confirm_places=False (no record looked up): the before",
    )
    arguments = parser.parse_args()
    records: list[dict[str, object]] = []
    for homes in arguments.homes:
        lists = {
            "typed": typed_addresses(arguments.addresses, n_properties=homes),
            "register": typed_addresses(arguments.register, n_properties=homes, draw_seed=1,
                                        kinds={"register": 1}),
        }  # fmt: skip
        for style in arguments.styles:
            started = time.perf_counter()
            records += run_style(style, homes, lists, confirm=not arguments.no_confirm)
            print(f"{homes:,} homes, {style}: {time.perf_counter() - started:.0f} s",
                  file=sys.stderr)  # fmt: skip
    table = pd.DataFrame.from_records(records).set_index(["homes", "style", "line"])
    for name in ("right", "wrong", "ambiguous", "unmatched"):
        table[name] = table[name].map("{:.1%}".format)
    for name, form in (("req/address", "{:.2f}"), ("again", "{:.0f}"), ("seconds", "{:.1f}"),
                       ("lookups", "{:.0f}"), ("credits", "{:.0f}")):  # fmt: skip
        table[name] = table[name].map(lambda v, f=form: "" if pd.isna(v) else f.format(v))
    print(table.to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
