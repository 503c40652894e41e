"""Another kernel: look ids up through propertykit and print what it sent as JSON.

Run by the team tests as ``python _worker.py '<json spec>'``; the key comes from
``PROPERTYKIT_API_KEY``. With ``ready_file``/``go_file`` it signals it is ready and waits for the
go, so two workers start their lookups together.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import propertykit as pk


def main() -> None:
    spec = json.loads(sys.argv[1])
    if spec.get("go_file"):
        Path(spec["ready_file"]).touch()
        while not Path(spec["go_file"]).exists():
            time.sleep(0.005)
    with pk.Client(
        base_url=spec["base_url"],
        cache=spec["cache"],
        progress=False,
        max_in_flight=spec.get("max_in_flight", 4),
    ) as client:
        if spec.get("kind", "properties") == "properties":
            frame = client.properties(spec["ids"])
        else:
            frame = client.sources(spec["ids"], page_size=spec.get("page_size"))
        usage = client.usage
        print(
            json.dumps(
                {
                    "rows": len(frame),
                    "location_ids": frame["locationId"].tolist(),
                    "sent": usage.requests_sent,
                    "cache_hits": usage.cache_hits,
                }
            )
        )


if __name__ == "__main__":
    main()
