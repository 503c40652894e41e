"""``propertykit sandbox``: serve the local sandbox of the service until interrupted.

Prints the URL and a demo key (flushed, so a parent process can read them), then serves until
SIGINT or SIGTERM, and exits 0.
"""

from __future__ import annotations

import argparse
import signal
import threading
from types import FrameType

from propertykit.errors import ConfigError, InvalidInput

_FAULT_HELP = (
    "inject a fault: KIND[:COUNT][:status=N][:delay=S][:path=TEXT][:body=SHAPE]; KIND is error, "
    "reset, slow, truncate or reset_after_charge; SHAPE is object, string, text, html or empty "
    "(e.g. --fault error:3:status=502:body=html --fault slow:1:delay=5). Repeatable."
)


def parse_fault(text: str) -> dict[str, object]:
    """Read a ``--fault`` value into keyword arguments of ``Sandbox.inject_fault``.

    Examples
    --------
    >>> parse_fault("error:3:status=502")
    {'kind': 'error', 'count': 3, 'status': 502}
    """
    kind, *rest = text.split(":")
    fault: dict[str, object] = {"kind": kind}
    try:
        for position, part in enumerate(rest):
            name, sep, value = part.partition("=")
            if not sep and position == 0:
                fault["count"] = int(part)
            elif name == "status":
                fault["status"] = int(value)
            elif name == "delay":
                fault["delay"] = float(value)
            elif name in ("path", "body"):
                fault["path_contains" if name == "path" else "body"] = value
            else:
                raise InvalidInput(f"unknown part {part!r} in --fault {text!r}")
    except ValueError as exc:
        raise InvalidInput(f"cannot read --fault {text!r}: {exc}") from exc
    return fault


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``sandbox`` subcommand's options."""
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: any free port)")
    parser.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    parser.add_argument("--n-properties", type=int, default=5000, help="properties (default 5000)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each answer")
    parser.add_argument("--balance", type=int, default=1_000_000, help="starting credits")
    parser.add_argument("--daily-cap", type=int, default=100_000, help="credits per UTC day")
    parser.add_argument("--suggest-per-minute", type=int, default=30, help="suggest limit")
    parser.add_argument(
        "--delivery-delay", type=float, default=0.0, help="seconds before a bought deed arrives"
    )
    parser.add_argument(
        "--profile",
        choices=("spec", "vepler"),
        default="spec",
        help="answer as the service interface says (spec) or as Vepler documents it (vepler)",
    )
    parser.add_argument(
        "--realism",
        choices=("textbook", "real"),
        default="textbook",
        help="sale prices as the repeat-sales method assumes (textbook) or shaped like real "
        "sales: a known price per m2, quick resales that vary most, outliers (real)",
    )
    parser.add_argument(
        "--search-style",
        choices=("every-word", "ranked", "fuzzy", "display-only"),
        default=None,
        help="how search-suggest and the autocomplete answer (default: every word for suggest, "
        "ranked for the vepler autocomplete)",
    )
    parser.add_argument("--fault", action="append", default=[], metavar="SPEC", help=_FAULT_HELP)


def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT or SIGTERM; return 0."""
    from propertykit.sandbox import Sandbox

    faults = [parse_fault(text) for text in args.fault]
    try:
        sandbox = Sandbox(
            port=args.port,
            seed=args.seed,
            n_properties=args.n_properties,
            latency=args.latency,
            balance=args.balance,
            daily_cap=args.daily_cap,
            suggest_per_minute=args.suggest_per_minute,
            delivery_delay=args.delivery_delay,
            profile=args.profile,
            realism=args.realism,
            search_style=args.search_style,
        )
        for fault in faults:
            sandbox.inject_fault(**fault)  # type: ignore[arg-type]
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc

    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            sandbox.start()
        except OverflowError as exc:  # bind() refuses a port outside 0-65535 this way
            raise InvalidInput(f"--port must be 0-65535, got {args.port}") from exc
        except OSError as exc:
            raise ConfigError(f"cannot serve on port {args.port}: {exc.strerror}") from exc
        with sandbox:
            print(f"Sandbox of the property-data service at {sandbox.url}", flush=True)
            print(f"Profile: {sandbox.profile}", flush=True)
            if sandbox.search_style is not None:
                print(f"Address search: {sandbox.search_style}", flush=True)
            if sandbox.realism != "textbook":
                print(f"Prices: {sandbox.realism}-shaped sales", flush=True)
            print(f"API key: {sandbox.api_key}", flush=True)
            print(f"Key without title-deed access: {sandbox.restricted_key}", flush=True)
            print("Press Ctrl+C to stop.", flush=True)
            while not stop.wait(0.2):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0
