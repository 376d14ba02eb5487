"""Optional dependencies: every command reports a missing extra at once, naming it, and
the extras' module lists agree with ``pyproject.toml``."""

from __future__ import annotations

import importlib.metadata as md
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from qkforms.extras import EXTRA_MODULES

ROOT = Path(__file__).resolve().parents[1]

#: run ``qkforms ARGS`` with the modules BLOCKED made unimportable
BLOCKING = """
import sys
BLOCKED = set(sys.argv[1].split(","))
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
from qkforms.cli import main
raise SystemExit(main(sys.argv[2:]))
"""


def _run(blocked: str, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python") + os.pathsep
           + os.environ.get("PYTHONPATH", "")}
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", BLOCKING, blocked, *args], env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    return res, time.perf_counter() - t


@pytest.mark.parametrize(("blocked", "args", "extra"), [
    ("plotly", ["report", "{d}"], "plots"),
    ("matplotlib", ["report", "{d}"], "plots"),
    ("pyarrow", ["stats", "{d}"], "survey"),
    ("gguf", ["survey", "smollm2", "--out", "{d}/out"], "survey"),
    ("distributed", ["survey", "smollm2", "--out", "{d}/out", "--executor", "dask"], "dask"),
])
def test_a_missing_extra_is_reported_at_once(blocked: str, args: list[str], extra: str,
                                             tmp_path: Path) -> None:
    res, seconds = _run(blocked, *[a.format(d=tmp_path) for a in args])
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 1, res.stderr
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert blocked in lines[0] and f'pip install "qkforms[{extra}]"' in lines[0], lines[0]
    assert seconds < 5.0, seconds  # the interpreter's start included
    assert not (tmp_path / "out").exists()  # no work was done


def test_no_png_needs_no_matplotlib(tmp_path: Path) -> None:
    res, _ = _run("matplotlib", "report", str(tmp_path), "--no-png")
    assert "matplotlib" not in res.stderr and "heads.parquet" in res.stderr, res.stderr


def test_extra_modules_match_pyproject() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["optional-dependencies"]
    dists_of = md.packages_distributions()
    for extra, modules in EXTRA_MODULES.items():
        assert extra in extras, extra
        declared = set()
        for text in extras[extra]:
            req = Requirement(text)
            if req.name == "qkforms":
                continue
            declared.add(canonicalize_name(req.name))
            try:  # what the requirement's own extras pull in (dask[distributed])
                sub = md.requires(req.name) or []
            except md.PackageNotFoundError:
                continue
            for dep in map(Requirement, sub):
                if dep.marker is not None and any(dep.marker.evaluate({"extra": e})
                                                  for e in req.extras):
                    declared.add(canonicalize_name(dep.name))
        for module in modules:
            if module not in dists_of:
                continue  # not installed here: nothing to compare with
            owners = {canonicalize_name(d) for d in dists_of[module]}
            assert owners & declared, (extra, module, owners)
