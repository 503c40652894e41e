"""Ids that return no record are said: one ``pk.MissingIdsWarning`` per call, naming how many and
a few of them, and ``df.attrs["missing_ids"]`` on the frame — on a cold run and on a warm re-run
served from the cache alike."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import propertykit as pk
from propertykit.sandbox import Sandbox

pytestmark = pytest.mark.timeout(60)


def _looked_up(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = call(*args, **kwargs)
    return df, [w for w in caught if issubclass(w.category, pk.MissingIdsWarning)]


def test_missing_ids_warning_is_public() -> None:
    assert "MissingIdsWarning" in pk.errors.__all__
    assert issubclass(pk.errors.MissingIdsWarning, pk.PropertyKitWarning)


@pytest.mark.parametrize("run", ["cold", "warm"])
def test_unknown_location_ids_are_warned_once_and_listed(
    sandbox: Sandbox, make_client: Any, run: str
) -> None:
    client = make_client(sandbox)
    ids = ["L00000001", "NOPE123", "L00000002", "L99999999"]
    if run == "warm":
        _looked_up(client.properties, ids)  # the answers are cached now
        sent = client.usage.requests_sent
    df, said = _looked_up(client.properties, ids)
    if run == "warm":
        assert client.usage.requests_sent == sent  # served from the cache, and still said
    assert df["locationId"].tolist() == ["L00000001", "L00000002"]
    assert df.attrs["missing_ids"] == ("NOPE123", "L99999999")
    assert len(said) == 1
    assert str(said[0].message) == "2 of 4 ids returned no record: NOPE123, L99999999"


def test_many_missing_ids_are_counted_and_a_few_named(sandbox: Sandbox, make_client: Any) -> None:
    client = make_client(sandbox)
    unknown = [f"L9{i:07d}" for i in range(120)]  # three batches, none known
    df, said = _looked_up(client.properties, ["L00000003", *unknown])
    assert len(df) == 1
    assert df.attrs["missing_ids"] == tuple(unknown)
    assert len(said) == 1
    text = str(said[0].message)
    assert text.startswith("120 of 121 ids returned no record: L90000000, L90000001")
    assert text.endswith(", ...")


def test_all_found_says_nothing_and_lists_none(sandbox: Sandbox, make_client: Any) -> None:
    client = make_client(sandbox)
    df, said = _looked_up(client.properties, sandbox.location_ids[:3])
    assert said == []
    assert df.attrs["missing_ids"] == ()


@pytest.mark.parametrize("run", ["cold", "warm"])
def test_source_ids_with_no_record_are_warned(sandbox: Sandbox, make_client: Any, run: str) -> None:
    client = make_client(sandbox)
    ids = ["zoopla::999999999999", "rightmove::1"]
    if run == "warm":
        _looked_up(client.sources, ids)
    df, said = _looked_up(client.sources, ids)
    assert df.empty
    assert df.attrs["missing_ids"] == tuple(ids)
    assert len(said) == 1
    assert "2 of 2 ids returned no record: zoopla::999999999999, rightmove::1" in str(
        said[0].message
    )


def test_source_ids_naming_one_property_are_not_called_missing(
    sandbox: Sandbox, make_client: Any
) -> None:
    from propertykit.sandbox._ids import source_ids_for

    client = make_client(sandbox)
    df, said = _looked_up(client.sources, source_ids_for(3))  # three ids, one property
    assert len(df) == 1
    assert said == []
    assert df.attrs["missing_ids"] == ()
