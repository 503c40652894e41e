"""Property frames built on a Dask cluster: one partition per run of whole batches.

:func:`properties` and :func:`sources` split the ids into partitions of ``partition_size`` ids (a
multiple of the client's ``Endpoints.batch_size``, so partitions are made of the same batches a
single ``client.properties(...)`` call sends, and a retried or re-run partition is a cache hit)
and build a ``dask.dataframe.DataFrame`` with ``dd.from_map``: each partition is fetched and
framed on a worker, by a copy of the client that carries no key (see
:mod:`propertykit.client._portable`). Its ``meta`` is the client's own empty frame, so columns and
dtypes are those of ``client.properties(...)``, and one more: ``extra_fields``, where the fields
the interface does not name travel (see :mod:`propertykit.dask._extra_fields`). Object columns
(``spatial.boundary``) stay objects: Dask's automatic conversion of object columns to text is
switched off for these frames.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Iterable
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd

from propertykit.client import Client, ClientRecipe, validate_ids
from propertykit.dask._extra_fields import packed, with_extra_fields_column
from propertykit.errors import InvalidInput
from propertykit.frames import frame

#: Batches in one partition unless ``partition_size`` says otherwise (1,000 ids at 50 a batch).
DEFAULT_BATCHES_PER_PARTITION = 20

_worker_clients: dict[ClientRecipe, Client] = {}
_worker_lock = threading.Lock()


def properties(
    location_ids: str | Iterable[str],
    *,
    client: Client,
    partition_size: int | None = None,
    attributes: str | Iterable[str] | None = None,
) -> dd.DataFrame:
    """Property records by location id as a Dask DataFrame, fetched on the workers.

    Parameters
    ----------
    location_ids
        The ids (checked and de-duplicated here, before anything is sent).
    client
        The client whose settings the workers copy (never its key: each worker reads
        ``PROPERTYKIT_API_KEY`` from its environment).
    partition_size
        Ids per partition: a multiple of ``client.endpoints.batch_size`` (default 20 batches).
    attributes
        As for ``client.properties``.

    Examples
    --------
    >>> import propertykit.dask as pkd
    >>> ddf = pkd.properties(sb.location_ids[:120], client=client, partition_size=50)
    >>> ddf.npartitions, len(ddf.compute())
    (3, 120)
    """
    ids = validate_ids(location_ids, source=False)
    chosen = _attribute_names(attributes)
    return _frame_of(ids, client, partition_size, _fetch_properties, {"attributes": chosen})


def sources(
    source_ids: str | Iterable[str],
    *,
    client: Client,
    partition_size: int | None = None,
    attributes: str | Iterable[str] | None = None,
    page_size: int | None = None,
) -> dd.DataFrame:
    """Property records by ``<provider>::<id>`` source id as a Dask DataFrame (see
    :func:`properties`); each partition follows the pages of its batches.

    Examples
    --------
    >>> import propertykit.dask as pkd
    >>> ddf = pkd.sources(sb.source_ids[:60], client=client, partition_size=50, page_size=50)
    >>> sorted(ddf.compute()["locationId"])[:2]
    ['L00000000', 'L00000001']
    """
    ids = validate_ids(source_ids, source=True)
    if page_size is not None and (
        not isinstance(page_size, int) or isinstance(page_size, bool) or page_size < 1
    ):
        raise InvalidInput(f"page_size must be a positive integer, got {page_size!r}")
    chosen = _attribute_names(attributes)
    options = {"attributes": chosen, "page_size": page_size}
    return _frame_of(ids, client, partition_size, _fetch_sources, options)


def empty_frame() -> pd.DataFrame:
    """The property frame of no records and its ``extra_fields`` column: the ``meta`` of every
    frame built here.

    Examples
    --------
    >>> empty_frame().columns[[0, 1, -1]].tolist()
    ['propertyId', 'locationId', 'extra_fields']
    """
    return with_extra_fields_column(frame([]))


def _frame_of(
    ids: list[str],
    client: Client,
    partition_size: int | None,
    fetch: Any,
    options: dict[str, Any],
) -> dd.DataFrame:
    if not isinstance(client, Client):
        raise InvalidInput(f"client must be a pk.Client, got {type(client).__name__}")
    batch_size = client.endpoints.batch_size
    size = _partition_size(partition_size, batch_size)
    # The key stays here: workers read it from their environment. A budget is shared by them
    # all, under the client's budget_name or one made for it (see Client.cluster_recipe).
    recipe = client.cluster_recipe()
    chunks = [tuple(ids[start : start + size]) for start in range(0, len(ids), size)]
    meta = empty_frame()
    with dask.config.set({"dataframe.convert-string": False}):
        built: dd.DataFrame = dd.from_map(  # type: ignore[no-untyped-call]
            fetch,
            chunks,
            recipe=recipe,
            options=options,
            meta=meta,
            label="propertykit",
            enforce_metadata=False,
        )
    return built


def _attribute_names(attributes: str | Iterable[str] | None) -> list[str] | None:
    """``attributes`` as ``client.properties`` reads it: one name as text, or several."""
    if attributes is None:
        return None
    return [attributes] if isinstance(attributes, str) else list(attributes)


def _partition_size(partition_size: int | None, batch_size: int) -> int:
    if partition_size is None:
        return batch_size * DEFAULT_BATCHES_PER_PARTITION
    if (
        not isinstance(partition_size, int)
        or isinstance(partition_size, bool)
        or partition_size < 1
        or partition_size % batch_size
    ):
        raise InvalidInput(
            f"partition_size must be a positive multiple of the batch size ({batch_size}), "
            f"so partitions are whole batches; got {partition_size!r}"
        )
    return partition_size


def worker_client(recipe: ClientRecipe) -> Client:
    """One client per worker process for a recipe: the worker's tasks share its connections.

    Examples
    --------
    >>> worker_client(client.cluster_recipe()) is worker_client(client.cluster_recipe())
    True
    """
    try:
        hash(recipe)
    except TypeError:  # a setting that cannot be a key (e.g. a dict): no sharing
        return Client.from_recipe(recipe)
    with _worker_lock:
        built = _worker_clients.get(recipe)
        if built is None:
            built = _worker_clients[recipe] = Client.from_recipe(recipe)
        return built


@atexit.register
def _close_worker_clients() -> None:
    with _worker_lock:
        for built in _worker_clients.values():
            built.close()
        _worker_clients.clear()


def _fetch_properties(
    chunk: tuple[str, ...], *, recipe: ClientRecipe, options: dict[str, Any]
) -> pd.DataFrame:
    client = worker_client(recipe)
    return _conform(client.properties(list(chunk), attributes=options["attributes"]))


def _fetch_sources(
    chunk: tuple[str, ...], *, recipe: ClientRecipe, options: dict[str, Any]
) -> pd.DataFrame:
    client = worker_client(recipe)
    attributes, page_size = options["attributes"], options["page_size"]
    return _conform(client.sources(list(chunk), attributes=attributes, page_size=page_size))


def _conform(df: pd.DataFrame) -> pd.DataFrame:
    """The partition with exactly the columns of ``meta`` (an empty partition typed like it):
    the fields the interface does not name packed into ``extra_fields``."""
    meta = empty_frame()
    if df.empty:
        return meta
    return packed(df, meta)
