"""The names every docstring example in ``propertykit/`` may use without setting them up.

pytest runs the examples (``--doctest-modules``) with these names already defined:

``pk``
    The package: ``import propertykit as pk``.
``sb``
    A sandbox of the service (5,000 properties, seed 0), started once per session and only when
    an example uses ``sb`` or ``client`` without making its own. Shared: read from it, never
    steer it (balance, clock, faults). Use its ids (``sb.location_ids``, ``sb.source_ids``,
    ``sb.title_numbers``), never made-up ones. Buying a deed changes it: each example that buys
    uses a title no other example touches (``sb.title_numbers[0]`` to ``[9]`` are taken).
``client``
    A fresh ``pk.Client`` on ``sb`` for each example: its own SQLite cache and purchase journal
    (so usage counts start at 0), no progress bars; closed afterwards. ``PROPERTYKIT_API_KEY``
    holds ``sb``'s key meanwhile, as it would on Dask workers (copies of ``client`` read it).
``records``
    50 synthetic property records: ``pk.sandbox.generate_records(50)``.

Each example runs in its own empty working directory (files it writes, e.g. ``"portfolio/"``,
land there), with ``PROPERTYKIT_CACHE_DIR`` inside that temporary folder too. Test functions
(``tests/``) are not affected: the fixture returns at once for anything but a docstring example.

Markers (``slow``, ``e2e``, ``redis``, ``dask``; see pyproject.toml) are given here, by folder and
by the fixtures a test uses (directly or through other fixtures), never by a list of tests, so
that ``make test-fast`` can leave them out without each test module saying so: a test that asks
for the session's browser, Kaleido, JupyterLab or a new Python process is ``slow``. The fixtures
that are slow to make (JupyterLab, the Dask cluster, the 20,000-record frames, a report or page a
module builds for several tests) put their tests in one pytest-xdist group each (``--dist
loadgroup``, as ``make test`` runs), so one worker makes each once. See
:func:`pytest_collection_modifyitems`.
"""

from __future__ import annotations

import functools
import gc
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

# The package is imported by the fixtures that use it, not here: pytest-xdist's controller loads
# this file (and tests/conftest.py) before it starts the workers, and needs none of it.
if TYPE_CHECKING:
    from propertykit.sandbox import Sandbox

ROOT = Path(__file__).resolve().parent

#: Markers by folder (relative to the repository): everything collected under it gets them.
MARKED_FOLDERS: dict[str, tuple[str, ...]] = {
    "tests/e2e": ("e2e", "slow"),
    "tests/team": ("redis",),
    "tests/on_dask": ("dask",),
    "propertykit/dask": ("dask",),
}
#: Markers by the fixtures a test asks for (directly or through other fixtures); the fixtures
#: that start a program of seconds (tests/conftest.py, tests/e2e/conftest.py) make a test slow.
MARKED_FIXTURES: dict[str, tuple[str, ...]] = {
    "redis_server": ("redis",),
    "redis_url": ("redis",),
    "cluster": ("dask",),
    "browser": ("slow",),
    "image_export": ("slow",),
    "system_chromium": ("slow",),
    "jupyter_lab": ("e2e", "slow"),
    "new_process": ("slow",),
    "run_notebook": ("slow",),
    "each_alone": ("slow",),  # frames every record of a batch by itself (tests/frames)
    "world_frame": ("slow",),  # 20,000 generated records (tests/views/conftest.py)
    "held_out": ("slow",),  # 20,000 real-shaped homes, recent sales held out (test_valuation)
    "real_sales": ("slow",),  # sales of 20,000 real-shaped homes (frames/test_price_index)
    "valued_page": ("slow",),  # the whole report of 3,000 homes, one valued (tests/views)
    "hostile_pence_page": ("slow",),  # the same in pence, with script for every address
    "drift_certificates": ("slow",),  # 200,000 generated EPC certificates (test_epc_trend)
    "page_sandbox": ("slow",),  # runs every example of a docs page (tests/docs)
    "sandbox_report": ("slow",),  # `propertykit report --sandbox` in a new process (tests/cli)
}
#: The pytest-xdist group of the tests using each fixture that is slow to make: one worker runs
#: them all, so it is made once. JupyterLab starts once per session (its tests drive the browser
#: too). A browser alone (Chromium, Kaleido) starts in a second or two: the tests that need only
#: that spread over the workers, each starting its own; a page or report a module builds for
#: several tests keeps those tests on one worker.
XDIST_GROUPS: dict[str, str] = {
    "jupyter_lab": "lab",
    "cluster": "dask",
    "world_frame": "world",  # 20,000 generated records (tests/views/conftest.py)
    "held_out": "world",  # the same 20,000 real-shaped records are drawn once per process
    "real_sales": "world",
    "report_page": "report-page",  # the report open in Chromium (tests/views/report)
    "printed_report": "pdf-report",  # a report printed as PDF (tests/views/test_export_pdf.py)
    "epc_trend_drawn": "epc-trend-page",  # tests/views/test_epc_trend_browser.py
    "pence_and_pounds": "pence-frames",  # two sandboxes (tests/views/plots/test_pence_in_browser)
    # the 3,000 valued records, their frames and their report (tests/views/conftest.py)
    "valued_records": "valued",
    "valued_frame": "valued",
    "valued_frame_in_pence": "valued",
    "valued_page": "valued",
    "valuable_home": "valuable-home",  # a home to value, found among 5,000 (tests/conftest.py)
    "run_notebook": "notebooks",  # each notebook's kernel starts as the one before runs
    "sandbox_report": "cli-sandbox-report",  # one report run read by two tests (tests/cli)
}
#: What a docstring example calls that drives a real browser (it has no fixtures to say so).
BROWSER_CALLS = ("print_pdf(", "use_system_browser(", "write_image(", "to_image(")


