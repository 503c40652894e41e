"""A strict sandbox: where the real service documents 400s, the sandbox answers 400 naming the
offending key (under both profiles), and propertykit refuses the same request before sending it."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from propertykit.errors import InvalidInput, NotFound
from propertykit.sandbox import Sandbox

pytestmark = pytest.mark.timeout(60)

PATH = "/v1/property/query"
AREA = [{"type": "outcode", "value": "SE11"}]

#: (what is wrong, the body's changes, a word the 400's message must name)
BAD_BODIES: list[tuple[str, dict[str, Any], str]] = [
    ("unknown top-level key", {"filters": {"beds": [2]}}, "filters"),
    ("misspelt top-level key", {"sort_by": "price"}, "sort_by"),
    ("unknown filter", {"query": {"bedrooms": [2]}}, "bedrooms"),
    ("misspelt filter", {"query": {"pricemin": 1}}, "pricemin"),
    ("unknown tag", {"query": {"tags": {"garden": True}}}, "garden"),
    ("tag not true/false", {"query": {"tags": {"auction": "yes"}}}, "auction"),
    ("beds of text", {"query": {"beds": ["two"]}}, "beds"),
    ("property type as a number", {"query": {"propertyType": [3]}}, "propertyType"),
    ("price as text", {"query": {"priceMax": "500k"}}, "priceMax"),
    ("unknown sort field", {"sortBy": "cost"}, "cost"),
    ("unknown attribute", {"attributes": ["address", "garden"]}, "garden"),
    ("unknown key in an area", {"area": [{"type": "outcode", "value": "SE11", "r": 5}]}, "'r'"),
]


def _message(answer: requests.Response) -> str:
    error = answer.json()["error"]
    return str(error["message"] if isinstance(error, dict) else error)


@pytest.mark.parametrize(
    ("changes", "named"), [c[1:] for c in BAD_BODIES], ids=[c[0] for c in BAD_BODIES]
)
def test_a_bad_query_is_400_naming_the_key_and_free(
    profiled_sandbox: Sandbox, changes: dict[str, Any], named: str
) -> None:
    sb = profiled_sandbox
    before = sb.credits_charged
    answer = requests.post(
        sb.url + PATH,
        json={"area": AREA, **changes},
        headers={"x-api-key": sb.api_key},
        timeout=10,
    )
    assert answer.status_code == 400
    assert named in _message(answer)
    assert sb.credits_charged == before


def test_a_good_query_still_answers(profiled_sandbox: Sandbox) -> None:
    sb = profiled_sandbox
    body = {
        "area": AREA,
        "query": {"beds": [2, 3], "tags": {"auction": False}, "propertyType": ["flat"]},
        "sortBy": "price",
        "sortOrder": "desc",
        "attributes": ["address", "pricing"],
        "limit": 5,
    }
    answer = requests.post(sb.url + PATH, json=body, headers={"x-api-key": sb.api_key}, timeout=10)
    assert answer.status_code == 200
    assert 0 < len(answer.json()["result"]) <= 5


#: The same mistakes made through ``client.query``: refused before anything is sent.
CLIENT_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown filter", {"bedrooms": [2]}, "bedrooms"),
    ("unknown tag", {"tags": {"garden": True}}, "garden"),
    ("tag not true/false", {"tags": {"auction": "yes"}}, "tags"),
    ("beds of text", {"beds": ["two"]}, "beds"),
    ("unknown sort field", {"sortBy": "cost"}, "cost"),
]


@pytest.mark.parametrize(
    ("kwargs", "named"), [c[1:] for c in CLIENT_CALLS], ids=[c[0] for c in CLIENT_CALLS]
)
def test_the_client_refuses_the_same_before_sending(
    profiled_sandbox: Sandbox, make_client: Any, kwargs: dict[str, Any], named: str
) -> None:
    sb = profiled_sandbox
    client = make_client(sb)
    with pytest.raises(InvalidInput, match=named):
        client.query({"type": "outcode", "value": "SE11"}, **kwargs)
    assert client.usage.requests_sent == 0
    assert not [r for r in sb.requests if r.path == PATH]


def test_an_unknown_title_is_said_not_to_exist(profiled_sandbox: Sandbox, make_client: Any) -> None:
    client = make_client(profiled_sandbox)
    with pytest.raises(NotFound) as caught:
        client.buy_title_deed("ZZ999999")
    text = str(caught.value)
    assert "does not exist" in text
    assert "NOT charged" in text
    assert "try again later" not in text
