"""``propertykit portfolio ARGS`` run by ``main()`` in this process, the service found through the
environment: what the portfolio tests share."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from propertykit.cli import main
from propertykit.sandbox import Sandbox
from tests.notebooks._kernels import SERVICE_VARIABLES

Run = Callable[..., subprocess.CompletedProcess[str]]


def portfolio_runner(
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> Run:
    """A runner of the command against ``sandbox`` (its address and key in the environment, a
    cache of its own under ``tmp_path``), returning what a shell would: code, out, err."""
    for name in SERVICE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROPERTYKIT_API_KEY", sandbox.api_key)
    monkeypatch.setenv("PROPERTYKIT_BASE_URL", sandbox.url)
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path / "cache"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        code = main(["portfolio", *args])
        printed = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, printed.out, printed.err)

    return run
