"""One browser driver for every browser test: Playwright driving Debian's Chromium.

Playwright's own browser download is never used (this machine cannot fetch it): it launches
``/usr/bin/chromium`` with the flags of :mod:`tests._system`. :func:`open_offline` opens a page with
the network cut off: anything but ``file://``, ``data:`` and 127.0.0.1 is aborted and listed, and
console errors, warnings and page exceptions are collected for the test to assert on.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tests._system import CHROMIUM, CHROMIUM_FLAGS, HOW_TO_GET_CHROMIUM, require

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Request, Route

HOW_TO_GET_PLAYWRIGHT = (
    "playwright is not installed: pip install playwright (its browser download is not needed; "
    "the tests use Debian's chromium)"
)
#: Hosts a page may reach: the machine itself.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def require_browser() -> None:
    """Skip (or fail under ``CI=true``) unless Playwright and Debian's Chromium are installed."""
    require(importlib.util.find_spec("playwright") is not None, HOW_TO_GET_PLAYWRIGHT)
    require(os.access(CHROMIUM, os.X_OK), HOW_TO_GET_CHROMIUM)


@contextmanager
def chromium() -> Iterator[Browser]:
    """A headless Debian Chromium under Playwright; closed afterwards."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=list(CHROMIUM_FLAGS), headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class OfflinePage:
    """A page opened by :func:`open_offline`, with what happened while it loaded and ran."""

    page: Page
    #: every URL the page asked for (allowed or not), in order
    requested: list[str] = field(default_factory=list)
    #: URLs that were refused because they would leave the machine
    blocked: list[str] = field(default_factory=list)
    #: console errors and warnings, and uncaught page exceptions
    problems: list[str] = field(default_factory=list)


def open_offline(
    browser: Browser, url: str, *, width: int = 1280, height: int = 1000, timeout_ms: int = 60_000
) -> OfflinePage:
    """Open ``url`` in a new page with no network beyond this machine; wait for ``load``."""
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(timeout_ms)
    page = context.new_page()
    opened = OfflinePage(page)

    def route(route: Route, request: Request) -> None:
        opened.requested.append(request.url)
        if _stays_local(request.url):
            route.continue_()
        else:
            opened.blocked.append(request.url)
            route.abort("internetdisconnected")

    def console(message: Any) -> None:
        if message.type in ("error", "warning", "assert") or "WARN" in message.text:
            opened.problems.append(f"console.{message.type}: {message.text}")

    context.route("**/*", route)
    page.on("console", console)
    page.on("pageerror", lambda error: opened.problems.append(f"exception: {error}"))
    page.goto(url, wait_until="load")
    return opened


def wait_for_plotly(page: Page, timeout_ms: int = 60_000) -> None:
    """Wait (bounded) until every plotly figure on the page has been drawn."""
    page.wait_for_function(
        "() => { const divs = document.querySelectorAll('.plotly-graph-div');"
        " return divs.length > 0 && Array.from(divs).every(d => d._fullLayout); }",
        timeout=timeout_ms,
    )


def _stays_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("file", "data", "blob", "about") or parts.hostname in LOCAL_HOSTS
