"""``propertykit sandbox`` from the shell: prints URL and key, serves, exits cleanly on a signal."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator

import pytest
import requests

from propertykit.cli import main
from propertykit.cli._sandbox import parse_fault
from propertykit.errors import InvalidInput
from tests._system import NewProcess


def _start(new_process: NewProcess, *extra: str) -> tuple[subprocess.Popen[str], str, str]:
    process = new_process.start("-m", "propertykit", "sandbox", "--port", "0", *extra)
    assert process.stdout is not None
    url = key = ""
    for line in process.stdout:  # the command flushes each line
        if line.startswith("Sandbox of the property-data service at "):
            url = line.rsplit(" ", 1)[1].strip()
        if line.startswith("API key: "):
            key = line.removeprefix("API key: ").strip()
            break
    assert url and key, process.stderr.read() if process.stderr else ""
    return process, url, key


@pytest.fixture
def served(new_process: NewProcess) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    process, url, key = _start(new_process, "--seed", "3")
    yield process, url, key
    if process.poll() is None:
        process.kill()
        process.wait(timeout=10)
    for stream in (process.stdout, process.stderr):
        if stream:
            stream.close()


def test_cli_health_is_401_without_key_and_200_with_the_printed_one(
    served: tuple[subprocess.Popen[str], str, str],
) -> None:
    _, url, key = served
    assert url.startswith("http://127.0.0.1:")
    assert requests.get(f"{url}/v1/property/health", timeout=10).status_code == 401
    answer = requests.get(f"{url}/v1/property/health", headers={"x-api-key": key}, timeout=10)
    assert answer.status_code == 200


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cli_exits_cleanly_on_sigint_and_sigterm(
    served: tuple[subprocess.Popen[str], str, str], sig: signal.Signals
) -> None:
    process, url, _ = served
    process.send_signal(sig)
    assert process.wait(timeout=20) == 0
    assert process.stderr is not None
    assert "Traceback" not in process.stderr.read()
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/v1/property/health", timeout=5)


def test_cli_realism_real_serves_the_real_shaped_world(new_process: NewProcess) -> None:
    from propertykit.sandbox import generate_record

    process, url, key = _start(new_process, "--n-properties", "10", "--realism", "real")
    try:
        answer = requests.get(
            f"{url}/v1/property/L00000007", headers={"x-api-key": key}, timeout=10
        )
        served = [sale["price"] for sale in answer.json()["result"][0]["saleHistory"]]
        expected = [sale["price"] for sale in generate_record(7, realism="real")["saleHistory"]]
        assert served == expected != [sale["price"] for sale in generate_record(7)["saleHistory"]]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


def test_cli_fault_flags_make_the_first_requests_fail(new_process: NewProcess) -> None:
    process, url, key = _start(new_process, "--fault", "error:2:status=502:body=text")
    try:
        statuses = [
            requests.get(
                f"{url}/v1/property/health", headers={"x-api-key": key}, timeout=10
            ).status_code
            for _ in range(3)
        ]
        assert statuses == [502, 502, 200]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("reset", {"kind": "reset"}),
        ("slow:1:delay=2.5", {"kind": "slow", "count": 1, "delay": 2.5}),
        (
            "error:3:path=/sources/:body=html",
            {"kind": "error", "count": 3, "path_contains": "/sources/", "body": "html"},
        ),
    ],
)
def test_parse_fault_reads_kind_count_and_options(text: str, expected: dict[str, object]) -> None:
    assert parse_fault(text) == expected


@pytest.mark.parametrize("text", ["error:many", "error:1:colour=red", "slow:1:delay=soon"])
def test_parse_fault_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(InvalidInput):
        parse_fault(text)


# Refused before a server starts: the command's main() in this process (the same exit status and
# lines as `python -m propertykit`, which tests/hostile/test_cli.py runs as a user does).
def test_cli_refuses_an_unknown_fault_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "--fault", "explode"]) == 1
    assert "explode" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_cli_refuses_a_port_out_of_range_in_one_line(
    capsys: pytest.CaptureFixture[str], port: str
) -> None:
    assert main(["sandbox", "--port", port]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"propertykit: error: sandbox: --port must be 0-65535, got {port}"
    ]  # before: an OverflowError traceback


def test_cli_serves_the_search_style_asked(new_process: NewProcess) -> None:
    process, url, key = _start(new_process, "--search-style", "display-only")
    try:
        answer = requests.get(f"{url}/v1/property/suggest", params={"q": "mill"},
                              headers={"x-api-key": key}, timeout=10)  # fmt: skip
        found = answer.json()["result"]
        assert found and all(set(s) == {"locationId", "displayAddress"} for s in found)
    finally:
        process.terminate()
        process.wait(timeout=20)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
