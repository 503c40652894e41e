"""What the commands share: the service they fetch from (never falling back to the sandbox
unasked), pasted ids fetched as one frame, the sandbox's first ids, and ids that returned nothing.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import pandas as pd

from propertykit import sandbox
from propertykit.client import Client, parse_ids
from propertykit.errors import ConfigError, InvalidInput, MissingIdsWarning
from propertykit.text import plural, visible


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


#: Metres about a home its evidence is fetched from, as the ValuationForm's: at 5 km the
#: sandbox's first 60 homes get 27 estimates (2 km: 0; 8 km: 28).
DEFAULT_RADIUS_M = 5000.0


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
