"""pk.frame builds from the system allocator and leaves the user's default Arrow pool alone."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest

import propertykit as pk
from propertykit.frames.memory import system_pool

RECORDS = [{"propertyId": f"PK{i}", "address": {"postcode": "PL4 1BS"}} for i in range(2000)]


@pytest.fixture
def mimalloc_default():
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    yield
    pa.set_memory_pool(before)


@pytest.mark.timeout(60)
def test_frames_built_in_threads_leave_the_default_pool_as_it_was(mimalloc_default):
    errors: list[BaseException] = []

    def build() -> None:
        try:
            for _ in range(5):
                assert len(pk.frame(RECORDS)) == len(RECORDS)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=50)
    assert not errors
    assert pa.default_memory_pool().backend_name == "mimalloc"


def test_arrow_allocates_from_the_system_pool_while_a_frame_is_built(mimalloc_default):
    with system_pool():
        assert pa.default_memory_pool().backend_name == "system"
        with system_pool():  # nested, as frame_read within frame
            pass
        assert pa.default_memory_pool().backend_name == "system"
    assert pa.default_memory_pool().backend_name == "mimalloc"


def test_a_pool_the_user_chooses_meanwhile_is_kept(mimalloc_default):
    with system_pool():
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    assert pa.default_memory_pool().backend_name == "jemalloc"
