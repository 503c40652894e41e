"""Take the README's map screenshot: the report's national map, opened offline in Chromium.

Run: ``.venv/bin/python scripts/map_screenshot.py`` (writes ``docs/map-national.png``). The data is
the sandbox's 300 demo properties (``make demo``); Playwright drives Debian's ``/usr/bin/chromium``
and every request beyond the file itself is refused, so what is shown draws offline.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from playwright.sync_api import Route, sync_playwright

from propertykit.frames import frame
from propertykit.sandbox import generate_records
from propertykit.views import write_report

OUT = Path(__file__).resolve().parent.parent / "docs/map-national.png"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        report = write_report(frame(generate_records(300)), Path(folder) / "report.html")
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"], headless=True
        )
        page = browser.new_page(viewport={"width": 1280, "height": 1000})

        def offline(route: Route) -> None:
            if route.request.url.startswith(("file:", "data:")):
                route.continue_()
            else:
                route.abort()

        page.route("**/*", offline)
        page.goto(report.as_uri())
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.plotly-graph-div'))"
            ".every(d => d._fullLayout)"
        )
        card = page.locator("section.card", has_text="Where the properties are")
        card.screenshot(path=str(OUT))
        browser.close()
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
