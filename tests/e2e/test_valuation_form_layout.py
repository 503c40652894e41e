"""The valuation form in JupyterLab as a person sees it: at 1024 px beside the file browser (about
590 px of output), a home valued from its neighbourhood.

A notebook of two cells (a sandbox and a client; the form) runs in JupyterLab under Playwright
and Debian's Chromium. The test measures the boxes the browser drew: nothing cut, the outcome on
screen, the schedule single-spaced with short headings and right-aligned numbers, whole within
590 px (no sideways scrolling: every column of the arithmetic in view); then a refused date
clears the results. Screenshots are
kept under pytest's temporary folder (``screenshots/``) for a person to judge.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import (
    PAGE_LIMIT_MS,
    Lab,
    decline_news,
    notebook_of,
    open_notebook,
    run_cells,
)
from tests.e2e.test_form_layout import (
    Shots,
    assert_on_screen,
    box_of,
    cut_in,
    set_file_browser,
    show_tab,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.timeout(600)

CELLS = (
    "import tempfile\n"
    "from pathlib import Path\n"
    "import propertykit as pk\n"
    "sb = pk.sandbox.Sandbox().start()\n"
    "client = pk.Client(sb.api_key, sb.url, cache=Path(tempfile.mkdtemp()) / 'cache.sqlite',\n"
    "                   progress=False)",
    "form = pk.widgets.ValuationForm(client, radius_m=3000)\nform",
)
#: How the schedule's cells are set: alignment, line height and lines, per cell.
CELLS_JS = """
(table) => Array.from(table.querySelectorAll('th, td')).map((cell) => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size;
  const style = getComputedStyle(cell);
  return {text: cell.innerText, heading: cell.tagName === 'TH',
          number: cell.classList.contains('n'), align: style.textAlign,
          line: parseFloat(style.lineHeight), lines};
})
"""


@pytest.fixture(scope="module")
def lab(jupyter_lab: Lab) -> str:
    """The form's notebook on the session's JupyterLab server: its URL."""
    return notebook_of(jupyter_lab, "valuation-form.ipynb", CELLS)


@pytest.fixture(scope="module")
def notebook(lab: str, browser: Browser) -> Iterator[Page]:
    with browser.new_context(viewport={"width": 1024, "height": 768}) as context:
        page = context.new_page()
        open_notebook(page, lab)
        yield page


def test_the_valuation_form_reads_whole_at_590_px(
    notebook: Page, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from playwright.sync_api import expect

    page = notebook
    folder: Path = tmp_path_factory.mktemp("screenshots")
    print(f"screenshots of the valuation form: {folder}")
    subject = page.locator("input[placeholder^='L00000042']")
    run_cells(page, subject)
    decline_news(page)
    set_file_browser(page, True)
    form = page.locator(".jp-OutputArea-output").filter(has=subject)
    shot = Shots(folder, "1024-browser-open", page)
    output_width = box_of(form)["width"]
    assert 540 <= output_width <= 660, f"the output area is {output_width:.0f} px"
    assert cut_in(form) == []
    shot("opened")

    subject.fill("L00000067")
    form.locator("input[placeholder='YYYY-MM-DD']").fill("2025-06-01")
    form.locator("button", has_text="Value").click()
    outcome = form.locator(".pk-ok, .pk-warn", has_text="comparable sales")
    expect(outcome).to_be_visible(timeout=PAGE_LIMIT_MS)
    assert_on_screen(outcome, "the outcome of Value")
    assert box_of(outcome)["lineHeight"] <= 22, "messages are double-spaced"
    table = form.locator("table.comparables")
    expect(table).to_be_visible()
    table.scroll_into_view_if_needed()
    shot("valued")
    cells = table.evaluate(CELLS_JS)
    headings = [cell for cell in cells if cell["heading"]]
    assert all(cell["lines"] <= 2 for cell in headings), [c["text"] for c in headings]
    assert all(cell["line"] <= 20 for cell in cells), "the schedule is not single-spaced"
    numbers = [cell for cell in cells if cell["number"] and not cell["heading"]]
    assert numbers and all(cell["align"] == "right" for cell in numbers)
    assert all(cell["lines"] == 1 for cell in numbers), "a number breaks over two lines"
    panel = box_of(form.locator(".widget-tab-contents").last)
    scroll = box_of(form.locator(".pk-scroll").first)
    assert scroll["right"] <= panel["right"] + 1, "the schedule sticks out of its panel"
    wide = form.locator(".pk-scroll").first.evaluate("(box) => box.scrollWidth - box.clientWidth")
    assert wide <= 1, f"at 590 px the schedule needs {wide} px of sideways scrolling"
    text = form.inner_text()
    assert "This valuation (comparable sales)" in text and "own current estimate" in text
    assert "estimatedSaleValue" not in text  # a code word, out of the user's sight
    assert "£/sq ft" not in text and "GBP" not in text
    assert cut_in(form) == []
    show_tab(form, "Map")
    form.locator(".js-plotly-plot:visible .main-svg").first.wait_for(state="visible")
    shot("map")

    # A refused date: nothing sent, and the earlier results are not left on screen as if current.
    show_tab(form, "Comparables")
    form.locator("input[placeholder='YYYY-MM-DD']").fill("2025-13-45")
    form.locator("button", has_text="Value").click()
    refused = form.locator(".pk-error", has_text="Nothing was sent")
    expect(refused).to_be_visible()
    expect(table).to_be_hidden()
    assert_on_screen(refused, "the refusal")
    shot("refused")
