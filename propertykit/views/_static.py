"""Static output through the system's Chrome or Chromium: images and print-ready PDF.

Needs the ``export`` extra (``pip install 'propertykit[export]'``): Kaleido (1.x) for
``fig.write_image(...)`` and Playwright for the PDF report. Neither downloads a browser: both
drive the Chrome or Chromium already installed (Debian: ``apt-get install chromium``).

Which browser
    ``BROWSER_PATH`` when set (the variable Kaleido's browser driver, choreographer, reads
    first), else the first of ``chromium``, ``chromium-browser``, ``google-chrome``,
    ``google-chrome-stable`` and ``chrome`` on the ``PATH``. Kaleido finds such a browser by
    itself, and starts a new one for every image; :func:`use_system_browser` starts Kaleido's
    persistent image server on the browser found here instead, so every ``fig.write_image``
    after it reuses one browser, the one the PDF report uses. The path is handed to Kaleido and
    Playwright directly: nothing here changes ``os.environ``.

The PDF
    :func:`print_pdf` opens a self-contained HTML page in headless Chromium with the network cut
    off, laid out :data:`PRINT_LAYOUT_WIDTH` pixels wide (every plotly figure is drawn at that
    width), waits until each figure is drawn, and prints it scaled to the A4 page's printable
    width (Playwright's ``page.pdf``), with the page's own print styles (the report keeps each
    figure on one page). Figures stay vectors (SVG); only images (street tiles) are raster.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from propertykit.errors import ConfigError

if TYPE_CHECKING:
    from playwright.sync_api import Playwright, Route

#: Program names looked for on the ``PATH``, in order, when ``BROWSER_PATH`` is not set.
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Page margin of the PDF, on every side.
A4_MARGIN_MM = 12
#: The page is laid out this many CSS pixels wide and printed scaled down to the A4 page, so
#: figures keep the width their labels are placed for (maps: 900 px) and text stays >= 6 pt.
PRINT_LAYOUT_WIDTH = 960
_A4_WIDTH_MM = 210
_CSS_PX_PER_MM = 96 / 25.4
_HOW_TO_GET_A_BROWSER = (
    "Static export needs Chrome or Chromium installed (no browser is downloaded): on Debian or "
    "Ubuntu `apt-get install chromium`, elsewhere install Google Chrome, or set BROWSER_PATH to "
    "the browser's program."
)


def system_browser() -> str:
    """The Chrome or Chromium program static export drives (see the module docstring).

    Raises
    ------
    propertykit.ConfigError
        When ``BROWSER_PATH`` names no program, or no browser is on the ``PATH``.

    Examples
    --------
    >>> import os
    >>> os.access(system_browser(), os.X_OK)
    True
    """
    chosen = os.environ.get("BROWSER_PATH")
    if chosen:
        if not os.access(chosen, os.X_OK):
            raise ConfigError(f"BROWSER_PATH={chosen!r} is not a program. {_HOW_TO_GET_A_BROWSER}")
        return chosen
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise ConfigError(f"No Chrome or Chromium found. {_HOW_TO_GET_A_BROWSER}")


def use_system_browser() -> str:
    """Keep one system browser open for every ``fig.write_image`` of this process; its path.

    Starts Kaleido's persistent image server (``kaleido.start_sync_server``) on
    :func:`system_browser`, so images stop paying a browser start each and are drawn by the
    browser the PDF report uses. It is started with the options plotly passes with each image
    (``plotly.io.defaults``: plotly.js, MathJax, headers), so images come out as without it;
    Kaleido still says "The kopts argument is ignored if using a server" (a ``UserWarning``) for
    each image, as plotly passes them again. A server already running (started by you or an
    earlier call) is kept as it is. ``kaleido.stop_sync_server()`` closes it; it closes by
    itself when Python exits. The environment is left alone.

    Raises
    ------
    propertykit.ConfigError
        When Kaleido (the ``export`` extra) or a browser is missing.

    Examples
    --------
    >>> use_system_browser() == system_browser()
    True
    """
    path = system_browser()
    if importlib.util.find_spec("kaleido") is None:
        raise ConfigError(
            "Writing images needs Kaleido: pip install 'propertykit[export]' "
            "(it drives your installed Chrome or Chromium; no browser is downloaded)"
        )
    import kaleido
    from plotly.io import defaults

    options = {
        name: value
        for name in ("plotlyjs", "mathjax", "headers")
        if (value := getattr(defaults, name, None))
    }
    kaleido.start_sync_server(path=path, silence_warnings=True, **options)
    return path


def pdf_ready() -> str:
    """Check that a PDF can be printed here (Playwright importable, a browser found); the
    browser's path. Cheap: nothing is started, so callers ask it before fetching anything.

    Raises
    ------
    propertykit.ConfigError
        When Playwright (the ``export`` extra) or a browser is missing.

    Examples
    --------
    >>> import os
    >>> os.access(pdf_ready(), os.X_OK)
    True
    """
    try:
        found = all(
            importlib.util.find_spec(name) for name in ("playwright", "playwright.sync_api")
        )
    except (ImportError, ValueError):  # the package absent, or its import blocked
        found = False
    if not found:
        raise ConfigError(
            "Writing a PDF needs Playwright: pip install 'propertykit[export]' "
            "(it drives your installed Chrome or Chromium; no browser is downloaded)"
        )
    return system_browser()


def print_pdf(page: Path, target: Path, *, timeout: float = 120.0) -> None:
    """Print the self-contained HTML file ``page`` to the PDF file ``target`` (A4).

    Parameters
    ----------
    page
        An HTML file that needs no network (the report): anything it asks of the network is
        refused, and the PDF is not written.
    target
        The PDF file to write.
    timeout
        Seconds allowed for opening, drawing and printing.

    Raises
    ------
    propertykit.ConfigError
        When Playwright (the ``export`` extra) or a browser is missing, or the page asked for
        something from the network.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "p.html").write_text("<h1>Hello</h1>")
    >>> print_pdf(folder / "p.html", folder / "p.pdf")
    >>> (folder / "p.pdf").read_bytes()[:5]
    b'%PDF-'
    """
    browser_path = pdf_ready()
    from playwright.sync_api import Error as BrowserError
    from playwright.sync_api import sync_playwright

    refused: list[str] = []

    def stay_local(route: Route) -> None:
        if urlsplit(route.request.url).scheme in ("file", "data", "blob", "about"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort("internetdisconnected")

    def run() -> None:
        with sync_playwright() as playwright:
            _print(playwright, browser_path, page, target, timeout, stay_local)

    # In a thread of its own: Playwright's sync API refuses a thread with an event loop running
    # (a notebook's) or another Playwright open (a caller's own browser).
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="propertykit-pdf") as pool:
            pool.submit(run).result()
    except BrowserError as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ConfigError(
            f"The browser could not print the PDF ({browser_path}): {reason}"
        ) from error
    if refused:
        target.unlink(missing_ok=True)
        raise ConfigError(
            f"The page asked for {len(refused)} address(es) on the network "
            "(a PDF is printed offline); nothing was written"
        )


def _print(
    playwright: Playwright,
    browser_path: str,
    page: Path,
    target: Path,
    timeout: float,
    stay_local: Callable[[Route], None],
) -> None:
    scale = (_A4_WIDTH_MM - 2 * A4_MARGIN_MM) * _CSS_PX_PER_MM / PRINT_LAYOUT_WIDTH
    margin = f"{A4_MARGIN_MM}mm"
    browser = playwright.chromium.launch(
        executable_path=browser_path,
        headless=True,
        args=["--disable-gpu", "--no-first-run", "--disable-background-networking"],
    )
    try:
        context = browser.new_context(viewport={"width": PRINT_LAYOUT_WIDTH, "height": 1200})
        context.set_default_timeout(timeout * 1000)
        context.route("**/*", stay_local)
        tab = context.new_page()
        tab.emulate_media(media="print")
        tab.goto(page.resolve().as_uri(), wait_until="load")
        tab.wait_for_function(_DRAWN)
        tab.pdf(
            path=str(target),
            format="A4",
            scale=scale,
            print_background=True,
            margin={"top": margin, "right": margin, "bottom": margin, "left": margin},
        )
    finally:
        browser.close()


# Every plotly figure laid out, and every image inside one (street tiles) loaded.
_DRAWN = """() => {
  const figures = Array.from(document.querySelectorAll('.plotly-graph-div'));
  return figures.every(f => {
    if (!f._fullLayout) return false;
    const wanted = (f._fullLayout.images || []).filter(i => i.visible !== false).length;
    const loaded = Array.from(f.querySelectorAll('image'))
      .filter(i => (i.getAttribute('href') || i.getAttribute('xlink:href') || '') !== '').length;
    return loaded >= wanted;
  });
}"""
