"""pk.frame(bodies): raw response bodies frame exactly as their decoded records do."""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import pandas as pd
import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from propertykit.config import Endpoints
from propertykit.errors import NotRecordsWarning
from propertykit.frames import (
    COLUMNS,
    UnparsedValuesWarning,
    _bodies,
    epc_table,
    explode_sales,
    frame,
)
from propertykit.jsonio import records_of
from propertykit.sandbox import Sandbox, generate_records
from tests._hypothesis import examples
from tests.frames._exact import assert_same_frame
from tests.frames.test_untidy import untidy_records, valid_sales

# Untidy values here are the point: UnparsedValuesWarning is tested in test_lossless.py.
pytestmark = pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning")


SQUARE = [[0, 0], [1, 0], [1, 1], [0, 0]]


def envelopes(records: list[Any], size: int = 100, **dumps: Any) -> list[bytes]:
    """Records as the service's pages would carry them."""
    pages = [records[i : i + size] for i in range(0, len(records), size)] or [[]]
    return [
        json.dumps({"success": True, "result": page, "hasMore": True}, **dumps).encode()
        for page in pages
    ]


def decoded(bodies: list[bytes], left_out: list[Any] | None = None) -> list[dict[str, Any]]:
    left_out = [] if left_out is None else left_out
    return [r for body in bodies for r in records_of(json.loads(body), left_out=left_out)]


def test_the_sandbox_pages_frame_as_their_records_through_arrow(
    records: list[dict[str, Any]],
) -> None:

    bodies = envelopes(records, size=37)
    arrow, boundaries, _ = _bodies.read_by_arrow(bodies)  # the quick route takes them all
    assert len(arrow) == len(records) and sum(b is not None for b in boundaries) > 100
    assert_same_frame(frame(bodies), frame(records))


def test_a_response_body_from_the_service_frames_as_the_client_would(sandbox: Sandbox) -> None:
    ids = ",".join(sandbox.source_ids[:60])
    path = Endpoints().sources_path.format(sourceIds=ids)
    headers = {"x-api-key": sandbox.api_key}
    answer = requests.get(sandbox.url + path, params={"limit": 100}, headers=headers, timeout=30)
    answer.raise_for_status()
    df = frame(answer.content)
    assert len(df) == 60
    assert_same_frame(df, frame(records_of(answer.json())))


def test_pretty_printed_bodies_str_and_memoryview_are_read_too(
    records: list[dict[str, Any]],
) -> None:
    pretty = envelopes(records[:50], size=20, indent=2)
    assert b"\n" in pretty[0]
    _bodies.read_by_arrow(pretty)  # newlines inside a body do not stop the quick route
    expected = frame(records[:50])
    assert_same_frame(frame(pretty), expected)
    assert_same_frame(frame([b.decode() for b in pretty]), expected)
    assert_same_frame(frame([memoryview(b) for b in pretty]), expected)


@pytest.mark.parametrize(
    "boundary",
    [
        {"type": "Polygon", "coordinates": [SQUARE], "bbox": [0, 0, 1, 1]},
        {"type": "MultiPolygon", "coordinates": [[SQUARE]]},
        {"type": "Polygon"},
        {"type": "Polygon", "coordinates": [[[0.5, None], None]]},
        "POLYGON ((0 0, 1 0, 1 1, 0 0))",
    ],
    ids=["extra-key", "multipolygon", "no-coordinates", "nulls-inside", "wkt"],
)
def test_any_boundary_is_kept_as_served(boundary: Any) -> None:
    records = [{"propertyId": "P1", "spatial": {"lat": 51.5, "lng": -0.1, "boundary": boundary}}]
    df = frame(envelopes(records))
    assert df.loc[0, "spatial.boundary"] == boundary
    assert df.loc[0, "spatial.lat"] == 51.5


def test_whole_numbers_in_a_boundary_come_back_equal() -> None:
    polygon = {"type": "Polygon", "coordinates": [[[0, 0], [2, 0], [2, 2], [0, 0]]]}
    df = frame(envelopes([{"propertyId": "P1", "spatial": {"boundary": polygon}}]))
    assert df.loc[0, "spatial.boundary"] == polygon  # 0.0 == 0: floats from Arrow's reader


@pytest.mark.parametrize(
    ("body", "ids"),
    [
        (b'{"result": {"propertyId": "A"}}', ["A"]),
        (b'[{"propertyId": "A"}, {"propertyId": "B"}]', ["A", "B"]),
        (b'{"success": true, "result": null}', []),
        (b'{"result": [{"propertyId": 12, "propertyId": "B"}]}', ["B"]),
    ],
    ids=["one-record", "bare-list", "null-result", "duplicate-key"],
)
def test_envelopes_of_any_shape_give_the_records_json_finds(body: bytes, ids: list[str]) -> None:
    assert frame([body])["propertyId"].tolist() == ids


