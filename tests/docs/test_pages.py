"""The README and the docs site as a reader meets them: every Python example runs against the
sandbox, and the README fits on a screen (``make check`` builds the site with
``mkdocs build --strict``: a broken link fails it)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from propertykit.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The line that marks the next block as not run (shown in the page's source, and in the block).
NORUN = "<!-- norun -->"
_FENCE = re.compile(r"^(```+|~~~+)\s*(\S*)(.*)$")
#: Variables through which a snippet's ``pk.Client()`` finds its service.
_SERVICE_VARIABLES = ("PROPERTYKIT_PROFILE", "PROPERTYKIT_OFFLINE", "VEPLER_API_KEY")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: where it starts, its language, whether it runs, its code."""

    line: int
    language: str
    runs: bool
    code: str


def read_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page``, in order."""
    blocks: list[Block] = []
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, language = match.group(1), match.group(2)
        before = next((line.strip() for line in reversed(lines[:i]) if line.strip()), "")
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(fence))
        code = "\n".join(lines[i + 1 : end]) + "\n"
        blocks.append(Block(i + 1, language, before != NORUN, code))
        i = end + 1
    return blocks


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_python_block_is_marked_python_and_a_skipped_one_says_why(page: Path) -> None:
    for block in read_blocks(page):
        where = f"{_name(page)}:{block.line}"
        assert block.language not in ("py", "python3", "pycon", ""), f"{where}: say ```python"
        if block.language == "python" and not block.runs:
            first = block.code.lstrip().splitlines()[0]
            assert first.startswith("# not run"), f"{where}: a skipped block's first line says why"


RUNNABLE = [
    page for page in PAGES if any(b.runs and b.language == "python" for b in read_blocks(page))
]


@pytest.fixture
def page_sandbox() -> Iterator[Sandbox]:
    """A fresh sandbox for one page's examples; running a whole page takes seconds (``slow``)."""
    with Sandbox(seed=0).start() as sb:
        yield sb


@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", RUNNABLE, ids=_name)
def test_every_python_block_runs_against_the_sandbox(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page_sandbox: Sandbox
) -> None:
    """A page's blocks run in order in one namespace, in an empty folder, with the environment
    pointing ``pk.Client()`` at a fresh sandbox (as a reader's would point at the service)."""
    sb = page_sandbox
    for name in _SERVICE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PROPERTYKIT_API_KEY", sb.api_key)
    monkeypatch.setenv("PROPERTYKIT_BASE_URL", sb.url)
    monkeypatch.setenv("PROPERTYKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    ran = 0
    for block in read_blocks(page):
        if block.language == "python" and block.runs:
            exec(compile(block.code, f"{_name(page)}:{block.line}", "exec"), namespace)
            ran += 1
    assert ran


def test_the_readme_fits_on_a_screen_and_its_links_resolve() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith(("http://", "https://")):
            assert (ROOT / target).exists(), f"README links to {target}, which is not there"
