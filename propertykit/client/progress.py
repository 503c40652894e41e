"""Progress bars on multi-request work: tqdm.auto, shown in notebooks and terminals by default."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar"]


def progress_bar(total: int, what: str, *, show: bool | None) -> Any:
    """A tqdm bar counting ``total`` requests; hidden when ``show`` is false or ``total < 2``.

    ``show=None`` shows it in a notebook kernel or when stderr is a terminal.

    Examples
    --------
    >>> with progress_bar(3, "properties", show=False) as bar:
    ...     bar.update(3)
    >>> bar.disable
    True
    """
    from tqdm.auto import tqdm

    shown = show if show is not None else _interactive()
    return tqdm(total=total, desc=what, unit="request", disable=not shown or total < 2)


def _interactive() -> bool:
    if "ipykernel" in sys.modules:
        return True
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())
