"""Progress bars on multi-request work: tqdm.auto, shown in notebooks and terminals by default."""

from __future__ import annotations

import sys
from typing import Any


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
    shown = show if show is not None else _interactive()
    if not shown or total < 2:
        return _Hidden()  # no tqdm to import and no monitor thread to start for a hidden bar
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=what, unit="request")


class _Hidden:
    """A bar that shows nothing (what tqdm does with ``disable=True``, without its cost)."""

    disable = True

    def update(self, n: int = 1) -> None:
        """Nothing to show."""

    def __enter__(self) -> _Hidden:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None


def _interactive() -> bool:
    if _in_a_kernel():
        return True
    stream = sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())


def _in_a_kernel() -> bool:
    """Whether this process is a running Jupyter kernel: its IPython shell has a kernel (having
    imported ipykernel is not enough: jupyter_client does, to find the Python kernel)."""
    if "ipykernel" not in sys.modules or "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None
