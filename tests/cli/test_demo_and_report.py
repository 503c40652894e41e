"""The `demo` and `report` commands, as a user runs them from a shell."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from propertykit.cli import main
from propertykit.sandbox._ids import source_id
from propertykit.wire import describe_cache, open_sqlite_cache


@pytest.mark.slow  # the whole demo: two fetches and two reports
def test_demo_second_run_sends_no_request_and_spends_no_credit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["demo", "--properties", "120", "--latency", "0", "--out-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    first, second = out.split("Run 2:")
    assert re.search(r"[1-9]\d* requests? sent", first)
    assert re.search(r"credits charged by the sandbox: [1-9]", first)
    assert "0 requests sent" in second
    assert "credits charged by the sandbox: 0\n" in second
    report = tmp_path / "report.html"
    assert report.stat().st_size > 100_000  # plotly.js is embedded: the report opens offline
    assert str(report.resolve()) in out
    assert out.startswith("propertykit: using the local sandbox")
    # The footer counts the whole demo: the first run's requests, not only the free second run.
    first_sent = int(re.search(r"(\d+) requests? sent", first).group(1))  # type: ignore[union-attr]
    footer = report.read_text().rsplit("<footer>", 1)[1]
    assert f"took {first_sent:,} request" in footer
    assert "both runs of the demo" in footer
    assert "120 property records" in footer


@pytest.mark.slow  # the whole demo three times
def test_demo_starts_cold_unless_asked_to_keep_the_cache(tmp_path: Path) -> None:
    args = ["demo", "--properties", "20", "--latency", "0", "--out-dir", str(tmp_path)]

    def entries() -> int:
        cache = open_sqlite_cache(tmp_path / "cache.sqlite")
        try:
            return int(describe_cache(cache)["entries"])
        finally:
            cache.close()

    main(args)
    one_run = entries()
    assert one_run > 0
    # Each demo's sandbox listens on a new port, so its answers are new cache entries.
    main([*args, "--keep-cache"])
    assert entries() == 2 * one_run
    main(args)
    assert entries() == one_run


def test_report_takes_location_and_source_ids_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "mixed.html"
    ids = ["L00000001,L00000002", source_id(5, "rightmove")]
    assert main(["report", "--sandbox", "--ids", *ids, "--out", str(out_file)]) == 0
    printed = capsys.readouterr().out
    assert "3 properties" in printed
    assert "2 requests sent" in printed
    page = out_file.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "3 property records from the propertykit sandbox" in page


def test_report_refuses_bad_ids_before_sending_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "never.html"
    code = main(["report", "--sandbox", "--ids", "L1", "zoopla::", "--out", str(out_file)])
    assert code == 1
    assert "cannot be sent" in capsys.readouterr().err
    assert not out_file.exists()


def test_report_sample_needs_a_positive_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--sample", "0"]) == 1
    assert "positive" in capsys.readouterr().err
