"""Complete 200 answers that cannot be used: raised at once with what came back, never cached."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

import propertykit as pk
from tests.hostile._servers import KEY, Seen, envelope, hostile, records, send

IDS = ["L0", "L1"]  # as records(0, 2) serves them


def answering(status: int, body: bytes | str | object, **options):  # type: ignore[no-untyped-def]
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, status, body, **options)

    return hostile(behaviour)


NOT_JSON = {
    "html from a proxy": b"<html><body><h1>502 Bad Gateway</h1></body></html>",
    "empty": b"",
    "not utf-8": b"\xff\xfe\xfa not text",
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "json then junk": b'{"success": true, "result": []} trailing',
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("body", NOT_JSON.values(), ids=NOT_JSON.keys())
def test_a_complete_200_that_is_not_json_is_paid_once_and_raised(client_of, body) -> None:
    with answering(200, body, content_type="text/html") as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse) as caught:
            client.properties(IDS)
    assert len(server.requests) == 1  # before: 4 paid requests, reported as truncation
    assert caught.value.status_code == 200
    assert "200" in str(caught.value)
    assert caught.value.body_start == body[:200].decode("utf-8", "replace")
    assert client.cache_info()["entries"] == 0
    assert client.usage.requests_sent == 1


@pytest.mark.timeout(30)
def test_the_first_bytes_of_the_body_are_in_the_message(client_of) -> None:
    with answering(200, NOT_JSON["html from a proxy"]) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse, match="502 Bad Gateway"):
            client.properties(IDS)


NOT_RECORDS = {
    "success false": {"success": False, "error": "maintenance"},
    "result a string": {"success": True, "result": "ok"},
    "result a number": {"success": True, "result": 3},
    "result null": {"success": True, "result": None},
    "result an object": {"success": True, "result": {"propertyId": "P1"}},
    "no result": {"success": True, "data": []},
    "a bare string": "records",
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("body", NOT_RECORDS.values(), ids=NOT_RECORDS.keys())
def test_a_200_without_a_list_of_records_raises_and_is_never_cached(client_of, body) -> None:
    with answering(200, body) as server:
        client = client_of(server)
        for _ in range(2):
            with pytest.raises(pk.BadResponse):
                client.properties(IDS)
    assert len(server.requests) == 2  # asked again: nothing wrong was cached
    assert client.cache_info()["entries"] == 0


@pytest.mark.timeout(30)
def test_success_false_on_sources_and_suggest_raises_too(client_of) -> None:
    with answering(200, {"success": False, "error": {"code": "x", "message": "down"}}) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse, match="success: false"):
            client.sources(["zoopla::1"])
        with pytest.raises(pk.BadResponse, match="success: false"):
            client.suggest("Mill")
    assert len(server.requests) == 2


@pytest.mark.timeout(30)
def test_a_body_cut_short_is_retried_and_only_the_whole_one_cached(client_of) -> None:
    whole = envelope(records(0, 2))

    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if len(seen) == 1:
            send(handler, 200, b'{"success": true, "res', length=500)  # announced 500
        else:
            send(handler, 200, whole)

    with hostile(behaviour) as server:
        client = client_of(server)
        assert client.properties(IDS)["propertyId"].tolist() == ["P0", "P1"]
        assert client.properties(IDS)["propertyId"].tolist() == ["P0", "P1"]  # from the cache
    assert len(server.requests) == 2
    assert client.usage.retries == 1


@pytest.mark.timeout(30)
def test_a_body_always_cut_short_ends_as_a_truncation_after_the_retries(client_of) -> None:
    with answering(200, b'{"success": true', length=400) as server:
        client = client_of(server, max_retries=2)
        with pytest.raises(pk.NetworkError) as caught:
            client.properties(IDS)
    assert caught.value.kind == "truncated"
    assert len(server.requests) == 3


@pytest.mark.timeout(30)
def test_a_key_echoed_in_a_bad_body_never_reaches_the_error(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        echoed = handler.headers.get("x-api-key", "")
        send(handler, 200, f"<html>your key {echoed} is fine</html>")

    with hostile(behaviour) as server:
        client = client_of(server)
        with pytest.raises(pk.BadResponse) as caught:
            client.properties(IDS)
    assert server.requests[0].headers.get("x-api-key") == KEY
    assert KEY not in str(caught.value)
    assert KEY not in repr(caught.value)
    assert KEY not in caught.value.body_start


@pytest.mark.timeout(30)
def test_a_500_then_a_200_caches_only_the_200(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if len(seen) == 1:
            send(handler, 500, {"success": False, "error": "boom"})
        else:
            send(handler, 200, envelope(records(0, 2)))

    with hostile(behaviour) as server:
        client = client_of(server)
        assert len(client.properties(IDS)) == 2
        assert len(client.properties(IDS)) == 2
    assert len(server.requests) == 2
    assert client.cache_info()["entries"] == 1
