"""``python -m propertykit``: the same as the ``propertykit`` command."""

from __future__ import annotations

import sys

from propertykit.cli import main

if __name__ == "__main__":  # pragma: no cover - run as a program
    sys.exit(main())
