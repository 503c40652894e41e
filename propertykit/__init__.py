"""propertykit: property records from a credit-metered service into pandas, plotly and geopandas.

>>> import propertykit as pk
>>> with pk.sandbox.serve() as sb, pk.Client(api_key=sb.api_key, base_url=sb.url) as client:
...     df = client.properties(sb.location_ids[:10])
>>> len(df)
10
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from propertykit import views as _views  # noqa: F401  (registers df.pk)
from propertykit.client import Client, DryRun
from propertykit.config import VERSION, Endpoints
from propertykit.deeds import Purchase
from propertykit.errors import (
    ApiError,
    AuthenticationError,
    BadResponse,
    BudgetExceeded,
    CacheUnavailable,
    CacheWriteWarning,
    ConfigError,
    DailyCapReached,
    GeometryWarning,
    InsufficientCredit,
    InvalidInput,
    MissingIdsWarning,
    NetworkError,
    NotCached,
    NotFound,
    NotRecordsWarning,
    PartialResult,
    PermissionDenied,
    PropertyKitError,
    PropertyKitWarning,
    PurchaseUncertain,
    RateLimited,
    ResponseTooLarge,
    ServerError,
    ServiceDegraded,
    ServiceUnhealthy,
    TileWarning,
)
from propertykit.frames import MinorUnitsWarning, UnparsedValuesWarning, frame
from propertykit.views import use_tile_fetcher as _use_tile_fetcher
from propertykit.wire import Usage
from propertykit.wire import fetch_tile as _fetch_tile

# Views never fetch: maps get their street tiles through the cached fetcher of the wire layer.
_use_tile_fetcher(_fetch_tile)

__version__ = VERSION

# Submodules that pull in heavy or optional dependencies load on first touch.
_LAZY_SUBMODULES = {
    "export": "propertykit.views.export",
    "sandbox": "propertykit.sandbox",
    "widgets": "propertykit.widgets",
}

__all__ = [
    "ApiError",
    "AuthenticationError",
    "BadResponse",
    "BudgetExceeded",
    "CacheUnavailable",
    "CacheWriteWarning",
    "Client",
    "ConfigError",
    "DailyCapReached",
    "DryRun",
    "Endpoints",
    "GeometryWarning",
    "InsufficientCredit",
    "InvalidInput",
    "MinorUnitsWarning",
    "MissingIdsWarning",
    "NetworkError",
    "NotCached",
    "NotFound",
    "NotRecordsWarning",
    "PartialResult",
    "PermissionDenied",
    "PropertyKitError",
    "PropertyKitWarning",
    "Purchase",
    "PurchaseUncertain",
    "RateLimited",
    "ResponseTooLarge",
    "ServerError",
    "ServiceDegraded",
    "ServiceUnhealthy",
    "TileWarning",
    "UnparsedValuesWarning",
    "Usage",
    "__version__",
    "frame",
    "sandbox",
    "widgets",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return import_module(_LAZY_SUBMODULES[name])
    raise AttributeError(f"module 'propertykit' has no attribute {name!r}")
