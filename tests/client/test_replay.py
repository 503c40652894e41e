"""Re-running a notebook from a warm cache gives the very same tables and sends nothing."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa


def _table_bytes(df: pd.DataFrame) -> bytes:
    """The frame as Arrow IPC bytes, boundaries (served JSON) appended."""
    table = pa.Table.from_pandas(df.drop(columns="spatial.boundary"), preserve_index=False)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    boundaries = json.dumps(df["spatial.boundary"].tolist(), sort_keys=True)
    return bytes(sink.getvalue().to_pybytes()) + boundaries.encode()


def test_a_warm_cache_gives_the_same_tables_byte_for_byte_and_sends_nothing(
    fresh_sandbox, make_client
):
    sb = fresh_sandbox
    ids = sb.location_ids[:230]  # several batches
    with make_client(sb) as cold:
        network = cold.properties(ids)
        sales = network.pk.sales()
    sb.reset_log()
    with make_client(sb) as warm:  # a new client on the same cache file: a restarted kernel
        replayed = warm.properties(ids)
        assert warm.usage.requests_sent == 0
    assert sb.requests == []
    assert _table_bytes(replayed) == _table_bytes(network)
    assert replayed.attrs == network.attrs
    pd.testing.assert_frame_equal(replayed.pk.sales(), sales)
