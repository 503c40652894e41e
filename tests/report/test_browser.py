"""The report in a real browser: headless Debian Chromium opens report.html from disk, offline.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``; ``make test`` installs it as root).
Without it these tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from propertykit.report import write_report
from tests._system import CHROMIUM, HOW_TO_GET_CHROMIUM, require
from tests.report._cdp import Browser, launch

#: Draws every figure div's content and reads it back: SVG marks per figure, and the figures
#: plotly knows about (``_fullLayout`` is set once a plot has been drawn).
FIGURES_JS = """
Array.from(document.querySelectorAll('.plotly-graph-div')).map(div => ({
  id: div.id,
  drawn: Boolean(div._fullLayout),
  traces: (div.data || []).length,
  svgs: div.querySelectorAll('svg.main-svg').length,
  traceGroups: div.querySelectorAll('g.trace').length,
  marks: Array.from(div.querySelectorAll('g.trace path, g.trace rect'))
    .filter(el => (el.getAttribute('d') || '').length > 5 || Number(el.getAttribute('width')) > 0)
    .length,
}))
"""

#: Decodes a PNG (base64) in the page and counts distinct colours and non-background pixels.
PIXELS_JS = """
async (png) => {
  const image = new Image();
  image.src = 'data:image/png;base64,' + png;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width; canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, image.width, image.height).data;
  const colours = new Set();
  let inked = 0;
  for (let i = 0; i < data.length; i += 4) {
    colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    if (Math.max(data[i], data[i + 1], data[i + 2]) < 200) inked += 1;
  }
  return {colours: colours.size, inkedShare: inked / (data.length / 4)};
}
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    require(os.access(CHROMIUM, os.X_OK), HOW_TO_GET_CHROMIUM)
    with launch() as running:
        yield running


@pytest.fixture(scope="module")
def opened(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory, properties: pd.DataFrame
) -> dict[str, Any]:
    """report.html written to disk, opened from file://, every figure drawn."""
    path = write_report(
        properties,
        tmp_path_factory.mktemp("report") / "report.html",
        usage={"requests_sent": 3, "cache_hits": 0, "billable_requests": 3},
        source="the local sandbox",
    )
    page = next(t for t in browser.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
    session = browser.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
        "sessionId"
    ]
    for domain in ("Runtime", "Log", "Page", "Network"):
        browser.call(f"{domain}.enable", session=session)
    browser.call("Page.navigate", session=session, url=path.as_uri())
    browser.wait_for("Page.loadEventFired")
    # plotly draws asynchronously after load: wait (bounded) until every figure has been drawn
    figures = browser.call(
        "Runtime.evaluate",
        session=session,
        expression=(
            "new Promise(done => { const check = () => { const divs = document.querySelectorAll"
            "('.plotly-graph-div'); if (divs.length && Array.from(divs).every(d => d._fullLayout))"
            " done(true); else setTimeout(check, 50); }; check(); })"
        ),
        awaitPromise=True,
        timeout=60,
    )
    assert figures["result"]["value"] is True
    return {"session": session, "path": path}


def test_no_console_errors_or_exceptions(browser: Browser, opened: dict[str, Any]) -> None:
    problems = []
    for event in browser.events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            problems.append(params["exceptionDetails"].get("text"))
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            if params["type"] in ("error", "assert", "warning") or "WARN" in text:
                problems.append(f"console.{params['type']}: {text}")
        elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
            problems.append(f"log: {params['entry']['text']}")
    assert problems == []


def test_nothing_is_fetched_from_the_network(browser: Browser, opened: dict[str, Any]) -> None:
    urls = {
        event["params"]["request"]["url"]
        for event in browser.events
        if event.get("method") == "Network.requestWillBeSent"
    }
    assert urls == {opened["path"].as_uri()}


def test_every_figure_is_drawn(browser: Browser, opened: dict[str, Any]) -> None:
    result = browser.call(
        "Runtime.evaluate", session=opened["session"], expression=FIGURES_JS, returnByValue=True
    )
    figures = result["result"]["value"]
    assert len(figures) == 5
    for figure in figures:
        assert figure["drawn"] and figure["svgs"] >= 1, figure
        assert figure["traceGroups"] == figure["traces"] > 0, figure
        assert figure["marks"] >= figure["traces"], figure


def test_screenshot_is_not_blank(browser: Browser, opened: dict[str, Any]) -> None:
    session = opened["session"]
    size = browser.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
    shot = browser.call(
        "Page.captureScreenshot",
        session=session,
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 0.5},
    )
    pixels = browser.call(
        "Runtime.evaluate",
        session=session,
        expression=f"({PIXELS_JS})({json.dumps(shot['data'])})",
        awaitPromise=True,
        returnByValue=True,
    )["result"]["value"]
    assert pixels["colours"] > 200  # EPC bands, lines, text anti-aliasing: many colours
    assert pixels["inkedShare"] > 0.01  # charts and text, not an empty white page
