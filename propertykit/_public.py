"""What ``dir()`` of a layer package shows: its ``__all__`` and its dunders, not its imports.

Each layer package ends with ``__dir__ = public_dir(globals())``, so ``dir(propertykit.frames)``
lists what the layer offers, not ``annotations`` or the private modules imported to build it.
Every name stays reachable as an attribute as before: only the listing changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def public_dir(namespace: Mapping[str, Any]) -> Callable[[], list[str]]:
    """A module's ``__dir__``: the names of its ``__all__`` and its dunders, sorted.

    Examples
    --------
    >>> namespace = {"__all__": ["frame"], "__doc__": "", "annotations": None, "frame": len}
    >>> public_dir(namespace)()
    ['__all__', '__doc__', 'frame']
    """

    def __dir__() -> list[str]:
        dunders = (name for name in namespace if name.startswith("__") and name.endswith("__"))
        return sorted({*namespace["__all__"], *dunders})

    return __dir__
