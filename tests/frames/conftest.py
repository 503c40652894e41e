"""Fixtures for the frames tests: a sample of the sandbox's synthetic records and its frame."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import propertykit.views._accessor  # noqa: F401  (registers df.pk)
from propertykit.frames import frame
from propertykit.sandbox import generate_records


@pytest.fixture(scope="session")
def records() -> list[dict[str, Any]]:
    """400 realistic records: every field of the interface, some null or absent."""
    return generate_records(400, seed=3)


@pytest.fixture(scope="session")
def df(records: list[dict[str, Any]]) -> pd.DataFrame:
    return frame(records)


@pytest.fixture(scope="session")
def each_alone() -> Callable[..., list[pd.DataFrame]]:
    """The frame of each record read by itself (``frame([record], **options)``): the oracle of
    the batch tests, a frame call per record, so a test using it is ``slow`` (conftest.py)."""

    def frames(records: list[Any], **options: Any) -> list[pd.DataFrame]:
        return [frame([record], **options) for record in records]

    return frames
