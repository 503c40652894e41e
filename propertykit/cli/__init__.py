"""cli — the ``propertykit`` command: demo, sandbox, report, portfolio, cache, deeds.

:mod:`~propertykit.cli._dispatch` builds the parser and runs a subcommand; each subcommand is one
module here with ``configure(parser)`` and ``run(args) -> int``, imported only when used.

May import: every layer below (client, deeds, frames, views, wire) and core, through their
packages' public names; the sandbox.
"""

from __future__ import annotations

from propertykit._public import public_dir
from propertykit.cli._dispatch import main

__all__ = ["main"]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
