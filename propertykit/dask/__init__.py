"""dask — property frames on a Dask cluster, past one machine's memory and one kernel's speed.

``propertykit.dask.properties(ids, client=client)`` and ``propertykit.dask.sources(...)`` build a
``dask.dataframe.DataFrame`` whose partitions are fetched and framed on the workers; ``.pk``
works on it (``sales()``, ``epc()``, ``to_geodataframe()`` giving a ``dask_geopandas``
GeoDataFrame, ``to_parquet()``/``to_geoparquet()`` writing partitioned datasets that Dask, DuckDB
and Spark read). Fields the interface does not name travel in one column, ``extra_fields``
(a Dask frame's columns are fixed before anything is fetched); :func:`unpack_extra_fields` gives
the computed frame ``client.properties`` would. Workers never pay twice for a batch (see
:mod:`propertykit.wire._single_flight`), and a named ``budget`` is shared by them all (see
:mod:`propertykit.wire._shared_budget`).

Pointing it at a real cluster::

    from distributed import Client as DaskClient
    dask_client = DaskClient("tcp://scheduler:8786")  # workers have PROPERTYKIT_API_KEY set
    client = pk.Client(cache="redis://cache:6379/0", budget=20_000, budget_name="q3")
    ddf = propertykit.dask.properties(ids, client=client)

Needs the ``dask`` extra: ``pip install 'propertykit[dask]'``.

May import: ``client``, ``frames``, ``views`` and core (a top layer, beside ``cli`` and
``widgets``).
"""

from __future__ import annotations

from propertykit._public import public_dir

try:
    import dask.dataframe  # noqa: F401
except ImportError as exc:  # pragma: no cover - the extra is part of the dev install
    raise ImportError("propertykit.dask needs Dask: pip install 'propertykit[dask]'") from exc

from propertykit.dask import _accessor  # noqa: F401  (registers ddf.pk)
from propertykit.dask._extra_fields import EXTRA_FIELDS, unpack_extra_fields
from propertykit.dask._lookups import properties, sources
from propertykit.dask._parquet import to_geoparquet, to_parquet

__all__ = [
    "EXTRA_FIELDS",
    "properties",
    "sources",
    "to_geoparquet",
    "to_parquet",
    "unpack_extra_fields",
]

__dir__ = public_dir(globals())  # dir(layer): its __all__, not its imports
