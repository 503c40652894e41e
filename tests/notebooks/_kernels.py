"""Kernels for the notebooks, each started before its notebook is run.

A notebook runs top to bottom in a kernel of its own, a new Python process, as in a person's
JupyterLab; starting one (Python, ipykernel) takes a second or two before the first cell. The
:class:`KernelPool` starts the next notebook's kernel while the current one runs, so that wait
overlaps the run before it. Each kernel has its own empty folder: its working directory, and
``PROPERTYKIT_CACHE_DIR`` inside it, with no service set (the notebooks start a sandbox).

Only nbclient's public API: a ``NotebookClient`` is made for a kernel, its kernel started
(``create_kernel_manager``, ``start_new_kernel``), and given the notebook to run later
(``execute`` uses a kernel that is already started, and shuts it down after the last cell).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import nbformat
    from nbclient import NotebookClient

#: What sets the service; none of them reaches a kernel (the notebooks use the sandbox).
SERVICE_VARIABLES = (
    "PROPERTYKIT_API_KEY",
    "PROPERTYKIT_BASE_URL",
    "PROPERTYKIT_PROFILE",
    "VEPLER_API_KEY",
    "PROPERTYKIT_OFFLINE",
)
#: Seconds one cell may take before the run fails (the slowest takes a few seconds).
CELL_TIMEOUT = 180


@dataclass
class Started:
    """A kernel started in ``folder`` (its working directory; its cache in ``folder/cache``)."""

    client: NotebookClient
    folder: Path


class KernelPool:
    """Kernels for ``runs`` notebooks: one started ahead of the notebook that takes it."""

    def __init__(self, new_folder: Callable[[], Path], runs: int) -> None:
        self.new_folder, self.left = new_folder, runs
        self.ready: Started | None = None

    def start(self) -> Started:
        """A kernel for one notebook, started now (not waited for)."""
        import nbformat
        from nbclient import NotebookClient

        folder = self.new_folder()
        environment = {k: v for k, v in os.environ.items() if k not in SERVICE_VARIABLES}
        environment.update(PROPERTYKIT_CACHE_DIR=str(folder / "cache"), MPLBACKEND="Agg")
        client = NotebookClient(
            nbformat.v4.new_notebook(),
            timeout=CELL_TIMEOUT,
            kernel_name="python3",
            resources={"metadata": {"path": str(folder)}},
        )
        client.km = client.create_kernel_manager()
        client.start_new_kernel(cwd=str(folder), env=environment)
        return Started(client, folder)

    def run(self, notebook: nbformat.NotebookNode) -> Path:
        """Run ``notebook`` top to bottom in a kernel of its own (its outputs filled in place);
        the kernel's folder. The next notebook's kernel starts before this one runs."""
        taken = self.ready or self.start()
        self.left -= 1
        self.ready = self.start() if self.left > 0 else None
        taken.client.nb = notebook
        taken.client.execute()  # waits for the kernel; shuts it down after the last cell
        return taken.folder

    def close(self) -> None:
        """Stop a kernel started for a notebook that never ran (a run stopped early)."""
        import nbformat

        if self.ready is not None:
            self.ready.client.nb = nbformat.v4.new_notebook()
            self.ready.client.execute()  # nothing to run: waits for it, then shuts it down
            self.ready = None
