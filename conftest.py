"""Repository-wide pytest hooks: every test's markers match what it imports.

The GitHub Python workflow installs the light ``test`` extra and runs
``pytest -m "not torch"``; this machine (``scripts/test.sh``) installs ``test-torch``
too. So a test that imports a package only ``test-torch`` installs (torch,
transformers, safetensors, huggingface_hub, ...) must be marked ``torch``, or the
light install fails (or silently skips) it.

This file checks that on every run, whatever is installed:

* while a test module is imported and while each test (and its fixtures) runs, every
  import made by test code, by ``qkforms`` or through ``pytest.importorskip`` is
  recorded (``builtins.__import__`` and ``importlib.import_module`` are wrapped;
  imports made inside third-party libraries are ignored);
* a recorded module is allowed when it is not provided by an installed distribution
  (the standard library, the tests' own helpers) or its distribution is installed by
  the extras the test's markers allow: ``test`` for every test, plus ``test-torch``
  for a test marked ``torch`` (qkforms' own requirements read from this checkout's
  ``pyproject.toml``, which an editable install shared between checkouts may not have
  yet; the others' from the installed metadata, recursively),
  plus the two model packages the test command installs with ``--no-deps``;
* a test that imports anything else fails, naming the module and the marker it needs.

Doctests cannot carry markers: a doctest whose examples import a ``test-torch``-only
package gets the ``torch`` marker here, at collection.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import importlib.metadata as md
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent
TESTS = ROOT / "tests"
#: marker -> the extra whose packages a test with that marker may import
MARKER_EXTRAS = {"torch": "test-torch"}
BASE_EXTRA = "test"


@cache
def _own_requirements() -> list[str] | None:
    """qkforms' requirements as this checkout declares them (extras as markers); ``None``
    without a ``pyproject.toml`` next to this file."""
    import tomllib

    path = ROOT / "pyproject.toml"
    if not path.is_file():
        return None
    project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    out = list(project.get("dependencies", []))
    for extra, reqs in project.get("optional-dependencies", {}).items():
        out += [f"{r}; extra == '{extra}'" for r in reqs]
    return out


@cache
def installed_by(extras: frozenset[str]) -> frozenset[str]:
    """Canonical names of the installed distributions that ``qkforms[extras]`` pulls in."""
    seen: set[tuple[str, frozenset[str]]] = set()
    dists: set[str] = set()
    todo = [("qkforms", extras)]
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in seen:
            continue
        seen.add((name, wanted))
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        dists.add(name)
        own = _own_requirements() if name == "qkforms" else None
        for spec in (own if own is not None else dist.requires or []):
            req = Requirement(spec)
            if req.marker is not None and not any(
                    req.marker.evaluate({"extra": e}) for e in (*wanted, "")):
                continue
            todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    from qkforms.models.short_names import SHORT_NAMES  # installed by the test command

    return frozenset(dists | {canonicalize_name(e.pip_name) for e in SHORT_NAMES.values()})


@cache
def _module_dists() -> dict[str, frozenset[str]]:
    return {mod: frozenset(canonicalize_name(d) for d in dists)
            for mod, dists in md.packages_distributions().items()}


def allowed_extras(markers: set[str]) -> frozenset[str]:
    """The extras a test with these markers may rely on."""
    return frozenset({BASE_EXTRA, *(MARKER_EXTRAS[m] for m in markers if m in MARKER_EXTRAS)})


def not_allowed(module: str, markers: set[str]) -> bool:
    """Whether importing ``module`` needs a marker the test does not have."""
    dists = _module_dists().get(module.split(".", 1)[0])
    return bool(dists) and not dists & installed_by(allowed_extras(markers))


def needed_marker(module: str) -> str:
    """The marker whose extra installs ``module`` (or a description when none does)."""
    for marker, extra in MARKER_EXTRAS.items():
        if not not_allowed(module, {marker}):
            return f"@pytest.mark.{marker} (only the `{extra}` extra installs it)"
    return "an extra that installs it (no test extra does)"


def _audited(globals_: dict | None) -> bool:
    """Whether an import made from this module counts: test code, qkforms, importorskip."""
    if not globals_:
        return False
    name = str(globals_.get("__name__") or "")
    if name.split(".", 1)[0] == "qkforms" or name == "_pytest.outcomes":
        return True
    file = globals_.get("__file__")
    return bool(file) and Path(file).resolve().is_relative_to(TESTS)


@contextlib.contextmanager
def recording_imports() -> Iterator[set[str]]:
    """Record the top-level modules imported by audited code inside the block."""
    seen: set[str] = set()
    original, original_import_module = builtins.__import__, importlib.import_module

    def audit(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        # A bare ``__import__(name)`` call (pytest < 9.1's importorskip) passes no
        # globals: the caller's frame says who imports.
        if level == 0 and _audited(globals if globals is not None
                                   else sys._getframe(1).f_globals):
            seen.add(name.split(".", 1)[0])
        return original(name, globals, locals, fromlist, level)

    def audit_import_module(name, package=None):
        if not name.startswith(".") and _audited(sys._getframe(1).f_globals):
            seen.add(name.split(".", 1)[0])
        return original_import_module(name, package)

    builtins.__import__ = audit
    importlib.import_module = audit_import_module
    try:
        yield seen
    finally:
        builtins.__import__ = original
        importlib.import_module = original_import_module


_MODULE_IMPORTS: dict[Path, set[str]] = {}


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    if not isinstance(collector, pytest.Module):
        return (yield)
    with recording_imports() as seen:
        report = yield
    _MODULE_IMPORTS[Path(collector.path)] = seen
    return report


_DOCTEST_IMPORT = re.compile(
    r"""importorskip\(\s*["']([\w.]+)|^\s*(?:import|from)\s+([\w.]+)""", re.MULTILINE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        dtest = getattr(item, "dtest", None)
        if dtest is None:
            continue
        source = "\n".join(ex.source for ex in dtest.examples)
        mods = {a or b for a, b in _DOCTEST_IMPORT.findall(source)}
        for marker in MARKER_EXTRAS:
            if any(not_allowed(m, set()) and not not_allowed(m, {marker}) for m in mods):
                item.add_marker(marker)


def _markers(item: pytest.Item) -> set[str]:
    return {m.name for m in item.iter_markers()}


def _check(item: pytest.Item, seen: set[str], when: str) -> None:
    markers = _markers(item)
    bad = sorted(m for m in seen if not_allowed(m, markers))
    if bad:
        pytest.fail(
            f"marker mismatch: {item.nodeid} imports {', '.join(bad)} {when}, which the "
            f"`{BASE_EXTRA}` extra does not install; it needs {needed_marker(bad[0])}",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    module_imports = _MODULE_IMPORTS.get(Path(item.path), set())
    with recording_imports() as seen:
        result = yield
    _check(item, module_imports, "when its module is imported")
    _check(item, seen, "in its fixtures")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    with recording_imports() as seen:
        result = yield
    _check(item, seen, "while it runs")
    return result

