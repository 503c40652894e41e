"""Untidy response bodies frame exactly as their decoded records (issues 15 and 26).

Bodies Arrow's reader refuses are decoded once and read as records: the frame is the one the
decoded records give, with the same values kept raw in ``df.attrs["unparsed"]`` and the same
warnings.
"""

from __future__ import annotations

import json
import pickle
import warnings
from typing import Any

import pandas as pd
import pytest

from propertykit.frames import UnparsedValuesWarning, _bodies, frame
from propertykit.frames._bodies import CHUNK_BYTES
from propertykit.frames._stored_form import frame_from_read, read_for_keeping
from propertykit.sandbox import generate_records
from tests.frames._exact import assert_same_frame

POOL = generate_records(300, seed=21)
#: The reader's first chunk, a twentieth of its real size (``small_chunks``), so that a twentieth
#: of the records spans as many chunks: the batches below are of 150 to 300 records in bodies of
#: 5, not 3,000 to 6,000 in bodies of 100.
FIRST_CHUNK = CHUNK_BYTES[0] // 20


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader starts from chunks a twentieth of their real size, growing as before."""
    monkeypatch.setattr(_bodies, "CHUNK_BYTES", (FIRST_CHUNK, CHUNK_BYTES[1]))


def envelopes(records: list[Any], size: int = 50) -> list[bytes]:
    pages = [records[i : i + size] for i in range(0, len(records), size)]
    return [
        json.dumps({"success": True, "result": page, "hasMore": False}).encode() for page in pages
    ]


def framed(data: list[Any]) -> tuple[pd.DataFrame, list[str]]:
    """The frame, and the messages of the UnparsedValuesWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = frame(data, money_unit="major")
    return df, [str(w.message) for w in caught if issubclass(w.category, UnparsedValuesWarning)]


def assert_same_as_records(bodies: list[bytes]) -> pd.DataFrame:
    records = [r for body in bodies for r in json.loads(body)["result"] if r is not None]
    from_bodies, warned = framed(bodies)
    from_records, expected = framed(records)
    assert_same_frame(from_bodies, from_records)
    assert from_bodies.attrs.get("unparsed") == from_records.attrs.get("unparsed")
    assert sorted(warned) == sorted(expected)
    return from_bodies


def copies(records: list[Any]) -> list[Any]:
    """A deep copy of each record, none shared (pickled one by one: several times quicker than
    deepcopy; one pickle of the list would keep a record listed twice one object)."""
    return [pickle.loads(pickle.dumps(record, pickle.HIGHEST_PROTOCOL)) for record in records]


def bent(**changes: Any) -> list[dict[str, Any]]:
    """The pool, with record ``i`` changed as ``changes["r<i>"]`` says (path -> value)."""
    records = copies(POOL)
    for key, edits in changes.items():
        record = records[int(key[1:])]
        for path, value in edits.items():
            parent = record
            *parents, last = path.split(".")
            for name in parents:
                parent = parent.setdefault(name, {})
            parent[last] = value
    return records


def many(count: int) -> list[dict[str, Any]]:
    """``count`` records of the pool, each with a propertyId of its own."""
    records = copies([POOL[i % len(POOL)] for i in range(count)])
    for i, record in enumerate(records):
        record["propertyId"] = f"PK{i:07d}"
    return records


