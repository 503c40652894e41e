"""Redirects from a hostile service: the key never reaches another origin, loops end."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

import propertykit as pk
from tests.hostile._servers import KEY, Seen, envelope, hostile, records, send


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.timeout(30)
def test_a_redirect_to_another_origin_never_carries_the_key(client_of, status) -> None:
    answer = envelope(records(0, 1))
    with hostile(lambda handler, seen: send(handler, 200, answer)) as elsewhere:

        def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
            send(handler, status, b"", headers={"Location": elsewhere.url + handler.path})

        with hostile(behaviour) as server:
            client = client_of(server)
            client.properties(["L0"])
    assert server.requests[0].headers.get("x-api-key") == KEY
    assert len(elsewhere.requests) == 1
    assert all(k.lower() != "x-api-key" for k in elsewhere.requests[0].headers)
    assert all(KEY not in value for value in elsewhere.requests[0].headers.values())


@pytest.mark.timeout(30)
def test_a_redirect_loop_ends_in_a_typed_error(client_of) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        send(handler, 302, b"", headers={"Location": handler.path})

    with hostile(behaviour) as server:
        client = client_of(server)
        with pytest.raises(pk.NetworkError):
            client.properties(["L0"])
    assert len(server.requests) <= 31  # requests' own limit of 30 redirects, never endless


@pytest.mark.timeout(30)
def test_the_key_is_in_no_cache_file_and_no_error(client_of, tmp_path) -> None:
    def behaviour(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
        if len(seen) == 1:
            send(handler, 500, {"success": False, "error": f"bad key {KEY}"})
        else:
            send(handler, 200, envelope(records(0, 1)))

    with hostile(behaviour) as server:
        client = client_of(server, max_retries=0)
        with pytest.raises(pk.ServerError) as caught:
            client.properties(["L0"])
        client.properties(["L0"])
        client.close()
    assert KEY not in str(caught.value) and KEY not in caught.value.body
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
