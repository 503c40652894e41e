"""The command against a hostile service: one line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import propertykit as pk
from propertykit.cli import main
from propertykit.config import ENV_API_KEY, ENV_BASE_URL
from tests._system import NewProcess
from tests.hostile._servers import KEY, hostile, send


def run_command(
    new_process: NewProcess, args: list[str], url: str, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update(
        {ENV_BASE_URL: url, ENV_API_KEY: KEY, "PROPERTYKIT_CACHE_DIR": str(tmp_path / "cache")}
    )
    return new_process.run("-m", "propertykit", *args, timeout=60, env=env, cwd=tmp_path)


@pytest.mark.timeout(90)
def test_report_on_success_false_fails_in_one_line(new_process: NewProcess, tmp_path: Path) -> None:
    body = {"success": False, "error": "maintenance\nwindow"}
    with hostile(lambda handler, seen: send(handler, 200, body)) as server:
        result = run_command(
            new_process, ["report", "--ids", "L1", "--out", "r.html"], server.url, tmp_path
        )
    assert result.returncode != 0  # before: exit 0, a report of "0 properties"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("propertykit: error: ")
    assert "success: false" in lines[0]
    assert "Traceback" not in result.stderr
    assert KEY not in result.stderr + result.stdout
    assert not (tmp_path / "r.html").exists()


# Refused before any request: the command's main() in this process (the same exit status and
# lines as `python -m propertykit`, which the last test runs as a user does).
@pytest.mark.timeout(90)
def test_report_of_a_dot_dot_id_sends_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with hostile(lambda handler, seen: send(handler, 200, {"result": []})) as server:
        monkeypatch.setenv(ENV_BASE_URL, server.url)
        monkeypatch.setenv(ENV_API_KEY, KEY)
        monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.chdir(tmp_path)
        capsys.readouterr()
        code = main(["report", "--ids", "..", "--out", "r.html"])
        assert server.requests == []
    said = capsys.readouterr()
    assert code != 0
    assert said.err.startswith("propertykit: error: ")
    assert "Traceback" not in said.err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.timeout(90)
def test_python_dash_m_propertykit_is_the_command(new_process: NewProcess, tmp_path: Path) -> None:
    result = run_command(new_process, ["--version"], "http://127.0.0.1:9", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"propertykit {pk.__version__}"
