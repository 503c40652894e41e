"""``propertykit report``: fetch properties and write a self-contained HTML or PDF report.

Against the service ``pk.Client()`` finds (profile, address and key from the environment, see
:func:`propertykit.client.profile.resolve_service`); against a local sandbox, which costs nothing,
only with ``--sandbox`` or ``--sample``, and then the terminal says so. Nothing missing ever falls
back to the sandbox: it is a one-line error and nothing is written.
``--out report.pdf`` prints it on A4 (the ``export`` extra and an installed Chromium);
``--tiles`` puts street tiles under its maps, fetched once now and kept in the file.
``--subject ID`` adds the comparable evidence for one property (its value range, comparables,
their map, the index used, the caveats); a subject not among ``--ids`` is looked up, with its
neighbourhood (its homes of the same type and a similar floor area within ``--radius`` metres,
by the area query's point and radius and condition groups), whose sales are the evidence.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from propertykit import sandbox
from propertykit.client import Client, homes_like, parse_ids
from propertykit.errors import ConfigError, InvalidInput, MissingIdsWarning
from propertykit.text import plural, visible
from propertykit.views import OSM_TILES, write_report

#: Metres about a subject not among ``--ids`` whose homes of its type and size are fetched as its
#: evidence.
DEFAULT_RADIUS_M = 2000.0
#: Records per page of the neighbourhood's query (the service's largest).
QUERY_PAGE = 100


def configure(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group()
    what.add_argument(
        "--ids",
        nargs="+",
        metavar="ID",
        help="location ids and/or <provider>::<id> source ids (spaces or commas between them)",
    )
    what.add_argument("--sample", type=int, metavar="N", help="N properties of the sandbox")
    parser.add_argument(
        "--out", default="report.html", help="file to write: .html, or .pdf for print (A4)"
    )
    parser.add_argument(
        "--tiles",
        nargs="?",
        const=OSM_TILES,
        metavar="URL",
        help="street tiles under the maps: a .../{z}/{x}/{y}.png template (alone: "
        "OpenStreetMap's), fetched now and kept in the report",
    )
    parser.add_argument(
        "--attribution",
        help="the tile server's credit, written on the maps (OpenStreetMap's is known)",
    )
    parser.add_argument(
        "--subject",
        metavar="ID",
        help="a property to value: its location id, <provider>::<id> source id or propertyId; "
        "adds the comparable evidence (fetched with its neighbourhood if not among --ids)",
    )
    parser.add_argument(
        "--radius",
        type=float,
        default=DEFAULT_RADIUS_M,
        metavar="METRES",
        help=f"the neighbourhood fetched about a subject not among --ids "
        f"(default {DEFAULT_RADIUS_M:,.0f})",
    )
    parser.add_argument("--as-of", metavar="DATE", help="the valuation date (YYYY-MM-DD)")
    parser.add_argument("--title", default="Property report")
    parser.add_argument(
        "--sandbox", action="store_true", help="use a local sandbox even if the service is set"
    )
    parser.add_argument("--seed", type=int, default=0, help="sandbox data seed")


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
    """The service ``pk.Client()`` finds, or a fresh local sandbox when asked (and said so).

    A service that cannot be found is a :class:`~propertykit.errors.ConfigError` that says how
    to name it, or to pass ``--sandbox``; it never falls back to the sandbox. ``realism`` picks
    the sandbox's world (``"real"``: addresses with real geography, to match).
    """
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
    """Look up pasted ids of either kind (location or ``<provider>::<id>``) as one frame.

    Ids that returned no record are in ``df.attrs["missing_ids"]`` (the command prints them
    instead of a warning per lookup).
    """
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
    if len(frames) == 1:
        combined = frames[0]
    else:
        combined = pd.concat(frames, ignore_index=True)
        combined.attrs = dict(frames[0].attrs)
        combined = combined.drop_duplicates("propertyId", ignore_index=True)
    combined.attrs["missing_ids"] = missing
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


def subject_in(df: pd.DataFrame, given: str) -> str | None:
    """The ``propertyId`` of the frame's property that ``given`` names (any of its ids)."""
    for column in ("propertyId", "locationId"):
        if column in df.columns:
            found = df.loc[df[column] == given, "propertyId"]
            if len(found):
                return str(found.iloc[0])
    return None


