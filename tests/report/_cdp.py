"""A minimal Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websockets).

Chromium reads commands from file descriptor 3 and writes replies and events to descriptor 4,
each one JSON message ended by a NUL byte.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from tests._system import CHROMIUM, CHROMIUM_FLAGS

FLAGS = (*CHROMIUM_FLAGS, "--remote-debugging-pipe", "--window-size=1280,1000")


class Browser:
    """One headless Chromium; ``call`` sends a command and waits for its reply."""

    def __init__(self, process: subprocess.Popen[bytes], commands: int, replies: int) -> None:
        self._process = process
        self._commands = commands
        self._replies = replies
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(
        self, method: str, session: str | None = None, timeout: float = 30.0, **params: Any
    ) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read(timeout)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._read(timeout)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._replies], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._replies, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        result: dict[str, Any] = json.loads(message)
        return result


@contextmanager
def launch() -> Iterator[Browser]:
    """Start Chromium with a fresh profile; close it and remove the profile afterwards."""
    profile = tempfile.mkdtemp(prefix="pk-chromium-")
    to_chrome_read, to_chrome_write = os.pipe()
    from_chrome_read, from_chrome_write = os.pipe()
    # bash puts the pipe ends on descriptors 3 and 4, where --remote-debugging-pipe expects them
    script = f'exec "$0" "$@" 3<&{to_chrome_read} 4>&{from_chrome_write}'
    process = subprocess.Popen(
        ["bash", "-c", script, CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        pass_fds=(to_chrome_read, from_chrome_write),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(to_chrome_read)
    os.close(from_chrome_write)
    browser = Browser(process, to_chrome_write, from_chrome_read)
    try:
        yield browser
    finally:
        with suppress(OSError, RuntimeError, TimeoutError):
            browser.call("Browser.close", timeout=5)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        os.close(to_chrome_write)
        os.close(from_chrome_read)
        shutil.rmtree(profile, ignore_errors=True)
