"""Lookup form benchmark: the CPU of a fetch and of a find, before and after, with what they show.

A fetch (the Fetch button) asks the bundled sandbox for the records over real HTTP (no cache),
frames them, builds the table and draws three figures (price trend, EPC chart, map), each put in
its output as plotly's JSON (:func:`propertykit.widgets._parts.figure_output`). A find (the Find
tab) does the same with a search by postcode district.

- **before**: the code at :data:`BEFORE`, extracted with ``git archive``;
- **after**: this tree's code.

Each version runs in fresh processes of its own, alternately (three each), best of five fetches
per process after a warm-up; then the same pieces one by one on the frame of the fetch: frame,
table, each chart maker, each figure's output. Every process also writes what the form shows
(the table, the three outputs, the message, the figures' JSON) and the parent checks the two
versions show exactly the same (strings compared, not parsed).

Run: ``.venv/bin/python benchmarks/lookup_form.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The commit this work started from.
BEFORE = "e070f5e"
ROOT = Path(__file__).resolve().parent.parent
#: Properties in the sandbox, and how many ids each fetch asks for.
WORLD = 1_000
FETCHES = (20, 100)
#: The postcode district the find searches (its max_results stays the form's default).
DISTRICT = "DH1"


def best_cpu(run: Callable[[], object], times: int = 5) -> float:
    """Fewest CPU seconds of ``times`` runs, after one warm-up."""
    run()
    best = float("inf")
    for _ in range(times):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def shown(form: Any) -> str:
    """What the form shows after a fetch or find, as one JSON string (keys in their order)."""
    return json.dumps(
        {
            "table": form.table.value,
            "message": form.message.value,
            "finder": form.finder.message.value,
            "outputs": {name: list(output.outputs) for name, output in form.outputs.items()},
            "figures": {name: figure.to_json() for name, figure in form.figures.items()},
        }
    )


def worker(out: Path) -> None:
    """Time fetches, a find and their pieces with the ``propertykit`` on ``sys.path``; write
    the times and what the form showed to ``out``."""
    import propertykit as pk
    from propertykit.frames import frame
    from propertykit.widgets._parts import figure_output
    from propertykit.widgets._results_table import table_html

    warnings.simplefilter("ignore")  # thin groups warn; the same in both versions
    seconds: dict[str, float] = {}
    screens: dict[str, str] = {}
    with pk.sandbox.serve(n_properties=WORLD) as sb:
        client = pk.Client(sb.api_key, sb.url, cache=False)
        form = pk.widgets.LookupForm(client)
        for n in FETCHES:
            form.ids.value = ", ".join(sb.location_ids[:n])
            seconds[f"fetch of {n}"] = best_cpu(form.fetch_button.click)
            screens[f"fetch of {n}"] = shown(form)
        form.finder.area_type.value = "outcode"
        form.finder.area_value.value = DISTRICT
        seconds[f"find in {DISTRICT}"] = best_cpu(form.finder.find_button.click)
        screens[f"find in {DISTRICT}"] = shown(form)
        records = client.property_records(sb.location_ids[: FETCHES[0]])
        client.close()
    df = frame(records)
    pieces: dict[str, Callable[[], object]] = {
        "  frame": lambda: frame(records),
        "  table": lambda: table_html(df, None, all_columns=False),
        "  price trend": lambda: df.pk.price_trend(),
        "  EPC chart": lambda: df.pk.epc_chart(),
        "  map": lambda: df.pk.map(color="epc.currentEnergyRating"),
    }
    figures = {
        "price trend": df.pk.price_trend(),
        "EPC chart": df.pk.epc_chart(),
        "map": df.pk.map(color="epc.currentEnergyRating"),
    }
    for name, figure in figures.items():
        pieces[f"  output of the {name}"] = lambda figure=figure: figure_output(figure)
    for name, run in pieces.items():
        seconds[f"{name} ({FETCHES[0]})"] = best_cpu(run)
    where = str(Path(pk.__file__).resolve().parent.parent)
    result = {"seconds": seconds, "screens": screens, "tree": where}
    out.write_text(json.dumps(result), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        old_tree = folder / "before"
        old_tree.mkdir()
        archive = subprocess.run(
            ["git", "archive", BEFORE, "propertykit"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old_tree)], input=archive, check=True)
        trees = {f"before ({BEFORE})": old_tree, "after (this tree)": ROOT}
        best: dict[str, dict[str, float]] = {version: {} for version in trees}
        screens: dict[str, dict[str, str]] = {}
        for turn in range(3):  # alternately, so both versions see the same load on the machine
            for version, tree in trees.items():
                out = folder / f"{turn}-{len(screens)}.json"
                environment = {**os.environ, "PYTHONPATH": str(tree)}
                subprocess.run(
                    [sys.executable, __file__, "--worker", str(out)], env=environment, check=True
                )
                result = json.loads(out.read_text(encoding="utf-8"))
                if Path(result["tree"]) != tree.resolve():
                    raise SystemExit(f"{version} imported propertykit from {result['tree']}")
                for name, value in result["seconds"].items():
                    best[version][name] = min(best[version].get(name, float("inf")), value)
                screens.setdefault(version, result["screens"])
                if result["screens"] != screens[version]:
                    raise SystemExit(f"{version}: a run showed something else than the first")
    before, after = best.values()
    print(f"\nCPU ms, best of 15:{'':22}{'  '.join(trees)}   ratio")
    for name in before:
        ratio = before[name] / after[name]
        print(f"  {name:<36} {before[name] * 1e3:9.1f} {after[name] * 1e3:22.1f}  {ratio:6.2f}x")
    shown_before, shown_after = screens.values()
    same = [name for name in shown_before if shown_before[name] == shown_after.get(name)]
    print(f"\nshown exactly the same (table, message, outputs, figures' JSON): {same}")
    if len(same) != len(shown_before):
        raise SystemExit("the two versions show something different")


if __name__ == "__main__":
    main()
