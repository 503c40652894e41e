"""The sandbox's profiles: the service interface's neutral choices (``spec``) or Vepler's.

``serve(profile="vepler")`` (``propertykit sandbox --profile vepler``) answers as Vepler's public
documentation shows its API:

- prices in pence: ``pricing.currentSalePrice``, ``currentRentPrice``, ``estimatedSaleValue``,
  ``estimatedRentValue`` and ``saleHistory[].price`` are 100 times the ``spec`` values;
  ``pricePerSqFt`` stays in pounds (as in Vepler's examples), as do tenure and council-tax
  charges;
- ``marketStatus.forSale`` in Vepler's words: ``live``, ``sstc``, ``unavailable``;
- health ``{status: healthy|degraded|unhealthy, service, timestamp, version}`` with no
  ``success`` field (``Sandbox.set_health``);
- errors in the older documented form: upper-case codes (``RATE_LIMIT_EXCEEDED``) with
  ``details``, ``request_id`` and ``timestamp``; a 429 carries ``X-RateLimit-Limit``,
  ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset`` (a Unix time) instead of ``Retry-After``;
- the area query answers the ``total``/``limit``/``offset`` envelope, 25 records by default.

Paths, keys, credits, purchases, the daily cap and search-suggest are the same in both.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

#: Money fields of ``pricing`` served in pence under a minor-unit profile.
MINOR_PRICING = ("currentSalePrice", "currentRentPrice", "estimatedSaleValue", "estimatedRentValue")
_SALE_STATUS = {"underOffer": "sstc", "soldSTC": "sstc"}


@dataclass(frozen=True)
class SandboxProfile:
    """How one profile answers (see the module docstring)."""

    name: str
    money_factor: int
    query_page_size: int
    vepler_style: bool

    def adapt_record(self, record: dict[str, Any]) -> dict[str, Any]:
        """A record as this profile serves it (a copy when anything changes)."""
        if not self.vepler_style:
            return record
        return in_minor_units(record, self.money_factor)

    def health(self, now: datetime, status: str) -> dict[str, Any]:
        """The health answer's body."""
        stamp = now.isoformat(timespec="seconds").replace("+00:00", "Z")
        return {"status": status, "service": "property", "timestamp": stamp, "version": "1.0.0"}

    def adapt_error(self, status: int, body: bytes, headers: dict[str, str], now: datetime,
                    serial: int) -> tuple[bytes, dict[str, str]]:  # fmt: skip
        """An error answer's body and headers in this profile's shape."""
        if not self.vepler_style:
            return body, headers
        headers = dict(headers)
        retry_after = headers.pop("Retry-After", None)
        if retry_after is not None:
            reset = math.ceil(now.timestamp()) + int(retry_after)
            headers.update({"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0",
                            "X-RateLimit-Reset": str(reset)})  # fmt: skip
        try:
            payload = json.loads(body)
        except ValueError:
            return body, headers
        error = payload.get("error") if isinstance(payload, dict) else None
        if not isinstance(error, dict):
            return body, headers
        error["code"] = str(error.get("code", "error")).upper()
        error["details"] = {"status": status}
        error["request_id"] = f"req_{serial:08d}"
        error["timestamp"] = now.isoformat(timespec="seconds").replace("+00:00", "Z")
        payload.pop("success", None)
        return json.dumps(payload, separators=(",", ":")).encode(), headers

    def query_envelope(
        self, page: list[dict[str, Any]], total: int, offset: int, limit: int
    ) -> dict[str, Any]:
        """The area query's envelope for one page."""
        if self.vepler_style:
            return {"success": True, "result": page, "total": total, "limit": limit,
                    "offset": offset}  # fmt: skip
        return {
            "success": True,
            "result": page,
            "totalSize": total,
            "size": len(page),
            "hasMore": offset + len(page) < total,
            "nextOffset": offset + len(page),
        }


PROFILES = {
    "spec": SandboxProfile("spec", money_factor=1, query_page_size=20, vepler_style=False),
    "vepler": SandboxProfile("vepler", money_factor=100, query_page_size=25, vepler_style=True),
}


def get_profile(name: str) -> SandboxProfile:
    """The profile called ``name``; ``ValueError`` for others."""
    try:
        return PROFILES[name]
    except KeyError:
        choices = ", ".join(PROFILES)
        raise ValueError(f"unknown sandbox profile {name!r}; choose {choices}") from None


def in_minor_units(record: dict[str, Any], factor: int = 100) -> dict[str, Any]:
    """A copy of ``record`` with its prices in minor units and Vepler's sale-status words.

    The parts it changes (``pricing``, ``saleHistory`` and its sales, ``marketStatus``) are new;
    the rest is shared with ``record``, as the sandbox's records are read, never changed.

    Examples
    --------
    >>> in_minor_units({"pricing": {"currentSalePrice": 500000, "pricePerSqFt": 850}})["pricing"]
    {'currentSalePrice': 50000000, 'pricePerSqFt': 850}
    """
    out = dict(record)
    pricing = out.get("pricing")
    if isinstance(pricing, dict):
        out["pricing"] = pricing = dict(pricing)
        for name in MINOR_PRICING:
            if isinstance(pricing.get(name), int | float):
                pricing[name] = pricing[name] * factor
    history = out.get("saleHistory")
    if isinstance(history, list):
        out["saleHistory"] = [
            {**sale, "price": sale["price"] * factor}
            if isinstance(sale, dict) and isinstance(sale.get("price"), int | float)
            else sale
            for sale in history
        ]
    status = out.get("marketStatus")
    if isinstance(status, dict) and status.get("forSale") in _SALE_STATUS:
        out["marketStatus"] = {**status, "forSale": _SALE_STATUS[status["forSale"]]}
    return out
