"""Decode response bytes quickly: ``orjson`` when installed, the garbage collector paused.

Decoding a page of records allocates hundreds of thousands of containers; each allocation burst
sets off CPython's cyclic garbage collector, which walks every tracked object again and again,
although JSON can hold no reference cycles. Pausing it for the decode removes that work; see
``benchmarks/frames.py`` for the figures. ``orjson`` is optional: when it is missing, or refuses
input the standard library accepts (integers beyond 64 bits, ``NaN``, UTF-16 bytes), the
standard library decodes, so the result never depends on which decoder is installed.

:func:`records_of` finds the records in a decoded body, for the client and for
``pk.frame(bodies)``; :func:`paused_gc` is the pause on its own, for other builders of many small
containers.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["DECODER", "Record", "loads", "paused_gc", "records_of"]

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


def records_of(body: Any) -> list[Record]:
    """The records of an envelope (``result`` a list or one record) or of a bare list.

    Examples
    --------
    >>> records_of({"result": [{"propertyId": "P1"}, "junk"]})
    [{'propertyId': 'P1'}]
    """
    result = body.get("result") if isinstance(body, dict) else body
    if isinstance(result, dict):
        return [result]
    if isinstance(result, list):
        return [item for item in result if isinstance(item, dict)]
    return []
