"""A batch kept as read in one process is found and used by the next, as a notebook re-run is.

The kept forms are filed by request and name their answer by cache key and stamp, all stored in
the cache itself: nothing of the process that kept them (its hash seed, its memory) is needed.
"""

from __future__ import annotations

import hashlib
import json
import os
import textwrap
from pathlib import Path

import pytest

import propertykit as pk
from tests.client.test_replay import _table_bytes

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import hashlib, json, sys

    import propertykit as pk
    from propertykit.frames import _bodies as bodies
    from tests.client.test_replay import _table_bytes

    url, cache, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    parsed = []
    read_json = bodies.pa_json.read_json
    bodies.pa_json.read_json = lambda *a, **k: parsed.append(1) or read_json(*a, **k)
    with pk.Client(None, url, cache=cache, progress=False) as client:
        df = client.properties(ids)
        print(json.dumps({
            "table": hashlib.sha256(_table_bytes(df)).hexdigest(),
            "parsed": len(parsed),
            "sent": client.usage.requests_sent,
            "hits": client.usage.cache_hits,
        }))
    """
)


@pytest.mark.timeout(180)
def test_a_fresh_process_replays_the_batches_another_kept_without_parsing_json(
    tmp_path, new_process
):
    cache = tmp_path / "cache.sqlite"
    with pk.sandbox.serve() as sb:
        ids = sb.location_ids[:230]  # 5 batches
        with pk.Client(sb.api_key, sb.url, cache=cache, progress=False) as cold:
            network = cold.properties(ids)  # fetched
        with pk.Client(sb.api_key, sb.url, cache=cache, progress=False) as first:
            first.properties(ids)  # read from the cache, then kept as read
        sb.reset_log()
        env = dict(os.environ, PROPERTYKIT_API_KEY=sb.api_key, PYTHONHASHSEED="random")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        done = new_process.run(
            "-c", CHILD, sb.url, str(cache), json.dumps(ids), env=env, cwd=ROOT, timeout=150
        )
        assert done.returncode == 0, done.stderr[-2000:]
        seen = json.loads(done.stdout.strip().splitlines()[-1])
        assert sb.requests == []
    assert (seen["sent"], seen["hits"], seen["parsed"]) == (0, 5, 0)
    assert seen["table"] == hashlib.sha256(_table_bytes(network)).hexdigest()
