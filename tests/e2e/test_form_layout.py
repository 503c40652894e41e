"""The lookup form in JupyterLab as a person sees it: at 1024 px beside the file browser (about
590 px of output), at 1024 px without it, and at 1366 px.

A notebook of two cells (a sandbox and a client; the form) runs in JupyterLab under Playwright
and Debian's Chromium. At each size the test measures the boxes the browser drew:

- no input, list, button or input name is cut by a box around it, on either tab; the lists are
  as wide as their options need, not stretched across the form;
- the search placeholder and every match (address, postcode, id) are whole; hints are on screen;
- after Fetch, its outcome is on screen beside the ids, without scrolling (never below the fold);
  a refused id is quoted in that outcome; the Ids tab's message is not shown under Find;
- each chart fills the output area's width, its title is whole (inside the chart) and clear of
  plotly's toolbar, and the map's plot area fills most of its panel;
- the every-column table scrolls inside a box no wider than its panel;
- a wrapped message is set at text line height, not at an input's (double-spaced).

The three sizes share one page and one kernel (module scope): each test resizes the window, sets
the file browser, clears the outputs and runs both cells again, so each size judges a new form
(JupyterLab and its kernel start once, not once per size).

Screenshots of each step are kept under pytest's temporary folder (``screenshots/``), never in
git, for a person to judge; their folder is printed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.e2e.conftest import (
    PAGE_LIMIT_MS,
    Lab,
    clear_outputs,
    decline_news,
    notebook_of,
    open_notebook,
    run_cells,
)

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

#: (name, window width, file browser open, the output area's width it leaves: low, high)
SIZES = (
    ("1024-browser-open", 1024, True, (540, 660)),
    ("1024-browser-closed", 1024, False, (800, 1024)),
    ("1366-browser-open", 1366, True, (800, 1366)),
)
HEIGHT = 768

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
  const shown = 'input, textarea, select, button, .widget-label, .pk-scroll';
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

#: The empty height at the foot of the column an input is in: below its last shown child.
GAP_BELOW = """
(input) => {
  let column = input;
  while (column.parentElement && !(column.classList.contains('widget-vbox') &&
         column.parentElement.classList.contains('widget-hbox'))) {
    column = column.parentElement;
  }
  const shown = Array.from(column.children).filter((c) => c.getBoundingClientRect().height > 0);
  const last = Math.max(...shown.map((c) => c.getBoundingClientRect().bottom));
  return column.getBoundingClientRect().bottom - last;
}
"""

#: An element's box on screen, and the window's size.
BOX = """
(el) => {
  const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width,
          height: r.height, windowWidth: innerWidth, windowHeight: innerHeight,
          lineHeight: parseFloat(getComputedStyle(el).lineHeight)};
}
"""

#: The boxes of the chart shown in ``panel``: the chart, its title, its toolbar, its plot area.
CHART = """
(panel) => {
  const plot = Array.from(panel.querySelectorAll('.js-plotly-plot'))
      .find((el) => el.getBoundingClientRect().width > 0);
  if (!plot) return null;
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width,
            height: r.height};
  };
  const title = plot.querySelector('.g-gtitle .gtitle');
  const areas = Array.from(plot.querySelectorAll('.draglayer .nsewdrag')).map(box);
  const area = areas.reduce((a, b) => !a ? b : {left: Math.min(a.left, b.left),
      right: Math.max(a.right, b.right), top: Math.min(a.top, b.top),
      bottom: Math.max(a.bottom, b.bottom)}, null);
  if (area) { area.width = area.right - area.left; area.height = area.bottom - area.top; }
  return {panel: box(panel), chart: box(plot), svg: box(plot.querySelector('.main-svg')),
          title: box(title), titleText: title ? title.textContent : '',
          modebar: box(plot.querySelector('.modebar')), area};
}
"""


@pytest.fixture(scope="module")
def lab(jupyter_lab: Lab) -> str:
    """The form's notebook on the session's JupyterLab server: its URL."""
    return notebook_of(jupyter_lab, "lookup-form.ipynb", CELLS)


@pytest.fixture(scope="module")
def notebook(lab: str, browser: Browser) -> Iterator[Page]:
    """The form's notebook open in one page, its kernel idle; shared by the sizes (each test
    resizes the page and runs the cells again)."""
    width = SIZES[0][1]
    with browser.new_context(viewport={"width": width, "height": HEIGHT}) as context:
        page = context.new_page()
        open_notebook(page, lab)
        yield page


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"screenshots of the forms: {folder}")
    return folder


class Shots:
    """Screenshots of one size: the window, as a person sees it at each step."""

    def __init__(self, folder: Path, size: str, page: Page) -> None:
        self.folder, self.size, self.page, self.step = folder, size, page, ""

    def __call__(self, step: str) -> None:
        name = "-".join(part for part in (self.size, self.step, step) if part)
        self.page.screenshot(path=str(self.folder / f"{name}.png"))


def cut_in(form: Locator) -> list[str]:
    problems: list[Any] = form.evaluate(FIND_CUT)
    return [str(problem) for problem in problems]


def box_of(locator: Locator) -> dict[str, float]:
    found: dict[str, float] = locator.evaluate(BOX)
    return found


def assert_on_screen(locator: Locator, what: str) -> None:
    """Wholly inside the window, as it is now: nothing to scroll to see it."""
    box = box_of(locator)
    assert box["height"] > 0, f"{what} is not shown"
    assert box["top"] >= 0 and box["bottom"] <= box["windowHeight"], (
        f"{what} is off screen: {box['top']:.0f} to {box['bottom']:.0f} px "
        f"in a window {box['windowHeight']:.0f} px high"
    )
    assert box["left"] >= 0 and box["right"] <= box["windowWidth"], f"{what} is cut at a side"


def set_file_browser(page: Page, open_: bool) -> None:
    """Open or close JupyterLab's left sidebar (the file browser), as a person clicks it."""
    stack = page.locator("#jp-left-stack")
    if stack.is_visible() != open_:
        page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='filebrowser']").click()
    page.wait_for_function(
        f"() => !!document.querySelector('#jp-left-stack') && "
        f"(document.querySelector('#jp-left-stack').offsetWidth > 0) === {str(open_).lower()}"
    )


