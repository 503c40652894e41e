"""``propertykit report``: fetch properties and write a self-contained HTML or PDF report.

Against the service ``pk.Client()`` finds (profile, address and key from the environment, see
:func:`propertykit.client.profile.resolve_service`); against a local sandbox, which costs nothing,
only with ``--sandbox`` or ``--sample``, and then the terminal says so. Nothing missing ever falls
back to the sandbox: it is a one-line error and nothing is written.
``--out report.pdf`` prints it on A4 (the ``export`` extra and an installed Chromium);
``--tiles`` puts street tiles under its maps, fetched once now and kept in the file.
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
from propertykit.client import Client, parse_ids
from propertykit.errors import ConfigError, InvalidInput, MissingIdsWarning
from propertykit.text import plural, visible
from propertykit.views import OSM_TILES, write_report


def configure(parser: argparse.ArgumentParser) -> None:
    what = parser.add_mutually_exclusive_group(required=True)
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
    *, use_sandbox: bool, seed: int = 0, **client_options: object
) -> Iterator[Service]:
    """The service ``pk.Client()`` finds, or a fresh local sandbox when asked (and said so).

    A service that cannot be found is a :class:`~propertykit.errors.ConfigError` that says how
    to name it, or to pass ``--sandbox``; it never falls back to the sandbox.
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
    with sandbox.serve(seed=seed) as sb:
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


def run(args: argparse.Namespace) -> int:
    if args.sample is not None and args.sample < 1:
        raise InvalidInput("--sample needs a positive number of properties")
    with open_service(use_sandbox=args.sandbox or args.sample is not None, seed=args.seed) as svc:
        if args.sample is not None:
            assert svc.sandbox is not None
            ids_text = sample_ids(svc.sandbox, args.sample)
        else:
            ids_text = "\n".join(args.ids)
        df = fetch_frame(svc.client, ids_text)
        say_missing(df)
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
        )
        size_mb = path.stat().st_size / 1e6
        count = plural(len(df), "property", "properties")
        print(f"Report: {path.resolve()} ({size_mb:.1f} MB, {count})")
        print(f"Usage: {svc.client.usage}")
    return 0
