"""The Python import layers of ``docs/architecture.md`` §8 hold: nothing imports upward.

The layers are read from the table of §8 (one row per layer, lowest first; each row names
modules or packages in backticks, ``pkg.*`` for every module of a package). Every module
of ``python/qkforms`` must be placed in exactly one layer, and every import of ``qkforms``
itself — at module level or inside a function — must point at a module of the same layer
or a lower one. On top of the layers, the file-level import graph (module-level and
function-level imports alike) must have no circle. The package faces (``__init__.py``
files that hand names on) are modules like the others: a face belongs to its package's
layer, so a lower module that imports ``from qkforms import x`` imports upward.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "python" / "qkforms"
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def module_name(path: Path) -> str:
    """``python/qkforms/a/b.py`` -> ``qkforms.a.b`` (``__init__.py`` -> its package)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_table() -> list[tuple[str, list[str]]]:
    """(layer name, module patterns) of §8, lowest layer first."""
    start = re.search(r"^## 8\. .*$", DOC, re.M)
    assert start, "docs/architecture.md has no section 8 (Python import layers)"
    nxt = re.search(r"^## \d+\. ", DOC[start.end():], re.M)
    text = DOC[start.end(): start.end() + nxt.start() if nxt else len(DOC)]
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and cells[0].isdigit():
            rows.append((cells[1], re.findall(r"`([\w.*]+)`", cells[2])))
    assert rows, "section 8 has no layer table"
    return rows


LAYERS = layer_table()


def layer_of(module: str) -> int:
    """The index of the layer whose most specific pattern matches ``module``."""
    best: tuple[int, int] | None = None  # (specificity, layer)
    for i, (_, patterns) in enumerate(LAYERS):
        for pat in patterns:
            full = "qkforms" if pat == "qkforms" else f"qkforms.{pat}"
            if full == module:
                score = 1000
            elif full.endswith(".*") and (module == full[:-2]
                                          or fnmatch.fnmatchcase(module, full)):
                score = full.count(".")
            else:
                continue
            if best is None or score > best[0]:
                best = (score, i)
    assert best is not None, (
        f"{module} is in no layer of docs/architecture.md §8: add it to the table")
    return best[1]


def target(module: str, node: ast.ImportFrom, is_package: bool) -> str | None:
    """The absolute module an ``ImportFrom`` names (relative imports resolved)."""
    if node.level == 0:
        return node.module
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str) -> Iterator[tuple[str, int]]:
    """(imported qkforms module, line) for every import in ``module``, at any depth.

    ``from a import b`` counts as an import of the module ``a.b`` when that is a module of
    the package, else of ``a``.
    """
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "qkforms":
                    name = alias.name
                    while name not in MODULES:
                        name = name.rpartition(".")[0]
                    yield name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = target(module, node, path.name == "__init__.py")
            if not base or base.split(".")[0] != "qkforms":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in MODULES:
                    yield sub, node.lineno
                else:
                    name = base
                    while name not in MODULES:
                        name = name.rpartition(".")[0]
                    yield name, node.lineno


GRAPH = {m: sorted({t for t, _ in imports(m) if t != m}) for m in MODULES}


def test_every_module_is_in_one_layer() -> None:
    for module in MODULES:
        layer_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_points_upward(module: str) -> None:
    own = layer_of(module)
    upward = [
        f"{MODULES[module].relative_to(ROOT)}:{line} imports {t} "
        f"(layer {LAYERS[layer_of(t)][0]!r} above {LAYERS[own][0]!r})"
        for t, line in imports(module) if layer_of(t) > own
    ]
    assert not upward, "\n".join(upward)


def circles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle() -> None:
    found = circles()
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checker_orders_the_layers_and_finds_a_circle() -> None:
    # the checker itself: the ground is below the commands, an import of the package face
    # is attributed to it, and a made-up circle is found (so a passing run above is not a
    # checker that sees nothing)
    assert layer_of("qkforms.errors") < layer_of("qkforms.cli")
    assert layer_of("qkforms.exact") == layer_of("qkforms.exact.balls")
    # `from qkforms import __version__` is an import of the face; `from qkforms.head import
    # Head` (in the face) one of the module
    assert "qkforms" in GRAPH["qkforms.cli"]
    assert "qkforms.head" in GRAPH["qkforms"]
    saved = dict(GRAPH)
    try:
        GRAPH["qkforms.errors"] = ["qkforms.cli"]
        GRAPH["qkforms.cli"] = [*GRAPH["qkforms.cli"], "qkforms.errors"]
        assert any("qkforms.errors" in c and "qkforms.cli" in c for c in circles())
    finally:
        GRAPH.clear()
        GRAPH.update(saved)