def show_tab(form: Locator, name: str) -> None:
    form.locator(".lm-TabBar-tab", has_text=name).first.click()


def check_chart(
    form: Locator, tab: str, shot: Shots, *, fill_height: float = 0.0
) -> dict[str, Any]:
    """Show ``tab`` and judge its chart: as wide as the panel, title whole and clear of the
    toolbar; with ``fill_height``, a plot area that fills that share of the chart both ways."""
    show_tab(form, tab)
    panel = form.locator(".widget-tab-contents").last
    panel.locator(".js-plotly-plot:visible .main-svg").first.wait_for(state="visible")
    form.page.wait_for_timeout(300)  # plotly resizes to its panel as the tab is shown
    panel.locator(".js-plotly-plot:visible").first.scroll_into_view_if_needed()
    shot(tab.lower().replace(" ", "-"))
    seen: dict[str, Any] = panel.evaluate(CHART)
    assert seen is not None, f"no chart on the {tab} tab"
    chart, title, modebar = seen["chart"], seen["title"], seen["modebar"]
    assert chart["width"] >= 0.9 * seen["panel"]["width"], (
        f"{tab}: the chart is {chart['width']:.0f} px wide in a {seen['panel']['width']:.0f} px "
        "panel (not sized to the output area)"
    )
    assert chart["right"] <= seen["panel"]["right"] + 1, f"{tab}: the chart sticks out"
    assert title is not None and seen["titleText"].strip(), f"{tab}: no title"
    assert title["left"] >= chart["left"] - 1 and title["right"] <= chart["right"] + 1, (
        f"{tab}: the title {seen['titleText']!r} is cut: it runs {title['left']:.0f} to "
        f"{title['right']:.0f} px in a chart {chart['left']:.0f} to {chart['right']:.0f} px"
    )
    if modebar is not None and modebar["width"] > 0:
        overlaps = (
            modebar["left"] < title["right"]
            and title["left"] < modebar["right"]
            and modebar["top"] < title["bottom"]
            and title["top"] < modebar["bottom"]
        )
        assert not overlaps, f"{tab}: plotly's toolbar covers the title {seen['titleText']!r}"
    if fill_height:
        area = seen["area"]
        assert area is not None, f"{tab}: no plot area"
        assert area["width"] >= fill_height * chart["width"], (
            f"{tab}: the plot area is {area['width']:.0f} of {chart['width']:.0f} px wide"
        )
        assert area["height"] >= fill_height * (chart["bottom"] - title["bottom"]), (
            f"{tab}: the plot area is {area['height']:.0f} px high in a "
            f"{chart['height']:.0f} px chart (mostly blank)"
        )
    return seen


