"""views — what an analyst looks at: the ``df.pk`` accessor, GeoDataFrames, charts, maps, the
report, the portfolio workbook and (Geo)Parquet export.

Importing this package registers ``df.pk`` and nothing heavier: geopandas and plotly load when a
view is first used, so ``import propertykit`` stays light. The names below load their module on
first access.

May import: ``frames`` (the tables it draws) and core. Never ``client``, ``deeds``, ``wire``,
``widgets`` or ``cli``: views draw data, they never fetch it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from propertykit._public import public_dir
from propertykit.views import _accessor  # noqa: F401  (registers df.pk)

if TYPE_CHECKING:
    from propertykit.views._boundaries import WGS84, read_boundaries
    from propertykit.views._epc_trend import epc_trend_chart
    from propertykit.views._export import to_geoparquet, to_parquet
    from propertykit.views._geo import to_geodataframe
    from propertykit.views._maps import property_map
    from propertykit.views._match_sheet import match_sheet
    from propertykit.views._plots import epc_chart, epc_price_chart, price_trend
    from propertykit.views._report import build_report, check_report, write_report
    from propertykit.views._static import use_system_browser
    from propertykit.views._street import bake_tiles
    from propertykit.views._tile_source import OSM_TILES
    from propertykit.views._valuation import (
        comparable_evidence,
        comparables_map,
    )
    from propertykit.views._valuation_page import (
        date_note,
        evidence_html,
        range_only,
        value_range_text,
    )
    from propertykit.views._workbook import write_workbook

#: public name -> the module that defines it (imported on first access)
_LAZY = {
    "WGS84": "boundaries",
    "read_boundaries": "boundaries",
    "epc_trend_chart": "epc_trend",
    "to_geoparquet": "export",
    "to_parquet": "export",
    "to_geodataframe": "geo",
    "property_map": "maps",
    "match_sheet": "match_sheet",
    "epc_chart": "plots",
    "epc_price_chart": "plots",
    "price_trend": "plots",
    "build_report": "report",
    "check_report": "report",
    "write_report": "report",
    "use_system_browser": "static",
    "OSM_TILES": "tile_source",
    "bake_tiles": "street",
    "comparable_evidence": "valuation",
    "comparables_map": "valuation",
    "date_note": "valuation_page",
    "evidence_html": "valuation_page",
    "range_only": "valuation_page",
    "value_range_text": "valuation_page",
    "write_workbook": "workbook",
}

__all__ = [
    "OSM_TILES",
    "WGS84",
    "bake_tiles",
    "build_report",
    "check_report",
    "comparable_evidence",
    "comparables_map",
    "date_note",
    "epc_chart",
    "epc_price_chart",
    "epc_trend_chart",
    "evidence_html",
    "match_sheet",
    "price_trend",
    "property_map",
    "range_only",
    "read_boundaries",
    "to_geodataframe",
    "to_geoparquet",
    "to_parquet",
    "use_system_browser",
    "value_range_text",
    "write_report",
    "write_workbook",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"propertykit.views._{_LAZY[name]}"), name)
    raise AttributeError(f"module 'propertykit.views' has no attribute {name!r}")


__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
