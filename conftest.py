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
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

import propertykit as pk
from propertykit.config import ENV_API_KEY, ENV_CACHE_DIR
from propertykit.sandbox import Sandbox, generate_records

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
    with pk.sandbox.serve() as sb:
        yield sb


@pytest.fixture(autouse=True)
def _doctest_names(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fill ``doctest_namespace`` for one docstring example (see the module docstring)."""
    item = request.node
    if not isinstance(item, pytest.DoctestItem) or item.dtest is None:
        yield
        return
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
