"""Decode response bytes quickly: ``orjson`` when installed, the garbage collector paused.

Decoding a page of records allocates hundreds of thousands of containers; each allocation burst
sets off CPython's cyclic garbage collector, which walks every tracked object again and again,
although JSON can hold no reference cycles. Pausing it for the decode removes that work; see
``benchmarks/frames.py`` for the figures. ``orjson`` is optional: when it is missing, or refuses
input the standard library accepts (integers beyond 64 bits, ``NaN``, UTF-16 bytes), the
standard library decodes, so the result never depends on which decoder is installed.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from typing import Any

__all__ = ["DECODER", "loads"]

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
    >>> from propertykit._json import loads
    >>> loads(b'{"result": [{"propertyId": "PK1"}], "hasMore": false}')["result"]
    [{'propertyId': 'PK1'}]
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        if _orjson_loads is not None:
            try:
                return _orjson_loads(data)
            except ValueError:  # orjson.JSONDecodeError; let the standard library decide
                pass
        return json.loads(data)
    finally:
        if paused:
            gc.enable()
