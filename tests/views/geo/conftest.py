from __future__ import annotations

import pandas as pd
import pytest

from propertykit.frames import frame
from propertykit.sandbox import generate_records


@pytest.fixture(scope="module")
def properties() -> pd.DataFrame:
    """A property frame built from the sandbox's synthetic records (about half have boundaries)."""
    return frame(generate_records(120))
