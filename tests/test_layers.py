"""The package's layers: the design's public API is whole, and imports flow one way.

``lint-imports`` (run by ``make check``) enforces the arrows between layers on the code as it
is; these tests check what it cannot: that the contract itself catches a wrong-way import, that
no layer reaches into another layer's modules past its ``__init__``, that no modules import each
other in a circle (imports made only for type checking or inside functions count too), and that
every name of the public API contract still imports after the move into layers.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pandas as pd
import pytest

import propertykit as pk
from tests._system import NewProcess

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "propertykit"
LAYERS = ("wire", "client", "deeds", "frames", "views", "widgets", "cli", "dask", "sandbox")


def _layer_of(path: Path) -> str | None:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 and parts[0] in LAYERS else None


def _imported_modules(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


def _public_names(layer: str) -> set[str]:
    """The names a layer's ``__init__`` exports (its ``__all__``), read without importing it."""
    tree = ast.parse((PACKAGE / layer / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            return {ast.literal_eval(item) for item in getattr(node.value, "elts", [])}
    return set()


def test_no_layer_imports_past_another_layers_init() -> None:
    reached_in = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = _layer_of(path)
        for line, module in _imported_modules(path):
            parts = module.split(".")
            if parts[0] != "propertykit" or len(parts) < 3 or parts[1] not in LAYERS:
                continue
            if parts[1] == own:
                continue
            submodule = PACKAGE / parts[1] / f"{parts[2]}.py"
            if len(parts) == 3 and parts[2] in _public_names(parts[1]):
                continue  # a name its __init__ exports (a function may share its module's name)
            if submodule.exists():  # a module inside another layer, not a name of its __init__
                reached_in.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert reached_in == []


def module_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan's SCCs)."""
    order: dict[str, int] = {}
    lowest: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = lowest[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in order:
                visit(imported)
                lowest[module] = min(lowest[module], lowest[imported])
            elif imported in on_stack:
                lowest[module] = min(lowest[module], order[imported])
        if lowest[module] == order[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1 or graph.direct_import_exists(importer=module, imported=module):
                circles.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in order:
            visit(module)
    return circles


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = grimp.build_graph("propertykit", cache_dir=None)
    # before: client.client -> client.portable -> client.client, client.client -> client.replay
    # -> client.client (one only for type checking, one inside a function)
    assert module_circles(graph) == []


def test_the_circle_check_finds_a_circle_through_a_third_module() -> None:
    graph = grimp.ImportGraph()
    for importer, imported in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")]:
        graph.add_import(importer=importer, imported=imported)
    assert module_circles(graph) == [["p.a", "p.b", "p.c"]]


def _copy_for_lint(tmp_path: Path) -> Path:
    shutil.copytree(PACKAGE, tmp_path / "propertykit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _lint(new_process: NewProcess, folder: Path) -> subprocess.CompletedProcess[str]:
    return new_process.run(
        "-c",
        "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()",
        "--no-cache",
        cwd=folder,
        env={"PYTHONPATH": str(folder), "PATH": str(Path(sys.executable).parent)},
    )


def test_the_layer_contract_catches_a_wrong_way_import(
    new_process: NewProcess, tmp_path: Path
) -> None:
    # That the code as it is keeps the contract is `make check`'s job (lint-imports).
    folder = _copy_for_lint(tmp_path)
    wire = folder / "propertykit" / "wire" / "_usage.py"
    wire.write_text(wire.read_text() + "\nfrom propertykit.client import Client  # wrong way\n")
    result = _lint(new_process, folder)
    assert result.returncode != 0
    assert "propertykit.wire._usage -> propertykit.client" in result.stdout


def test_every_name_of_the_public_api_contract_imports() -> None:
    for name in ("Client", "Endpoints", "Purchase", "Usage", "DryRun", "frame", "__version__"):
        assert getattr(pk, name) is not None, name
    for method in (
        "health",
        "properties",
        "sources",
        "property_records",
        "source_records",
        "suggest",
        "buy_title_deed",
        "purchase_status",
        "cache_info",
        "clear_cache",
    ):
        assert callable(getattr(pk.Client, method)), method
    assert isinstance(pk.Client.usage, property)
    for error in (
        "PropertyKitError",
        "ConfigError",
        "InvalidInput",
        "NotCached",
        "BudgetExceeded",
        "NetworkError",
        "ApiError",
        "AuthenticationError",
        "InsufficientCredit",
        "PermissionDenied",
        "NotFound",
        "RateLimited",
        "DailyCapReached",
        "ServerError",
        "PurchaseUncertain",
        "CacheUnavailable",
    ):
        assert issubclass(getattr(pk, error), pk.PropertyKitError), error
    assert pk.PartialResult is pk.client.PartialResult
    assert callable(pk.sandbox.serve)
    assert pk.widgets.LookupForm and pk.widgets.PurchaseForm
    assert callable(pk.export.to_parquet) and callable(pk.export.to_geoparquet)
    accessor = pd.DataFrame().pk
    for method in ("sales", "epc", "to_geodataframe", "price_trend", "epc_chart", "map"):
        assert callable(getattr(accessor, method)), method
    for method in ("to_parquet", "to_geoparquet"):
        assert callable(getattr(accessor, method)), method


@pytest.mark.parametrize("old", ["propertykit.client", "propertykit.frames", "propertykit.deeds"])
def test_modules_that_became_packages_keep_their_public_names(old: str) -> None:
    import importlib

    module = importlib.import_module(old)
    assert module.__all__ and all(hasattr(module, name) for name in module.__all__)
