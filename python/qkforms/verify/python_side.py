"""The Python side of ``qkforms verify``: exact checks and property tests.

Exact checks are the registered ``module:function`` callables (``qkforms.checks``),
run in process with a seed and optional sizes. Property tests are pytest node ids,
collected and run in a ``python -m pytest`` subprocess whose JUnit XML report gives
an outcome per node id.

Examples
--------
>>> parse_sizes(["n=4", "thm3:N=9"])
({'n': 4}, {'thm3': {'N': 9}})
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qkforms.errors import QKFormsError, VerificationError

__all__ = [
    "PASS",
    "FAIL",
    "SKIPPED",
    "ExactOutcome",
    "NodeOutcome",
    "parse_sizes",
    "resolve_check",
    "run_exact",
    "collect_node_ids",
    "run_property_tests",
]

PASS = "pass"
FAIL = "fail"
SKIPPED = "skipped"


def _number(text: str) -> int | float | str:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_sizes(specs: Iterable[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Parse ``KEY=VALUE`` (every check) and ``ID:KEY=VALUE`` (one check) size options.

    Raises
    ------
    QKFormsError
        On a malformed option.

    Examples
    --------
    >>> parse_sizes(["trials=20", "thm4.a_face:n=3"])
    ({'trials': 20}, {'thm4.a_face': {'n': 3}})
    """
    common: dict[str, Any] = {}
    per_id: dict[str, dict[str, Any]] = {}
    for spec in specs:
        m = re.fullmatch(r"(?:(?P<id>[\w.]+):)?(?P<key>[A-Za-z_]\w*)=(?P<value>.+)", spec)
        if m is None:
            raise QKFormsError(f"bad --size {spec!r}; expected KEY=VALUE or ID:KEY=VALUE")
        value = _number(m.group("value"))
        if m.group("id"):
            per_id.setdefault(m.group("id"), {})[m.group("key")] = value
        else:
            common[m.group("key")] = value
    return common, per_id


