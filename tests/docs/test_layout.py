"""docs/layout.md names every module of the package, under its package, and nothing that is gone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "propertykit"
LAYOUT = ROOT / "docs" / "layout.md"


def _documented() -> dict[str, set[str]]:
    """Module names listed under each package heading of docs/layout.md ("" for the core)."""
    found: dict[str, set[str]] = {}
    package = None
    for line in LAYOUT.read_text().splitlines():
        heading = re.match(r"### (?:core|`(\w+)/`)", line)
        if heading:
            package = heading.group(1) or ""
            found.setdefault(package, set())
        elif package is not None and (item := re.match(r"- `(\w+)`: \S", line)):
            found[package].add(item.group(1))
    return found


def _modules() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {"": {path.stem for path in PACKAGE.glob("*.py")}}
    for folder in sorted(p for p in PACKAGE.iterdir() if (p / "__init__.py").exists()):
        found[folder.name] = {path.stem for path in folder.glob("*.py")}
    return found


def test_layout_lists_every_module_under_its_package_and_no_other() -> None:
    documented, modules = _documented(), _modules()
    missing = {pkg: sorted(names - documented.get(pkg, set())) for pkg, names in modules.items()}
    gone = {pkg: sorted(names - modules.get(pkg, set())) for pkg, names in documented.items()}
    assert {pkg: names for pkg, names in missing.items() if names} == {}
    assert {pkg: names for pkg, names in gone.items() if names} == {}
