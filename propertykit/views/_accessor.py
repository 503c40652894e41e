"""The ``df.pk`` accessor: registered when this module is imported; it only delegates.

Tables come from :mod:`propertykit.frames._tables`, maps from :mod:`propertykit.views._geo`,
figures from :mod:`propertykit.views._plots`, partitioned datasets from
:mod:`propertykit.views._export`; each is imported on first use so ``import propertykit`` stays
light.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

if TYPE_CHECKING:
    import geopandas
    import plotly.graph_objects as go


@pd.api.extensions.register_dataframe_accessor("pk")
class PropertyAccessor:
    """``df.pk``: tables, maps and figures from a frame made by :func:`propertykit.frame`.

    Examples
    --------
    >>> import propertykit as pk
    >>> df = pk.frame([{"propertyId": "PK1", "saleHistory": [{"date": "2020-05-01", "price": 1}]}])
    >>> len(df.pk.sales()), len(df.pk.epc())
    (1, 1)
    """

    def __init__(self, df: pd.DataFrame) -> None:
        self._df = df

    def sales(self) -> pd.DataFrame:
        """One row per sale, with ``price_per_sqm`` where the floor area is known:
        :func:`propertykit.frames._tables.explode_sales`.

        Examples
        --------
        >>> import propertykit as pk
        >>> list(pk.frame([]).pk.sales().columns[:3])
        ['propertyId', 'date', 'price']
        """
        from propertykit.frames import explode_sales

        return explode_sales(self._df)

    def gross_yield(self, *, rent_per: str | None = None) -> pd.DataFrame:
        """Gross rental yield per property, in per cent; ``rent_per`` (``"week"``,
        ``"month"`` or ``"year"``) is required: :func:`propertykit.frames._gross_yield.gross_yield`.

        Examples
        --------
        >>> import propertykit as pk
        >>> df = pk.frame([{"pricing": {"estimatedSaleValue": 260000, "estimatedRentValue": 250}}])
        >>> float(df.pk.gross_yield(rent_per="week")["gross_yield"].iloc[0])
        5.0
        """
        from propertykit.frames import gross_yield

        return gross_yield(self._df, rent_per=rent_per)

    def in_pounds(self) -> pd.DataFrame:
        """A copy with prices in pounds when served in pence (see :mod:`propertykit.frames._money`).

        Stored values never change; ``attrs["money_unit"]`` of the copy says ``"major"``.
        ``pricing.pricePerSqFt`` is left as served.

        Examples
        --------
        >>> import propertykit as pk
        >>> df = pk.frame([{"pricing": {"currentSalePrice": 50000000}}], money_unit="minor")
        >>> float(df.pk.in_pounds()["pricing.currentSalePrice"].iloc[0])
        500000.0
        """
        from propertykit.frames import in_major_units

        return in_major_units(self._df)

    def epc(self, *, today: date | datetime | str | None = None) -> pd.DataFrame:
        """One row per property of EPC data: :func:`propertykit.frames._tables.epc_table`.

        Examples
        --------
        >>> import propertykit as pk
        >>> list(pk.frame([]).pk.epc(today="2025-06-01").columns[:2])
        ['propertyId', 'currentEnergyRating']
        """
        from propertykit.frames import epc_table

        return epc_table(self._df, today=today)

    def unparsed(self) -> pd.DataFrame:
        """Values that had no clear meaning in their column, as served: propertyId, column, value.

        They are missing in the typed columns (:func:`propertykit.frames._coercion.report` warned
        once per column); see :mod:`propertykit.frames._coercion`.

        Examples
        --------
        >>> import warnings, propertykit as pk
        >>> with warnings.catch_warnings(action="ignore"):
        ...     df = pk.frame([{"propertyId": "PK1", "yearBuilt": "c. 1930"}])
        >>> df.pk.unparsed().to_dict("records")
        [{'propertyId': 'PK1', 'column': 'yearBuilt', 'value': 'c. 1930'}]
        """
        from propertykit.frames import unparsed_table

        return unparsed_table(self._df)

    def to_geodataframe(
        self, geometry: Literal["point", "boundary"] = "point", **kwargs: Any
    ) -> geopandas.GeoDataFrame:
        """Points or boundaries in EPSG:4326: :func:`propertykit.views._geo.to_geodataframe`.

        Examples
        --------
        >>> import propertykit as pk
        >>> pk.frame([{"spatial": {"lat": 51.5, "lng": -0.1}}]).pk.to_geodataframe().crs.to_epsg()
        4326
        """
        from propertykit.views._geo import to_geodataframe

        return to_geodataframe(self._df, geometry=geometry, **kwargs)

    def price_trend(self, **kwargs: Any) -> go.Figure:
        """Median sale price over time: :func:`propertykit.views._plots.price_trend`.

        Examples
        --------
        >>> import propertykit as pk
        >>> figure = pk.frame(records).pk.price_trend(by="propertyType")
        >>> figure.layout.title.text
        'Median sale price per year by property type (90 sales, at least 5 a point)'
        """
        from propertykit.views._plots import price_trend

        return price_trend(self._df, **kwargs)

    def price_index(
        self,
        *,
        freq: Literal["year", "quarter", "month"] = "year",
        by: str | None = None,
        min_pairs: int = 30,
        weights: Literal["auto", "interval", "equal"] = "auto",
        robust: bool = True,
    ) -> pd.DataFrame:
        """The repeat-sales price index (Case-Shiller), 100 at the first period; interval weights
        only where dispersion grows with the time held (``attrs["weights"]`` says):
        :func:`propertykit.frames._price_index.price_index`.

        Examples
        --------
        >>> import propertykit as pk
        >>> from propertykit.sandbox import generate_records
        >>> index = pk.frame(generate_records(2000)).pk.price_index()
        >>> list(index.columns), str(index["period"].iloc[0]), float(index["index"].iloc[0])
        (['period', 'index', 'lower', 'upper', 'pairs'], '1995', 100.0)
        """
        from propertykit.frames import price_index

        return price_index(
            self._df, freq=freq, by=by, min_pairs=min_pairs, weights=weights, robust=robust
        )

    def comparables(
        self, subject: str | Mapping[str, Any], *, as_of: Any = None, **search: Any
    ) -> pd.DataFrame:
        """Exactly the comparable sales a subject's estimate rests on, sold strictly before
        ``as_of``, with every adjustment and weight: the schedule of
        :func:`propertykit.frames.appraise` (``search``: ``radius_m``, ``months``, ``limit``,
        ``min_comparables``, ``index``, or ``search=ValuationSearch(...)``; ``today``).

        Examples
        --------
        >>> import propertykit as pk
        >>> from propertykit.sandbox import generate_records
        >>> df = pk.frame(generate_records(3000))
        >>> found = df.pk.comparables("PK00000042", as_of="2025-01-01")
        >>> list(found.columns[-3:])
        ['address', 'tenure', 'newBuild']
        """
        from propertykit.frames import comparables

        return comparables(self._df, subject, as_of=as_of, **search)

    def valuation(
        self,
        subjects: str | Mapping[str, Any] | Sequence[str | Mapping[str, Any]] | None = None,
        *,
        as_of: Any = None,
        **search: Any,
    ) -> pd.DataFrame:
        """An estimate with a calibrated 80 % range and a confidence per subject, point in
        time: the values of :func:`propertykit.frames.appraise` (``search`` as for
        :meth:`comparables`).

        Examples
        --------
        >>> import propertykit as pk
        >>> from propertykit.sandbox import generate_records
        >>> df = pk.frame(generate_records(3000))
        >>> values = df.pk.valuation(["PK00000042"], as_of="2025-01-01")
        >>> list(values.columns)  # doctest: +NORMALIZE_WHITESPACE
        ['propertyId', 'as_of', 'estimate', 'lower', 'upper', 'confidence', 'price_per_sqm',
         'comparables', 'radius_m', 'months', 'thin', 'method', 'calibrated', 'index', 'size']
        """
        from propertykit.frames import valuation

        return valuation(self._df, subjects, as_of=as_of, **search)

    def index_chart(self, **kwargs: Any) -> go.Figure:
        """The repeat-sales price index with its 95 % band:
        :func:`propertykit.views._price_index.index_chart`.

        Examples
        --------
        >>> import propertykit as pk
        >>> from propertykit.sandbox import generate_records
        >>> figure = pk.frame(generate_records(2000)).pk.index_chart()
        >>> figure.layout.yaxis.title.text
        'Index (first period = 100)'
        """
        from propertykit.views._price_index import index_chart

        return index_chart(self._df, **kwargs)

    def epc_chart(self, **kwargs: Any) -> go.Figure:
        """Current against potential EPC ratings: :func:`propertykit.views._plots.epc_chart`.

        Examples
        --------
        >>> import propertykit as pk
        >>> figure = pk.frame(records).pk.epc_chart()
        >>> figure.layout.title.text
        'EPC ratings: current and potential (48 rated properties)'
        """
        from propertykit.views._plots import epc_chart

        return epc_chart(self._df, **kwargs)

    # --- EPC trends: how ratings move over time ---------------------------------------------

    def epc_trend(self, **kwargs: Any) -> pd.DataFrame:
        """EPC band shares per year (or quarter) of lodgement, optionally by group:
        :func:`propertykit.frames._epc_trend.epc_trend`.

        Examples
        --------
        >>> import warnings, propertykit as pk
        >>> from propertykit.sandbox import generate_records
        >>> df = pk.frame(generate_records(2000))
        >>> with warnings.catch_warnings(record=True, action="always") as said:
        ...     trend = df.pk.epc_trend(min_count=100)
        >>> trend.attrs["pooled"], len(said)
        (['2016 to 2017'], 1)
        >>> trend[["label", "n", "share_A_to_C"]].round(2).head(2)
          label    n  share_A_to_C
        0  2009  119          0.10
        1  2010  104          0.15
        """
        from propertykit.frames import epc_trend

        return epc_trend(self._df, **kwargs)

    def epc_trend_chart(self, **kwargs: Any) -> go.Figure:
        """EPC band shares over time as 100 % stacked bars, with mean efficiency:
        :func:`propertykit.views._epc_trend.epc_trend_chart`.

        Examples
        --------
        >>> import warnings, propertykit as pk
        >>> from propertykit.sandbox import generate_records
        >>> with warnings.catch_warnings(action="ignore"):  # 2016 and 2017 pooled, said as above
        ...     figure = pk.frame(generate_records(2000)).pk.epc_trend_chart(min_count=100)
        >>> figure.layout.title.text.split("<br>")[0]
        'EPC ratings of certificates by year lodged (1,885 certificates)'
        """
        from propertykit.views._epc_trend import epc_trend_chart

        return epc_trend_chart(self._df, **kwargs)

    # -----------------------------------------------------------------------------------------

    def map(self, **kwargs: Any) -> go.Figure:
        """A map of the properties: :func:`propertykit.views._maps.property_map`.

        Examples
        --------
        >>> import propertykit as pk
        >>> figure = pk.frame(records).pk.map(color="epc.currentEnergyRating")
        >>> figure.layout.title.text
        'Properties by current EPC rating (50 mapped)'
        """
        from propertykit.views._maps import property_map

        return property_map(self._df, **kwargs)

    def comparables_map(self, subject: str | Mapping[str, Any], **kwargs: Any) -> go.Figure:
        """The subject among its comparable sales, coloured by price per m², with the searched
        circle: :func:`propertykit.views._valuation.comparables_map`.

        Examples
        --------
        >>> import propertykit as pk
        >>> from propertykit.sandbox import generate_records
        >>> df = pk.frame(generate_records(3000))
        >>> figure = df.pk.comparables_map("PK00000007", as_of="2025-01-01", basemap="outline")
        >>> figure.data[-1].name
        'Subject'
        """
        from propertykit.views._valuation import comparables_map

        return comparables_map(self._df, subject, **kwargs)

    def to_parquet(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        """A Parquet dataset, one folder per outcode: :func:`propertykit.views._export.to_parquet`.

        Examples
        --------
        >>> import propertykit as pk
        >>> folder = pk.frame(records).pk.to_parquet("portfolio/")
        >>> sorted(part.name for part in folder.iterdir())[:2]
        ['address.outcode=B13', 'address.outcode=BA1']
        """
        from propertykit.views._export import to_parquet

        return to_parquet(self._df, path, **kwargs)

    def to_geoparquet(self, path: str | os.PathLike[str], **kwargs: Any) -> Path:
        """A GeoParquet dataset, one folder per outcode:
        :func:`propertykit.views._export.to_geoparquet`.

        Examples
        --------
        >>> import propertykit as pk
        >>> folder = pk.frame(records).pk.to_geoparquet("portfolio-geo/")
        >>> sorted(part.name for part in folder.iterdir())[:2]
        ['address.outcode=B13', 'address.outcode=BA1']
        """
        from propertykit.views._export import to_geoparquet

        return to_geoparquet(self._df, path, **kwargs)
