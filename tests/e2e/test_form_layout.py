"""The lookup form in JupyterLab at 1024 px (and 1366 px): nothing clipped, hints on screen.

A notebook of two cells (a sandbox and a client; the form) runs in JupyterLab under Playwright
and Debian's Chromium, with JupyterLab's own default layout (the file browser open beside the
notebook). At each width the test checks, by the boxes the browser drew:

- no input, list, button or input name is cut by a box around it, on either tab;
- the search placeholder and the Matches list are wide enough for their text: a match shows its
  address, postcode and id, on one line;
- the hints are on screen (not only in tooltips);
- the result table is the readable one, and an id in it never breaks over two lines.

``PROPERTYKIT_SCREENSHOTS=<folder>`` also saves what the form looked like, for a person to judge.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.conftest import PAGE_LIMIT_MS, Lab, run_all_cells

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

pytestmark = pytest.mark.timeout(900)

CELLS = (
    "import tempfile\n"
    "from pathlib import Path\n"
    "import propertykit as pk\n"
    "sb = pk.sandbox.Sandbox(n_properties=200).start()\n"
    "client = pk.Client(sb.api_key, sb.url, cache=Path(tempfile.mkdtemp()) / 'cache.sqlite',\n"
    "                   journal=Path(tempfile.mkdtemp()) / 'journal.jsonl', progress=False)\n"
    "postcode = sb.record(33)['address']['postcode']\n"
    "postcode",
    "form = pk.widgets.LookupForm(client)\nform",
)
WIDTHS = (1024, 1366)

#: Every visible input, list, button and input name inside ``root`` whose box sticks out of a box
#: around it (up to ``root``), or whose text is wider than its own box.
FIND_CUT = """
(root) => {
  const cut = [];
  const name = (el) => el.tagName.toLowerCase() + (el.className ? '.' +
      String(el.className).trim().split(/\\s+/).join('.') : '') +
      (el.placeholder ? `[${el.placeholder}]` : '') + ` "${(el.innerText || '').slice(0, 20)}"`;
  const inside = (a, b) => a.left >= b.left - 1 && a.right <= b.right + 1 &&
      a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  const shown = 'input, textarea, select, button, .widget-label, table.propertykit-table';
  for (const el of root.querySelectorAll(shown)) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;  // not shown (another tab, hidden)
    if (el.matches('.widget-label, button') && el.scrollWidth > el.clientWidth + 1) {
      cut.push(`${name(el)}: its text is cut`);
    }
    for (let up = el.parentElement; up && up !== root.parentElement; up = up.parentElement) {
      if (!inside(box, up.getBoundingClientRect())) {
        cut.push(`${name(el)} sticks out of ${name(up)}`);
        break;
      }
    }
  }
  return cut;
}
"""

#: How much wider than the room it has each text is (px; <= 0 means it fits).
OVERFLOW_OF_TEXT = """
(el, texts) => {
  const style = getComputedStyle(el);
  const context = document.createElement('canvas').getContext('2d');
  context.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return texts.map((text) => context.measureText(text).width - room);
}
"""

#: How many lines a table cell's text takes.
LINES_OF = """
(cell) => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  return new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top))).size;
}
"""


@pytest.fixture(scope="module")
def lab(jupyter_lab: Lab) -> str:
    """The form's notebook on the session's JupyterLab server: its URL."""
    import nbformat  # not at collection: it takes seconds to import

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in CELLS],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    path = jupyter_lab.root / "lookup-form.ipynb"
    nbformat.write(notebook, path)
    return jupyter_lab.open(path)


def screenshot(page: Page, form: Locator, name: str) -> None:
    """The window and the whole form (however tall), when PROPERTYKIT_SCREENSHOTS names a folder."""
    folder = os.environ.get("PROPERTYKIT_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))
        form.screenshot(path=str(Path(folder) / f"{name}-form.png"))


def cut_in(form: Locator) -> list[str]:
    problems: list[Any] = form.evaluate(FIND_CUT)
    return [str(problem) for problem in problems]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_lookup_form_reads_whole_at_ordinary_widths(
    lab: str, browser: Browser, width: int
) -> None:
    from playwright.sync_api import expect

    with browser.new_context(viewport={"width": width, "height": 900}) as context:
        page = context.new_page()
        ids_box = page.locator("textarea[placeholder^='Location ids']")
        run_all_cells(page, lab, ids_box)
        form = page.locator(".jp-OutputArea-output").filter(has=ids_box)
        postcode = page.locator(".jp-OutputArea-output").first.inner_text().strip().strip("'")
        news = page.locator(".jp-toast-button", has_text="No")  # JupyterLab's news question
        if news.count():
            news.first.click()

        # The Ids tab: nothing cut, hints on screen, the placeholder whole.
        screenshot(page, form, f"after-{width}-opened")
        for hint in ("every attribute", "one per line", "at least 3 letters"):
            expect(form.locator(".pk-hint", has_text=hint)).to_be_visible()
        assert (
            not form.locator(".jupyter-widget-Tab-panel, .lm-TabBar")
            .filter(has_text="Price trend")
            .is_visible()
        ), "result tabs are shown before any fetch"
        search = form.locator("input[placeholder^='Type an address']")
        [overflow] = search.evaluate(OVERFLOW_OF_TEXT, [search.get_attribute("placeholder")])
        assert overflow <= 0, f"the search placeholder is cut by {overflow:.0f} px"

        # Matches: a postcode typed, the list shows address, postcode and id, whole.
        search.fill(postcode)
        matches = form.locator("select").first
        expect(matches.locator("option").first).to_contain_text(postcode, timeout=PAGE_LIMIT_MS)
        labels = matches.locator("option").all_inner_texts()
        widths = matches.evaluate(OVERFLOW_OF_TEXT, labels)
        too_wide = {
            label: f"{px:.0f} px" for label, px in zip(labels, widths, strict=True) if px > 0
        }
        assert too_wide == {}, "matches cut at the right"
        assert cut_in(form) == []
        screenshot(page, form, f"after-{width}-ids")

        # Fetch: the readable table; an id on one line.
        assert matches.locator("option").first.inner_text().endswith("(L00000033)")
        matches.select_option(index=0)
        expect(ids_box).not_to_have_value("")
        form.locator("button", has_text="Fetch").click()
        expect(form.locator(".pk-ok", has_text="Fetched 1 property")).to_be_visible(
            timeout=PAGE_LIMIT_MS
        )
        table = form.locator("table.propertykit-table")
        expect(table.locator("tbody tr")).to_have_count(1)
        headings = table.locator("th").all_inner_texts()
        assert headings == ["Address", "Type", "Beds", "Estimated value", "EPC"]
        cells = table.locator("tbody td")
        for index in range(1, cells.count()):  # all but the address: one line each
            assert cells.nth(index).evaluate(LINES_OF) == 1, cells.nth(index).inner_text()
        location_id = table.locator(".pk-id").first
        expect(location_id).to_have_text("L00000033")
        assert location_id.evaluate(LINES_OF) == 1, "the id breaks over two lines"
        assert "£" in cells.nth(3).inner_text()
        assert cut_in(form) == []
        screenshot(page, form, f"after-{width}-fetched")

        # The Find tab: Area, Code, Min £, Max £, At most, Beds, Type, all whole.
        form.locator(".lm-TabBar-tab", has_text="Find").click()
        expect(form.locator("input[placeholder='SW1A 1AA']")).to_be_visible()
        expect(form.locator(".pk-hint", has_text="0 means no limit")).to_be_visible()
        assert cut_in(form) == []
        screenshot(page, form, f"after-{width}-find")
