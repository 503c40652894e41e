"""Money keeps the service's numbers; the unit and currency travel in df.attrs, to every table
made from the frame, and writers read them from what they are given."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from propertykit.errors import FewPairsWarning, InvalidInput, MoneyUnitWarning
from propertykit.frames import (
    MINOR_UNIT_COLUMNS,
    MinorUnitsWarning,
    appraise,
    frame,
    in_major_units,
    in_pounds_for,
    money_unit_of,
)
from tests._hypothesis import examples


def in_pence(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pence = copy.deepcopy(records)
    for record in pence:
        for key, value in (record.get("pricing") or {}).items():
            if isinstance(value, int | float):
                record["pricing"][key] = value * 100
        for sale in record.get("saleHistory") or []:
            sale["price"] *= 100
    return pence


def test_attrs_record_currency_and_assumed_major_units(df: pd.DataFrame) -> None:
    assert df.attrs == {
        "extra_columns": (),  # no field the interface does not name
        "currency": "GBP",
        "money_unit": "major",
        "money_unit_assumed": True,
    }


def test_generator_prices_do_not_warn(records: list[dict[str, Any]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame(records)


def test_pence_like_prices_warn_and_are_kept_as_served(records: list[dict[str, Any]]) -> None:
    pence = in_pence(records)
    with pytest.warns(MinorUnitsWarning, match="minor units"):
        table = frame(pence)
    assert table.attrs["money_unit"] == "major" and table.attrs["money_unit_assumed"]
    assert table["pricing.estimatedSaleValue"].iloc[0] == pence[0]["pricing"]["estimatedSaleValue"]


def test_a_given_unit_is_recorded_and_silences_the_warning(records: list[dict[str, Any]]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = frame(in_pence(records), money_unit="minor")
    assert table.attrs == {
        "extra_columns": (),
        "currency": "GBP",
        "money_unit": "minor",
        "money_unit_assumed": False,
    }


def test_currency_is_none_when_absent_or_mixed() -> None:
    assert frame([{"pricing": {"currentSalePrice": 1}}]).attrs["currency"] is None
    mixed = [{"pricing": {"currency": "GBP"}}, {"pricing": {"currency": "EUR"}}]
    assert frame(mixed).attrs["currency"] is None


def test_attrs_survive_the_sales_and_epc_tables(df: pd.DataFrame) -> None:
    assert df.pk.sales().attrs == df.attrs
    assert df.pk.epc().attrs == df.attrs


# -- the unit as data: it survives what users do, and is never wrong where it is lost ---------


@pytest.fixture(scope="module")
def pence(records: list[dict[str, Any]]) -> pd.DataFrame:
    return frame(in_pence(records), money_unit="minor")


def test_the_unit_survives_copies_slices_groupby_merge_and_parquet(
    pence: pd.DataFrame, tmp_path: Path
) -> None:
    sales = pence.pk.sales()
    path = tmp_path / "pence.parquet"
    sales.to_parquet(path)
    kept = {
        "copy": pence.copy(),
        "rows": pence[pence["propertyType"] == "flat"],
        "columns": pence[["propertyId", "pricing.estimatedSaleValue"]],
        "concat of the same frame": pd.concat([pence.iloc[:10], pence.iloc[10:]]),
        "merge with itself": pence.merge(pence[["propertyId"]], on="propertyId"),
        "sales": sales,
        "groupby mean": sales.groupby("propertyType", observed=True).mean(numeric_only=True),
        "groupby agg": sales.groupby("propertyType", observed=True).agg({"price": "median"}),
        "gross yield": pence.pk.gross_yield(rent_per="month"),
        "parquet": pd.read_parquet(path),
    }
    assert {name: money_unit_of(table) for name, table in kept.items()} == dict.fromkeys(
        kept, "minor"
    )
    assert money_unit_of(pence.pk.in_pounds()) == "major"


def test_pieces_of_a_frame_in_pence_concatenated_come_to_pounds(
    pence: pd.DataFrame, df: pd.DataFrame
) -> None:
    # Found by the property below: a slice's sale histories (an Arrow slice with missing
    # histories) made in_pounds() raise ArrowNotImplementedError.
    book = pd.concat([pence.iloc[:1], pence.iloc[1:11]])
    assert (
        book.pk.in_pounds().pk.sales()["price"].tolist()
        == df.iloc[:11].pk.sales()["price"].tolist()
    )


def test_a_concat_of_pence_and_pounds_says_no_unit_and_cannot_be_written_as_pounds(
    pence: pd.DataFrame, df: pd.DataFrame
) -> None:
    mixed = pd.concat([pence.iloc[:200], df.iloc[200:]], ignore_index=True)
    assert money_unit_of(mixed) is None  # pandas keeps attrs only when all inputs agree
    with pytest.warns(MinorUnitsWarning, match="says no money unit"):
        said = in_pounds_for({"Properties": mixed}, output="the workbook")
    assert not said.stated and "no unit" in said.note
    both = pd.concat([pence.pk.in_pounds().iloc[:200], df.iloc[200:]], ignore_index=True)
    both.attrs["money_unit"] = "major"  # converted first, then said: written as pounds
    assert in_pounds_for({"Properties": both}, output="the workbook").stated


def test_tables_of_known_units_are_each_converted_and_a_missing_unit_beside_one_is_refused(
    pence: pd.DataFrame, df: pd.DataFrame
) -> None:
    said = in_pounds_for({"Properties": pence, "Valuation": df}, output="the workbook")
    assert said.tables["Properties"]["pricing.estimatedSaleValue"].equals(
        df["pricing.estimatedSaleValue"]
    )
    assert said.tables["Valuation"]["pricing.estimatedSaleValue"].equals(
        df["pricing.estimatedSaleValue"]
    )
    assert said.note == (
        "Prices are shown in pounds: Properties served in pence, divided by 100; "
        "Valuation in pounds as given."
    )
    own = pd.DataFrame({"propertyId": ["PK1"], "estimate": [25_000_000.0]})
    with pytest.raises(InvalidInput, match="Valuation says no money unit while Properties is"):
        in_pounds_for({"Properties": pence, "Valuation": own}, output="the workbook")


def test_a_table_of_ones_own_says_its_unit_is_not_stated() -> None:
    own = pd.DataFrame({"price": [250_000.0, 310_000.0]})
    with pytest.warns(MoneyUnitWarning, match="says no money unit") as caught:
        said = in_pounds_for({"Sales": own}, output="the report")
    assert [type(w.message) for w in caught] == [MoneyUnitWarning]  # not pence-like
    assert said.tables["Sales"] is own and "no currency sign" in said.note


def test_a_valuation_says_the_unit_of_its_frame_in_values_schedule_and_reconciliation() -> None:
    from propertykit.sandbox import generate_records

    world = generate_records(300)
    served = frame(in_pence(world), money_unit="minor")
    subjects = served["propertyId"].iloc[:3].tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewPairsWarning)
        in_pence_ = appraise(served, subjects, as_of="2025-01-01")
        in_pounds = appraise(served.pk.in_pounds(), subjects, as_of="2025-01-01")
    tables = (in_pence_.values, in_pence_.schedule(0), in_pence_.reconciliation(0))
    assert [money_unit_of(table) for table in tables] == ["minor"] * 3
    assert money_unit_of(in_pounds.values) == "major"
    assert money_unit_of(in_pounds.reconciliation(0)) == "major"
    reconciled = in_major_units(in_pence_.reconciliation(0))["value"]
    assert reconciled.to_numpy() == pytest.approx(in_pounds.reconciliation(0)["value"].to_numpy())
    assert set(in_pence_.values.attrs["money_columns"]) == {"estimate", "lower", "upper",
                                                            "price_per_sqm"}  # fmt: skip


#: How a piece of a book reaches pd.concat: as served in pence or in pounds (said), converted
#: to pounds first, or with its attrs dropped (a table of one's own).
PIECES = st.sampled_from(["pence", "pounds", "pence converted", "unsaid pounds"])


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=st.lists(st.tuples(PIECES, st.integers(1, 40)), min_size=1, max_size=4),
    valued=st.one_of(st.none(), PIECES),
)
def test_what_is_written_is_in_pounds_or_said_never_100_times_off(
    pence: pd.DataFrame,
    df: pd.DataFrame,
    pieces: list[tuple[str, int]],
    valued: str | None,
) -> None:
    """Any book concatenated from pieces in any units, beside any valuation-like table: each
    table is written in pounds (the truth, the frame in pounds), refused, or said to have no
    unit (and warned of) — never a figure 100 times off."""
    served = {"pence": pence, "pounds": df, "pence converted": pence.pk.in_pounds()}
    parts, start = [], 0
    for how, size in pieces:
        rows = slice(start, start + size)
        part = (df if how == "unsaid pounds" else served[how]).iloc[rows].copy()
        if how == "unsaid pounds":
            part.attrs = {}
        parts.append(part)
        start += size
    book = pd.concat(parts)
    truth = df.iloc[:start]
    tables = {"Properties": book}
    if valued is not None:
        tables["Valuation"] = (df if valued == "unsaid pounds" else served[valued]).iloc[:5].copy()
        if valued == "unsaid pounds":
            tables["Valuation"].attrs = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            written = in_pounds_for(tables, output="the workbook")
        except InvalidInput as refused:
            assert "says no money unit while" in str(refused)
            return
    if not written.stated:
        assert any(issubclass(w.category, MoneyUnitWarning) for w in caught)
        assert "no unit" in written.note
        return
    money = [c for c in MINOR_UNIT_COLUMNS if c in book.columns]
    pd.testing.assert_frame_equal(
        written.tables["Properties"][money].reset_index(drop=True),
        truth[money].reset_index(drop=True),
    )
    if "Valuation" in written.tables:
        pd.testing.assert_frame_equal(written.tables["Valuation"][money], df.iloc[:5][money])
