"""End to end: JupyterLab in headless Debian Chromium runs the quick start; the form fetches rows.

A JupyterLab server (127.0.0.1, a free port, a random token, a temporary root) serves a copy of
``notebooks/01-quickstart.ipynb``; Playwright drives ``/usr/bin/chromium`` (Playwright's own
browser download is not used): Run All Cells, type ids into the lookup form, press Fetch, and
the table rows appear. The notebook starts its own sandbox in the kernel; nothing leaves the
machine.

Needs ``playwright`` and ``jupyterlab`` (pip) and Debian's ``chromium``. Without them this test
skips with a reason saying how to enable it, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._browser import chromium, require_browser
from tests._system import free_port, require

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "01-quickstart.ipynb"
#: Upper bounds for things to happen (a failure past them, never a measured figure).
SERVER_START_LIMIT = 120.0
PAGE_LIMIT_MS = 180_000
IDS = ("L00000001", "L00000002", "L00000003")


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
        time.sleep(0.25)
    raise RuntimeError(f"JupyterLab did not answer in time:\n{log.read_text(errors='replace')}")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """A JupyterLab server over a temporary folder holding the quick start; its URL with token."""
    require_browser()
    require(
        importlib.util.find_spec("jupyterlab") is not None,
        "jupyterlab is not installed: pip install jupyterlab (or run `make lab` once)",
    )
    root = tmp_path / "lab"
    root.mkdir()
    shutil.copy(QUICKSTART, root / QUICKSTART.name)
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
        wait_until_serving(f"{base}/api/status?token={token}", process, log)
        yield f"{base}/lab/tree/{QUICKSTART.name}?token={token}"
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


def test_quickstart_in_jupyterlab_fetches_into_the_table(lab: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(PAGE_LIMIT_MS)
        page.goto(lab)
        page.locator(".jp-StatusBar-TextItem", has_text="| Idle").wait_for()  # kernel ready

        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        ids_box = page.locator("textarea[placeholder^='Location ids']")
        select_kernel = page.locator(".jp-Dialog button", has_text="Select")
        ids_box.or_(select_kernel).first.wait_for()
        if select_kernel.is_visible():  # JupyterLab may ask which kernel to start
            select_kernel.click()

        ids_box.fill(", ".join(IDS))
        ids_box.press("Tab")
        feedback = page.locator(".pk-info", has_text="3 ids (3 location, 0 source)")
        expect(feedback).to_be_visible(timeout=PAGE_LIMIT_MS)
        page.locator("button.jupyter-button", has_text="Fetch").click()

        rows = page.locator("table.propertykit-table tbody tr")
        expect(rows).to_have_count(len(IDS), timeout=PAGE_LIMIT_MS)
        for index, location_id in enumerate(IDS):
            expect(rows.nth(index)).to_contain_text(location_id)
        message = page.locator(".pk-ok", has_text="Fetched 3 properties")
        expect(message).to_be_visible(timeout=PAGE_LIMIT_MS)
