"""``propertykit cache info|clear``: inspect or empty the HTTP cache.

The cache is the SQLite file ``http_cache.sqlite`` in ``PROPERTYKIT_CACHE_DIR`` (else the user
cache directory), or the file given with ``--path``. No API key is needed: the cache holds none.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from propertykit.config import cache_dir
from propertykit.errors import CacheUnavailable
from propertykit.wire import (
    CACHE_FILE_NAME,
    clear_derived,
    describe_cache,
    open_cache_file,
    remove_cache_file,
    tile_cache_info,
)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``info`` and ``clear`` actions."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, summary in (
        ("info", "entries, size, oldest and newest answer, and where the cache is"),
        ("clear", "delete every cached answer (the next lookups are paid for again)"),
    ):
        action = actions.add_parser(name, help=summary, description=summary)
        action.add_argument(
            "--path",
            metavar="FILE",
            help=f"cache file (default: {CACHE_FILE_NAME} in PROPERTYKIT_CACHE_DIR)",
        )


def run(args: argparse.Namespace) -> int:
    """Print the cache's description, or clear it; returns 0. Either way, say where the street
    tiles are kept (a cache of their own, free to fetch again: ``clear`` leaves them)."""
    code = _run(args)
    tiles = None if args.path else tile_cache_info()
    if tiles is not None:
        count, size, where = tiles["entries"], tiles["size_bytes"] or 0, tiles["path"]
        print(
            f"street tiles: {count} tile{'s' if count != 1 else ''}, {size / 1_000_000:.2f} MB in "
            f"{where} (not property data, free to fetch again; delete the file to drop them)"
        )
    return code


def _run(args: argparse.Namespace) -> int:
    path = Path(args.path).expanduser() if args.path else cache_dir() / CACHE_FILE_NAME
    if not path.exists():
        print(f"No cache at {path}")
        return 0
    try:
        cache = open_cache_file(path)
    except CacheUnavailable:
        if args.action != "clear":
            raise
        for removed in remove_cache_file(path):  # asked for: a file that cannot be read goes
            print(f"Removed {removed}, which could not be read as a cache")
        return 0
    try:
        if args.action == "clear":
            entries = len(cache.responses)
            clear_derived(cache)  # the bodies kept as read, beside the answers
            cache.clear()  # type: ignore[no-untyped-call]
            print(f"Removed {entries} cached answer{'s' if entries != 1 else ''} from {path}")
            return 0
        info = describe_cache(cache)
    finally:
        cache.close()  # type: ignore[no-untyped-call]
    size = info["size_bytes"] or 0
    print(f"path: {info['path']}")
    print(f"entries: {info['entries']}")
    print(f"size: {size / 1_000_000:.2f} MB ({size} bytes)")
    for when in ("oldest", "newest"):
        moment = info[when]
        print(f"{when}: {moment.isoformat(timespec='seconds') if moment else '-'}")
    return 0
