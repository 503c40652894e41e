"""Column checks and conversions the views share: required columns, nested values as JSON.

GIS and Parquet writers cannot store columns of lists or dicts whose shape varies (sale
histories, raw boundaries): :func:`nested_as_json` turns them into JSON text, for
:mod:`~propertykit.views._geo` and :mod:`~propertykit.views._export` alike.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from propertykit.errors import InvalidInput


def require_columns(df: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise :class:`~propertykit.errors.InvalidInput` naming any of ``columns`` ``df`` lacks.

    Examples
    --------
    >>> import pandas as pd
    >>> require_columns(pd.DataFrame({"a": [1]}), ["a", "b"])
    Traceback (most recent call last):
    propertykit.errors.InvalidInput: the frame has no column 'b'
    """
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InvalidInput(f"the frame has no column {', '.join(map(repr, missing))}")


def nested_columns(df: pd.DataFrame, *, arrow: bool = True) -> list[str]:
    """The columns holding lists or dicts: object columns with them, and (unless ``arrow`` is
    false) Arrow list/struct columns, which Parquet stores natively but GIS formats cannot.

    Examples
    --------
    >>> import pandas as pd
    >>> nested_columns(pd.DataFrame({"a": [1], "b": [[1, 2]], "c": [{"x": 1}]}))
    ['b', 'c']
    """
    return [name for name in df.columns if _holds_nested(df[name], arrow=arrow)]


def nested_as_json(
    df: pd.DataFrame, *, dtype: str | None = None, arrow: bool = True
) -> pd.DataFrame:
    """``df`` with every nested column (:func:`nested_columns`) as JSON text; others untouched.

    Numpy arrays inside count as lists. ``dtype`` (e.g. ``"string"``) is applied to the converted
    columns; ``arrow=False`` leaves Arrow list/struct columns as they are.

    Examples
    --------
    >>> import pandas as pd
    >>> nested_as_json(pd.DataFrame({"a": [1], "b": [[1, 2]]}))["b"].tolist()
    ['[1, 2]']
    """
    names = nested_columns(df, arrow=arrow)
    if not names:
        return df
    converted = {}
    for name in names:
        column = df[name].astype(object).map(_to_json)
        converted[name] = column.astype(dtype) if dtype else column
    return df.assign(**converted)


def _holds_nested(column: pd.Series, *, arrow: bool) -> bool:
    if isinstance(column.dtype, pd.ArrowDtype):
        return arrow and bool(pa.types.is_nested(column.dtype.pyarrow_dtype))
    return column.dtype == object and bool(column.map(_is_nested).any())


def _is_nested(value: Any) -> bool:
    return isinstance(value, list | dict | tuple | np.ndarray)


def _to_json(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if _is_nested(value):
        return json.dumps(value, default=str, ensure_ascii=False)
    return value
