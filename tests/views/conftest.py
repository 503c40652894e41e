"""What the view tests share: one frame of the sandbox's world, big enough for statistics."""

from __future__ import annotations

import pandas as pd
import pytest

import propertykit as pk
from propertykit.sandbox import generate_records


@pytest.fixture(scope="session")
def world_frame() -> pd.DataFrame:
    """20,000 sandbox records as a frame (about 1,200 EPC certificates lodged a year, over
    10,000 repeat-sale pairs), made once: read it, never change it (copy first)."""
    return pk.frame(generate_records(20_000))
