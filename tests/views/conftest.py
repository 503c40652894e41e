"""What the view tests share: frames of the sandbox's world, each made once per session: read
them, never change them (copy first)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import propertykit as pk
from propertykit.sandbox import generate_records
from propertykit.views import write_report

#: A London house with a dozen comparables in :func:`valued_records`' 3,000 records.
VALUED_SUBJECT = "PK00000505"
#: The valuation date of :func:`valued_page`.
VALUED_AS_OF = "2025-01-01"


@pytest.fixture(scope="session")
def world_frame() -> pd.DataFrame:
    """20,000 sandbox records as a frame (about 1,200 EPC certificates lodged a year, over
    10,000 repeat-sale pairs), made once: read it, never change it (copy first)."""
    return pk.frame(generate_records(20_000))


@pytest.fixture(scope="session")
def valued_records() -> list[dict[str, Any]]:
    """3,000 sandbox records, enough for a repeat-sales index and comparables of
    :data:`VALUED_SUBJECT` (deep-copy them before changing any)."""
    return generate_records(3000)


@pytest.fixture(scope="session")
def valued_frame(valued_records: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`valued_records` as a property frame."""
    return pk.frame(valued_records)


@pytest.fixture(scope="session")
def valued_frame_in_pence(valued_records: list[dict[str, Any]]) -> pd.DataFrame:
    """The same records with every sale price in pence, served as such (``money_unit="minor"``)."""
    pence = copy.deepcopy(valued_records)
    for record in pence:
        for sale in record.get("saleHistory") or []:
            sale["price"] *= 100
    return pk.frame(pence, money_unit="minor")


@pytest.fixture(scope="session")
def valued_page(valued_frame: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The report of :func:`valued_frame` with the comparable evidence of
    :data:`VALUED_SUBJECT`, as ``write_report`` wrote it (one build serves every test that
    reads it)."""
    folder: Path = tmp_path_factory.mktemp("valued")
    path = write_report(
        valued_frame, folder / "valued.html", subject=VALUED_SUBJECT, as_of=VALUED_AS_OF
    )
    return path.read_text()