@pytest.mark.parametrize(
    ("size", "width", "browser_open", "room"), SIZES, ids=[size[0] for size in SIZES]
)
def test_the_lookup_form_reads_whole_as_a_person_sees_it(
    notebook: Page,
    screenshots: Path,
    size: str,
    width: int,
    browser_open: bool,
    room: tuple[int, int],
) -> None:
    from playwright.sync_api import expect

    page = notebook
    page.set_viewport_size({"width": width, "height": HEIGHT})
    ids_box = page.locator("textarea[placeholder^='Location ids']")
    if ids_box.count():  # an earlier size's form: a new one for this size
        clear_outputs(page, ids_box)
    run_cells(page, ids_box)
    decline_news(page)
    set_file_browser(page, browser_open)
    form = page.locator(".jp-OutputArea-output").filter(has=ids_box)
    shot = Shots(screenshots, size, page)
    postcode = page.locator(".jp-OutputArea-output").first.inner_text().strip().strip("'")
    output_width = box_of(form)["width"]
    assert room[0] <= output_width <= room[1], f"the output area is {output_width:.0f} px"

    # The Ids tab: nothing cut, hints on screen, the placeholder whole, lists not stretched.
    ids_box.scroll_into_view_if_needed()
    shot("opened")
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
    attributes = form.locator("select[multiple]").first
    assert box_of(attributes)["width"] <= 260, "the Attributes list is stretched"

    # A refused id: quoted, with every odd character, right under Fetch, on screen.
    fetch = form.locator("button", has_text="Fetch")
    ids_box.fill("L00000001, bad id!")
    fetch.click()
    refused = form.locator(".pk-error", has_text="Nothing was sent")
    expect(refused).to_contain_text("“bad id!” has a space and “!” in it")
    assert_on_screen(refused, "the refusal after Fetch")
    shot("refused")

    # Matches: a postcode typed, the list shows address, postcode and id, whole.
    search.fill(postcode)
    matches = form.locator("select:not([multiple])").first
    expect(matches.locator("option").first).to_contain_text(postcode, timeout=PAGE_LIMIT_MS)
    labels = matches.locator("option").all_inner_texts()
    widths = matches.evaluate(OVERFLOW_OF_TEXT, labels)
    too_wide = {label: f"{px:.0f} px" for label, px in zip(labels, widths, strict=True) if px > 0}
    assert too_wide == {}, "matches cut at the right"
    assert cut_in(form) == []
    shot("ids")

    # Fetch one property: its outcome on screen beside the ids; the readable table.
    ids_box.fill("")
    assert matches.locator("option").first.inner_text().endswith("(L00000033)")
    matches.select_option(index=0)
    expect(ids_box).to_have_value("L00000033")
    fetch.click()
    outcome = form.locator(".pk-ok", has_text="Fetched 1 property")
    expect(outcome).to_be_visible(timeout=PAGE_LIMIT_MS)
    assert_on_screen(outcome, "the outcome of Fetch")
    line = box_of(outcome)["lineHeight"]
    assert line <= 22, f"messages are set {line:.0f} px a line (double-spaced)"
    shot("fetched-one")
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

    # One property's price trend: a long "no data" title, whole and clear of the toolbar.
    check_chart(form, "Price trend", shot)

    # Forty properties: charts, map and the every-column table.
    ids_box.fill(", ".join(f"L{n:08d}" for n in range(1, 41)))
    fetch.click()
    outcome = form.locator(".pk-ok, .pk-warn", has_text="Fetched 40 properties")
    expect(outcome).to_be_visible(timeout=PAGE_LIMIT_MS)
    assert_on_screen(outcome, "the outcome of Fetch")
    shot.step = "forty"
    for tab in ("Price trend", "EPC"):
        check_chart(form, tab, shot)
    check_chart(form, "Map", shot, fill_height=0.6)

    show_tab(form, "Table")
    toggle = form.locator("button", has_text="Show every column")
    toggle.click()
    expect(form.locator("button", has_text="Show the main columns")).to_be_visible()
    scroll = form.locator(".pk-scroll")
    # The wide table replaces the narrow one a moment after the toggle's label changes (a
    # new element): wait for the box then on the page to overflow (a timeout: it never scrolls).
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.pk-scroll'))"
        ".some(el => el.isConnected && el.scrollWidth > el.clientWidth)",
        timeout=15_000,
    )
    panel = box_of(form.locator(".widget-tab-contents").last)
    scroll_box = box_of(scroll)
    assert scroll_box["width"] <= panel["width"] + 1, (
        f"the table's scroll box is {scroll_box['width']:.0f} px wide in a "
        f"{panel['width']:.0f} px panel"
    )
    headings = form.locator("table.propertykit-table th").all_inner_texts()
    assert "EPC: current energy rating" in headings
    assert not [h for h in headings if "." in h], "code names as headings"
    assert cut_in(form) == []
    shot("every-column")

    # The Find tab: its inputs whole, its lists as wide as their options, no Ids message.
    show_tab(form, "Find")
    expect(form.locator("input[placeholder='SW1A 1AA']")).to_be_visible()
    expect(form.locator(".pk-hint", has_text="0 means no limit")).to_be_visible()
    expect(outcome).to_be_hidden()  # the Ids tab's message stays in the Ids tab
    for select in form.locator("select[multiple]").all():
        if select.is_visible():
            assert box_of(select)["width"] <= 200, "a Find list is stretched"
    code = form.locator("input[placeholder='SW1A 1AA']")
    gap = code.evaluate(GAP_BELOW)
    assert gap <= 80, f"an empty block of {gap:.0f} px under Code"
    assert cut_in(form) == []
    shot("find")
