"""One JupyterLab server for every browser test here, and how to run a notebook's cells in it.

``jupyter_lab`` is started once per session (per pytest-xdist worker; the root ``conftest.py``
keeps its tests in one xdist group, so one server in all) and listens on 127.0.0.1 (a free
port, a random token) over a temporary root; ``jupyter_lab.open(notebook)`` copies a notebook
there and gives its URL. Its kernels run in the server's process group and stop with it.
Playwright drives Debian's ``/usr/bin/chromium`` (the session's ``browser``,
:mod:`tests._browser`); nothing leaves the machine.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests._browser import require_browser
from tests._system import free_port, require

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

#: Upper bounds for things to happen (a failure past them, never a measured figure).
SERVER_START_LIMIT = 120.0
PAGE_LIMIT_MS = 180_000


def wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_LIMIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited early:\n{log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"JupyterLab did not answer in time:\n{log.read_text(errors='replace')}")


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab server (see :func:`jupyter_lab`)."""

    base: str
    token: str
    root: Path

    def open(self, notebook: Path) -> str:
        """Copy ``notebook`` into the server's root; the URL that opens it (token included), in a
        workspace of its own: no tab another test left open comes back beside it.

        Its kernel starts now (a session for the notebook, through the server's REST API), as
        the page loads: JupyterLab opens the notebook on that session, as it does when a person
        reopens a notebook whose kernel is running."""
        if notebook.parent != self.root:
            shutil.copy(notebook, self.root / notebook.name)
        self.start_kernel(notebook.name)
        workspace = secrets.token_hex(4)
        return f"{self.base}/lab/workspaces/{workspace}/tree/{notebook.name}?token={self.token}"

    def start_kernel(self, name: str) -> None:
        """Start a Python kernel for the notebook ``name`` (``POST /api/sessions``); the server
        answers once the kernel process is started, not yet ready."""
        session = {"path": name, "name": name, "type": "notebook", "kernel": {"name": "python3"}}
        request = urllib.request.Request(
            f"{self.base}/api/sessions",
            data=json.dumps(session).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=SERVER_START_LIMIT) as answer:
            assert answer.status == 201, f"no session for {name}: HTTP {answer.status}"


@pytest.fixture(scope="package")
def jupyter_lab(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Lab]:
    """One JupyterLab server for the end-to-end tests (one pytest-xdist group: they run
    together), stopped after them: ``.open(notebook)`` gives a notebook's URL. The session's
    browser starts while the server does (every test here drives it)."""
    with serve_lab(
        tmp_path_factory.mktemp("jupyterlab"), meanwhile=lambda: request.getfixturevalue("browser")
    ) as lab:
        yield lab


@contextlib.contextmanager
def serve_lab(tmp_path: Path, meanwhile: Callable[[], object] = lambda: None) -> Iterator[Lab]:
    """A JupyterLab server over an empty folder in ``tmp_path``; ``meanwhile()`` runs while the
    server starts, before it answers."""
    require_browser()
    require(
        importlib.util.find_spec("jupyterlab") is not None,
        "jupyterlab is not installed: pip install jupyterlab (or run `make lab` once)",
    )
    root = tmp_path / "lab"
    root.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PROPERTYKIT_API_KEY", "PROPERTYKIT_BASE_URL", "PROPERTYKIT_OFFLINE")
    }
    env.update(
        PROPERTYKIT_CACHE_DIR=str(tmp_path / "cache"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
        IPYTHONDIR=str(tmp_path / "ipython"),
    )
    # JupyterLab's page asks the server, on every load, whether the lab needs building (a
    # check of every extension's package files: 10 s and more of the server's CPU at each
    # start); the lab here is installed, never built: no build check, no build button.
    labconfig = tmp_path / "config" / "labconfig"
    labconfig.mkdir(parents=True)
    (labconfig / "page_config.json").write_text(
        json.dumps({"buildAvailable": False, "buildCheck": False})
    )
    port, token = free_port(), secrets.token_hex(16)
    log = tmp_path / "jupyterlab.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={root}",
                "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.extension_manager=readonly",
                *(["--allow-root"] if os.geteuid() == 0 else []),
            ],
            cwd=root,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its kernels too: stopped together below
        )
    base = f"http://127.0.0.1:{port}"
    try:
        meanwhile()
        wait_until_serving(f"{base}/api/status?token={token}", process, log)
        yield Lab(base, token, root)
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server and its kernels (the process group started for it)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def run_all_cells(page: Page, lab_url: str, ready: Locator) -> None:
    """Open the notebook, wait for its kernel, run every cell, and wait for ``ready``."""
    open_notebook(page, lab_url)
    run_cells(page, ready)


def notebook_of(lab: Lab, name: str, cells: tuple[str, ...]) -> str:
    """A notebook of these code cells written on the server's root as ``name``: its URL."""
    import nbformat  # not at collection: it takes seconds to import

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    path = lab.root / name
    nbformat.write(notebook, path)
    return lab.open(path)


def open_notebook(page: Page, lab_url: str) -> None:
    """Open the notebook at ``lab_url`` in ``page`` and wait until its kernel is idle."""
    page.set_default_timeout(PAGE_LIMIT_MS)
    page.goto(lab_url)
    page.locator(".jp-StatusBar-TextItem", has_text="| Idle").wait_for()  # kernel ready


def run_cells(page: Page, ready: Locator) -> None:
    """Run every cell of the open notebook (Run, Run All Cells) and wait for ``ready``."""
    page.locator(".lm-MenuBar-item", has_text="Run").first.click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    select_kernel = page.locator(".jp-Dialog button", has_text="Select")
    ready.or_(select_kernel).first.wait_for()
    if select_kernel.is_visible():  # JupyterLab may ask which kernel to start
        select_kernel.click()
    ready.wait_for()


def decline_news(page: Page) -> None:
    """Answer JupyterLab's question about its news (a toast over the notebook) with No."""
    news = page.locator(".jp-toast-button", has_text="No")
    if news.count():
        news.first.click()


def clear_outputs(page: Page, shown: Locator) -> None:
    """Clear every cell's output (Edit, Clear Outputs of All Cells); wait until ``shown`` is
    gone from the page, so that running the cells again draws everything anew."""
    page.locator(".lm-MenuBar-item", has_text="Edit").first.click()
    page.get_by_role("menuitem", name="Clear Outputs of All Cells", exact=True).click()
    shown.first.wait_for(state="detached")
