"""The package as users install it: metadata, public names, and the conda mirror of pyproject."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

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


def test_all_lists_every_public_name_and_nothing_missing() -> None:
    exported = set(pk.__all__)
    for name in exported:
        assert getattr(pk, name) is not None, name
    public_errors = {n for n in dir(pk.errors) if n[0].isupper() and not n.startswith("_")}
    assert public_errors - {"Any"} <= exported


def test_every_error_is_a_propertykit_error() -> None:
    for name in pk.errors.__all__:
        obj = getattr(pk.errors, name)
        if isinstance(obj, type) and issubclass(obj, Warning):
            assert issubclass(obj, pk.PropertyKitWarning), name
        elif isinstance(obj, type) and issubclass(obj, BaseException):
            assert issubclass(obj, pk.PropertyKitError), name
    assert issubclass(pk.InvalidInput, ValueError)
    assert issubclass(pk.DailyCapReached, pk.RateLimited)


def test_package_ships_py_typed() -> None:
    assert (Path(pk.__file__).parent / "py.typed").exists()


def test_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["propertykit"] == "propertykit.cli:main"


def test_every_warning_shares_one_base_users_can_filter() -> None:
    assert issubclass(pk.MinorUnitsWarning, pk.PropertyKitWarning)
    assert issubclass(pk.GeometryWarning, pk.PropertyKitWarning)
    assert issubclass(pk.PropertyKitWarning, UserWarning)


def test_import_leaves_maps_charts_and_widgets_unloaded_until_used(new_process: NewProcess) -> None:
    # `import propertykit` in a notebook should not pay for geopandas, plotly or ipywidgets.
    probe = (
        "import sys, propertykit; "
        "print(sorted(m for m in ('geopandas', 'plotly', 'ipywidgets') if m in sys.modules))"
    )
    loaded = new_process.run("-c", probe, check=True).stdout.strip()
    assert loaded == "[]"
