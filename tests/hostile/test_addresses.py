"""match_addresses against a service whose suggestions are odd: without ids, not objects, with
control characters and markup. Nothing is matched to what cannot be looked up, and every
suggestion left out is counted."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from propertykit.client import Client
from propertykit.errors import NotRecordsWarning
from tests.hostile._servers import Seen, hostile, send

pytestmark = pytest.mark.timeout(60)

ODD = "\x1b[31m4 Mill Lane<script>alert(1)</script>, Bedford, MK40 1NN"
SUGGESTIONS: list[Any] = [
    {"displayAddress": "4 Mill Lane, Bedford, MK40 1NN"},  # no id
    {"locationId": " ", "displayAddress": "4 Mill Lane, Bedford, MK40 1NN"},  # a blank id
    {"locationId": 42, "displayAddress": "4 Mill Lane, Bedford, MK40 1NN"},  # not text
    "4 Mill Lane",  # not an object
    {"locationId": "L9", "displayAddress": "4 Mill Lane, Bedford, MK40 1NN"},
    {"locationId": "L10", "displayAddress": ODD},
]


def suggestions(handler: BaseHTTPRequestHandler, seen: list[Seen]) -> None:
    send(handler, 200, {"success": True, "result": SUGGESTIONS})


def test_suggestions_without_a_usable_id_are_left_out_and_counted(
    client_of: Callable[..., Client],
) -> None:
    with hostile(suggestions) as server:
        client = client_of(server)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df = client.match_addresses(["4 Mill Lane, MK40 1NN"])
    assert df["status"].tolist() == ["matched"]
    assert df["locationId"].tolist() == ["L9"]
    assert df.attrs["suggestions_left_out"] == 3  # the object that is no record warns instead
    assert [type(w.message) for w in caught] == [NotRecordsWarning]
    assert len(server.requests) == 1


def test_the_services_odd_text_is_kept_as_text_and_never_matched_by_its_markup(
    client_of: Callable[..., Client],
) -> None:
    with hostile(suggestions) as server:
        client = client_of(server)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotRecordsWarning)
            df = client.match_addresses(["Flat 9, 4 Mill Lane, MK40 1NN"])
    assert df["status"].tolist() == ["unmatched"]
    assert ODD in df["candidate_addresses"].iloc[0]  # kept as the service sent it, for review
