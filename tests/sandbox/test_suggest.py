"""Search-suggest: prefix matches, bounded, free, and limited per account per minute."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import requests

from .conftest import NOON, Api


def _suggest(api: Api, text: str, **kwargs: Any) -> requests.Response:
    return api.get("/v1/property/suggest", params={"q": text}, **kwargs)


def test_suggest_finds_an_address_by_its_postcode_town_and_whole_text(api: Api) -> None:
    record = api.sb.record(11)
    address = record["address"]
    assert isinstance(address, dict)
    for text in (address["town"][:4], address["postcode"], address["postcodeNoSpace"].lower()):
        result = _suggest(api, text).json()["result"]
        assert result, text
        words = text.lower().split()
        assert all(
            all(word in s["displayAddress"].lower().replace(" ", "") for word in words)
            for s in result
        )
    exact = _suggest(api, address["displayAddress"]).json()["result"]
    assert exact[0] == {
        "locationId": api.sb.location_ids[11],
        "displayAddress": address["displayAddress"],
        "postcode": address["postcode"],
        "town": address["town"],
        "streetNumber": address["streetNumber"],
        "streetName": address["streetName"],
    }


def test_suggest_returns_at_most_10(api: Api) -> None:
    assert len(_suggest(api, "London").json()["result"]) == 10


def test_suggest_without_query_is_400(api: Api) -> None:
    assert api.get("/v1/property/suggest").status_code == 400


def test_suggest_limit_429_retry_after_to_end_of_minute(api: Api) -> None:
    api.sb.set_now(NOON + timedelta(seconds=45))
    api.sb.set_suggest_limit(3)
    assert [_suggest(api, "Le").status_code for _ in range(3)] == [200, 200, 200]
    refused = _suggest(api, "Le")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "15"
    error = refused.json()["error"]
    assert error["code"] == "rate_limit_exceeded"
    assert "3 requests per minute" in error["message"]


def test_suggest_window_opens_again_next_minute(api: Api) -> None:
    api.sb.set_now(NOON + timedelta(seconds=59))
    api.sb.set_suggest_limit(1)
    assert _suggest(api, "Le").status_code == 200
    assert _suggest(api, "Le").status_code == 429
    api.sb.advance(1)
    assert _suggest(api, "Le").status_code == 200


def test_suggest_limit_is_per_account_across_keys(api: Api) -> None:
    api.sb.set_now(NOON)
    api.sb.set_suggest_limit(1)
    assert _suggest(api, "Le").status_code == 200
    assert _suggest(api, "Le", key=api.sb.restricted_key).status_code == 429


def test_default_suggest_limit_is_30_per_minute(api: Api) -> None:
    api.sb.set_now(NOON)
    statuses = [_suggest(api, "Yo").status_code for _ in range(31)]
    assert statuses == [200] * 30 + [429]
