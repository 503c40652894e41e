"""The API key travels only in the x-api-key header: never in a file, log, repr, error or URL."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from propertykit.client import Client
from propertykit.errors import AuthenticationError, ConfigError, PropertyKitError
from tests._serving import serving, url_of

OTHER_KEY = "pk_live_" + "0f" * 16


def all_cache_bytes(folder: Path) -> bytes:
    """Every byte of every file of the cache folder (the database, -wal, -shm, journals)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    assert any(p.suffix == ".sqlite" for p in files)
    return b"".join(p.read_bytes() for p in files)


def test_no_cache_file_holds_the_key(profiled_sandbox, make_client, cache_file):
    sb = profiled_sandbox
    client = make_client(sb)
    client.property_records(sb.location_ids[:3])
    client.source_records(sb.source_ids[:4], page_size=2)
    client.suggest("Mill")
    client.health()
    with pytest.raises(PropertyKitError):
        client.source_records(["nosuch::" + "x" * 3], attributes=["nope"])
    assert client.cache_info()["entries"] >= 4
    stored = all_cache_bytes(cache_file.parent)
    for key in (sb.api_key, sb.api_key.upper()):
        assert key.encode() not in stored
    assert sb.api_key[-12:].encode() not in stored


def test_the_key_is_sent_only_in_the_header_never_in_the_url(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    client.property_records(sb.location_ids[:2])
    client.source_records(sb.source_ids[:2])
    client.suggest("Mill")
    assert sb.requests
    for record in sb.requests:
        assert sb.api_key not in record.path + "?" + record.query
        assert record.status == 200  # authenticated by the header alone


def test_repr_shows_no_part_of_the_key(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    shown = repr(client) + str(client) + repr(client.usage) + client.usage._repr_html_()
    # The internals a user meets in a debugger or a traceback's locals, too.
    shown += repr(client._transport) + repr(vars(client))
    # Object addresses (<... at 0x7f706a...>) are no part of the key, but a key's last four hex
    # digits turn up in them now and then: left out, so that only what the key shows is seen.
    shown = re.sub(r"0x[0-9a-fA-F]+", "<address>", shown)
    assert sb.api_key[-4:] not in shown
    assert sb.api_key[8:16] not in shown
    assert "api_key='***'" in repr(client)


def test_an_authentication_error_never_shows_the_key(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, api_key=OTHER_KEY)
    with pytest.raises(AuthenticationError) as caught:
        client.property_records(sb.location_ids[:1])
    error = caught.value
    assert error.status_code == 401
    for text in (str(error), repr(error), error.body, error.url or "", error.message or ""):
        assert OTHER_KEY not in text
        assert OTHER_KEY[-6:] not in text


def test_a_key_echoed_in_an_error_body_is_blanked(make_client):
    key = "pk_live_" + "ab" * 16

    def answer(handler: BaseHTTPRequestHandler) -> None:
        echoed = handler.headers.get("x-api-key", "")
        reply(handler, 401, {"error": {"code": "bad_key", "message": f"Bad key {echoed}"}})

    with (
        local_server(answer) as url,
        Client(key, url, cache=False, progress=False) as client,
        pytest.raises(AuthenticationError) as caught,
    ):
        client.health()
    assert key not in caught.value.body
    assert key not in str(caught.value)
    assert "Bad key ***" in str(caught.value)


def test_no_log_line_holds_the_key(profiled_sandbox, make_client, caplog):
    sb = profiled_sandbox
    caplog.set_level(logging.DEBUG)  # every logger: propertykit, urllib3, requests_cache
    client = make_client(sb, max_retries=1)
    sb.inject_fault("error", status=503, count=1)
    client.property_records(sb.location_ids[:3])
    client.property_records(sb.location_ids[:3])
    with pytest.raises(PropertyKitError):
        make_client(sb, api_key=OTHER_KEY, cache=False).health()
    assert any(r.name == "propertykit" for r in caplog.records)
    for record in caplog.records:
        text = record.getMessage() + repr(record.args)
        assert sb.api_key not in text
        assert OTHER_KEY not in text


def test_missing_key_error_names_the_variable_not_a_key(monkeypatch):
    monkeypatch.delenv("PROPERTYKIT_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="PROPERTYKIT_API_KEY"):
        Client(base_url="http://127.0.0.1:9", cache=False)


def test_a_key_with_whitespace_is_refused_without_showing_it():
    with pytest.raises(ConfigError) as caught:
        Client("pk_live_abc\r\nX-Evil: 1", "http://127.0.0.1:9", cache=False)
    assert "pk_live_abc" not in str(caught.value)


# -- redirects ------------------------------------------------------------------------------------


def reply(handler: BaseHTTPRequestHandler, status: int, payload: object, **headers: str) -> None:
    body = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


class local_server:
    """A tiny HTTP server on 127.0.0.1 answering every GET with ``answer(handler)``."""

    def __init__(self, answer) -> None:
        self.seen: list[dict[str, str]] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # answers written in pieces leave at once

            def do_GET(self) -> None:
                seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
                answer(self)

            def log_message(self, *args: object) -> None:
                pass

        self._handler = Handler
        self._running = ExitStack()

    def __enter__(self) -> str:
        return url_of(self._running.enter_context(serving(self._handler)))

    def __exit__(self, *exc: object) -> None:
        self._running.close()


@pytest.fixture
def two_hosts() -> Iterator[tuple[local_server, local_server, str, str]]:
    """Host A redirects every request to host B (another host name and port)."""
    target = local_server(lambda h: reply(h, 200, {"success": True, "result": []}))
    with target as target_url:
        other_host = target_url.replace("127.0.0.1", "localhost")
        origin = local_server(lambda h: reply(h, 302, {}, Location=f"{other_host}{h.path}"))
        with origin as origin_url:
            yield origin, target, origin_url, other_host


def test_a_redirect_to_another_host_does_not_carry_the_key(two_hosts, tmp_path):
    origin, target, origin_url, _ = two_hosts
    key = "pk_live_" + "cd" * 16
    with Client(key, origin_url, cache=tmp_path / "c.sqlite", progress=False) as client:
        client.property_records(["L1"])
    assert origin.seen[0]["x-api-key"] == key
    assert target.seen, "the redirect was not followed"
    assert "x-api-key" not in target.seen[0]
    assert key.encode() not in b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


def test_a_same_host_redirect_keeps_the_key_but_stores_it_nowhere(tmp_path):
    key = "pk_live_" + "ef" * 16

    def answer(handler: BaseHTTPRequestHandler) -> None:
        if handler.path.startswith("/v1/property/old"):
            reply(handler, 301, {}, Location="/v1/property/new")
        else:
            reply(handler, 200, {"success": True, "result": [{"propertyId": "P1"}]})

    server = local_server(answer)
    with server as url, Client(key, url, cache=tmp_path / "c.sqlite", progress=False) as client:
        assert client.property_records(["old"]) == [{"propertyId": "P1"}]
        assert client.cache_info()["entries"] >= 1
    assert [seen["path"] for seen in server.seen] == ["/v1/property/old", "/v1/property/new"]
    assert all(seen["x-api-key"] == key for seen in server.seen)
    assert key.encode() not in b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
