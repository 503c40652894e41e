"""``propertykit report``: fetch properties and write a self-contained HTML or PDF report, with
``--subject``'s comparable evidence (fetched with its neighbourhood unless among ``--ids``). Every
input is checked before anything is sent; nothing missing ever falls back to the sandbox.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import pandas as pd

from propertykit.cli._service import (
    DEFAULT_RADIUS_M,
    fetch_frame,
    open_service,
    sample_ids,
    say_missing,
)
from propertykit.client import Client, check_subject_id, held_in
from propertykit.errors import InvalidInput, PropertyKitError
from propertykit.frames import ValuationSearch, check_as_of
from propertykit.text import plural
from propertykit.views import OSM_TILES, check_report, write_report

#: Metres about a subject not among ``--ids`` whose homes of its type and size are fetched as its
#: evidence (and within which its comparables are searched).


def configure(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--ids", nargs="+", metavar="ID", help="location ids and/or <provider>::<id> "
                      "source ids (spaces or commas between them)")  # fmt: skip
    what.add_argument("--sample", type=int, metavar="N", help="N properties of the sandbox")
    add = parser.add_argument
    add("--out", default="report.html", help="file to write: .html, or .pdf for print (A4)")
    add("--tiles", nargs="?", const=OSM_TILES, metavar="URL", help="street tiles under the maps: "
        "a .../{z}/{x}/{y}.png template (alone: OpenStreetMap's), fetched now and kept in the "
        "report")  # fmt: skip
    add("--attribution", help="the tile server's credit, written on the maps (OpenStreetMap's "
        "is known)")  # fmt: skip
    add("--subject", metavar="ID", help="a property to value: its location id or <provider>::<id> "
        "source id (fetched with its neighbourhood), or the propertyId of one among --ids or "
        "--sample; adds the comparable evidence")  # fmt: skip
    add("--radius", type=float, metavar="METRES", help="the comparables' search radius, up to "
        f"8,000 (a subject not among --ids: the neighbourhood fetched, default "
        f"{DEFAULT_RADIUS_M:,.0f}; else widened as needed)")  # fmt: skip
    add("--months", type=int, default=24, help="comparables sold at most this many months before "
        "the valuation date (default 24)")  # fmt: skip
    add("--limit", type=int, default=20, help="most comparables (default 20)")
    add("--as-of", metavar="DATE", help="the valuation date (YYYY-MM-DD, not after today; "
        "default: the day after the latest sale, as the report says)")  # fmt: skip
    add("--title", default="Property report")
    add("--sandbox", action="store_true", help="use a local sandbox even if the service is set")
    add("--seed", type=int, default=0, help="sandbox data seed")


def fetch_subject(
    client: Client, df: pd.DataFrame | None, given: str, radius_m: float
) -> tuple[pd.DataFrame, str]:
    """``df`` with the subject's neighbourhood, and its ``propertyId``; a subject that cannot be
    valued ends the command, saying what it spent."""
    nearby = client.neighbourhood(given, radius_m=radius_m)
    said, usage = nearby.attrs["neighbourhood"], client.usage
    spent = f"{plural(usage.requests_sent, 'request')} sent, {usage.billable_requests:,} billable"
    if said["stopped"] == "no record":
        raise PropertyKitError(
            f"--subject {given} returned no record ({spent}): the service looks a home up "
            "by its location id or <provider>::<id>; a propertyId is found only among "
            "--ids or --sample. No report written"
        )
    if said["stopped"] is not None:
        raise PropertyKitError(
            f"--subject {given} ({said['propertyId']}) has {said['stopped']}, so it cannot be "
            f"valued from comparable sales ({spent}; nothing more fetched). No report written"
        )
    print(
        f"propertykit: fetched {said['fetched']:,} homes of its type and size within "
        f"{radius_m:,.0f} m of the subject: their sales are its evidence",
        file=sys.stderr,
    )
    parts = [part for part in (df, nearby) if part is not None and len(part)]
    combined = pd.concat(parts, ignore_index=True).drop_duplicates("propertyId", ignore_index=True)
    combined.attrs = {**nearby.attrs, "missing_ids": () if df is None else df.attrs["missing_ids"]}
    return combined, str(said["propertyId"])


def checked(args: argparse.Namespace) -> tuple[pd.Timestamp | None, ValuationSearch]:
    """Every input (the file, its format and what it needs, the tiles, the valuation's date,
    subject's id and search), checked before anything opens or is sent."""
    check_report(args.out, tiles=args.tiles, attribution=args.attribution)
    if args.sample is not None and args.sample < 1:
        raise InvalidInput("--sample needs a positive number of properties")
    if args.ids is None and args.sample is None and args.subject is None:
        raise InvalidInput("Say what to report on: --ids, --sample or --subject")
    try:
        as_of = check_as_of(args.as_of)
    except InvalidInput as exc:
        raise InvalidInput(f"--as-of: {exc}") from None
    if args.subject is not None:
        check_subject_id(args.subject)
    try:
        search = ValuationSearch(radius_m=args.radius, months=args.months, limit=args.limit)
    except InvalidInput as exc:  # in the command's words
        raise InvalidInput(str(exc).replace("radius_m", "--radius")) from None
    return as_of, search


def run(args: argparse.Namespace) -> int:
    as_of, search = checked(args)
    with open_service(use_sandbox=args.sandbox or args.sample is not None, seed=args.seed) as svc:
        df: pd.DataFrame | None = None
        if args.sample is not None:
            assert svc.sandbox is not None
            df = fetch_frame(svc.client, sample_ids(svc.sandbox, args.sample))
        elif args.ids is not None:
            df = fetch_frame(svc.client, "\n".join(args.ids))
        if df is not None:
            say_missing(df)
        subject = None if args.subject is None else held_in(df, args.subject.strip())
        if args.subject is not None and subject is None:  # searched within what is fetched
            search = dataclasses.replace(search, radius_m=search.radius_m or DEFAULT_RADIUS_M)
            radius = float(search.radius_m or DEFAULT_RADIUS_M)
            df, subject = fetch_subject(svc.client, df, args.subject.strip(), radius)
        assert df is not None
        if df.empty:
            raise InvalidInput("No id returned a record: no report written")
        path = write_report(
            df, Path(args.out), title=args.title, usage=svc.client.usage, source=svc.source,
            tiles=args.tiles, attribution=args.attribution, subject=subject, as_of=as_of,
            search=search,
        )  # fmt: skip
        count = plural(len(df), "property", "properties")
        print(f"Report: {path.resolve()} ({path.stat().st_size / 1e6:.1f} MB, {count})")
        print(f"Usage: {svc.client.usage}")
    return 0
