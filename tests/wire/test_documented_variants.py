"""The real service's documented envelope and error variants, served by a small scripted server.

From Vepler's public material (the project's notes on the real service): envelopes with
``total``/``limit``/``offset`` instead of ``totalSize``/``size``/``nextOffset``, list keys other
than ``result``; errors as ``{"error": {"code", "message"}}`` or older upper-case codes with
``details``, ``request_id`` and ``timestamp``; ``X-RateLimit-*`` headers only sometimes; health
``{status, service, timestamp, version}`` without ``success``.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import propertykit as pk
from propertykit.client import Clock
from tests._serving import serving, url_of

#: Every test here talks to a local server: none may hang.
pytestmark = pytest.mark.timeout(60)

KEY = "vpr_live_" + "ab" * 16
IDS = [f"L{i:08d}" for i in range(12)]

Answer = tuple[int, dict[str, str], bytes]


def records(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"propertyId": f"PK{i:08d}", "locationId": f"L{i:08d}"} for i in range(start, start + n)
    ]


class Scripted:
    """A server on 127.0.0.1 answering each request with ``answer(path, query, body)``."""

    def __init__(self, answer: Callable[[str, dict[str, str], bytes], Answer]) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # answers written in pieces leave at once
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.seen.append((self.command, parts.path, query))
                status, headers, payload = answer(parts.path, query, body)
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _any

            def log_message(self, *args: object) -> None:
                pass

        self._handler = Handler
        self._running = ExitStack()

    def __enter__(self) -> Scripted:
        self.server = self._running.enter_context(serving(self._handler))
        return self

    @property
    def url(self) -> str:
        return url_of(self.server)

    def __exit__(self, *exc: object) -> None:
        self._running.close()


def json_answer(status: int, payload: object, **headers: str) -> Answer:
    return status, headers, json.dumps(payload).encode()


@pytest.fixture
def serve_script(tmp_path) -> Iterator[Callable[..., tuple[Scripted, pk.Client]]]:
    made: list[tuple[Scripted, pk.Client]] = []
    sleeps: list[float] = []

    def start(answer: Callable[[str, dict[str, str], bytes], Answer], **kwargs: Any):
        server = Scripted(answer).__enter__()
        kwargs.setdefault("cache", tmp_path / "cache.sqlite")
        kwargs.setdefault("clock", Clock(sleep=sleeps.append))
        client = pk.Client(KEY, server.url, profile="vepler", progress=False, **kwargs)
        made.append((server, client))
        return server, client

    yield start
    for server, client in made:
        client.close()
        server.__exit__()


# -- envelopes --------------------------------------------------------------------------------


def paged_by_total(total: int, key: str = "result") -> Callable[..., Answer]:
    """Pages in the ``total``/``limit``/``offset`` envelope (no hasMore, no nextOffset)."""

    def answer(path: str, query: dict[str, str], body: bytes) -> Answer:
        limit = int(query.get("limit", 25))
        offset = int(query.get("offset", 0))
        page = records(max(0, min(limit, total - offset)), offset)
        return json_answer(200, {"success": True, key: page, "total": total, "limit": limit,
                                 "offset": offset})  # fmt: skip

    return answer


@pytest.mark.parametrize("key", ["result", "applications"])
def test_sources_follow_total_limit_offset_pages_under_any_list_key(serve_script, key):
    server, client = serve_script(paged_by_total(23, key))
    got = client.source_records([f"rightmove::{i}" for i in range(23)], page_size=5)
    assert [r["locationId"] for r in got] == [f"L{i:08d}" for i in range(23)]
    assert [q["offset"] for _, _, q in server.seen] == ["0", "5", "10", "15", "20"]


def test_location_lookups_follow_pages_when_the_envelope_says_there_are_more(serve_script):
    def answer(path: str, query: dict[str, str], body: bytes) -> Answer:
        offset = int(query.get("offset", 0))
        page = records(min(5, 12 - offset), offset)
        more = offset + len(page) < 12
        return json_answer(200, {"success": True, "result": page, "totalSize": 12,
                                 "size": len(page), "hasMore": more,
                                 "nextOffset": offset + len(page)})  # fmt: skip

    server, client = serve_script(answer)
    df = client.properties(IDS)
    assert list(df["locationId"]) == IDS
    assert len(server.seen) == 3


def test_location_lookups_follow_total_envelopes_too(serve_script):
    server, client = serve_script(paged_by_total(12))
    assert len(client.property_records(IDS)) == 12
    assert len(server.seen) == 1  # 25 per page by default: one page holds all 12


@pytest.mark.parametrize(
    "body",
    [
        b'{"weird": 1}',
        b'"just a string"',
        b"42",
        b'{"properties_list": [{"propertyId": "P"}]}',
        b'{"success": true, "data": [{"propertyId": "P"}]}',
        b'{"success": true, "total": 0}',
    ],
    ids=["unknown-object", "string", "number", "unknown-key", "undocumented-key", "no-list"],
)
def test_a_body_matching_no_envelope_says_so_with_its_first_bytes(serve_script, body):
    _, client = serve_script(lambda p, q, b: (200, {}, body))
    with pytest.raises(pk.BadResponse) as caught:
        client.property_records(IDS[:2])
    assert caught.value.body_start[:8] == body.decode()[:8]
    assert body.decode()[:8] in str(caught.value)
    assert isinstance(caught.value, pk.PropertyKitError)


def test_an_empty_total_envelope_is_no_records_not_an_error(serve_script):
    server, client = serve_script(
        lambda p, q, b: json_answer(200, {"success": True, "result": [], "total": 0, "offset": 0})
    )
    assert client.property_records(IDS[:2]) == []
    assert len(server.seen) == 1


# -- errors -----------------------------------------------------------------------------------

ERROR_BODIES = [
    ("current", 429, {"error": {"code": "rate_limit_exceeded", "message": "Slow down"}},
     "rate_limit_exceeded", None, None),
    ("older", 429, {"error": {"code": "RATE_LIMIT_EXCEEDED", "message": "Slow down",
                              "details": {"limit": 60}, "request_id": "req_abc",
                              "timestamp": "2024-01-15T00:00:00Z"}},
     "RATE_LIMIT_EXCEEDED", "req_abc", {"limit": 60}),
    ("beside", 401, {"success": False, "error": {"code": "INVALID_API_KEY", "message": "Bad key"},
                     "request_id": "req_9", "details": ["x-api-key"]},
     "INVALID_API_KEY", "req_9", ["x-api-key"]),
    ("camel", 404, {"error": {"code": "NOT_FOUND", "message": "None", "requestId": "r-1"}},
     "NOT_FOUND", "r-1", None),
    ("422", 422, {"error": {"code": "VALIDATION_ERROR", "message": "beds must be an array",
                            "details": [{"field": "beds"}]}},
     "VALIDATION_ERROR", None, [{"field": "beds"}]),
    ("409", 409, {"error": {"code": "conflict", "message": "Conflict"}}, "conflict", None, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("status", "payload", "code", "request_id", "details"),
    [case[1:] for case in ERROR_BODIES],
    ids=[case[0] for case in ERROR_BODIES],
)
def test_documented_error_bodies_are_read_whole(
    serve_script, status, payload, code, request_id, details
):
    headers = {"Retry-After": "86400000"} if status == 429 else {}  # too long to sleep through
    _, client = serve_script(lambda p, q, b: json_answer(status, payload, **headers))
    with pytest.raises(pk.ApiError) as caught:
        client.property_records(IDS[:1])
    error = caught.value
    assert (error.status_code, error.code, error.request_id, error.details) == (
        status,
        code,
        request_id,
        details,
    )
    assert error.code_is(code.lower()) and error.code_is(code.upper())
    assert not error.code_is("something_else")
    if request_id:
        assert request_id in str(error)
    assert KEY not in str(error) and KEY not in repr(error)


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, pk.ApiError), (401, pk.AuthenticationError), (403, pk.PermissionDenied),
     (404, pk.NotFound), (422, pk.ApiError)],
)  # fmt: skip
def test_each_documented_client_status_raises_at_once(serve_script, status, kind):
    server, client = serve_script(
        lambda p, q, b: json_answer(status, {"error": {"code": "X", "message": "m"}})
    )
    with pytest.raises(kind):
        client.property_records(IDS[:1])
    assert len(server.seen) == 1


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_each_documented_server_status_is_retried(serve_script, status):
    server, client = serve_script(
        lambda p, q, b: json_answer(status, {"error": {"code": "INTERNAL", "message": "m"}}),
        max_retries=2,
    )
    with pytest.raises(pk.ServerError) as caught:
        client.property_records(IDS[:1])
    assert caught.value.code_is("internal")
    assert len(server.seen) == 3


def _limited_then_ok(reset_headers: Callable[[], dict[str, str]]) -> Callable[..., Answer]:
    calls = {"n": 0}

    def answer(path: str, query: dict[str, str], body: bytes) -> Answer:
        calls["n"] += 1
        if calls["n"] == 1:
            payload = {"error": {"code": "RATE_LIMIT_EXCEEDED", "message": "Too many"}}
            return json_answer(429, payload, **reset_headers())
        return json_answer(200, {"success": True, "result": records(1)})

    return answer


def test_x_ratelimit_reset_as_a_unix_time_is_the_wait(serve_script):
    headers = lambda: {  # noqa: E731
        "X-RateLimit-Limit": "60",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(int(datetime.now(UTC).timestamp()) + 7),
    }
    sleeps: list[float] = []
    server, client = serve_script(_limited_then_ok(headers), clock=Clock(sleep=sleeps.append))
    assert len(client.property_records(IDS[:1])) == 1
    assert len(server.seen) == 2
    assert len(sleeps) == 1 and 5 <= sleeps[0] <= 9


def test_x_ratelimit_reset_after_is_the_wait(serve_script):
    sleeps: list[float] = []
    _, client = serve_script(
        _limited_then_ok(lambda: {"X-RateLimit-Reset-After": "3"}), clock=Clock(sleep=sleeps.append)
    )
    client.property_records(IDS[:1])
    assert len(sleeps) == 1 and 3 <= sleeps[0] <= 4


def test_a_429_without_any_rate_limit_header_still_works(serve_script):
    sleeps: list[float] = []
    server, client = serve_script(_limited_then_ok(dict), clock=Clock(sleep=sleeps.append))
    assert len(client.property_records(IDS[:1])) == 1
    assert len(server.seen) == 2 and len(sleeps) == 1


def test_a_long_x_ratelimit_reset_raises_with_the_wait(serve_script):
    far = lambda: {"X-RateLimit-Reset": str(int(datetime.now(UTC).timestamp()) + 600)}  # noqa: E731
    server, client = serve_script(_limited_then_ok(far), max_wait=60)
    with pytest.raises(pk.RateLimited) as caught:
        client.property_records(IDS[:1])
    assert caught.value.retry_after is not None and caught.value.retry_after > 500
    assert len(server.seen) == 1


# -- health -----------------------------------------------------------------------------------


def health_answer(status: str, http: int = 200) -> Callable[..., Answer]:
    payload = {"status": status, "service": "property", "timestamp": "2024-01-15T00:00:00Z",
               "version": "1.2.3"}  # fmt: skip
    return lambda p, q, b: json_answer(http, payload)


def test_healthy_health_has_no_success_field_and_is_fine(serve_script):
    server, client = serve_script(health_answer("healthy"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        answer = client.health()
    assert answer["status"] == "healthy" and answer["version"] == "1.2.3"
    assert server.seen[0][1] == "/v1/property/health"


def test_degraded_health_warns(serve_script):
    _, client = serve_script(health_answer("degraded"))
    with pytest.warns(pk.errors.ServiceDegradedWarning, match="degraded"):
        assert client.health()["status"] == "degraded"


def test_unhealthy_health_raises_even_with_http_200(serve_script):
    _, client = serve_script(health_answer("unhealthy"))
    with pytest.raises(pk.ServiceUnhealthy) as caught:
        client.health()
    assert caught.value.health["service"] == "property"


def test_a_503_saying_unhealthy_raises_service_unhealthy_after_retries(serve_script):
    server, client = serve_script(health_answer("unhealthy", 503), max_retries=1)
    with pytest.raises(pk.ServiceUnhealthy) as caught:
        client.health()
    assert isinstance(caught.value.__context__, pk.ServerError)
    assert len(server.seen) == 2


def test_health_of_another_service_uses_its_path(serve_script):
    server, client = serve_script(health_answer("healthy"))
    client.health("planning")
    assert server.seen[0][1] == "/v1/planning/health"
    with pytest.raises(pk.InvalidInput):
        client.health("../etc")
