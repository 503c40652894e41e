"""Authentication: x-api-key, 401 for a missing or invalid key, 403 without title-deed access."""

from __future__ import annotations

import re

import pytest

from .conftest import Api


def test_missing_key_is_401(shared_api: Api) -> None:
    answer = shared_api.get("/v1/property/health", key=None)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("bad_key", ["pk_live_0000", "nonsense", ""])
def test_invalid_key_is_401(shared_api: Api, bad_key: str) -> None:
    answer = shared_api.get("/v1/property/" + shared_api.sb.location_ids[0], key=bad_key)
    assert answer.status_code == 401


def test_key_header_name_is_case_insensitive(shared_api: Api) -> None:
    answer = shared_api.get(
        "/v1/property/health", key=None, headers={"X-API-KEY": shared_api.sb.api_key}
    )
    assert answer.status_code == 200


def test_keys_have_the_live_form_and_differ(shared_api: Api) -> None:
    keys = {shared_api.sb.api_key, shared_api.sb.restricted_key}
    assert len(keys) == 2
    assert all(re.fullmatch(r"pk_live_[0-9a-f]{32}", key) for key in keys)


def test_each_sandbox_makes_new_keys(fresh_sandbox: object, shared_api: Api) -> None:
    assert getattr(fresh_sandbox, "api_key") != shared_api.sb.api_key  # noqa: B009
    answer = shared_api.get("/v1/property/health", key=getattr(fresh_sandbox, "api_key"))  # noqa: B009
    assert answer.status_code == 401


def test_health_verifies_a_key_without_echoing_it(shared_api: Api) -> None:
    answer = shared_api.get("/v1/property/health")
    assert answer.status_code == 200
    assert answer.json()["status"] == "ok"
    assert shared_api.sb.api_key not in answer.text


def test_restricted_key_reads_properties(shared_api: Api) -> None:
    answer = shared_api.get(
        "/v1/property/" + shared_api.sb.location_ids[0], key=shared_api.sb.restricted_key
    )
    assert answer.status_code == 200


def test_restricted_key_gets_403_with_string_error_on_purchase(api: Api) -> None:
    answer = api.buy(api.sb.title_numbers[0], "k1", key=api.sb.restricted_key)
    assert answer.status_code == 403
    body = answer.json()
    assert isinstance(body["error"], str)
    assert body["money_state"] == "not_charged"
    assert api.sb.ledger == []


def test_restricted_key_gets_403_on_purchase_status(api: Api) -> None:
    answer = api.status(api.sb.title_numbers[0], key=api.sb.restricted_key)
    assert answer.status_code == 403
    assert isinstance(answer.json()["error"], str)


def test_repr_of_sandbox_never_shows_a_key(shared_api: Api) -> None:
    text = repr(shared_api.sb)
    assert shared_api.sb.api_key not in text
    assert shared_api.sb.restricted_key not in text
    assert shared_api.sb.url in text
