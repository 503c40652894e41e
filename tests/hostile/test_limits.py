"""Servers that would eat memory or time: a cap on decoded bodies, one deadline per request."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler

import pytest

import propertykit as pk
from propertykit.client import Clock
from tests.hostile._servers import Seen, envelope, gzip_bomb, hostile, records, send, trickle

IDS = ["L0", "L1"]  # as records(0, 2) serves them
MiB = 2**20


def test_the_bomb_is_a_whole_gzip_stream_with_its_true_crc_and_length() -> None:
    """The bombs below are real: a decoder without a cap reads one whole, its checks passing."""
    assert gzip.decompress(gzip_bomb(5)) == b"\0" * (5 * MiB)


@pytest.mark.timeout(60)
def test_a_gzip_bomb_stops_at_the_cap_without_eating_memory(client_of) -> None:
    bomb = gzip_bomb(512)  # about 0.5 MB on the wire, 512 MiB once inflated

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 200, bomb, headers={"Content-Encoding": "gzip"})

    with hostile(behaviour) as server:
        client = client_of(server, max_body_bytes=8 * MiB)
        tracemalloc.start()
        try:
            with pytest.raises(pk.ResponseTooLarge, match="max_body_bytes") as caught:
                client.properties(IDS)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert len(server.requests) == 1  # not retried: the same request gets the same bomb
    assert peak < 64 * MiB  # before: +1.9 GB for a bomb of 2 GB
    assert caught.value.limit == 8 * MiB
    assert client.cache_info()["entries"] == 0


@pytest.mark.timeout(60)
def test_an_endless_chunked_body_stops_at_the_cap(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunk = b" " * 65536
        try:
            for _ in range(10_000):
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            handler.close_connection = True

    with hostile(behaviour) as server:
        client = client_of(server, max_body_bytes=4 * MiB)
        with pytest.raises(pk.ResponseTooLarge):
            client.properties(IDS)
    assert len(server.requests) == 1


@pytest.mark.timeout(60)
def test_a_body_just_under_the_cap_is_read(client_of) -> None:
    body = json.dumps(envelope(records(0, 2), padding="x" * (MiB - 200))).encode()

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 200, body)

    with hostile(behaviour) as server:
        client = client_of(server, max_body_bytes=len(body))
        assert len(client.properties(IDS)) == 2


@pytest.mark.timeout(20)
def test_a_server_trickling_its_body_ends_by_the_deadline(client_of) -> None:
    body = json.dumps(envelope(records(0, 2))).encode()  # ~100 bytes: 10 s at 10 bytes a second

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        trickle(handler, body, every=0.1)

    with hostile(behaviour) as server:
        client = client_of(server, timeout=1, deadline=0.5)
        with pytest.raises(pk.NetworkError, match="deadline") as caught:
            client.properties(IDS)  # before: still running after 20 s with timeout=1
    assert caught.value.kind == "timeout"
    assert len(server.requests) == 1
    assert client.cache_info()["entries"] == 0


@pytest.mark.timeout(20)
def test_a_server_that_never_answers_ends_by_the_deadline(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        time.sleep(15)

    with hostile(behaviour) as server:
        client = client_of(server, timeout=10, deadline=0.5)
        with pytest.raises(pk.NetworkError) as caught:
            client.properties(IDS)
    assert caught.value.kind == "timeout"
    assert len(server.requests) == 1


@pytest.mark.timeout(20)
def test_retries_and_their_waits_end_by_the_deadline(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 503, {"success": False, "error": "busy"}, headers={"Retry-After": "0.15"})

    with hostile(behaviour) as server:
        client = client_of(server, max_retries=1000, deadline=0.75, clock=Clock(sleep=time.sleep))
        with pytest.raises(pk.ServerError):
            client.properties(IDS)
    assert 2 <= len(server.requests) <= 6  # 0.75 s of 0.15 s waits, not a thousand retries


@pytest.mark.timeout(10)
def test_deadline_and_max_body_bytes_are_checked(client_of) -> None:
    with hostile(lambda handler, seen: send(handler, 200, envelope([]))) as server:
        for bad in ({"deadline": 0}, {"deadline": "soon"}, {"max_body_bytes": 0}):
            with pytest.raises(pk.ConfigError):
                client_of(server, **bad)
    assert server.requests == []


RETRY_AFTER = {
    "1e12 seconds": "1000000000000",
    "1e308 seconds": "1e308",
    "more digits than a float": "9" * 400,
    "infinity": "inf",
    "not a number": "nan",
    "negative": "-5",
    "garbage": "soon, maybe",
    "a date in year 9999": "Fri, 31 Dec 9999 23:59:59 GMT",
    "a date in year 1": "Mon, 01 Jan 0001 00:00:00 GMT",
    "empty": "",
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("value", RETRY_AFTER.values(), ids=RETRY_AFTER.keys())
def test_any_retry_after_ends_in_rate_limited_without_long_sleeps(client_of, sleeps, value):
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        error = {"code": "rate_limit_exceeded", "message": "slow down"}
        send(handler, 429, {"success": False, "error": error}, headers={"Retry-After": value})

    with hostile(behaviour) as server:
        client = client_of(server, max_wait=5, max_retries=2)
        with pytest.raises(pk.RateLimited):  # before: a bare OverflowError for 1e12
            client.properties(IDS)
    assert all(0 <= wait <= 5 for wait in sleeps)
    assert 1 <= len(server.requests) <= 3


@pytest.mark.timeout(60)
def test_a_gzip_bomb_in_an_error_answer_stops_at_the_cap_too(client_of) -> None:
    bomb = gzip_bomb(256)

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 503, bomb, headers={"Content-Encoding": "gzip"})

    with hostile(behaviour) as server:
        client = client_of(server, max_body_bytes=4 * MiB)
        with pytest.raises(pk.ResponseTooLarge):
            client.properties(IDS)
    assert len(server.requests) == 1


@pytest.mark.timeout(60)
def test_a_gzip_answer_under_the_cap_is_read_whole_and_kept_decoded(client_of) -> None:
    served = records(0, 2)
    served[0]["note"] = "x" * 200_000  # inflates to far more than its Content-Length
    body = gzip.compress(json.dumps(envelope(served)).encode())

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 200, body, headers={"Content-Encoding": "gzip"})

    with hostile(behaviour) as server:
        client = client_of(server, max_body_bytes=8 * MiB)
        first = client.properties(IDS)
        again = client.properties(IDS)  # from the cache
    assert len(server.requests) == 1
    assert first.loc[0, "note"] == again.loc[0, "note"] == "x" * 200_000
    assert first["propertyId"].tolist() == again["propertyId"].tolist() == ["P0", "P1"]


@pytest.mark.timeout(20)
def test_the_clock_given_governs_the_deadline_as_it_does_retries(client_of) -> None:
    body = json.dumps(envelope(records(0, 2))).encode()  # ~100 bytes at 0.1 s each: 10 s real

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        trickle(handler, body, every=0.1)

    with hostile(behaviour) as server:
        # a test clock on which 1,000 s pass once the request has reached the server
        clock = Clock(sleep=lambda seconds: None, monotonic=lambda: 1000.0 * len(server.requests))
        client = client_of(server, timeout=10, deadline=300, clock=clock)
        with pytest.raises(pk.NetworkError, match="deadline of 300 s") as caught:
            client.properties(IDS)  # before: the real clock's 10 s, then the records
    assert caught.value.kind == "timeout"
    assert len(server.requests) == 1