def _counting_records(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many records each call of the records' route read, from now on."""
    counted: list[int] = []
    read = _bodies.read_records
    monkeypatch.setattr(
        _bodies, "read_records", lambda rows, *a: counted.append(len(rows)) or read(rows, *a)
    )
    return counted


def test_an_odd_leaf_is_refused_alone_and_the_frame_is_the_records_frame() -> None:
    records = bent(
        r3={"marketStatus.forSale": True, "roomDetails.beds": "3"},
        r250={"yearBuilt": "c. 1930"},
    )
    records[10]["saleHistory"] = [{"date": "2001-02-03", "price": "125000"}]
    bodies = envelopes(records)
    with pytest.raises(_bodies.Unreadable):
        _bodies.read_by_arrow(bodies)
    df = assert_same_as_records(bodies)
    assert df.loc[3, "marketStatus.forSale"] == "true"  # kept visible, as its text
    assert df.loc[3, "roomDetails.beds"] == 3
    assert pd.isna(df.loc[250, "yearBuilt"])
    assert ("PK" in str(df.attrs["unparsed"])) and "c. 1930" in str(df.attrs["unparsed"])
    sales = df.pk.sales()
    assert sales.loc[sales["propertyId"] == records[10]["propertyId"], "price"].tolist() == [
        125000.0
    ]


def test_a_value_that_is_not_the_object_expected_refuses_that_object_whole() -> None:
    records = bent(r5={"tenure": "freehold"}, r6={"address": ""})
    records[7]["saleHistory"] = "none recorded"
    bodies = envelopes(records)
    df = assert_same_as_records(bodies)
    kept = {(c, v) for _, c, v in df.attrs["unparsed"]}
    assert {("tenure", "freehold"), ("address", ""), ("saleHistory", "none recorded")} <= kept


@pytest.mark.usefixtures("small_chunks")
def test_an_odd_value_in_the_last_body_is_found_after_the_chunks_grew() -> None:
    records = many(150)
    records[-1]["pricing"]["estimatedSaleValue"] = "410000"
    bodies = envelopes(records, size=5)
    assert sum(map(len, bodies)) > 4 * FIRST_CHUNK  # several chunks, of growing sizes
    df = assert_same_as_records(bodies)
    assert df["pricing.estimatedSaleValue"].iloc[-1] == 410000.0
    assert "unparsed" not in df.attrs  # a numeric string has one clear meaning


@pytest.mark.usefixtures("small_chunks")
def test_one_odd_value_decodes_only_its_record(monkeypatch: pytest.MonkeyPatch) -> None:
    records = many(300)
    records[125]["roomDetails"]["beds"] = "two"  # no clear meaning: kept raw
    records[299]["pricing"]["estimatedSaleValue"] = "410000"
    records[200]["lastSale"] = {"price": 1, "note": "a field Arrow reads beside the rest"}
    bodies = envelopes(records, size=5)
    counted = _counting_records(monkeypatch)
    decoded: list[int] = []
    decode = _bodies.decode_body
    monkeypatch.setattr(
        _bodies, "decode_body", lambda body, at: decoded.append(at) or decode(body, at)
    )
    df = assert_same_as_records(bodies)
    assert df["pricing.estimatedSaleValue"].iloc[-1] == 410000.0
    assert [v for _, c, v in df.attrs["unparsed"]] == ["two"]
    assert df.loc[200, "lastSale.note"] == "a field Arrow reads beside the rest"
    assert counted == [1, 1] and decoded == []  # the two odd records alone, no body decoded


@pytest.mark.usefixtures("small_chunks")
def test_a_field_of_mixed_kinds_across_read_and_decoded_bodies_is_its_text() -> None:
    records = many(300)
    records[5]["agentNote"] = "call first"  # a body Arrow reads
    records[125]["agentNote"] = 5  # a body decoded for its odd value
    records[125]["roomDetails"]["beds"] = "two"
    df = assert_same_as_records(envelopes(records, size=5))
    assert df.loc[[5, 125], "agentNote"].tolist() == ["call first", "5"]


@pytest.mark.usefixtures("small_chunks")
def test_bodies_untidy_throughout_are_sifted_without_asking_arrow_about_whole_bodies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = many(300)
    for record in records[::4]:
        record["yearBuilt"] = "c. 1930"
    bodies = envelopes(records, size=5)
    asked: list[int] = []
    by_arrow = _bodies._by_arrow
    monkeypatch.setattr(
        _bodies, "_by_arrow", lambda run, fields: asked.append(len(run)) or by_arrow(run, fields)
    )
    df = assert_same_as_records(bodies)
    assert [c for _, c, _ in df.attrs["unparsed"]] == ["yearBuilt"] * 75
    assert sum(asked) < len(bodies) // 4  # Arrow refused the first chunks' runs: no more asked


@pytest.mark.usefixtures("small_chunks")
def test_bodies_untidy_throughout_decode_only_their_odd_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = many(300)
    for record in records[::4]:
        record["pricing"]["estimatedSaleValue"] = "410000"  # each body holds some
    for record in records[151::4]:
        record["roomDetails"]["beds"] = "two"  # a field odd only from the middle on
    counted = _counting_records(monkeypatch)
    df = assert_same_as_records(envelopes(records, size=5))
    assert (df["pricing.estimatedSaleValue"].iloc[::4] == 410000.0).all()
    assert [v for _, c, v in df.attrs["unparsed"]] == ["two"] * 38
    assert sum(counted) == 75 + 38  # the odd records alone


@pytest.mark.usefixtures("small_chunks")
def test_bodies_whose_oddity_no_field_names_are_decoded_without_sifting_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    records = many(150)
    square = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]], "bbox": [0, 1]}
    for record in records[::5]:
        record["spatial"]["boundary"] = square  # Arrow refuses it; the records' route does not
    sifted: list[int] = []
    sift = _bodies.sift
    monkeypatch.setattr(_bodies, "sift", lambda run, *a: sifted.append(len(run)) or sift(run, *a))
    df = assert_same_as_records(envelopes(records, size=5))
    assert df.loc[5, "spatial.boundary"] == square
    assert len(sifted) == 1  # records that passed, refused by Arrow: the rest decoded at once


