"""A named budget is one count for every process: never more places than the budget."""

from __future__ import annotations

import multiprocessing
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from propertykit.wire._shared_budget import FileBudget, RedisBudget

pytestmark = pytest.mark.timeout(120)


def _take_many(kind: str, where: str, name: str, tries: int) -> int:
    """In another process: how many places it got out of ``tries``."""
    budget = _budget(kind, where, name)
    return sum(budget.take() for _ in range(tries))


def _budget(kind: str, where: str, name: str) -> FileBudget | RedisBudget:
    if kind == "file":
        return FileBudget(where, name, 25)
    import redis

    return RedisBudget(redis.Redis.from_url(where), name, 25)


@pytest.fixture(scope="module")
def other_processes():
    """Three other processes, for both kinds: forked by a server process started new (not a
    copy of this one), which imports this module, and so propertykit, once for all three."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    with context.Pool(3) as pool:
        yield pool


@pytest.fixture(params=["file", "redis"])
def where(request, tmp_path):
    if request.param == "file":
        return "file", str(tmp_path / "locks")
    return "redis", request.getfixturevalue("redis_url")


def test_processes_and_threads_together_never_take_more_than_the_budget(where, other_processes):
    kind, place = where
    name = f"t-{uuid.uuid4().hex[:8]}"
    others = other_processes.starmap_async(_take_many, [(kind, place, name, 20)] * 3)
    with ThreadPoolExecutor(4) as threads:
        here = sum(threads.map(lambda _: _take_many(kind, place, name, 10), range(4)))
    taken = here + sum(others.get(timeout=60))
    assert taken == 25
    assert _budget(kind, place, name).spent() == 25


def test_a_place_given_back_can_be_taken_again(where):
    kind, place = where
    budget = _budget(kind, place, f"t-{uuid.uuid4().hex[:8]}")
    assert all(budget.take() for _ in range(25))
    assert not budget.take()
    budget.give_back()
    assert budget.take()
    assert budget.spent() == 25
