"""MatchReview in JupyterLab as a person meets it: at 1024 px beside the file browser (about 590
px of output), in a window 768 px high, over a fresh match of the sandbox's real-shaped world in
a named book.

A notebook of two cells (a sandbox, a client and a match; the review) runs in JupyterLab under
Playwright and Debian's Chromium. The test measures what the browser drew: nothing cut; the book
named; with the review's top at the window's top, its Keep button on screen (each candidate is
listed once); Keep changes the heading's counts and the row's status; Previous shows the kept
row as decided, its time in words. Screenshots are kept under pytest's temporary folder
(``screenshots/``) for a person to judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.e2e.conftest import Lab, decline_news, notebook_of, open_notebook, run_cells
from tests.e2e.test_form_layout import Shots, assert_on_screen, box_of, cut_in, set_file_browser

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.timeout(600)

CELLS = (
    "import tempfile\n"
    "from pathlib import Path\n"
    "import propertykit as pk\n"
    "sb = pk.sandbox.Sandbox(n_properties=2000, realism='real', suggest_per_minute=10_000)\n"
    "sb.start()\n"
    "client = pk.Client(sb.api_key, sb.url, cache=Path(tempfile.mkdtemp()) / 'cache.sqlite',\n"
    "                   endpoints=pk.Endpoints(suggest_per_minute=10_000), progress=False)\n"
    "typed = pk.sandbox.typed_addresses(80, n_properties=2000)\n"
    "ambiguous = [row for row in typed if row.expected == 'ambiguous'][:1]\n"
    "absent = [row for row in typed if row.expected == 'absent'][:3]\n"
    "uncertain = [*ambiguous, *absent]  # the ambiguous first\n"
    "held = next(row for row in typed if row.expected not in ('absent', 'ambiguous'))\n"
    "texts = [*(row.text for row in uncertain), held.text, '']\n"
    "matches = client.match_addresses(texts, book='acme-2026')\n"
    "matches['status'].tolist()",
    "review = pk.widgets.MatchReview(matches, client)\nreview",
)
#: Scroll the page so that an element's top is at the window's top.
TO_TOP = "(el) => el.scrollIntoView({block: 'start'})"


@pytest.fixture(scope="module")
def lab(jupyter_lab: Lab) -> str:
    """The review's notebook on the session's JupyterLab server: its URL."""
    return notebook_of(jupyter_lab, "match-review.ipynb", CELLS)


@pytest.fixture(scope="module")
def notebook(lab: str, browser: Browser) -> Iterator[Page]:
    with browser.new_context(viewport={"width": 1024, "height": 768}) as context:
        page = context.new_page()
        open_notebook(page, lab)
        yield page


def test_the_review_reads_whole_and_follows_its_decisions_at_590_px(
    notebook: Page, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from playwright.sync_api import expect

    page = notebook
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"screenshots of the review: {folder}")
    shot = Shots(folder, "match-review-1024", page)
    keep = page.locator("button", has_text="Keep decision")
    run_cells(page, keep)
    decline_news(page)
    set_file_browser(page, True)
    form = page.locator(".jp-OutputArea-output").filter(has=keep)
    assert 540 <= box_of(form)["width"] <= 660, "not the 590 px of output asked for"
    heading = form.locator(".pk-info").first
    heading.evaluate(TO_TOP)
    shot("opened")
    said = form.inner_text()
    assert "5 rows to review: 1 ambiguous, 3 unmatched, 1 blank." in said, said
    assert "book “acme-2026”" in said and "Address 1 of 5 (item 1 of the list)" in said
    assert cut_in(form) == []
    assert_on_screen(keep, "Keep, with the review's top at the window's top")

    form.locator("input[type='radio']").first.check()  # the first candidate
    keep.click()
    expect(form.locator(".pk-ok", has_text="Kept:")).to_be_visible()
    heading.evaluate(TO_TOP)
    shot("kept")
    expect(heading).to_contain_text("0 ambiguous, 3 unmatched, 1 decided, 1 blank")
    form.locator("button", has_text="Previous").click()
    status = form.locator(".pk-ok", has_text="Decided on ")
    expect(status).to_be_visible()
    shot("previous")
    assert not re.search(r"\d{4}-\d\d-\d\dT", form.inner_text()), "a raw timestamp is shown"
    assert cut_in(form) == []
