"""Decode response bytes quickly: ``orjson`` when installed, the garbage collector paused.

Decoding a page of records allocates hundreds of thousands of containers; each allocation burst
sets off CPython's cyclic garbage collector, which walks every tracked object again and again,
although JSON can hold no reference cycles. Pausing it for the decode removes that work; see
``benchmarks/frames.py`` for the figures. ``orjson`` is optional: when it is missing, or refuses
input the standard library accepts (integers beyond 64 bits, ``NaN``, UTF-16 bytes), the
standard library decodes, so the result never depends on which decoder is installed.

:func:`records_of` finds the records in a decoded body, for the client and for
``pk.frame(bodies)``, and :func:`warn_left_out` counts the items of a list of records that are
not records, which are left out; :func:`paused_gc` is the pause on its own, for other builders
of many small containers.
"""

from __future__ import annotations

import contextlib
import gc
import json
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from propertykit.errors import NotRecordsWarning, outside_stacklevel

__all__ = ["DECODER", "Record", "loads", "only_records", "paused_gc", "records_of", "warn_left_out"]

Record = dict[str, Any]

_orjson_loads: Callable[[bytes | bytearray | str], Any] | None
try:
    import orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson_loads = None
else:
    _orjson_loads = orjson.loads

#: The decoder tried first: ``"orjson"`` or ``"json"``.
DECODER = "json" if _orjson_loads is None else "orjson"


def loads(data: bytes | bytearray | str) -> Any:
    """Decode one JSON document, with the garbage collector paused while it runs.

    Parameters
    ----------
    data
        The response body.

    Returns
    -------
    Any
        The decoded value, exactly as ``json.loads`` gives it.

    Raises
    ------
    ValueError
        The body is not JSON (``json.JSONDecodeError``) or not text (``UnicodeDecodeError``).

    Examples
    --------
    >>> from propertykit.jsonio import loads
    >>> loads(b'{"result": [{"propertyId": "PK1"}], "hasMore": false}')["result"]
    [{'propertyId': 'PK1'}]
    """
    enabled = gc.isenabled()  # as paused_gc, without allocating before the pause begins
    gc.disable()
    try:
        if _orjson_loads is not None:
            try:
                return _orjson_loads(data)
            except ValueError:  # orjson.JSONDecodeError; let the standard library decide
                pass
        return json.loads(data)
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building objects that cannot form cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def records_of(body: Any, *, left_out: list[Any] | None = None) -> list[Record]:
    """The records of an envelope (``result`` a list or one record) or of a bare list.

    Items of the list that are not objects are left out: added to ``left_out`` when given (for
    the caller to count), else counted at once by :func:`warn_left_out`.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     records_of({"result": [{"propertyId": "P1"}, "junk"]})
    [{'propertyId': 'P1'}]
    >>> print(caught[0].message)
    1 item of the service's list of records is not a record (a JSON object): left out (e.g. 'junk')
    """
    result = body.get("result") if isinstance(body, dict) else body
    if isinstance(result, dict):
        return [result]
    if isinstance(result, list):
        return only_records(result, left_out=left_out)
    return []


def only_records(items: list[Any], *, left_out: list[Any] | None = None) -> list[Record]:
    """The objects of a list of records; anything else is left out, as :func:`records_of` says."""
    records = [item for item in items if isinstance(item, dict)]
    if len(records) != len(items):
        odd = [item for item in items if not isinstance(item, dict)]
        if left_out is not None:
            left_out.extend(odd)
        else:
            warn_left_out(len(odd), odd[0])
    return records


def warn_left_out(count: int, example: Any) -> None:
    """Warn (:class:`~propertykit.errors.NotRecordsWarning`) that ``count`` items of the
    service's lists of records were not records and are left out; ``example`` is one of them."""
    shown = repr(example)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    many = count != 1
    warnings.warn(
        f"{count:,} item{'s' if many else ''} of the service's list of records "
        f"{'are not records (JSON objects)' if many else 'is not a record (a JSON object)'}: "
        f"left out (e.g. {shown})",
        NotRecordsWarning,
        stacklevel=outside_stacklevel(),
    )
