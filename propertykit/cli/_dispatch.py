"""The ``propertykit`` command: demo, sandbox, report, portfolio, cache, deeds.

Each subcommand lives in ``propertykit/cli/<name>.py`` and provides ``configure(parser)``
and ``run(args) -> int``; this module only dispatches, importing a command when it is used.
What a command says about failures (its error line, warnings, an unexpected traceback) reaches
the terminal through :func:`propertykit.text.visible`: text from outside is shown, never obeyed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import traceback
import warnings
from collections.abc import Iterator, Sequence
from importlib import import_module

from propertykit.config import VERSION
from propertykit.errors import PropertyKitError
from propertykit.text import visible

#: subcommand -> one-line help
COMMANDS = {
    "demo": "run the main job against the bundled sandbox",
    "sandbox": "serve the local sandbox of the service",
    "report": "build a self-contained HTML or PDF report",
    "portfolio": "match an address list, fetch and value the properties, write a workbook",
    "cache": "inspect or clear the HTTP cache",
    "deeds": "show the title-deed purchase journal",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="propertykit", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"propertykit {VERSION}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, summary in COMMANDS.items():
        try:
            module = import_module(f"propertykit.cli._{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"propertykit.cli.{name}":
                raise
            continue
        sub = subparsers.add_parser(name, help=summary, description=summary)
        module.configure(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``propertykit`` command (and ``python -m propertykit``).

    A propertykit error ends the command with one line on stderr, ``propertykit: error: ...``,
    and exit status 1. Warnings and any other error's traceback are shown as Python shows them,
    with control characters spelled out.
    """
    args = build_parser().parse_args(argv)
    try:
        with _visible_warnings():
            return int(args._run(args))
    except PropertyKitError as exc:
        # One line, no traceback: what went wrong, in the error's own words.
        text = " ".join(visible(exc).split()) or type(exc).__name__
        print(f"propertykit: error: {args.command}: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception:
        print(visible(traceback.format_exc(), keep_newlines=True), end="", file=sys.stderr)
        return 1


@contextlib.contextmanager
def _visible_warnings() -> Iterator[None]:
    """Warnings shown (not those recorded or turned into errors) with controls spelled out."""
    formatted = warnings.formatwarning

    def format_visibly(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        line: str | None = None,
    ) -> str:
        text = formatted(message, category, filename, lineno, line)
        return visible(text, keep_newlines=True)

    warnings.formatwarning = format_visibly
    try:
        yield
    finally:
        warnings.formatwarning = formatted


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
