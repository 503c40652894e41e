"""One door per layer: implementation modules are private, each layer's ``__init__`` is its list.

Every module of a layer package is ``_name.py`` (as httpx does), so a rename inside a layer breaks
nobody; the layer's ``__init__`` names what users and the other layers may use. A module is
therefore never shadowed by the function it defines (``propertykit.frames._price_index`` is the
module, ``propertykit.frames.price_index`` the function), and ``dir(pk)`` shows the public names.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

import propertykit as pk

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "propertykit"
LAYERS = ("wire", "client", "deeds", "frames", "views", "widgets", "cli", "dask", "sandbox")
#: Layers imported here (``dask`` needs the extra and is checked from its files alone).
IMPORTED = tuple(layer for layer in LAYERS if layer != "dask")

#: Public (non-underscore) modules a layer's ``__init__`` means to expose, as "layer.module".
#: Empty: a new module is ``_name.py`` and its public names go into the layer's ``__init__``.
PUBLIC_MODULES: set[str] = set()


def _modules_of(layer: str) -> list[str]:
    return sorted(path.stem for path in (PACKAGE / layer).glob("*.py"))


def _assigns_all(path: Path) -> bool:
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return True
    return False


def test_every_module_of_a_layer_is_private_unless_its_init_means_to_expose_it() -> None:
    public = [
        f"{layer}.{name}"
        for layer in LAYERS
        for name in _modules_of(layer)
        if not name.startswith("_")
    ]
    assert sorted(set(public) - PUBLIC_MODULES) == [], "make it _name.py behind the layer's init"
    assert sorted(PUBLIC_MODULES - set(public)) == []  # the allow-list names no module that is gone


def test_the_layer_init_is_the_one_list_of_public_names() -> None:
    listing = [
        str(path.relative_to(ROOT))
        for layer in LAYERS
        for path in sorted((PACKAGE / layer).glob("_*.py"))
        if path.stem not in ("__init__", "__main__") and _assigns_all(path)
    ]
    assert listing == []  # a private module's names are public only through its layer's __init__
    for layer in LAYERS:
        assert _assigns_all(PACKAGE / layer / "__init__.py"), layer


@pytest.mark.parametrize("layer", IMPORTED)
def test_every_name_a_layer_exports_resolves(layer: str) -> None:
    package = importlib.import_module(f"propertykit.{layer}")
    missing = [name for name in package.__all__ if getattr(package, name, None) is None]
    assert missing == []


def test_about_150_names_are_exported_by_the_layers_not_hundreds() -> None:
    counted = 0
    for layer in LAYERS:
        tree = ast.parse((PACKAGE / layer / "__init__.py").read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                counted += len(getattr(node.value, "elts", []))
    assert 100 <= counted <= 160, counted


@pytest.mark.parametrize("layer", IMPORTED)
def test_no_module_is_shadowed_by_a_function_of_its_name(layer: str) -> None:
    package = importlib.import_module(f"propertykit.{layer}")
    for name in _modules_of(layer):
        if name in ("__init__", "__main__"):
            continue
        module = importlib.import_module(f"propertykit.{layer}.{name}")
        assert isinstance(getattr(package, name), ModuleType), f"{layer}.{name}"
        assert getattr(package, name) is module
    if layer == "frames":  # the five the issue found: the function and its module, apart
        for name in ("price_index", "valuation", "comparables", "gross_yield", "epc_trend"):
            assert inspect.isfunction(getattr(package, name)), name
            module = importlib.import_module(f"propertykit.frames._{name}")
            assert isinstance(module, ModuleType) and module is not getattr(package, name)


def test_dir_of_the_package_shows_the_public_names_and_the_quiet_old_ones_only() -> None:
    shown = dir(pk)
    assert set(pk.__all__) <= set(shown)
    for leaked in ("Any", "annotations", "import_module", "VERSION", "_views"):
        assert leaked not in shown, leaked
    assert {"NotCached", "MissingIdsWarning", "PartialResult"} <= set(shown)  # quiet old names
    for name in shown:
        assert getattr(pk, name) is not None, name


@pytest.mark.parametrize("layer", LAYERS)
def test_dir_of_a_layer_is_its_all_and_its_dunders(layer: str) -> None:
    if layer == "dask":
        pytest.importorskip("dask")  # the optional extra
    package = importlib.import_module(f"propertykit.{layer}")
    shown = dir(package)
    assert {name for name in shown if not name.startswith("__")} == set(package.__all__)
    for leaked in ("annotations", "public_dir", "_bulk_cache", "_replay", "_tables", "Any"):
        assert leaked not in shown, leaked
    for name in shown:  # each still reachable, as before
        assert hasattr(package, name), name
