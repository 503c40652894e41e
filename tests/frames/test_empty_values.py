"""Empty text, bytes or lists where an object is expected: counted, never read as an object.

``pa.array`` reads ``""`` or ``[]`` where a struct is expected as a struct of missing values, and
``""`` where a list is expected as an empty list, so such values were lost without a count (found
by tests/frames/test_lossless.py after the merge of issue 15).
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd
import pytest

import propertykit as pk


def framed(records: list[dict[str, Any]]) -> tuple[pd.DataFrame, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = pk.frame(records)
    said = [str(w.message) for w in caught if issubclass(w.category, pk.UnparsedValuesWarning)]
    return df, said


@pytest.mark.parametrize("empty", ["", b"", []], ids=["text", "bytes", "list"])
def test_an_empty_value_where_an_object_is_expected_is_counted(empty: Any) -> None:
    df, said = framed([{"propertyId": "P0", "address": empty}, {"propertyId": "P1"}])
    assert df.pk.unparsed().to_dict("records") == [
        {"propertyId": "P0", "column": "address", "value": empty}
    ]
    assert len(said) == 1 and "1 value of 'address'" in said[0]
    assert df["address.town"].isna().all()
    # mixed with a genuine empty object (Arrow then refuses the block: the narrowing route)
    df, said = framed([{"propertyId": "P0", "address": empty}, {"propertyId": "P1", "address": {}}])
    assert df.pk.unparsed()["value"].tolist() == [empty] and len(said) == 1


def test_empty_text_in_sale_history_is_missing_not_an_empty_list_and_counted() -> None:
    df, said = framed(
        [{"propertyId": "P0", "saleHistory": ""}, {"propertyId": "P1", "saleHistory": []}]
    )
    assert pd.isna(df.loc[0, "saleHistory"]) and list(df.loc[1, "saleHistory"]) == []
    assert df.pk.unparsed()["value"].tolist() == [""]
    assert len(said) == 1


def test_an_empty_entry_in_sale_history_is_no_sale_and_is_counted() -> None:
    sale = {"date": "2020-01-01", "price": 250000}
    df, said = framed(
        [
            {"propertyId": "P0", "saleHistory": [sale, ""]},
            {"propertyId": "P1", "saleHistory": [sale, []]},
        ]
    )
    sales = df.pk.sales()
    assert sales["propertyId"].tolist() == ["P0", "P1"]  # no sale of nothing
    assert sales["price"].tolist() == [250000.0, 250000.0]
    assert df.pk.unparsed()["value"].tolist() == ["", []]
    assert len(said) == 1 and "2 values of 'saleHistory'" in said[0]