@pytest.mark.parametrize(
    "boundary",
    [
        {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]], "bbox": [0, 1]},
        {"type": "Polygon"},
        {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]]]},
        "POLYGON ((0 0, 1 0, 1 1, 0 0))",
        [0.5, 51.2],
    ],
    ids=["extra-key", "no-coordinates", "multipolygon", "wkt", "a-list"],
)
def test_boundaries_of_untidy_bodies_are_kept_exactly_as_served(boundary: Any) -> None:
    records = bent(r1={"marketStatus.forSale": False}, r2={"spatial.boundary": boundary})
    for record in records[:2] + records[3:]:  # every boundary that shape: none made an array
        if isinstance(boundary, list):
            record["spatial"]["boundary"] = [1.5, 52.0]
    df = assert_same_as_records(envelopes(records))
    assert df.loc[2, "spatial.boundary"] == boundary
    plain = next(i for i, r in enumerate(records) if i != 2 and r["spatial"].get("boundary"))
    assert isinstance(df.loc[plain, "spatial.boundary"], dict | list)
    assert df.loc[plain, "spatial.boundary"] == records[plain]["spatial"]["boundary"]


def test_envelope_fields_asked_for_come_back_exact_from_untidy_bodies() -> None:
    records = bent(r0={"roomDetails.beds": "two"})
    bodies = envelopes(records, size=100)
    bodies[1] = json.dumps({"success": True, "result": records[100:200], "total": 300}).encode()
    names = ("success", "hasMore", "offset", "total")
    read = read_for_keeping(bodies, names)  # as pk.frame(bodies) reads them, envelopes too
    with pytest.warns(UnparsedValuesWarning, match="roomDetails.beds"):
        df = frame_from_read(read)
        assert_same_frame(df, frame(bodies))
    assert len(df) == 300
    read_envelopes = read.envelopes
    fields = {
        n: [e.get(n) for e in read_envelopes]
        for n in (*names, "result")
        if any(n in e for e in read_envelopes)
    }
    assert fields == {
        "success": [True, True, True],
        "hasMore": [False, None, False],
        "total": [None, 300, None],  # offset is in no envelope: left out, as Arrow leaves it
        "result": [100, 100, 100],
    }


def test_a_field_an_object_in_an_odd_record_and_null_in_a_tidy_one_is_one_field() -> None:
    # Hypothesis found it: Arrow read the tidy record's field whole (null), the records' route
    # the odd record's by its fields ("x.y"); the frame must not hold both
    records = many(2)
    records[0]["address"]["displayAddress"] = []  # odd: decoded and read as records
    records[0]["x"] = {"y": [None, None]}
    records[1]["x"] = None  # tidy: read by Arrow
    for size in (1, 2):  # in two bodies, and in one
        df = assert_same_as_records(envelopes(records, size=size))
        assert "x" not in df.columns
