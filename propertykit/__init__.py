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

from propertykit import errors
from propertykit import views as _views  # noqa: F401  (registers df.pk)
from propertykit.client import Client, DryRun
from propertykit.config import VERSION, Endpoints
from propertykit.deeds import Purchase
from propertykit.errors import PropertyKitError, PropertyKitWarning
from propertykit.frames import frame
from propertykit.wire import Usage

__version__ = VERSION

# Submodules that pull in heavy or optional dependencies load on first touch.
_LAZY_SUBMODULES = {
    "export": "propertykit.views._export",
    "sandbox": "propertykit.sandbox",
    "widgets": "propertykit.widgets",
}

#: Names of the older, larger top level: still ``pk.<Name>``, quietly, so code written against
#: it keeps working; docs and examples use their homes (``pk.errors.NotCached``).
_FORMER_NAMES = {
    **{name: "propertykit.errors" for name in errors.__all__ if name != "outside_stacklevel"},
    "ServiceDegraded": "propertykit.errors",
    "PartialResult": "propertykit.client",
}

__all__ = [
    "Client",
    "DryRun",
    "Endpoints",
    "PropertyKitError",
    "PropertyKitWarning",
    "Purchase",
    "Usage",
    "__version__",
    "errors",
    "frame",
    "sandbox",
    "widgets",
]


def __dir__() -> list[str]:
    """What ``dir(pk)`` shows: the public names and the quiet old ones, not the imports."""
    return sorted({*__all__, *_LAZY_SUBMODULES, *_FORMER_NAMES})


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return import_module(_LAZY_SUBMODULES[name])
    if name in _FORMER_NAMES:
        return getattr(import_module(_FORMER_NAMES[name]), name)
    raise AttributeError(f"module 'propertykit' has no attribute {name!r}")
