"""End to end: JupyterLab in headless Debian Chromium runs the quick start; the form fetches rows.

A JupyterLab server (:func:`tests.e2e.conftest.serve_lab`) serves a copy of
``notebooks/01-quickstart.ipynb``: Run All Cells, type ids into the lookup form, press Fetch, and
the table rows appear. The notebook starts its own sandbox in the kernel; nothing leaves the
machine.

Needs ``playwright`` and ``jupyterlab`` (pip) and Debian's ``chromium``. Without them this test
skips with a reason saying how to enable it, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._browser import chromium
from tests.e2e.conftest import PAGE_LIMIT_MS, run_all_cells, serve_lab

pytestmark = pytest.mark.timeout(900)

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "01-quickstart.ipynb"
IDS = ("L00000001", "L00000002", "L00000003")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    with serve_lab(QUICKSTART, tmp_path) as url:
        yield url


def test_quickstart_in_jupyterlab_fetches_into_the_table(lab: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        ids_box = page.locator("textarea[placeholder^='Location ids']")
        run_all_cells(page, lab, ids_box)

        ids_box.fill(", ".join(IDS))
        ids_box.press("Tab")
        feedback = page.locator(".pk-info", has_text="3 ids: 3 location ids.")
        expect(feedback).to_be_visible(timeout=PAGE_LIMIT_MS)
        page.locator("button.jupyter-button", has_text="Fetch").click()

        rows = page.locator("table.propertykit-table tbody tr")
        expect(rows).to_have_count(len(IDS), timeout=PAGE_LIMIT_MS)
        for index, location_id in enumerate(IDS):
            expect(rows.nth(index)).to_contain_text(location_id)
        message = page.locator(".pk-ok", has_text="Fetched 3 properties")
        expect(message).to_be_visible(timeout=PAGE_LIMIT_MS)
