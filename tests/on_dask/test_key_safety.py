"""The key stays on the driver: no pickled task, repr, log line or Redis key holds its bytes."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import cloudpickle
import pytest

import propertykit as pk
import propertykit.dask as pkd

pytestmark = pytest.mark.timeout(300)


def _log_propertykit_to(path: str) -> None:
    """On a worker: write propertykit's log, at DEBUG, to ``path``."""
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    logger = logging.getLogger("propertykit")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def test_the_key_is_in_no_pickled_task_repr_log_or_redis_key(
    sb, cluster, redis_url, tmp_path, caplog
):
    import redis

    key = sb.api_key.encode()
    workers = cluster.scheduler_info()["workers"]
    for index, address in enumerate(sorted(workers)):
        path = tmp_path / f"worker-{index}.log"
        cluster.run(_log_propertykit_to, str(path), workers=[address])
    caplog.set_level(logging.DEBUG, logger="propertykit")
    with pk.Client(sb.api_key, sb.url, cache=redis_url, progress=False) as client:
        ddf = pkd.properties(sb.location_ids[8000:8300], client=client, partition_size=100)
        graph = dict(ddf.__dask_graph__())
        assert key not in cloudpickle.dumps(graph)
        assert key not in cloudpickle.dumps(ddf)
        assert key not in pickle.dumps(client)
        assert sb.api_key not in repr(client) and sb.api_key not in str(client.describe())
        assert all(sb.api_key not in str(task_key) for task_key in graph)
        frames = [ddf.compute(), ddf.pk.sales().compute()]
    assert len(frames[0]) == 300
    worker_logs = b"".join(path.read_bytes() for path in tmp_path.glob("worker-*.log"))
    assert b"GET /v1/property/" in worker_logs  # the workers did log their requests
    assert key not in worker_logs
    assert sb.api_key not in caplog.text
    assert sb.api_key not in str(cluster.get_worker_logs()) + str(cluster.get_scheduler_logs())
    connection = redis.Redis.from_url(redis_url)
    stored = list(connection.scan_iter("*"))
    assert stored
    assert all(key not in name for name in stored)
    assert all(key not in (connection.dump(name) or b"") for name in stored)


def test_a_copy_without_the_key_in_its_environment_says_what_to_set(sb, monkeypatch, tmp_path):
    monkeypatch.delenv("PROPERTYKIT_API_KEY", raising=False)
    with pk.Client(sb.api_key, sb.url, cache=tmp_path / "c.sqlite", progress=False) as client:
        copied = pickle.dumps(client)
    with pytest.raises(pk.ConfigError, match="PROPERTYKIT_API_KEY") as raised:
        pickle.loads(copied)
    assert sb.api_key not in str(raised.value)


def test_a_copy_is_the_same_client_with_the_key_from_the_environment(sb, monkeypatch, tmp_path):
    monkeypatch.setenv("PROPERTYKIT_API_KEY", sb.api_key)
    with pk.Client(
        sb.api_key, sb.url, cache=tmp_path / "c.sqlite", budget=9, budget_name="copy-test",
        max_in_flight=2, progress=False,
    ) as client:  # fmt: skip
        client.properties(sb.location_ids[:50])
        copy = pickle.loads(pickle.dumps(client))
    with copy:
        assert copy.describe() == client.describe()
        copy.properties(sb.location_ids[:50])
        assert copy.usage.cache_hits == 1  # the same cache file
        assert Path(copy.describe()["cache"]).name == "c.sqlite"
