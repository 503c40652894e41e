"""_json.loads decodes exactly as json.loads does, with the garbage collector paused."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from typing import Any

import pytest

from propertykit import jsonio as _json
from propertykit.sandbox import generate_records


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """Generations the cyclic garbage collector runs while the test runs."""
    seen: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(record)
    try:
        yield seen
    finally:
        gc.callbacks.remove(record)


def test_decodes_a_page_exactly_as_the_standard_library() -> None:
    body = json.dumps({"success": True, "result": generate_records(50), "hasMore": False}).encode()
    assert _json.loads(body) == json.loads(body)
    assert _json.loads(body.decode()) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [b'{"big": 123456789012345678901234567890}', b'{"x": NaN}', '{"t": "\u00e9"}'.encode("utf-16")],
)
def test_whatever_the_standard_library_accepts_is_accepted(body: bytes) -> None:
    assert repr(_json.loads(body)) == repr(json.loads(body))


@pytest.mark.parametrize("body", [b"", b"<html>502 Bad Gateway</html>", b'{"result": ['])
def test_invalid_json_raises_a_json_decode_error(body: bytes) -> None:
    with pytest.raises(json.JSONDecodeError):
        _json.loads(body)


def test_undecodable_bytes_raise_a_value_error() -> None:
    with pytest.raises(ValueError):
        _json.loads(b"\xff\xfe\x00")


def test_the_collector_does_not_run_during_a_decode(collections: list[int]) -> None:
    body = json.dumps([{"a": [i, {"b": i}]} for i in range(20_000)]).encode()
    json.loads(body)
    assert collections, "decoding this many containers normally sets off the collector"
    collections.clear()
    _json.loads(body)
    assert collections == []


def test_the_collector_state_is_restored() -> None:
    assert gc.isenabled()
    _json.loads(b"[1]")
    assert gc.isenabled()
    with pytest.raises(ValueError):
        _json.loads(b"[")
    assert gc.isenabled()
    gc.disable()
    try:
        _json.loads(b"[1]")
        assert not gc.isenabled()
    finally:
        gc.enable()
