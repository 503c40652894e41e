"""How ``propertykit report`` finds the service, run as a user runs it: a shell's environment,
and nothing ever built from the sandbox's made-up data unless asked (and said).

The runs that build a report are subprocesses, as a user's are (one ``--sandbox`` run of known
and unknown ids serves the two tests that read it). Those a setting or the ids stop before a
report is built are the command's ``main()`` in this process, under the same environment
(cleared as for a subprocess): the same exit status and lines, without starting Python each time
(``python -m propertykit`` itself: ``tests/hostile/test_cli.py``).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from propertykit.cli import main
from propertykit.sandbox import Sandbox
from tests._system import NewProcess

pytestmark = pytest.mark.timeout(120)

#: Every variable through which propertykit could find a service, cleared before each run.
_SERVICE_VARIABLES = (
    "PROPERTYKIT_API_KEY",
    "PROPERTYKIT_BASE_URL",
    "PROPERTYKIT_PROFILE",
    "PROPERTYKIT_OFFLINE",
    "VEPLER_API_KEY",
)


def _report(
    new_process: NewProcess, tmp_path: Path, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``propertykit report --out <tmp>/report.html ARGS`` with exactly ``env`` set."""
    environment = {k: v for k, v in os.environ.items() if k not in _SERVICE_VARIABLES}
    environment.update(env, PROPERTYKIT_CACHE_DIR=str(tmp_path / "cache"))
    out = tmp_path / "report.html"
    done = new_process.run(
        "-m", "propertykit", "report", "--out", str(out), *args, env=environment, timeout=100
    )
    return done, out


def _report_here(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    *args: str,
    **env: str,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """As :func:`_report`, run by ``main()`` in this process."""
    for name in _SERVICE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in {**env, "PROPERTYKIT_CACHE_DIR": str(tmp_path / "cache")}.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "report.html"
    capsys.readouterr()
    code = main(["report", "--out", str(out), *args])
    said = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, said.out, said.err), out


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("propertykit: error: report: ")
    assert "sandbox" not in done.stdout
    return lines[0]


def test_a_key_without_an_address_is_one_line_and_no_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done, out = _report_here(
        monkeypatch, capsys, tmp_path, "--ids", "L00000001", PROPERTYKIT_API_KEY="abc_live_123456"
    )
    line = _one_error_line(done)
    assert "no service address" in line
    assert "PROPERTYKIT_BASE_URL" in line and "--sandbox" in line
    assert "abc_live_123456" not in done.stderr + done.stdout
    assert not out.exists()


def test_an_address_without_a_key_is_one_line_and_no_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done, out = _report_here(
        monkeypatch,
        capsys,
        tmp_path,
        "--ids",
        "L00000001",
        PROPERTYKIT_BASE_URL="http://127.0.0.1:9/",
    )
    line = _one_error_line(done)
    assert "no API key" in line and "PROPERTYKIT_API_KEY" in line
    assert not out.exists()


def test_a_profile_without_a_key_is_one_line_and_no_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done, out = _report_here(
        monkeypatch, capsys, tmp_path, "--ids", "L00000001", PROPERTYKIT_PROFILE="vepler"
    )
    line = _one_error_line(done)
    assert "No API key" in line and "VEPLER_API_KEY" in line
    assert not out.exists()


def test_the_vepler_setup_goes_to_vepler_not_the_sandbox(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The README's real-service setup, offline so that nothing leaves the machine: the lookup
    # goes to the (empty) cache of Vepler's address and stops there; no sandbox answers it.
    done, out = _report_here(
        monkeypatch,
        capsys,
        tmp_path,
        "--ids",
        "L00000001",
        PROPERTYKIT_PROFILE="vepler",
        VEPLER_API_KEY="vpr_live_abcdef",
        PROPERTYKIT_OFFLINE="1",
    )
    line = _one_error_line(done)
    assert "not in the cache" in line and "nothing was sent" in line
    assert not out.exists()


def test_offline_with_a_key_and_no_address_is_one_line_and_no_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done, out = _report_here(
        monkeypatch,
        capsys,
        tmp_path,
        "--ids",
        "L00000001",
        PROPERTYKIT_API_KEY="abc_live_1",
        PROPERTYKIT_OFFLINE="1",
    )
    assert "no service address" in _one_error_line(done)
    assert not out.exists()


def test_a_named_service_is_used_as_pk_client_would(
    new_process: NewProcess, tmp_path: Path, sandbox: Sandbox
) -> None:
    # A sandbox served on purpose, named like any service: not "the local sandbox" to the CLI.
    done, out = _report(
        new_process,
        tmp_path,
        "--ids",
        "L00000001",
        PROPERTYKIT_API_KEY=sandbox.api_key,
        PROPERTYKIT_BASE_URL=sandbox.url,
    )
    assert done.returncode == 0, done.stderr
    assert "using the local sandbox" not in done.stderr + done.stdout
    assert "1 property)" in done.stdout
    assert f"from {sandbox.url}" in out.read_text()


@pytest.fixture(scope="module")
def sandbox_report(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One ``report --sandbox`` run, as a user's, of two known ids and two unknown ones (an id
    of no shape the service knows, and one past the sandbox): the two tests below read it."""
    return _report(
        NewProcess(),
        tmp_path_factory.mktemp("sandbox-report"),
        "--sandbox",
        "--ids",
        "L00000001",
        "L00000002",
        "NOPE123",
        "L99999999",
    )


def test_sandbox_when_asked_says_so(
    sandbox_report: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, out = sandbox_report
    assert done.returncode == 0, done.stderr
    assert "using the local sandbox" in done.stderr
    assert "2 properties)" in done.stdout
    assert "the propertykit sandbox" in out.read_text()


def test_unknown_ids_are_printed_and_left_out(
    sandbox_report: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    done, _ = sandbox_report
    assert done.returncode == 0, done.stderr
    assert "2 ids returned no record: NOPE123, L99999999" in done.stderr
    assert "2 properties)" in done.stdout  # the two known ids only
    assert "Warning" not in done.stderr  # said once, in plain words, not as a traceback line


def test_only_unknown_ids_write_no_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done, out = _report_here(monkeypatch, capsys, tmp_path, "--sandbox", "--ids", "L99999999")
    assert done.returncode == 1
    assert "1 id returned no record: L99999999" in done.stderr
    assert "no report written" in done.stderr
    assert not out.exists()


def test_sample_past_the_sandbox_names_the_most(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    done, out = _report_here(monkeypatch, capsys, tmp_path, "--sample", "6000")
    assert done.returncode == 1
    assert "the sandbox has 5,000 properties" in done.stderr
    assert not out.exists()
