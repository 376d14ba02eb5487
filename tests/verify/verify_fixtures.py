"""The fixtures of the ``qkforms verify`` tests, on the repository of :mod:`verify_repo`.

``checks_module`` (the fixture checks), ``fixture_properties`` (the fixture hypothesis
properties), ``repo`` (the synthetic repository, the registry pointed at it, no ``lake``
on PATH) and ``fake_lake`` (a ``lake`` on PATH replaying recorded output; call it with
the outputs to record). A test module uses them with ``pytest_plugins =
["verify_fixtures"]`` (a second ``conftest.py`` would collide under
``--doctest-modules``).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
import types
from pathlib import Path

import pytest
from hypothesis import strategies as st
from verify_repo import (
    CHECKS,
    FAKE_LAKE,
    LAKEFILE,
    LEAN_FILES,
    MANIFEST,
    alpha_sum,
    beta_triangular,
    delta_needs_a_missing_package,
    fixture_results,
    gamma_wrong,
    good_check,
)

from qkforms import properties, registry
from qkforms.verify import write_axioms_script
from qkforms.verify.lean_project import LEAN_TOOLCHAIN


@pytest.fixture
def checks_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    mod = types.ModuleType(CHECKS)
    for rid in ("alpha", "beta", "delta", "gamma"):
        setattr(mod, f"check_{rid}", good_check(rid))
    monkeypatch.setitem(sys.modules, CHECKS, mod)
    return mod


@pytest.fixture
def fixture_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    """The package's properties plus the fixture ones, removed again after the test."""
    monkeypatch.setattr(properties, "_DEFINED", dict(properties.all_properties()))
    for func in (alpha_sum, beta_triangular, gamma_wrong, delta_needs_a_missing_package):
        properties.prop(st.integers(0, 20))(func)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checks_module,
         fixture_properties) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "lean-toolchain").write_text(LEAN_TOOLCHAIN + "\n")
    (root / "lakefile.lean").write_text(LAKEFILE)
    (root / "lake-manifest.json").write_text(json.dumps(MANIFEST, indent=1))
    for rel, text in LEAN_FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    results = fixture_results()
    monkeypatch.setattr(registry, "RESULTS", results)
    write_axioms_script(root, results)
    # no lake on PATH unless a test puts a fake one there
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return root


@pytest.fixture
def fake_lake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo: Path):
    rec = tmp_path / "lake-records"
    rec.mkdir()
    bindir = tmp_path / "fake-bin"
    bindir.mkdir()
    lake = bindir / "lake"
    lake.write_text(FAKE_LAKE.format(python=sys.executable))
    lake.chmod(lake.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", str(bindir) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("FAKE_LAKE_DIR", str(rec))

    def record(build: str, build_rc: int, audit: str, audit_rc: int = 0,
               modules: dict[str, tuple[str, int]] | None = None) -> Path:
        """Record the outputs; ``modules``: MOD -> (output, exit) of `lake build +MOD`."""
        outputs = [("build", build, build_rc), ("audit", audit, audit_rc),
                   ("cache", "Decompressing 1 file(s)\n", 0),
                   ("prefix", str(tmp_path / "toolchain") + "\n", 0)]
        outputs += [(f"build-{m}", out, rc) for m, (out, rc) in (modules or {}).items()]
        for key, out, rc in outputs:
            (rec / f"{key}.out").write_text(out)
            (rec / f"{key}.rc").write_text(str(rc))
        (tmp_path / "toolchain").mkdir(exist_ok=True)
        return rec / "calls.log"

    return record
