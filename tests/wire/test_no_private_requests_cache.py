"""No propertykit module leans on a requests-cache name that begins with ``_``.

Such a name may change in any release, and what rests on it (the budget, one fetch per batch,
the bulk read) would stop applying without a word. Every module's syntax tree is searched for:

- an import from a private requests-cache module (``requests_cache._utils``) or of a private
  name (``from requests_cache.x import _y``);
- ``X._y`` where ``X`` is a requests-cache name imported into the module, or names a
  requests-cache object by its usual attribute (``cache``, ``responses``, ``redirects``,
  ``settings``, ``actions``, ``serializer``: ``session.cache._settings``, ``responses._bkeys``);
- in a class built on a requests-cache class: a method ``_y`` that overrides one of the base's
  (``_send_and_cache``), or ``self._y`` / ``super()._y`` for a ``_y`` the class does not define
  itself (``self._bkey`` in a ``RedisDict`` subclass).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import propertykit

PACKAGE = Path(propertykit.__file__).parent
#: Attribute names that hold requests-cache objects throughout propertykit and requests-cache.
CACHE_OBJECTS = {"cache", "responses", "redirects", "settings", "actions", "serializer"}
#: What a module's text holds wherever its syntax tree can show a use: an import of requests-cache
#: (which the uses through its names and the subclasses of its classes need too), or a name of
#: :data:`CACHE_OBJECTS` (an identifier is in the text as written, so it finds each one).
_MENTIONS = re.compile(r"requests_cache|\b(?:" + "|".join(sorted(CACHE_OBJECTS)) + r")\b")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(dotted: str) -> object | None:
    """The requests-cache object a dotted name stands for (``None``: cannot tell)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            found = getattr(found, part, None)
        return found
    return None


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[str] = []
        self.imported: dict[str, str] = {}  # local name -> dotted requests-cache name

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == "requests_cache":
                self._check_module(alias.name, node)
                self.imported[(alias.asname or alias.name).split(".")[0]] = (
                    alias.name if alias.asname else "requests_cache"
                )

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.split(".")[0] != "requests_cache":
            return
        self._check_module(module, node)
        for alias in node.names:
            if _private(alias.name):
                self.found.append(f"line {node.lineno}: imports {module}.{alias.name}")
            self.imported[alias.asname or alias.name] = f"{module}.{alias.name}"

    def _check_module(self, module: str, node: ast.stmt) -> None:
        if any(_private(part) for part in module.split(".")):
            self.found.append(f"line {node.lineno}: imports from {module}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _private(node.attr):
            owner = node.value
            named = owner.id if isinstance(owner, ast.Name) else None
            held = owner.attr if isinstance(owner, ast.Attribute) else named
            if named in self.imported or held in CACHE_OBJECTS:
                self.found.append(f"line {node.lineno}: {ast.unparse(node)}")
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = [self._requests_cache_base(base) for base in node.bases]
        known = [base for base in bases if base is not None]
        if known:
            self._check_subclass(node, known)
        self.generic_visit(node)

    def _requests_cache_base(self, base: ast.expr) -> type | None:
        dotted = ast.unparse(base)
        head, _, rest = dotted.partition(".")
        if head not in self.imported:
            return None
        found = _resolve(".".join(filter(None, (self.imported[head], rest))))
        return found if isinstance(found, type) else None

    def _check_subclass(self, node: ast.ClassDef, bases: list[type]) -> None:
        own = {item.name for item in node.body if isinstance(item, ast.FunctionDef)}
        for item in ast.walk(node):
            stored = isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store)
            if stored and isinstance(item.value, ast.Name) and item.value.id == "self":
                own.add(item.attr)
        base_names = {name for base in bases for name in dir(base)}
        for item in node.body:
            name = item.name if isinstance(item, ast.FunctionDef) else ""
            if _private(name) and name in base_names:
                self.found.append(f"line {item.lineno}: overrides {node.name}.{item.name}")
        for item in ast.walk(node):
            if not (isinstance(item, ast.Attribute) and _private(item.attr)):
                continue
            owner = item.value
            is_self = isinstance(owner, ast.Name) and owner.id in ("self", "cls")
            is_super = isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super"
            if (is_self or is_super) and item.attr not in own:
                self.found.append(f"line {item.lineno}: {ast.unparse(item)} of a base")


def may_use(source: str) -> bool:
    """Whether ``source`` can hold a use :func:`private_uses` finds: the others are not parsed."""
    return _MENTIONS.search(source) is not None


def private_uses(source: str) -> list[str]:
    """Where ``source`` uses a requests-cache name that begins with ``_``."""
    tree = ast.parse(source)
    names = _Finder()  # first every import, wherever it is (a function's own, too)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.visit(node)
    finder = _Finder()
    finder.imported = names.imported
    finder.visit(tree)
    return finder.found


def test_no_module_of_propertykit_uses_a_private_requests_cache_name() -> None:
    sources = {path: path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}
    searched = {path: source for path, source in sources.items() if may_use(source)}
    assert PACKAGE / "wire" / "_transport.py" in searched  # the modules on requests-cache
    found = {
        str(path.relative_to(PACKAGE.parent)): uses
        for path, source in searched.items()
        if (uses := private_uses(source))
    }
    assert found == {}


# What propertykit did before: each must be found.
BEFORE = {
    "a private module": "from requests_cache._utils import encode",
    "a private name": "from requests_cache.backends.sqlite import _format_sequence",
    "an overridden private method": """
from requests_cache import CacheMixin
class Session(CacheMixin):
    def _send_and_cache(self, request, actions):
        return super()._send_and_cache(request, actions)
""",
    "a base's private helper": """
from requests_cache.backends import redis as backends
class Responses(backends.RedisDict):
    def __setitem__(self, key, item):
        self.connection.set(self._bkey(key), item)
""",
    "the settings behind a backend": "def keys(cache):\n    return cache._settings.key_fn\n",
    "a storage's key helper": "def keys(responses, k):\n    return responses._bkeys(k)\n",
    "a session's cache's settings": "def f(session):\n    return session.cache._settings\n",
}


@pytest.mark.parametrize("source", BEFORE.values(), ids=BEFORE.keys())
def test_the_uses_of_before_are_found(source: str) -> None:
    assert may_use(source) and private_uses(source)


ALLOWED = {
    "public names": "from requests_cache import CachedSession\nCachedSession.cache_disabled\n",
    "our own private helpers": """
from requests_cache.backends.base import BaseStorage
class Storage(BaseStorage):
    def _writing(self):
        self._local = 1
        return self._local
""",
    "private names of other objects": "def f(response):\n    return response._content\n",
}


@pytest.mark.parametrize("source", ALLOWED.values(), ids=ALLOWED.keys())
def test_public_names_and_our_own_are_not_found(source: str) -> None:
    assert private_uses(source) == []
