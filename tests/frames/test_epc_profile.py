"""The EPC profile of a book: every property counted once, shares of the rated ones, and the
certificates' end dates judged against one day, at its edges."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pandas as pd

import propertykit as pk
from propertykit.frames import epc_profile


def home(rating: str | None, valid_to: str | None = None) -> dict[str, Any]:
    return {"epc": {"currentEnergyRating": rating, "validTo": valid_to}}


def test_bands_count_every_rated_home_once_and_shares_add_up() -> None:
    ratings = ["A", "B", "C", "C", "D", "E", "E", "F", "G", "c", None]
    profile = epc_profile(pk.frame([home(r) for r in ratings]), today="2025-01-01")
    counts = dict(zip(profile.bands["band"], profile.bands["count"], strict=True))
    assert counts == {"A": 1, "B": 1, "C": 3, "D": 1, "E": 2, "F": 1, "G": 1}  # "c" read as C
    assert (profile.rated, profile.not_rated, profile.properties) == (10, 1, 11)
    assert math.isclose(profile.bands["share"].sum(), 1.0)
    assert profile.below_c == 5 and math.isclose(profile.share_below_c, 0.5)


def test_certificates_are_judged_at_the_edges_of_the_year() -> None:
    ends = ["2024-12-31", "2025-01-01", "2025-12-31", "2026-01-01", None]
    profile = epc_profile(pk.frame([home("D", end) for end in ends]), today="2025-01-01")
    assert profile.expired == 1  # the day before
    assert profile.expiring == 2  # the day itself and the last day of the year after it
    assert profile.no_end_date == 1
    assert profile.today == pd.Timestamp("2025-01-01")


def test_unreadable_ratings_are_counted_as_not_rated() -> None:
    with warnings.catch_warnings(action="ignore"):
        df = pk.frame([home("Z"), home("B"), {"propertyId": "no epc"}])
    profile = epc_profile(df, today="2025-01-01")
    assert (profile.rated, profile.not_rated) == (1, 2)
    assert profile.no_end_date == 1  # the rated one has no end date; the others no certificate


def test_a_book_with_no_rating_has_no_shares() -> None:
    profile = epc_profile(pk.frame([{"propertyId": "PK1"}]), today="2025-01-01")
    assert profile.rated == 0 and profile.bands["share"].isna().all()
    assert dict(profile.summary())["Share below C (D to G)"] == "n/a"
