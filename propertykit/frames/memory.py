"""The memory pool Arrow allocates from while propertykit builds a frame.

pyarrow's default pool (mimalloc in its wheels) is slow to take fresh memory where pages are
dear to map: on this project's machines a first ``pa.array`` over 100,000 records took 0.66 s
from mimalloc against 0.46 s from the system allocator, and the whole frame about a quarter
longer (``benchmarks/frames.py``). Growing a large buffer, mimalloc moves it to new memory; the
system allocator grows it in place (``mremap``). Nothing else differs: every Arrow buffer goes
back to the pool it came from, whichever pool is the default by then.

:func:`system_pool` makes the system allocator Arrow's default for as long as any frame is
being built, in any thread (pandas' own Arrow calls included, which take no pool argument), and
then puts the pool that was the default back, unless someone chose another one meanwhile.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

import pyarrow as pa

__all__ = ["POOL", "in_system_pool", "system_pool"]

#: The pool frames are built from.
POOL: pa.MemoryPool = pa.system_memory_pool()

_P = ParamSpec("_P")
_R = TypeVar("_R")
_lock = threading.Lock()
_builds = 0  # frames being built, in every thread
_before: pa.MemoryPool | None = None  # the default pool when the first of them began


@contextmanager
def system_pool() -> Iterator[None]:
    """Arrow allocates from :data:`POOL` within the block (re-entrant, thread-safe)."""
    global _builds, _before
    with _lock:
        if _builds == 0:
            _before = pa.default_memory_pool()
            pa.set_memory_pool(POOL)
        _builds += 1
    try:
        yield
    finally:
        with _lock:
            _builds -= 1
            if _builds == 0:
                if _before is not None and pa.default_memory_pool().backend_name == "system":
                    pa.set_memory_pool(_before)  # else someone chose a pool meanwhile: theirs
                _before = None


def in_system_pool(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function``, run within :func:`system_pool`."""

    @functools.wraps(function)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with system_pool():
            return function(*args, **kwargs)

    return run
