"""End to end: JupyterLab in headless Debian Chromium runs the quick start; the form fetches rows.

The session's JupyterLab server (:func:`tests.e2e.conftest.jupyter_lab`) serves a copy of
``notebooks/01-quickstart.ipynb``: Run All Cells, type ids into the lookup form, press Fetch, and
the table rows appear. The notebook starts its own sandbox in the kernel; nothing leaves the
machine.

Needs ``playwright`` and ``jupyterlab`` (pip) and Debian's ``chromium``. Without them this test
skips with a reason saying how to enable it, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import PAGE_LIMIT_MS, Lab, run_all_cells

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.timeout(900)

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "01-quickstart.ipynb"
IDS = ("L00000001", "L00000002", "L00000003")


def test_quickstart_in_jupyterlab_fetches_into_the_table(
    jupyter_lab: Lab, browser: Browser
) -> None:
    from playwright.sync_api import expect

    with browser.new_context(viewport={"width": 1400, "height": 1000}) as context:
        page = context.new_page()
        ids_box = page.locator("textarea[placeholder^='Location ids']")
        run_all_cells(page, jupyter_lab.open(QUICKSTART), ids_box)

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