@pytest.mark.parametrize(
    ("items", "left_out"),
    [
        (b'null, {"propertyId": "B"}, null', "2 items"),  # Arrow reads them all
        (b'null, {"propertyId": "B", "roomDetails": {"beds": "3"}}', "1 item"),  # leaf by leaf
        (b'null, 7, {"propertyId": "B"}', "2 items"),  # json's route
    ],
    ids=["arrow", "leaf-by-leaf", "json"],
)
def test_items_that_are_not_records_are_left_out_and_counted(items: bytes, left_out: str) -> None:
    body = b'{"result": [{"propertyId": "A", "roomDetails": {"beds": 2}}, ' + items + b"]}"
    with pytest.warns(NotRecordsWarning, match=f"^{left_out} of the service's list of records"):
        df = frame([body])
    assert df["propertyId"].tolist() == ["A", "B"]


@pytest.mark.parametrize(
    "body",
    [b"", b'{"result": []} {"result": []}', b'{"result": [}', b"\xff\xfe{}", "not json"],
    ids=["empty", "two-values", "broken", "not-utf8", "text"],
)
def test_a_body_that_is_not_one_json_value_raises_valueerror(body: bytes | str) -> None:
    with pytest.raises(ValueError):
        frame([body])


def _framed(data: list[Any]) -> tuple[pd.DataFrame, list[tuple[type[Warning], str]]]:
    """The frame of ``data``, and every warning it gave (category, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = frame(data, money_unit="major")
    return df, [(w.category, str(w.message)) for w in caught]


def _unparsed(said: list[tuple[type[Warning], str]]) -> list[str]:
    return sorted(message for category, message in said if category is UnparsedValuesWarning)


# The one property that untidy data frames record by record (it was three: this one, and those of
# test_leafwise.py and test_untidy.py, each drawing the same untidy records).
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    untidy_records(),
    st.integers(min_value=1, max_value=4),
    st.sampled_from([None, 1]),
    st.booleans(),
)
def test_untidy_bodies_frame_exactly_as_their_decoded_records(
    records: list[Any], size: int, indent: int | None, bare: bool
) -> None:
    # Records, however untidy, never make frame, sales or EPC raise, and each keeps its row.
    table, _ = _framed(records)
    assert list(table.columns[: len(COLUMNS)]) == list(COLUMNS)  # then any field not named
    assert len(table) == len(records)
    assert len(explode_sales(table)) == valid_sales(records)
    assert len(epc_table(table, today="2025-06-01")) == len(records)

    # Their pages (and, maybe, a bare list as well) frame exactly as the records decoded from
    # them: the same frame, the same values left unparsed, the same warnings about them.
    bodies = envelopes(records, size=size, indent=indent)
    if bare and records:
        bodies.append(json.dumps(copy.deepcopy(records)).encode())
    left_out: list[Any] = []
    decoded_records = decoded(bodies, left_out)
    df, said = _framed(bodies)
    want, said_too = _framed(decoded_records)
    counted = [message for category, message in said if category is NotRecordsWarning]
    # every item left out is counted, once, whichever route read the bodies
    assert [c.split(" item")[0] for c in counted] == ([f"{len(left_out):,}"] if left_out else [])
    assert_same_frame(df, want)
    assert df.attrs.get("unparsed") == want.attrs.get("unparsed")
    assert _unparsed(said) == _unparsed(said_too)


@settings(max_examples=examples(30), suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=0, max_value=39), min_size=1, max_size=8))
def test_tidy_bodies_always_take_the_quick_route(picks: list[int]) -> None:
    pool = generate_records(40, seed=8)
    records = [pool[i] for i in picks]
    arrow, boundaries, _ = _bodies.read_by_arrow(envelopes(records, size=3))
    assert arrow.field("propertyId").to_pylist() == [r["propertyId"] for r in records]
    assert list(boundaries) == [r["spatial"].get("boundary") for r in records]


def test_a_record_with_keys_a_and_a_dot_b_frames_from_its_body_as_from_itself() -> None:
    records = generate_records(3, seed=9)
    records[1]["agentNote"] = None
    records[1]["agentNote.text"] = "kept"  # a key with a dot in it, beside the key before it
    body = json.dumps({"success": True, "result": records}).encode()
    assert_same_frame(frame([body]), frame(records))