def _fixtures(item: pytest.Item) -> tuple[str, ...]:
    return tuple(getattr(item, "fixturenames", ()))


def _drives_a_browser(item: pytest.Item) -> bool:
    """A docstring example that calls one of :data:`BROWSER_CALLS`."""
    if not isinstance(item, pytest.DoctestItem) or item.dtest is None:
        return False
    source = "".join(example.source for example in item.dtest.examples)
    return any(call in source for call in BROWSER_CALLS)


@functools.cache
def _folder_markers(path: str) -> frozenset[str]:
    """The markers of the tests in the file at ``path``, from its folder (resolved once a file:
    each ``resolve`` asks the disk)."""
    resolved = Path(path).resolve()
    try:
        where = resolved.relative_to(ROOT).as_posix()
    except ValueError:
        where = resolved.as_posix()
    return frozenset(
        name
        for folder, names in MARKED_FOLDERS.items()
        if where == folder or where.startswith(folder + "/")
        for name in names
    )


def markers_for(item: pytest.Item) -> set[str]:
    """The markers ``item`` gets from its folder and the fixtures it uses."""
    found = set(_folder_markers(str(item.path)))
    for fixture in _fixtures(item):
        found.update(MARKED_FIXTURES.get(fixture, ()))
    if _drives_a_browser(item):
        found.add("slow")
    return found


def xdist_group_for(item: pytest.Item) -> str | None:
    """The pytest-xdist group of ``item``: that of the first session program it uses."""
    if _drives_a_browser(item):
        return "browser"
    return next((XDIST_GROUPS[f] for f in _fixtures(item) if f in XDIST_GROUPS), None)


def pytest_configure() -> None:
    """Collect young garbage after 50,000 allocations, not 700: the suite keeps worlds of records
    and frames alive for the session, and each full collection walked them again (about 3 s of
    each fast-run worker's CPU, measured with ``gc.callbacks``; under 1 s now, at the same peak
    memory)."""
    gc.set_threshold(50_000, 20, 100)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish() -> None:
    """Freeze what the session leaves (worlds of records, frames, caches) as it ends: pytest's
    closing garbage collections and the interpreter's exit then skip it, about 2 s a run. Cycles
    left at the very end are not collected, so a finalizer among them that fails goes unreported;
    one collected during a test still fails that test."""
    gc.freeze()


# tryfirst: pytest-xdist turns xdist_group markers into groups in its own
# pytest_collection_modifyitems; ours must have added them before, or loadgroup groups nothing.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each collected test (see the module docstring); markers it has already stay."""
    for item in items:
        for name in sorted(markers_for(item) - {mark.name for mark in item.iter_markers()}):
            item.add_marker(name)
        group = xdist_group_for(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


#: The names backed by the sandbox; an example that binds one itself (``as sb``, ``client =``)
#: does not need ours.
_SANDBOX_NAMES = ("sb", "client")


def _needs_sandbox(source: str) -> bool:
    return any(
        re.search(rf"\b{name}\b", source)
        and not re.search(rf"\bas {name}\b|^\s*{name}\s*=[^=]", source, re.MULTILINE)
        for name in _SANDBOX_NAMES
    )


@pytest.fixture(scope="session")
def _doctest_sandbox() -> Iterator[Sandbox]:
    """The sandbox behind ``sb`` and ``client``; started the first time an example needs it."""
    from propertykit.sandbox import serve

    with serve() as sb:
        yield sb


@pytest.fixture(autouse=True)
def _doctest_names(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fill ``doctest_namespace`` for one docstring example (see the module docstring)."""
    item = request.node
    if not isinstance(item, pytest.DoctestItem) or item.dtest is None:
        yield
        return
    import propertykit as pk
    from propertykit.config import ENV_API_KEY, ENV_CACHE_DIR
    from propertykit.sandbox import generate_records

    namespace: dict[str, object] = request.getfixturevalue("doctest_namespace")
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    tmp_path = request.getfixturevalue("tmp_path")
    workdir = tmp_path / "work"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache-dir"))
    names: dict[str, object] = {"pk": pk, "records": generate_records(50)}
    client = None
    if _needs_sandbox("".join(example.source for example in item.dtest.examples)):
        sb: Sandbox = request.getfixturevalue("_doctest_sandbox")
        monkeypatch.setenv(ENV_API_KEY, sb.api_key)
        client = pk.Client(
            sb.api_key,
            sb.url,
            cache=tmp_path / "http_cache.sqlite",
            progress=False,
            journal=tmp_path / "journal.jsonl",
        )
        names.update(sb=sb, client=client)
    namespace.update(names)
    try:
        yield
    finally:
        for name in names:
            namespace.pop(name, None)
        if client is not None:
            client.close()
