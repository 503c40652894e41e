"""The package as users install it: metadata, public names, and the conda mirror of pyproject."""

from __future__ import annotations

import importlib
import pkgutil
import re
import tomllib
import warnings
from pathlib import Path

import pytest

import propertykit as pk
from tests._system import NewProcess

ROOT = Path(__file__).resolve().parents[1]


#: conda-forge names that differ from PyPI's.
CONDA_TO_PYPI = {"redis-py": "redis", "python-kaleido": "kaleido"}


def _requirement(line: str) -> tuple[str, str]:
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", line)
    assert match, line
    name = match.group(1).lower().replace("_", "-")
    return CONDA_TO_PYPI.get(name, name), match.group(2).replace(" ", "")


def _pyproject_requirements() -> set[tuple[str, str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = project["dependencies"] + project["optional-dependencies"]["dev"]
    return {_requirement(line) for line in lines}


def _environment_requirements() -> set[tuple[str, str]]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = lines.index("dependencies:") + 1
    found = set()
    for line in lines[start:]:
        item = re.fullmatch(r"  - ([^#\s].*)", line)
        if item and item.group(1) not in {"pip", "pip:"}:
            found.add(_requirement(item.group(1)))
    return {(name, spec) for name, spec in found if name != "python"}


def test_environment_yml_mirrors_pyproject_dependencies() -> None:
    assert _environment_requirements() == _pyproject_requirements()


def test_environment_yml_pins_the_same_python_as_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"  - python{project['requires-python']}" in (ROOT / "environment.yml").read_text()


def test_version_comes_from_package_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert pk.__version__ == project["version"]


#: The top level before it was made small: each name must still be ``pk.<Name>``.
FORMER_TOP_LEVEL = (
    "ApiError", "AuthenticationError", "BadResponse", "BudgetExceeded", "CacheUnavailable",
    "CacheWriteWarning", "ConfigError", "DailyCapReached", "GeometryWarning",
    "InsufficientCredit", "InvalidInput", "MinorUnitsWarning", "MissingIdsWarning",
    "NetworkError", "NotCached", "NotFound", "NotRecordsWarning", "PartialResult",
    "PermissionDenied", "PurchaseUncertain", "RateLimited", "ResponseTooLarge", "ServerError",
    "ServiceDegraded", "ServiceUnhealthy", "UnparsedValuesWarning",
)  # fmt: skip


def test_the_top_level_is_small_and_every_name_in_it_resolves() -> None:
    assert len(pk.__all__) <= 15
    assert {
        "Client",
        "frame",
        "errors",
        "sandbox",
        "widgets",
        "Usage",
        "DryRun",
        "Purchase",
    } <= set(pk.__all__)
    for name in pk.__all__:
        assert getattr(pk, name) is not None, name


@pytest.mark.parametrize("name", FORMER_TOP_LEVEL)
def test_names_that_left_the_top_level_are_still_reachable_quietly(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert getattr(pk, name) is not None


def _classes_of_the_package() -> dict[str, type]:
    """Every exception and warning class defined in any module of propertykit, by name."""
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(pk.__path__, "propertykit."):
        if info.name.startswith(("propertykit.dask", "propertykit.__main__")):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, (pk.PropertyKitError, pk.PropertyKitWarning))
                and value.__module__.startswith("propertykit")
            ):
                found[value.__name__] = value
    return found


def test_every_error_and_warning_is_in_propertykit_errors_and_warnings_end_in_warning() -> None:
    classes = _classes_of_the_package()
    assert len(classes) > 20
    for name, cls in classes.items():
        assert getattr(pk.errors, name, None) is cls, f"{name} is not in propertykit.errors"
        assert name in pk.errors.__all__, name
        if issubclass(cls, Warning):
            assert name.endswith("Warning"), name
    assert pk.errors.ServiceDegraded is pk.errors.ServiceDegradedWarning


def test_package_ships_py_typed() -> None:
    assert (Path(pk.__file__).parent / "py.typed").exists()


def test_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["propertykit"] == "propertykit.cli:main"


def test_every_warning_shares_one_base_users_can_filter() -> None:
    for name in pk.errors.__all__:
        obj = getattr(pk.errors, name)
        if isinstance(obj, type) and issubclass(obj, Warning):
            assert issubclass(obj, pk.PropertyKitWarning), name
    assert issubclass(pk.PropertyKitWarning, UserWarning)


def test_import_leaves_maps_charts_and_widgets_unloaded_until_used(new_process: NewProcess) -> None:
    # `import propertykit` in a notebook should not pay for geopandas, plotly or ipywidgets.
    probe = (
        "import sys, propertykit; "
        "print(sorted(m for m in ('geopandas', 'plotly', 'ipywidgets') if m in sys.modules))"
    )
    loaded = new_process.run("-c", probe, check=True).stdout.strip()
    assert loaded == "[]"
