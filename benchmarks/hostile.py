"""What a misbehaving service costs: requests paid, seconds and memory, before and after.

Each case starts one hostile server of ``tests/hostile/_servers.py`` on 127.0.0.1 and makes one
client call against it, in a fresh child process (so memory is that call's alone: the growth of
the child's peak RSS) with a wall limit (a hang shows as ``hung >N s``). The table has a column
per propertykit checkout: this one, and with ``--before DIR`` another (e.g. main, from
``git worktree add /tmp/pk-before main``), run side by side in the same run.

The ``tiles_*`` cases do the same for a tile server (``tests/views/tile_server.py``, one mode
each): ``write_report(df, "r.html", tiles=URL)`` of 100 properties, and ``tiles_none`` the same
report without tiles, the baseline their memory is compared with. They get at least
``--tile-limit`` seconds (a map's tiles have 30).

    python benchmarks/hostile.py [--before /tmp/pk-before] [--limit 20] [--case NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# -- the cases (run in the child) ---------------------------------------------------------


def _servers() -> Any:
    from tests.hostile import _servers

    return _servers


def _pages(make_page: Callable[[int, int], dict[str, Any]], give_up: int = 60) -> Any:
    """A sources server whose pages come from ``make_page``; ends paging after ``give_up``."""
    s = _servers()

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Any]) -> None:
        body = make_page(s.offset_of(handler.path), len(seen))
        if len(seen) > give_up:
            body = s.envelope([], hasMore=False)
        s.send(handler, 200, body)

    return behaviour


Case = tuple[Callable[[BaseHTTPRequestHandler, list[Any]], None], Callable[[Any], Any]]
"""A case: the server's behaviour, and the call (given a client factory bound to the server)."""


def case_has_more_forever(s: Any) -> Case:
    def page(offset: int, n: int) -> dict[str, Any]:
        return s.envelope(s.records(offset, 2), totalSize=3, hasMore=True, nextOffset=offset + 2)

    return _pages(page), lambda client: client().sources(["z::1", "z::2", "z::3"], page_size=2)


def case_offset_repeats(s: Any) -> Case:
    def page(offset: int, n: int) -> dict[str, Any]:
        return s.envelope(s.records(offset, 1), totalSize=9, hasMore=True, nextOffset=offset)

    return _pages(page), lambda client: client().sources(["z::1", "z::2"], page_size=1)


def case_empty_pages(s: Any) -> Case:
    def page(offset: int, n: int) -> dict[str, Any]:
        return s.envelope([], hasMore=True, nextOffset=offset + 5)

    return _pages(page), lambda client: client().sources(["z::1", "z::2"])


def case_html_200(s: Any) -> Case:
    html = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    return (lambda h, seen: s.send(h, 200, html)), lambda client: client().properties(["L1"])


def case_success_false(s: Any) -> Case:
    body = {"success": False, "error": "maintenance"}
    return (lambda h, seen: s.send(h, 200, body)), lambda client: client().properties(["L1"])


def case_trickle(s: Any) -> Case:
    body = json.dumps(s.envelope(s.records(0, 2))).encode()
    return (lambda h, seen: s.trickle(h, body, every=0.5)), lambda client: client(
        timeout=1, deadline=5
    ).properties(["L1"])


def case_gzip_bomb(s: Any) -> Case:
    bomb = s.gzip_bomb(2048)

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Any]) -> None:
        s.send(handler, 200, bomb, headers={"Content-Encoding": "gzip"})

    return behaviour, lambda client: client().properties(["L1"])


def case_retry_after_1e12(s: Any) -> Case:
    body = {"success": False, "error": {"code": "rate_limit_exceeded", "message": "slow"}}

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Any]) -> None:
        s.send(handler, 429, body, headers={"Retry-After": "1000000000000"})

    return behaviour, lambda client: client().properties(["L1"])


def case_buy_again_dropped_post(s: Any) -> Case:
    earlier = {"idempotencyKey": "earlier-purchase-key", "status": "delivered"}
    status = {"result": {"money_state": "charged", "status": "delivered", "purchases": [earlier]}}

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Any]) -> None:
        if handler.command == "POST":
            s.reset(handler)
        else:
            s.send(handler, 200, status)

    def call(client: Any) -> str:
        purchase = client().buy_title_deed("NGL1", buy_again=True)
        return f"{purchase.status}/{purchase.money_state}"

    return behaviour, call


def case_dot_dot_title(s: Any) -> Case:
    ok = {"success": True, "result": {"status": "delivered"}}
    return (lambda h, seen: s.send(h, 200, ok)), lambda client: client().buy_title_deed(
        "..", buy_again=True
    )


def case_nan_payload(s: Any) -> Case:
    status = {"result": {"money_state": "not_charged"}}
    return (lambda h, seen: s.send(h, 200, status)), lambda client: client().buy_title_deed(
        "NGL1", price=math.nan
    )


CASES: dict[str, tuple[str, Callable[..., Any]]] = {
    "has_more_forever": ("hasMore for ever, offsets past totalSize", case_has_more_forever),
    "offset_repeats": ("nextOffset repeats", case_offset_repeats),
    "empty_pages": ("empty pages while hasMore", case_empty_pages),
    "html_200": ("200 with an HTML page", case_html_200),
    "success_false": ("200 with success: false", case_success_false),
    "trickle": ("1 byte / 0.5 s body, timeout=1", case_trickle),
    "gzip_bomb": ("gzip bomb, 2 MB -> 2 GiB", case_gzip_bomb),
    "retry_after_1e12": ("429 Retry-After: 1e12", case_retry_after_1e12),
    "buy_again_dropped": ("buy_again, POST dropped", case_buy_again_dropped_post),
    "dot_dot_title": ('buy_title_deed("..")', case_dot_dot_title),
    "nan_payload": ("purchase payload with NaN", case_nan_payload),
}


