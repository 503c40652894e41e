"""How many examples a property test runs: its own count under ``make test``, a sixth of it
under ``make test-fast`` (Hypothesis profile ``fast``, registered in ``tests/conftest.py``).

A decorator's ``max_examples`` overrides any profile's, so each property asks here instead of
writing its count as a number.
"""

from __future__ import annotations

from hypothesis import settings

FAST_PROFILE = "fast"


def examples(full: int) -> int:
    """``full`` examples, or a sixth of them (at least 5) under the ``fast`` profile."""
    if settings.get_current_profile_name() == FAST_PROFILE:
        return max(5, full // 6)
    return full
