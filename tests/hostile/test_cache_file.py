"""A cache file that is not a database, or is damaged: ``pk.CacheUnavailable``, nothing sent.

The error names the file and the fix (``propertykit cache clear``, or move the file away); the
file is left exactly as it was, and only ``propertykit cache clear`` removes it, when asked.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

import propertykit as pk
from tests._system import NewProcess

pytestmark = pytest.mark.timeout(120)


def _cache_cli(new_process: NewProcess, *arguments: str) -> subprocess.CompletedProcess[str]:
    return new_process.run("-m", "propertykit", "cache", *arguments, timeout=60)


def test_a_file_that_is_not_a_database_is_named_with_its_fix_and_left_alone(
    sandbox, tmp_path: Path
) -> None:
    path = tmp_path / "http_cache.sqlite"
    notes = b"my notes, saved here by mistake\n" * 200
    path.write_bytes(notes)
    sandbox_seen = len(sandbox.requests)
    with pytest.raises(pk.CacheUnavailable) as caught:
        pk.Client(sandbox.api_key, sandbox.url, cache=path, progress=False)
    message = str(caught.value)
    assert caught.value.cache == str(path)
    assert str(path) in message
    assert "propertykit cache clear" in message and "move the file" in message
    assert isinstance(caught.value.__cause__, sqlite3.DatabaseError)
    assert path.read_bytes() == notes  # before: the same error, raw from sqlite3
    assert len(sandbox.requests) == sandbox_seen  # nothing was sent


def _damage(path: Path) -> None:
    """Overwrite every page after the first with garbage (the header still says SQLite)."""
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    assert len(data) > 2 * page, "the cache should span several pages"
    data[page:] = b"\xa5" * (len(data) - page)
    path.write_bytes(bytes(data))


def test_a_damaged_file_found_mid_lookup_raises_and_sends_nothing(sandbox, tmp_path: Path) -> None:
    path = tmp_path / "http_cache.sqlite"
    with pk.Client(sandbox.api_key, sandbox.url, cache=path, progress=False) as client:
        client.properties(sandbox.location_ids[:200])  # 4 batches cached
    _damage(path)
    damaged = path.read_bytes()
    seen = len(sandbox.requests)
    with (
        pk.Client(sandbox.api_key, sandbox.url, cache=path, progress=False) as client,
        pytest.raises(pk.CacheUnavailable) as caught,
    ):
        client.properties(sandbox.location_ids[:400])  # before: sqlite3.DatabaseError, raw
    assert caught.value.cache == str(path)
    assert "propertykit cache clear" in str(caught.value)
    assert len(sandbox.requests) == seen  # no batch sent whose answer could not be stored
    assert path.read_bytes() == damaged  # not replaced behind the user's back


def test_cache_clear_removes_a_file_it_cannot_read_when_asked(
    new_process: NewProcess, tmp_path: Path
) -> None:
    path = tmp_path / "http_cache.sqlite"
    path.write_bytes(b"not a database at all\n" * 100)
    info = _cache_cli(new_process, "info", "--path", str(path))
    assert info.returncode == 1
    assert "propertykit cache clear" in info.stderr and str(path) in info.stderr
    assert path.exists()
    cleared = _cache_cli(new_process, "clear", "--path", str(path))
    assert cleared.returncode == 0, cleared.stderr
    assert f"Removed {path}" in cleared.stdout
    assert not path.exists()