#: Tile cases: the tile server's mode (``None``: a report without tiles).
TILE_CASES: dict[str, tuple[str, str | None]] = {
    "tiles_none": ("report without tiles (baseline)", None),
    "tiles_honest": ("report, honest tile server", "tiles"),
    "tiles_bomb": ("report, 16,000 x 16,000 PNG bomb", "bomb"),
    "tiles_huge": ("report, 200 MB tile", "huge"),
    "tiles_html_as_png": ("report, HTML sent as image/png", "html_as_png"),
    "tiles_trickle": ("report, tile at 1 byte / 0.5 s", "trickle"),
    "tiles_redirect": ("report, redirect to another host", "redirect"),
    "tiles_error": ("report, 500 for every tile", "error"),
}


def run_tile_case(name: str) -> dict[str, Any]:
    """In the child (the checkout already on the path): one report against a tile server."""
    import os
    import warnings

    tmp = Path(tempfile.mkdtemp())
    os.environ["PROPERTYKIT_CACHE_DIR"] = str(tmp / "cache")
    import propertykit as pk
    from propertykit.sandbox import generate_records
    from propertykit.views import write_report
    from tests.views.tile_server import TileServer

    df = pk.frame(generate_records(100))
    mode = TILE_CASES[name][1]
    with TileServer() as server:
        server.mode = mode or "tiles"
        server.redirect_to = "http://localhost:9"
        tiles = server.template if mode else None
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                write_report(df, tmp / "r.html", tiles=tiles, attribution="")
                outcome = f"written, {len(caught)} warnings"
            except Exception as exc:
                outcome = type(exc).__name__
        seconds = time.perf_counter() - started
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "outcome": outcome,
        "requests": len(server.requests),
        "seconds": seconds,
        "mb": (rss_after - rss_before) / 1024,
    }


def run_case(name: str, checkout: str | None) -> dict[str, Any]:
    """In the child: one case against ``checkout``'s propertykit (``None``: this one)."""
    if checkout:  # the checkout's package, not the one installed in editable mode
        sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in f.__module__]
        sys.path.insert(0, checkout)
    sys.path.append(str(ROOT))  # the servers of tests/hostile
    if name in TILE_CASES:
        return run_tile_case(name)
    import inspect

    import propertykit as pk

    s = _servers()
    accepted = inspect.signature(pk.Client).parameters
    tmp = Path(tempfile.mkdtemp())

    def client(server: Any, **options: Any) -> Any:
        options = {k: v for k, v in options.items() if k in accepted}  # "before" lacks some
        return pk.Client(
            s.KEY,
            server.url,
            cache=tmp / "cache.sqlite",
            journal=tmp / "deeds.jsonl",
            progress=False,
            **options,
        )

    behaviour, call = CASES[name][1](s)
    with s.hostile(behaviour) as server:
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        try:
            outcome = _describe(call(lambda **options: client(server, **options)))
        except Exception as exc:
            outcome = type(exc).__name__
        seconds = time.perf_counter() - started
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    posts = server.paths("POST")
    if posts and name == "dot_dot_title":
        outcome += f" (POST {posts[0]})"
    return {
        "outcome": outcome,
        "requests": len(server.requests),
        "seconds": seconds,
        "mb": (rss_after - rss_before) / 1024,
    }


def _describe(result: Any) -> str:
    if hasattr(result, "shape"):
        return f"returned {len(result)} rows"
    if hasattr(result, "money_state"):
        return f"returned {result.status}/{result.money_state}"
    return f"returned {result}"


# -- the parent: each case in a child, per checkout ---------------------------------------


def measure(name: str, checkout: str | None, limit: float) -> str:
    command = [sys.executable, __file__, "--child", name]
    if checkout:
        command += ["--checkout", checkout]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return f"hung >{limit:g} s"
    if done.returncode != 0 or not done.stdout.strip():
        return "crashed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:60]
    r = json.loads(done.stdout.strip().splitlines()[-1])
    return f"{r['outcome']}; {r['requests']} req, {r['seconds']:.1f} s, +{r['mb']:.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="another propertykit checkout to compare with")
    parser.add_argument("--limit", type=float, default=20.0, help="wall limit per case (s)")
    parser.add_argument(
        "--tile-limit", type=float, default=120.0, help="wall limit per tile case (s)"
    )
    parser.add_argument("--case", action="append", choices=sorted([*CASES, *TILE_CASES]))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--checkout", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_case(args.child, args.checkout)))
        return
    names = args.case or [*CASES, *TILE_CASES]
    rows = []
    for name in names:
        label = CASES[name][0] if name in CASES else TILE_CASES[name][0]
        limit = args.limit if name in CASES else max(args.limit, args.tile_limit)
        before = measure(name, args.before, limit) if args.before else None
        after = measure(name, None, limit)
        rows.append((label, before, after))
        print(f"{label:<42} | {before or '':<52} | {after}", flush=True)
    print()
    print("| hostile server | before | now |")
    print("|---|---|---|")
    for label, before, after in rows:
        print(f"| {label} | {before or '-'} | {after} |")


if __name__ == "__main__":
    main()
