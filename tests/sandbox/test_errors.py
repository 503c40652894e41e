"""Error shapes and unknown paths: plain-text 404 outside /v1/, 403 "not available" inside it."""

from __future__ import annotations

import http.client
import json

import pytest

from .conftest import Api


@pytest.mark.parametrize("path", ["/", "/v2/property/health", "/favicon.ico", "/v1"])
def test_path_outside_v1_is_plain_text_404(shared_api: Api, path: str) -> None:
    answer = shared_api.get(path)
    assert answer.status_code == 404
    assert answer.text == "Not Found"
    assert answer.headers["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize(
    "path",
    [
        "/v1/",
        "/v1/unknown",
        "/v1/property/",
        "/v1/property/sources/",
        "/v1/property/a/b/c/d",
        "/v1/title-deeds/NGL100000",
        "/v1/title-deeds/NGL100000/refund",
    ],
)
@pytest.mark.parametrize("key", ["demo", None])
def test_unknown_path_under_v1_is_403_not_available(
    shared_api: Api, path: str, key: str | None
) -> None:
    answer = shared_api.get(path, key=key)
    assert answer.status_code == 403
    assert answer.json() == {"message": "This endpoint is not available"}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1/property/health"),
        ("DELETE", "/v1/property/L00000001"),
        ("GET", "/v1/title-deeds/NGL100000/purchase"),
        ("POST", "/v1/title-deeds/NGL100000/purchase-status"),
    ],
)
def test_wrong_method_on_a_known_path_is_403(shared_api: Api, method: str, path: str) -> None:
    answer = shared_api.request(method, path)
    assert answer.status_code == 403
    assert answer.json()["message"] == "This endpoint is not available"


def test_usual_error_body_has_success_false_and_code_and_message(shared_api: Api) -> None:
    body = shared_api.get("/v1/property/sources/not-a-source-id").json()
    assert body["success"] is False
    assert set(body["error"]) == {"code", "message"}
    assert body["error"]["code"] == "invalid_source_id"


def test_keep_alive_serves_several_requests_on_one_connection(shared_api: Api) -> None:
    host, port = shared_api.sb.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        statuses = []
        for path in ("/v1/property/health", "/nowhere", "/v1/unknown", "/v1/property/health"):
            connection.request("GET", path, headers={"x-api-key": shared_api.sb.api_key})
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
            assert response.getheader("Content-Length") is not None
        assert statuses == [200, 404, 403, 200]
    finally:
        connection.close()


def test_every_request_is_logged_with_its_status(api: Api) -> None:
    api.get("/v1/property/health")
    api.get("/elsewhere", params={"a": "1"})
    records = api.sb.requests
    assert [(r.method, r.path, r.query, r.status) for r in records] == [
        ("GET", "/v1/property/health", "", 200),
        ("GET", "/elsewhere", "a=1", 404),
    ]
    api.sb.reset_log()
    assert api.sb.requests == []


def test_error_bodies_are_valid_json_or_plain_text(shared_api: Api) -> None:
    for path in ("/v1/property/health", "/v1/x"):
        json.loads(shared_api.get(path, key=None).text)
