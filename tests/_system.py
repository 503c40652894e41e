"""What tests that need system programs share: where Chromium is, how to start it, free ports,
and the rule that such a test skips (saying how to enable it) except under ``CI=true``, where it
must run and so fails instead."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
#: Headless Chromium as root on a machine with no network: no sandbox, no GPU, no calls home.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
HOW_TO_GET_CHROMIUM = (
    f"{CHROMIUM} not found: install Debian's chromium package "
    "(apt-get install chromium; `make test` does it when run as root)"
)


def require(ready: bool, reason: str) -> None:
    """Skip when ``ready`` is false, or fail under ``CI=true`` (those runs must test this)."""
    if ready:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"cannot run under CI=true: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class NewProcess:
    """Runs ``python`` in a new process, as a user's shell would (see :func:`new_process`)."""

    def run(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        """``python *args`` to the end (``subprocess.run``'s keywords); output captured as text,
        within 120 s unless ``timeout`` says otherwise."""
        for name, value in (("capture_output", True), ("text", True), ("timeout", 120)):
            kwargs.setdefault(name, value)
        kwargs.setdefault("check", False)
        return subprocess.run([sys.executable, *args], **kwargs)

    def start(self, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
        """``python *args`` started (``subprocess.Popen``'s keywords); output piped as text."""
        for name, value in (("stdout", subprocess.PIPE), ("stderr", subprocess.PIPE)):
            kwargs.setdefault(name, value)
        kwargs.setdefault("text", True)
        return subprocess.Popen([sys.executable, *args], **kwargs)
