"""Every error the sandbox can answer becomes the right typed error, with status and raw body."""

from __future__ import annotations

import pytest

import propertykit as pk
from propertykit.errors import (
    ApiError,
    AuthenticationError,
    NotFound,
    PermissionDenied,
    ServerError,
)


@pytest.mark.parametrize(
    ("body", "expected_code", "expected_message", "raw_starts"),
    [
        ("object", "service_unavailable", None, '{"success":false,"error":{'),
        ("string", None, "Service Unavailable; try again later.", '{"success":false,"error":"'),
        ("text", None, "Service Unavailable", "Service Unavailable"),
        ("html", None, "503 Service Unavailable", "<html>"),
        ("empty", None, None, ""),
    ],
)
def test_a_5xx_body_of_any_shape_gives_server_error(
    profiled_sandbox, make_client, body, expected_code, expected_message, raw_starts
):
    sb = profiled_sandbox
    client = make_client(sb, max_retries=0)
    sb.inject_fault("error", status=503, body=body)
    with pytest.raises(ServerError) as caught:
        client.property_records(sb.location_ids[:1])
    error = caught.value
    assert error.status_code == 503
    assert error.body.startswith(raw_starts)
    if expected_code is not None:
        assert error.code == expected_code
    if expected_message is not None:
        assert error.message == expected_message
    assert str(error).startswith("HTTP 503")
    assert error.url.startswith(sb.url + "/v1/property/")


def test_invalid_key_is_authentication_error_with_the_services_words(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, api_key="pk_live_" + "1" * 32)
    with pytest.raises(AuthenticationError) as caught:
        client.health()
    assert caught.value.code_is("unauthorized")  # upper-case under vepler
    assert "x-api-key" in caught.value.message
    assert "http 401 unauthorized: missing or invalid api key" in str(caught.value).lower()
    assert isinstance(caught.value, pk.PropertyKitError)


def test_unknown_endpoint_is_permission_denied_not_available(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, endpoints=pk.Endpoints(suggest_path="/v1/property/suggestions/x"))
    with pytest.raises(PermissionDenied) as caught:
        client.suggest("Mill")
    assert caught.value.message == "This endpoint is not available"
    assert caught.value.code is None


def test_restricted_key_gets_403_with_error_as_a_string(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, api_key=sb.restricted_key)
    path = pk.Endpoints().status_path.replace("{titleNumber}", sb.title_numbers[0])
    with pytest.raises(PermissionDenied) as caught:
        client._transport.fetch_json(path, endpoint="purchase_status")
    assert caught.value.message == "This API key does not have access to title deeds."
    assert caught.value.body.startswith("{")


def test_plain_text_404_outside_v1(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb, endpoints=pk.Endpoints(health_path="/health"))
    with pytest.raises(NotFound) as caught:
        client.health()
    assert caught.value.body == "Not Found"
    assert caught.value.message == "Not Found"


def test_400_is_a_plain_api_error_with_code_and_message(profiled_sandbox, make_client):
    sb = profiled_sandbox
    client = make_client(sb)
    with pytest.raises(ApiError) as caught:
        client.source_records(sb.source_ids[:1], attributes=["colour"])
    assert type(caught.value) is ApiError
    assert caught.value.code_is("invalid_attribute")  # upper-case under vepler
    assert "colour" in caught.value.message
