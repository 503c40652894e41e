"""Every warning of the frames and maps names the user's own line, however deep it is raised."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import propertykit as pk
import propertykit.views._accessor  # (df.pk)

ODD = [{"propertyId": "P1", "yearBuilt": "c. 1930", "saleHistory": [{"date": "soon"}]}]


def _sales(df: Any) -> Any:
    return df.pk.sales()


CASES: dict[str, tuple[Callable[[], Any], type[Warning]]] = {
    "unparsed, records": (lambda: pk.frame(ODD), pk.UnparsedValuesWarning),
    "unparsed, bodies": (
        lambda: pk.frame(b'{"result": [{"roomDetails": {"beds": "a few"}}]}'),
        pk.UnparsedValuesWarning,
    ),
    "unparsed, sales": (lambda: _sales(pk.frame(ODD)), pk.UnparsedValuesWarning),
    "pence": (
        lambda: pk.frame([{"pricing": {"currentSalePrice": 90_000_000}}]),
        pk.MinorUnitsWarning,
    ),
    "geometry": (
        lambda: pk.frame(
            [{"propertyId": "P1", "spatial": {"boundary": "no shape"}}]
        ).pk.to_geodataframe(geometry="boundary"),
        pk.GeometryWarning,
    ),
    "not records": (
        lambda: pk.frame(b'{"result": [null, {"propertyId": "P1"}]}'),
        pk.NotRecordsWarning,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_warning_names_the_callers_line(case: str) -> None:
    work, category = CASES[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        work()
    ours = [w for w in caught if w.category is category]
    assert ours
    assert {w.filename for w in ours} == {__file__}
