"""Dates and date-times read the same whichever reader did the work (Arrow's cast or pandas')."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from propertykit.frames import frame

# Untidy values here are the point: UnparsedValuesWarning is tested in test_lossless.py.
pytestmark = pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning")

# Arrow's cast reads a column only when it accepts every value; otherwise pandas reads it all.
DAYS = ["2024-01-02", "2024-02-29", "9999-12-31", "2024-02-30", "2023-02-29", "2024-1-2",
        " 2024-01-02", "20240102", "2024-01-02T03:04", "0000-01-01", "x", ""]  # fmt: skip
TIMES = ["2024-01-02T03:04:05Z", "2024-01-02 03:04:05Z", "2024-01-02T03:04:05+02:00",
         "2024-01-02T03:04:05+0200", "2024-01-02T03Z", "2024-01-02T03:04:05.5Z",
         "9999-12-31T23:59+14:00", "2024-01-02T03:04:05", "2024-01-02", "2024-01-02T03",
         "2024-01-02T03:04:05.1234567Z", "2024-02-30T00:00:00Z", "2024-01-02T24:00:00Z",
         "2024-01-02T03:04:05z", "2024-W01-1", "0000-01-01T00:00:00Z", "0000-01-01",
         "9999-12-31", "2024-02-30", "2024-1-2", " 2024-01-02", "x",
         # ten characters, but no date: Arrow's cast after midnight is appended refuses them
         "2024/01/02", "02-01-2024", "2024-13-01", "2024-01-32", "2024-00-10", "2024-01-0Z",
         "+024-01-02", "\uff11\uff12\uff13\uff14-01-02", "2024-01-02"[::-1]]  # fmt: skip


def pandas_day(text: str) -> Any:
    return pd.to_datetime(pd.Series([text]), format="%Y-%m-%d", errors="coerce").iloc[0]


def pandas_time(text: str) -> Any:
    parsed = pd.to_datetime(pd.Series([text]), format="ISO8601", utc=True, errors="coerce")
    return parsed.astype("datetime64[us, UTC]").iloc[0]


def records(days: list[str], times: list[str]) -> list[dict[str, Any]]:
    return [
        {"epc": {"validFrom": day}, "lastUpdated": time, "saleHistory": [{"date": day}]}
        for day, time in zip(days, times, strict=True)
    ]


@pytest.mark.parametrize("day", DAYS)
@pytest.mark.parametrize("alone", [True, False], ids=["alone", "among-valid-values"])
def test_each_date_reads_as_pandas_reads_it_alone(day: str, alone: bool) -> None:
    days = [day] if alone else [day, "2021-06-30", "2021-07-01"]
    table = frame(records(days, ["2024-01-02T03:04:05Z"] * len(days)))
    expected = [pandas_day(d) for d in days]
    assert [v if pd.notna(v) else None for v in table["epc.validFrom"]] == [
        v if pd.notna(v) else None for v in expected
    ]
    sold = table.pk.sales()["date"]
    assert [v if pd.notna(v) else None for v in sold] == [
        v if pd.notna(v) else None for v in expected
    ]


@pytest.mark.parametrize("time", TIMES)
@pytest.mark.parametrize("alone", [True, False], ids=["alone", "among-valid-values"])
def test_each_date_time_reads_as_pandas_reads_it_alone(time: str, alone: bool) -> None:
    times = [time] if alone else [time, "2021-06-30T12:00:00Z", "2021-07-01T00:00:00+01:00"]
    table = frame(records(["2024-01-02"] * len(times), times))
    expected = [pandas_time(t) for t in times]
    assert [v if pd.notna(v) else None for v in table["lastUpdated"]] == [
        v if pd.notna(v) else None for v in expected
    ]


def test_invalid_calendar_days_are_missing_not_rolled_over() -> None:
    table = frame(records(["2024-02-30", "2023-02-29"], ["2024-02-30T00:00:00Z"] * 2))
    assert table["epc.validFrom"].isna().all() and table["lastUpdated"].isna().all()
    assert str(table["epc.validFrom"].dtype) == "datetime64[us]"
    assert str(table["lastUpdated"].dtype) == "datetime64[us, UTC]"


def test_unordered_categories_sort_by_code_point_as_pandas_does() -> None:
    kinds = ["terraced", "Flat", "", "élan", "flat", "Zed", "10", "9", "flat"]
    table = frame([{"propertyType": k} for k in [*kinds, None]])
    column = table["propertyType"]
    assert list(column.cat.categories) == sorted(set(kinds))
    assert str(column.cat.categories.dtype) == "str"
    assert column.tolist()[:-1] == kinds and pd.isna(column.iloc[-1])
