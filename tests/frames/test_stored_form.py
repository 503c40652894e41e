"""Bodies kept as read into Arrow frame exactly as the bodies themselves, or are not kept."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from propertykit.frames import frame
from propertykit.frames._stored_form import (
    BodiesRead,
    decode_shares,
    encode_shares,
    frame_from_read,
    read_for_keeping,
)
from tests._hypothesis import examples
from tests.frames._exact import assert_same_frame
from tests.frames.test_untidy import untidy_records

pytestmark = [
    pytest.mark.filterwarnings("ignore::propertykit.UnparsedValuesWarning"),
    pytest.mark.filterwarnings("ignore::propertykit.errors.NotRecordsWarning"),  # counted elsewhere
]


def _bodies(records: list[Any], sizes: list[int]) -> list[bytes]:
    bodies, start = [], 0
    for size in sizes:
        page = records[start : start + size]
        bodies.append(json.dumps({"success": True, "result": page, "hasMore": False}).encode())
        start += size
    return bodies


def _kept(bodies: list[bytes]) -> list[bytes | None]:
    """What the client keeps of ``bodies``: nothing unless Arrow's reader read the envelopes."""
    read = read_for_keeping(bodies)
    lengths = [envelope["result"] for envelope in read.envelopes]
    if None in lengths:
        return [None] * len(bodies)
    return encode_shares(read, lengths)


def _same(left: pd.DataFrame, right: pd.DataFrame) -> None:
    assert_same_frame(left, right)
    assert left.attrs == right.attrs
    served = [list(map(pickle.dumps, frame["spatial.boundary"])) for frame in (left, right)]
    assert served[0] == served[1]  # the very values: 1.0 is not 1, keys in the same order


def test_kept_bodies_frame_as_the_bodies_do_whichever_are_put_together(
    records: list[dict[str, Any]],
) -> None:
    bodies = _bodies(records, [50, 0, 37, 113, 200])
    kept = _kept(bodies)
    assert all(share is not None for share in kept)
    _same(frame_from_read(decode_shares(kept)), frame(bodies))  # type: ignore[arg-type]
    some = [4, 0, 2]  # other lookups share batches, in another order
    _same(
        frame_from_read(decode_shares([kept[i] for i in some])),  # type: ignore[misc, arg-type]
        frame([bodies[i] for i in some]),
    )


def test_a_share_another_format_cannot_read_is_refused() -> None:
    assert decode_shares([b"\x00not arrow at all"]) is None


def test_boundaries_that_would_not_read_back_exactly_are_not_kept(
    records: list[dict[str, Any]],
) -> None:
    bodies = _bodies(records[:60], [30, 30])
    read = read_for_keeping(bodies)
    assert all(share is not None for share in encode_shares(read, [30, 30]))
    boundaries = read.boundaries.copy()
    at = next(i for i in range(30, 60) if boundaries[i] is not None)
    boundaries[at] = dict(boundaries[at], coordinates=[[[1, 2], [3, 4], [1, 2]]])  # ints
    odd = BodiesRead(read.records, boundaries, [])
    kept = encode_shares(odd, [30, 30])
    assert kept[0] is not None and kept[1] is None
    boundaries[at] = {"coordinates": [[[1.0, 2.0]]], "type": "Polygon"}  # keys in another order
    assert encode_shares(odd, [30, 30])[1] is None


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(untidy_records(), st.integers(min_value=0, max_value=5))
def test_an_untidy_body_is_kept_only_where_it_frames_exactly(records: list[Any], cut: int) -> None:
    bodies = _bodies(records, [cut, len(records)])
    for body, share in zip(bodies, _kept(bodies), strict=True):
        if share is not None:
            read = decode_shares([share])
            assert read is not None
            _same(frame_from_read(read), frame([body]))