def fetch_subject(
    client: Client, df: pd.DataFrame | None, given: str, radius_m: float
) -> tuple[pd.DataFrame, str]:
    """The frame with the subject and its neighbourhood in it, and the subject's ``propertyId``.

    A subject the frame holds costs nothing more; otherwise its record, then every property
    within ``radius_m`` of it (``client.query`` by point and radius) are fetched.
    """
    if df is not None and (found := subject_in(df, given)) is not None:
        return df, found
    if not (radius_m > 0 and radius_m < float("inf")):
        raise InvalidInput(f"--radius must be a positive number of metres, got {radius_m:g}")
    own = fetch_frame(client, given)
    if own.empty:
        raise InvalidInput(f"--subject {given} returned no record: no report written")
    lat, lng = own["spatial.lat"].iloc[0], own["spatial.lng"].iloc[0]
    if pd.isna(lat) or pd.isna(lng):
        raise InvalidInput(f"--subject {given} has no location, so it has no neighbourhood")
    area = {"type": "point", "coordinates": [float(lng), float(lat)], "radius": radius_m}
    like = homes_like(own["propertyType"].iloc[0], own["floorAreaSqM"].iloc[0])
    if like is None:
        nearby = client.query(area, page_size=QUERY_PAGE)
    else:  # only homes that could be its comparables are paid for
        nearby = client.query(area, page_size=QUERY_PAGE, query=like)
    which = "properties" if like is None else "homes of its type and size"
    print(
        f"propertykit: fetched {len(nearby):,} {which} within {radius_m:,.0f} m of the "
        "subject: their sales are its evidence",
        file=sys.stderr,
    )
    parts = [part for part in (df, own, nearby) if part is not None and len(part)]
    combined = pd.concat(parts, ignore_index=True).drop_duplicates("propertyId", ignore_index=True)
    combined.attrs = {
        **own.attrs,
        "missing_ids": df.attrs.get("missing_ids", ()) if df is not None else (),
    }
    return combined, str(own["propertyId"].iloc[0])


def run(args: argparse.Namespace) -> int:
    if args.sample is not None and args.sample < 1:
        raise InvalidInput("--sample needs a positive number of properties")
    if args.ids is None and args.sample is None and args.subject is None:
        raise InvalidInput("Say what to report on: --ids, --sample or --subject")
    with open_service(use_sandbox=args.sandbox or args.sample is not None, seed=args.seed) as svc:
        df: pd.DataFrame | None = None
        if args.sample is not None:
            assert svc.sandbox is not None
            df = fetch_frame(svc.client, sample_ids(svc.sandbox, args.sample))
        elif args.ids is not None:
            df = fetch_frame(svc.client, "\n".join(args.ids))
        if df is not None:
            say_missing(df)
        subject = None
        if args.subject is not None:
            df, subject = fetch_subject(svc.client, df, args.subject.strip(), args.radius)
        assert df is not None
        if df.empty:
            raise InvalidInput("No id returned a record: no report written")
        path = write_report(
            df,
            Path(args.out),
            title=args.title,
            usage=svc.client.usage,
            source=svc.source,
            tiles=args.tiles,
            attribution=args.attribution,
            subject=subject,
            as_of=args.as_of,
        )
        size_mb = path.stat().st_size / 1e6
        count = plural(len(df), "property", "properties")
        print(f"Report: {path.resolve()} ({size_mb:.1f} MB, {count})")
        print(f"Usage: {svc.client.usage}")
    return 0
