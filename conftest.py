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
by the fixtures and helpers a test uses, so that ``make test-fast`` can leave them out without
each test module saying so: see :func:`pytest_collection_modifyitems`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import propertykit as pk
from propertykit.config import ENV_API_KEY, ENV_CACHE_DIR
from propertykit.sandbox import Sandbox, generate_records

ROOT = Path(__file__).resolve().parent

#: Markers by folder (relative to the repository): everything collected under it gets them.
MARKED_FOLDERS: dict[str, tuple[str, ...]] = {
    "tests/e2e": ("e2e", "slow"),
    "tests/notebooks": ("slow",),
    "tests/team": ("redis",),
    "tests/on_dask": ("dask",),
    "propertykit/dask": ("dask",),
}
#: Markers by the fixtures a test asks for (directly or through other fixtures).
MARKED_FIXTURES: dict[str, tuple[str, ...]] = {
    "redis_server": ("redis",),
    "redis_url": ("redis",),
    "cluster": ("dask",),
}
#: Modules of helpers that make a test slow wherever it is (a real Chromium).
SLOW_HELPERS = ("tests._browser",)
#: Modules that, imported by a test module, make its tests slow: they start new processes (the
#: command line, a killed kernel), each paying Python's and pandas' start-up of seconds.
SLOW_MODULES = ("subprocess",)
#: Single tests of many seconds (whole demos, command lines in a new process, killed processes,
#: large generated batches), by node id prefix: those over 8 s in a `make test-fast` run on a
#: loaded 2-core machine (about 1 s of CPU or more each).
SLOW_TESTS: tuple[str, ...] = (
    "tests/views/test_export_images.py::",  # Kaleido drives a real Chromium
    "propertykit/views/static.py::",  # the examples print with a real Chromium
    "tests/frames/test_blocks.py::",
    "tests/cli/test_demo_and_report.py::test_demo_second_run_sends_no_request_and_spends_no_credit",
    "tests/cli/test_demo_and_report.py::test_demo_starts_cold_unless_asked_to_keep_the_cache",
    "tests/client/test_replay_kept.py::test_a_kept_form_is_never_used_once_its_response_changed",
    "tests/client/test_replay_kept.py::test_threads_sharing_one_client_fetch_keep_and_replay_together",
    "tests/deeds/test_crash.py::test_killed_after_sending_then_new_client_does_not_charge_again",
    "tests/deeds/test_crash.py::test_killed_before_sending_then_new_client_buys_once_with_the_same_key",
    "tests/deeds/test_crash.py::test_killed_by_another_process_while_waiting_for_the_answer",
    "tests/deeds/test_never_charged_twice.py::test_every_purchase_is_charged_at_most_once_and_its_money_state_matches_the_ledger",
    "tests/frames/test_blocks.py::test_sales_of_a_batch_read_in_blocks_are_the_sales_of_its_records",
    "tests/frames/test_bodies.py::test_untidy_bodies_frame_exactly_as_their_decoded_records",
    "tests/frames/test_json.py::test_the_collector_does_not_run_during_a_decode",
    "tests/frames/test_sifting.py::test_an_odd_value_in_the_last_body_is_found_after_the_chunks_grew",
    "tests/frames/test_sifting.py::test_untidy_bodies_give_their_records_frame_warnings_and_unparsed_values",
    "tests/frames/test_lossless.py::test_a_big_untidy_batch_reads_as_its_records_read_one_by_one",
    "tests/frames/test_lossless.py::test_every_value_is_coerced_or_counted_and_kept_raw",
    "tests/frames/test_partly_refused.py::test_a_batch_read_a_block_at_a_time_is_one_array_as_a_tidy_one_is",
    "tests/frames/test_partly_refused.py::test_dates_arrow_refuses_read_as_pandas_reads_them_the_rest_as_before",
    "tests/frames/test_partly_refused.py::test_leaves_refused_late_in_objects_lists_and_records",
    "tests/frames/test_partly_refused.py::test_odd_values_in_the_first_and_last_record_only",
    "tests/frames/test_partly_refused.py::test_one_odd_value_in_each_refused_leaf_of_every_block",
    "tests/frames/test_stored_form.py::test_an_untidy_body_is_kept_only_where_it_frames_exactly",
    "tests/frames/test_untidy.py::test_frame_sales_and_epc_never_raise_and_keep_their_rows",
    "tests/hostile/test_cli.py::test_python_dash_m_propertykit_is_the_command",
    "tests/hostile/test_cli.py::test_report_of_a_dot_dot_id_sends_nothing",
    "tests/hostile/test_cli.py::test_report_on_success_false_fails_in_one_line",
    "tests/hostile/test_limits.py::test_a_gzip_bomb_in_an_error_answer_stops_at_the_cap_too",
    "tests/hostile/test_limits.py::test_a_gzip_bomb_stops_at_the_cap_without_eating_memory",
    "tests/sandbox/test_cli.py::test_cli_exits_cleanly_on_sigint_and_sigterm",
    "tests/sandbox/test_cli.py::test_cli_fault_flags_make_the_first_requests_fail",
    "tests/sandbox/test_cli.py::test_cli_health_is_401_without_key_and_200_with_the_printed_one",
    "tests/sandbox/test_cli.py::test_cli_refuses_a_port_out_of_range_in_one_line",
    "tests/sandbox/test_cli.py::test_cli_refuses_an_unknown_fault_kind",
    "tests/sandbox/test_profiles.py::test_the_cli_serves_the_vepler_profile",
)


def markers_for(item: pytest.Item) -> set[str]:
    """The markers ``item`` gets from its folder, its fixtures and the helpers it uses."""
    path = Path(str(item.path)).resolve()
    try:
        where = path.relative_to(ROOT).as_posix()
    except ValueError:
        where = path.as_posix()
    found: set[str] = set()
    for folder, names in MARKED_FOLDERS.items():
        if where == folder or where.startswith(folder + "/"):
            found.update(names)
    for fixture in getattr(item, "fixturenames", ()):
        found.update(MARKED_FIXTURES.get(fixture, ()))
    module = getattr(item, "module", None)
    if module is not None and any(
        getattr(value, "__module__", None) in SLOW_HELPERS
        or getattr(value, "__name__", None) in SLOW_MODULES
        for value in vars(module).values()
    ):
        found.add("slow")
    if item.nodeid.startswith(SLOW_TESTS):
        found.add("slow")
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each collected test (see the module docstring); markers it has already stay."""
    for item in items:
        for name in sorted(markers_for(item) - {mark.name for mark in item.iter_markers()}):
            item.add_marker(name)


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