def resolve_check(spec: str) -> Callable[..., Any]:
    """Import the callable named by ``"module:function"``.

    Raises
    ------
    VerificationError
        If the module or the function does not exist.

    Examples
    --------
    >>> resolve_check("qkforms.registry:check_function_name")("thm3")
    'check_thm3'
    """
    module_name, _, func_name = spec.partition(":")
    if not module_name or not func_name:
        raise VerificationError(f"check {spec!r} is not of the form 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise VerificationError(f"check module {module_name} cannot be imported: {exc}") from exc
    func = getattr(module, func_name, None)
    if not callable(func):
        raise VerificationError(f"check {func_name} is missing from {module_name}")
    return func


@dataclass(frozen=True)
class ExactOutcome:
    """The outcome of one exact check: ``status`` in ``pass``/``fail``/``skipped``."""

    status: str
    method: str | None
    instances: int | None
    detail: str
    seconds: float
    kwargs: dict[str, Any] = field(default_factory=dict)


def _accepted(func: Callable[..., Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return dict(kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return dict(kwargs)
    names = {p.name for p in params}
    return {k: v for k, v in kwargs.items() if k in names}


def run_exact(
    result_id: str,
    spec: str,
    *,
    seed: int = 0,
    sizes: dict[str, Any] | None = None,
    id_sizes: dict[str, Any] | None = None,
) -> ExactOutcome:
    """Run the exact check of one result and judge it.

    ``sizes`` go to every check that accepts them; ``id_sizes`` are passed as given.
    An exception, a missing check or ``passed`` false is a ``fail``.

    Examples
    --------
    >>> run_exact("x", "qkforms.registry:get").status   # not a check: raises -> fail
    'fail'
    """
    if not spec:
        return ExactOutcome(SKIPPED, None, None, "no exact check registered", 0.0)
    start = time.perf_counter()
    try:
        func = resolve_check(spec)
    except VerificationError as exc:
        return ExactOutcome(FAIL, None, None, str(exc), time.perf_counter() - start)
    kwargs = {**_accepted(func, dict(sizes or {})), **dict(id_sizes or {})}
    try:
        out = func(seed=seed, **kwargs)
    except Exception as exc:  # a crashing check is a failing check, reported with its error
        return ExactOutcome(
            FAIL, None, None, f"{spec} raised {type(exc).__name__}: {exc}",
            time.perf_counter() - start, kwargs,
        )
    seconds = time.perf_counter() - start
    passed = getattr(out, "passed", None)
    if not isinstance(passed, bool):
        return ExactOutcome(FAIL, None, None, f"{spec} returned {type(out).__name__}, not a "
                            "CheckResult with a boolean `passed`", seconds, kwargs)
    detail = str(getattr(out, "detail", "") or "")
    got_id = getattr(out, "id", result_id)
    if got_id != result_id:
        return ExactOutcome(FAIL, getattr(out, "method", None), getattr(out, "instances", None),
                            f"{spec} reported id {got_id!r}, expected {result_id!r}", seconds,
                            kwargs)
    return ExactOutcome(
        PASS if passed else FAIL,
        getattr(out, "method", None),
        getattr(out, "instances", None),
        detail,
        seconds,
        kwargs,
    )


def _pytest_env(root: Path) -> dict[str, str]:
    env = os.environ.copy()
    python_dir = str(root / "python")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (python_dir, env.get("PYTHONPATH")) if p)
    return env


@dataclass(frozen=True)
class Collection:
    """Node ids collected from some test files, with per-file collection errors."""

    node_ids: frozenset[str]
    errors: dict[str, str]
    returncode: int

    def has(self, node_id: str) -> bool:
        """Whether ``node_id`` (or a parametrization of it) was collected."""
        return node_id in self.node_ids or any(
            n.startswith(node_id + "[") for n in self.node_ids
        )


def collect_node_ids(root: Path, files: Sequence[str], *, timeout: float = 600.0) -> Collection:
    """Collect the pytest node ids of ``files`` (relative to ``root``) in a subprocess.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "test_a.py").write_text("def test_x():\\n    pass\\n")
    >>> sorted(collect_node_ids(d, ["test_a.py"]).node_ids)
    ['test_a.py::test_x']
    """
    existing = [f for f in files if (root / f).is_file()]
    errors = {f: "file does not exist" for f in files if f not in existing}
    if not existing:
        return Collection(frozenset(), errors, 0)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(root), *existing],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=timeout, env=_pytest_env(root),
    )
    ids = set()
    for line in proc.stdout.splitlines():
        line = line.strip()
        if "::" in line and " " not in line.split("::", 1)[0]:
            ids.add(line)
    for m in re.finditer(r"ERROR collecting (\S+)", proc.stdout):
        errors[m.group(1)] = "collection error (see `pytest --collect-only`)"
    return Collection(frozenset(ids), errors, proc.returncode)


@dataclass(frozen=True)
class NodeOutcome:
    """The outcome of one registered node id: ``pass``, ``fail`` or ``skipped``."""

    node_id: str
    status: str
    detail: str
    cases: int = 0


def _junit_cases(xml_path: Path) -> list[tuple[str, str, str, str]]:
    """(classname, name, status, message) of each test case of a JUnit XML report."""
    if not xml_path.is_file():
        return []
    tree = ET.parse(xml_path)  # written by our own pytest subprocess just now
    cases = []
    for tc in tree.iter("testcase"):
        status, message = PASS, ""
        for child in tc:
            if child.tag in ("failure", "error"):
                status = FAIL
                message = (child.get("message") or child.tag).splitlines()[0][:300]
                break
            if child.tag == "skipped":
                status = SKIPPED
                message = (child.get("message") or "skipped")[:300]
        cases.append((tc.get("classname", ""), tc.get("name", ""), status, message))
    return cases


def _junit_key(node_id: str) -> tuple[str, str]:
    parts = node_id.split("::")
    module = parts[0][: -len(".py")] if parts[0].endswith(".py") else parts[0]
    classname = ".".join([module.replace("/", "."), *parts[1:-1]])
    return classname, parts[-1]


def run_property_tests(
    root: Path, node_ids: Sequence[str], *, timeout: float = 3600.0
) -> dict[str, NodeOutcome]:
    """Run registered pytest node ids in one subprocess; return an outcome per node id.

    Node ids that do not exist are reported as ``fail`` ("not found") without
    being run (pytest would otherwise refuse the whole run).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "test_a.py").write_text("def test_ok():\\n    assert 1\\n")
    >>> out = run_property_tests(d, ["test_a.py::test_ok", "test_a.py::test_gone"])
    >>> [(k, v.status) for k, v in out.items()]
    [('test_a.py::test_ok', 'pass'), ('test_a.py::test_gone', 'fail')]
    """
    unique = list(dict.fromkeys(node_ids))
    files = list(dict.fromkeys(n.split("::", 1)[0] for n in unique))
    collection = collect_node_ids(root, files, timeout=timeout)
    outcomes: dict[str, NodeOutcome] = {}
    runnable = []
    for n in unique:
        f = n.split("::", 1)[0]
        if f in collection.errors:
            outcomes[n] = NodeOutcome(n, FAIL, f"{f}: {collection.errors[f]}")
        elif not collection.has(n):
            outcomes[n] = NodeOutcome(n, FAIL, "test not found (no such pytest node id)")
        else:
            runnable.append(n)
    if runnable:
        with tempfile.TemporaryDirectory(prefix="qkforms-verify-") as tmp:
            xml_path = Path(tmp) / "junit.xml"
            try:
                proc = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                     "--rootdir", str(root), f"--junitxml={xml_path}", *runnable],
                    cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                    timeout=timeout, env=_pytest_env(root),
                )
                tail = proc.stdout.strip().splitlines()[-1:] if proc.stdout.strip() else []
            except subprocess.TimeoutExpired:
                tail = [f"timed out after {timeout:g} s"]
            cases = _junit_cases(xml_path)
        for n in runnable:
            classname, name = _junit_key(n)
            mine = [c for c in cases if c[0] == classname
                    and (c[1] == name or c[1].startswith(name + "["))]
            failed = [c for c in mine if c[2] == FAIL]
            passed = [c for c in mine if c[2] == PASS]
            if failed:
                outcomes[n] = NodeOutcome(
                    n, FAIL, f"{len(failed)}/{len(mine)} failed: {failed[0][1]}: {failed[0][3]}",
                    len(mine),
                )
            elif passed:
                outcomes[n] = NodeOutcome(n, PASS, f"{len(passed)}/{len(mine)} passed", len(mine))
            elif mine:
                outcomes[n] = NodeOutcome(n, SKIPPED, f"skipped: {mine[0][3]}", len(mine))
            else:
                outcomes[n] = NodeOutcome(
                    n, FAIL, "no result from pytest" + (f" ({tail[0]})" if tail else "")
                )
    return {n: outcomes[n] for n in unique}
