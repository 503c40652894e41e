"""``propertykit report``: fetch properties and write a self-contained HTML or PDF report.

Against the service named by ``PROPERTYKIT_BASE_URL`` / ``PROPERTYKIT_API_KEY`` when both are
set (and ``--sandbox`` is not given); otherwise against a local sandbox, which costs nothing.
``--out report.pdf`` prints it on A4 (the ``export`` extra and an installed Chromium);
``--tiles`` puts street tiles under its maps, fetched once now and kept in the file.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from propertykit import sandbox
from propertykit.client import Client, parse_ids
from propertykit.config import ENV_API_KEY, ENV_BASE_URL
from propertykit.errors import InvalidInput
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
    """The configured service, or a fresh local sandbox when asked or when none is configured."""
    configured = bool(os.environ.get(ENV_BASE_URL) and os.environ.get(ENV_API_KEY))
    if configured and not use_sandbox:
        with Client(**client_options) as client:  # type: ignore[arg-type]
            yield Service(client, client.base_url)
        return
    with sandbox.serve(seed=seed) as sb:
        client_options.setdefault("cache", False)
        with Client(sb.api_key, sb.url, **client_options) as client:  # type: ignore[arg-type]
            yield Service(client, f"the propertykit sandbox (seed {seed})", sb)


def fetch_frame(client: Client, ids_text: str) -> pd.DataFrame:
    """Look up pasted ids of either kind (location or ``<provider>::<id>``) as one frame."""
    parsed = parse_ids(ids_text)
    if parsed.invalid:
        problems = "; ".join(reason for _, reason in parsed.invalid[:3])
        raise InvalidInput(f"{len(parsed.invalid)} id(s) cannot be sent: {problems}")
    if not parsed.count:
        raise InvalidInput("No ids given")
    frames = []
    if parsed.location_ids:
        frames.append(client.properties(parsed.location_ids))
    if parsed.source_ids:
        frames.append(client.sources(parsed.source_ids))
    if len(frames) == 1:
        return frames[0]
    combined = pd.concat(frames, ignore_index=True)
    combined.attrs = frames[0].attrs
    return combined.drop_duplicates("propertyId", ignore_index=True)


def run(args: argparse.Namespace) -> int:
    if args.sample is not None and args.sample < 1:
        raise InvalidInput("--sample needs a positive number of properties")
    with open_service(use_sandbox=args.sandbox or args.sample is not None, seed=args.seed) as svc:
        if args.sample is not None:
            assert svc.sandbox is not None
            ids_text = "\n".join(svc.sandbox.location_ids[: args.sample])
        else:
            ids_text = "\n".join(args.ids)
        df = fetch_frame(svc.client, ids_text)
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
        print(f"Report: {path.resolve()} ({size_mb:.1f} MB, {len(df):,} properties)")
        print(f"Usage: {svc.client.usage}")
    return 0
