"""The suite's pytest-xdist groups hold: ``--dist loadgroup`` runs a group's tests on one worker.

Nothing fails when grouping stops working: the tests spread over the workers and each starts its
own JupyterLab, Dask cluster or 20,000-record frame. That happened unseen twice (the markers were
added after pytest-xdist read them; pytest 9.2 stopped reading the node ids xdist groups by), so
this runs the root conftest's marker hook in a project of its own, as ``make test`` runs the suite.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests._system import NewProcess

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = f"""
import importlib.util

import pytest

_spec = importlib.util.spec_from_file_location("suite_conftest", {str(ROOT / "conftest.py")!r})
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)
pytest_collection_modifyitems = _suite.pytest_collection_modifyitems


@pytest.fixture
def cluster():
    return "grouped as the Dask cluster's tests are"
"""

TESTS = "\n".join(
    f"def test_grouped_{i}(cluster):\n    assert cluster\n\n\ndef test_free_{i}():\n    pass\n"
    for i in range(4)
)


def test_the_tests_of_a_group_run_on_one_worker(tmp_path: Path, new_process: NewProcess) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_groups.py").write_text(TESTS)
    ran = new_process.run(
        "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:randomly",
        "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(tmp_path), str(tmp_path),
        cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    grouped = re.findall(r"\[(gw\d)\].*PASSED.*test_grouped_\d@dask", ran.stdout)
    assert len(grouped) == 4, ran.stdout  # each carries its group, "@dask"
    assert len(set(grouped)) == 1, ran.stdout  # and one worker ran them all
