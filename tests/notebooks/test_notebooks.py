"""The five notebooks: committed without outputs, and each runs top to bottom on the sandbox.

Each notebook starts its own sandbox inside its kernel (no key in the environment) and keeps
its cache in a temporary folder. Executed with nbclient (the ``run_notebook`` fixture, one new
kernel per notebook, started while the notebook before it runs: :mod:`tests.notebooks._kernels`),
which needs ``ipykernel``. What a notebook does with a service set only by half is checked here
in this process, by running its set-up cell (the code the kernel would run first).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests._system import require
from tests.notebooks._kernels import SERVICE_VARIABLES, KernelPool

if TYPE_CHECKING:
    import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = (
    "01-quickstart",
    "02-price-and-epc-trends",
    "03-maps-for-reports",
    "04-title-deeds",
    "05-valuation",
    "06-portfolio",
)
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
PLOTLY = "application/vnd.plotly.v1+json"
#: Notebooks whose last code cell shows a form.
ENDS_WITH_A_FORM = {"01-quickstart", "04-title-deeds", "05-valuation"}


def read(name: str) -> nbformat.NotebookNode:
    import nbformat  # not at collection: it takes seconds to import

    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def test_every_notebook_is_there():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs(name):
    # Read as JSON (nbformat takes seconds to import); that each notebook is valid nbformat is
    # checked where it runs (test_runs_top_to_bottom_on_the_sandbox).
    notebook = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{name}: a cell has outputs; strip them"
            assert cell["execution_count"] is None, f"{name}: a cell has an execution count"
    # Widget state (forms, progress bars) saved with a notebook shows stale bars and forms to the
    # next reader ("0% 0/8"): none is committed, at the notebook's level or a cell's.
    assert "widgets" not in notebook["metadata"], f"{name}: widget state is saved; clear it"
    for cell in notebook["cells"]:
        kept = set(cell.get("metadata", {})) & {"widgets", "execution", "scrolled", "collapsed"}
        assert not kept, f"{name}: a cell keeps run state in its metadata: {sorted(kept)}"


@pytest.fixture
def sandbox_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No service set: the notebooks start a sandbox. The user cache is untouched."""
    for name in SERVICE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


@pytest.fixture(scope="module")
def kernel_pool(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KernelPool]:
    """Kernels for the notebooks this run executes (root ``conftest.py`` keeps them on one
    pytest-xdist worker): each started while the notebook before it runs."""
    require(
        importlib.util.find_spec("ipykernel") is not None,
        "pip install ipykernel (a dev dependency)",
    )
    runs = sum(
        "run_notebook" in getattr(item, "fixturenames", ()) for item in request.session.items
    )
    pool = KernelPool(lambda: tmp_path_factory.mktemp("notebook"), runs)
    yield pool
    pool.close()


@pytest.fixture
def run_notebook(kernel_pool: KernelPool) -> Callable[[str], tuple[nbformat.NotebookNode, Path]]:
    """Runs a notebook top to bottom in a new kernel (seconds each: the test is ``slow``); the
    notebook with its outputs, and the kernel's folder (its working directory, and the cache
    folder it was given: ``folder / "cache"``)."""

    def run(name: str) -> tuple[nbformat.NotebookNode, Path]:
        notebook = read(name)
        return notebook, kernel_pool.run(notebook)

    return run


def outputs(notebook: nbformat.NotebookNode) -> list[dict]:
    return [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]


@pytest.mark.parametrize("name", NAMES)
def test_runs_top_to_bottom_on_the_sandbox(name, run_notebook):
    import nbformat

    nbformat.validate(read(name))  # as committed: valid nbformat
    notebook, folder = run_notebook(name)
    shown = outputs(notebook)
    assert not [o for o in shown if o.output_type == "error"]
    stderr = "".join(o.get("text", "") for o in shown if o.get("name") == "stderr")
    assert "Warning" not in stderr, stderr
    assert "pk_live_" not in str(shown), "an API key was shown"
    assert not (folder / "cache").exists(), "the notebook wrote to the user cache"
    printed = "".join(o.get("text", "") for o in shown if o.output_type == "stream")
    assert "using the local sandbox (made-up data)" in printed, "made-up data, said"
    if name == "03-maps-for-reports":
        assert "EPSG:4326" in printed and "GEOGCRS" not in printed, "print the CRS short"
        [tiles_cell] = [
            c for c in notebook.cells if c.cell_type == "code" and 'basemap="auto"' in c.source
        ]
        assert any(PLOTLY in o.get("data", {}) for o in tiles_cell.outputs), (
            "the tiles cell shows a map, online or not"
        )
    last_code = [cell for cell in notebook.cells if cell.cell_type == "code"][-1]
    shows_a_form = any(WIDGET_VIEW in o.get("data", {}) for o in last_code.outputs)
    assert shows_a_form == (name in ENDS_WITH_A_FORM)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "setting",
    [
        ({"PROPERTYKIT_API_KEY": "pk_live_x"}, "PROPERTYKIT_BASE_URL"),
        ({"PROPERTYKIT_PROFILE": "vepler"}, "VEPLER_API_KEY"),
    ],
    ids=["a-key-without-an-address", "a-profile-without-its-key"],
)
def test_a_service_half_set_stops_the_notebook_and_never_falls_back_to_the_sandbox(
    name, setting, sandbox_environment, monkeypatch
):
    import tempfile

    import propertykit as pk

    variables, named = setting
    for variable, value in variables.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setattr(tempfile, "tempdir", str(sandbox_environment))  # its WORK folder
    monkeypatch.chdir(sandbox_environment)
    started: list[object] = []
    monkeypatch.setattr(pk.sandbox.Sandbox, "start", lambda self: started.append(self))
    cells = json.loads((NOTEBOOKS / f"{name}.ipynb").read_text())["cells"]
    setup = "".join(next(cell for cell in cells if cell["cell_type"] == "code")["source"])
    namespace: dict[str, object] = {"__name__": "__notebook__"}
    with pytest.raises(pk.ConfigError) as stopped:
        exec(compile(setup, f"{name}.ipynb: set-up cell", "exec"), namespace)
    assert started == [] and namespace.get("sb") is None, "fell back to the sandbox"
    shown = str(stopped.value)
    assert named in shown, "the error names what to set"
    assert "pk_live_x" not in shown
    assert "client" not in namespace  # the set-up cell stopped: nothing below it can run
