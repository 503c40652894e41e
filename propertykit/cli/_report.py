"""``propertykit report``: fetch properties and write a self-contained HTML or PDF report, with
``--subject``'s comparable evidence (fetched with its neighbourhood unless among ``--ids``). Every
input is checked before anything is sent; nothing missing ever falls back to the sandbox.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from propertykit import sandbox
from propertykit.client import Client, check_subject_id, held_in, parse_ids
from propertykit.errors import ConfigError, InvalidInput, MissingIdsWarning, PropertyKitError
from propertykit.frames import ValuationSearch, check_as_of
from propertykit.text import plural, visible
from propertykit.views import OSM_TILES, write_report

#: Metres about a subject not among ``--ids`` whose homes of its type and size are fetched as its
#: evidence (and within which its comparables are searched).
DEFAULT_RADIUS_M = 2000.0


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


@dataclass
class Service:
    """Where a command fetches from: a client, plus a sandbox when it runs locally."""

    client: Client
    source: str
    sandbox: sandbox.Sandbox | None = None


@contextlib.contextmanager
def open_service(
    *, use_sandbox: bool, seed: int = 0, realism: str = "textbook", **client_options: object
) -> Iterator[Service]:
    """The service ``pk.Client()`` finds (never falling back), or a fresh local sandbox of
    ``realism`` when asked (and said so)."""
    if not use_sandbox:
        try:
            client = Client(**client_options)  # type: ignore[arg-type]
        except ConfigError as exc:
            raise ConfigError(f"{exc}; or pass --sandbox to use the local sandbox") from exc
        with client:
            yield Service(client, client.base_url)
        return
    print(f"propertykit: using the local sandbox (made-up data, seed {seed})", file=sys.stderr)
    with sandbox.serve(seed=seed, realism=realism) as sb:
        client_options.setdefault("cache", False)
        with Client(sb.api_key, sb.url, **client_options) as client:  # type: ignore[arg-type]
            yield Service(client, f"the propertykit sandbox (seed {seed})", sb)


def fetch_frame(client: Client, ids_text: str) -> pd.DataFrame:
    """Pasted ids of either kind as one frame; those without a record in attrs["missing_ids"]."""
    parsed = parse_ids(ids_text)
    if parsed.invalid:
        problems = "; ".join(reason for _, reason in parsed.invalid[:3])
        raise InvalidInput(f"{plural(len(parsed.invalid), 'id')} cannot be sent: {problems}")
    if not parsed.count:
        raise InvalidInput("No ids given")
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingIdsWarning)  # said once below, for both kinds
        if parsed.location_ids:
            frames.append(client.properties(parsed.location_ids))
        if parsed.source_ids:
            frames.append(client.sources(parsed.source_ids))
    missing = tuple(i for f in frames for i in f.attrs.get("missing_ids", ()))
    combined = frames[0]
    if len(frames) > 1:  # a home named by both kinds of id is one home
        combined = pd.concat(frames, ignore_index=True).drop_duplicates(
            "propertyId", ignore_index=True
        )
    combined.attrs = {**frames[0].attrs, "missing_ids": missing}
    return combined


def sample_ids(sb: sandbox.Sandbox, count: int) -> str:
    """The first ``count`` location ids of the sandbox; :class:`InvalidInput` past its size."""
    ids = sb.location_ids
    if count > len(ids):
        raise InvalidInput(
            f"--sample {count:,}: the sandbox has {len(ids):,} properties, the most --sample takes"
        )
    return "\n".join(ids[:count])


def say_missing(df: pd.DataFrame) -> None:
    """Print, on stderr, how many ids returned no record and the first few of them."""
    missing = df.attrs.get("missing_ids") or ()
    if missing:
        shown = ", ".join(map(visible, missing[:5])) + (", ..." if len(missing) > 5 else "")
        print(
            f"propertykit: {plural(len(missing), 'id')} returned no record: {shown}",
            file=sys.stderr,
        )


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
    """Every input of a valuation (date, subject's id, search), checked before anything opens."""
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
