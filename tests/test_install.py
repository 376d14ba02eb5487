"""``qkforms verify`` tells the truth in each way of installing qkforms.

Three installs, each in a fresh virtual environment built from a copy of this checkout
with the package index pip is configured with (no test extra, no torch):

* a wheel (``pip install qkforms-*.whl``), run from an empty directory: no Lean sources,
  so the Lean side is ``not run`` with the way to enable it (``--lean-dir``);
* the README's main command (``pip install -e ".[survey]"``), run from an empty
  directory: the Lean sources are found through the package, the static checks run,
  the Lean build is ``not run`` (no toolchain);
* this test environment (the ``test-torch`` extra), run from an empty directory.

In each, nothing may ``fail`` or ``DISAGREE``: every exact check and property runs and
passes, and what did not run says why. ``docs/bridge.md`` shows the summary line of each
case; the tests check that the lines shown there are lines the installs print.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qkforms import registry
from qkforms.registry import LEAN_FORMALIZED
from qkforms.verify import NO_SOURCES, NO_TOOLCHAIN

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
#: top-level entries of the checkout that a fresh clone does not have
_NOT_IN_A_CLONE = {".git", ".lake", "lake-packages", "build", "dist", "out", "survey-out",
                   ".pytest_cache", ".hypothesis", ".ruff_cache", ".venv"}
FORMALIZED = sum(r.lean_status == LEAN_FORMALIZED for r in registry.RESULTS)
TIMEOUT = 1200


def _copy_checkout(dst: Path) -> Path:
    def ignore(directory: str, names: list[str]) -> set[str]:
        top = Path(directory).resolve() == ROOT
        return {n for n in names if (top and n in _NOT_IN_A_CLONE) or n == "__pycache__"
                or n.endswith(".egg-info")}

    shutil.copytree(ROOT, dst, ignore=ignore, symlinks=True)
    return dst


def _env(venv: Path | None = None) -> dict[str, str]:
    """The environment of a fresh shell: no lake on PATH, no PYTHONPATH, pip quiet."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    bins = [str(venv / "bin")] if venv else []
    env["PATH"] = os.pathsep.join([*bins, "/usr/local/bin", "/usr/bin", "/bin"])
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    env["OMP_NUM_THREADS"] = "1"
    return env


def _run(cmd: list[str | Path], cwd: Path, venv: Path | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=_env(venv), text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)


def _must(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stdout[-4000:]
    return proc.stdout


def _fresh_venv(path: Path) -> Path:
    _must(_run([sys.executable, "-m", "venv", path], cwd=path.parent))
    return path


def _verify(venv_python: Path | str, cwd: Path, *args: str) -> tuple[int, str, dict]:
    out_json = cwd / "verify.json"
    proc = _run([venv_python, "-m", "qkforms", "verify", "--json", out_json, *args], cwd=cwd,
                venv=Path(venv_python).parent.parent if str(venv_python) != sys.executable
                else None)
    doc = json.loads(out_json.read_text()) if out_json.exists() else {}
    return proc.returncode, proc.stdout, doc


def _absent(python: Path, *modules: str) -> list[str]:
    code = ("import importlib.util as u; print(' '.join(m for m in "
            f"{list(modules)!r} if u.find_spec(m) is None))")
    return _must(_run([python, "-c", code], cwd=python.parent)).split()


def _assert_true_statuses(code: int, out: str, doc: dict, lean_reason: str) -> None:
    """Nothing failed, every Python check ran and passed, the Lean side says why not."""
    assert code == 0, out
    assert doc["schema"] == "qkforms.verify/3"
    summary = doc["summary"]
    assert summary["failures"] == [] and summary["exit_status"] == 0
    assert summary["verdicts"]["fail"] == 0 and summary["verdicts"]["DISAGREE"] == 0
    assert summary["not_run"] == {"Lean": FORMALIZED, "exact": 0, "property": 0}
    assert [(g["column"], g["reason"]) for g in summary["not_run_reasons"]] == [
        ("Lean", lean_reason)]
    for row in doc["results"]:
        assert row["exact"]["status"] == "pass", row
        assert row["property"]["status"] == "pass", row
        assert row["lean"]["status"] in ("not run", "not formalized"), row
    assert "FAILURES:" not in out and "DISAGREE" not in out
    ids = set(registry.ids())
    verdicts = [ln.split()[-1] for ln in out.splitlines() if ln.split()[:1] and
                ln.split()[0] in ids]
    assert len(verdicts) == len(ids) and set(verdicts) <= {"pass", "incomplete"}
    assert summary["line"] in out


def _assert_documented(case: str, out: str) -> None:
    """Every output line docs/bridge.md shows for this install case is a line of ``out``."""
    text = (ROOT / "docs" / "bridge.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- install-case: {case} -->\n```console\n(.*?)```", text, re.S)
    assert m is not None, f"docs/bridge.md shows no output for the {case!r} install"
    shown = [ln for ln in m.group(1).splitlines() if ln.strip() and not ln.startswith("$ ")]
    printed = {ln.rstrip() for ln in out.splitlines()}
    assert shown and [ln for ln in shown if ln.rstrip() not in printed] == []


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy_checkout(tmp_path_factory.mktemp("clone") / "qkforms")


def test_wheel_outside_the_checkout(source: Path, tmp_path: Path) -> None:
    venv = _fresh_venv(tmp_path / "venv")
    py = venv / "bin" / "python"
    _must(_run([py, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", source],
               cwd=tmp_path, venv=venv))
    [wheel] = (tmp_path / "dist").glob("qkforms-*.whl")
    _must(_run([py, "-m", "pip", "install", "-q", wheel], cwd=tmp_path, venv=venv))
    assert _absent(py, "torch", "transformers", "pytest", "tests", "hypothesis") == [
        "torch", "transformers", "pytest", "tests"]  # hypothesis is a dependency
    empty = tmp_path / "elsewhere"
    empty.mkdir()

    code, out, doc = _verify(py, empty)
    _assert_true_statuses(code, out, doc, NO_SOURCES)
    assert doc["root"] is None and doc["static_checks"] == []
    assert doc["static_checks_not_run"] == NO_SOURCES
    assert "--lean-dir DIR" in out
    _assert_documented("wheel", out)

    # --lean require cannot be met without Lean sources
    code, out, doc = _verify(py, empty, "--lean", "require", "--no-exact-checks",
                             "--no-property-tests")
    assert code == 1 and doc["summary"]["failures"] == [f"--lean require: {NO_SOURCES}"]

    # --lean-dir points the wheel at a checkout: its static checks run
    code, out, doc = _verify(py, empty, "--lean-dir", str(source), "--no-exact-checks",
                             "--no-property-tests")
    assert code == 0, out
    assert doc["root"] == str(source.resolve())
    assert doc["static_checks"] and all(c["passed"] for c in doc["static_checks"])
    assert {r["lean"]["detail"] for r in doc["results"]
            if r["lean"]["status"] != "not formalized"} == {NO_TOOLCHAIN}


def test_editable_install_with_the_main_commands_extras(source: Path, tmp_path: Path) -> None:
    venv = _fresh_venv(tmp_path / "venv")
    py = venv / "bin" / "python"
    _must(_run([py, "-m", "pip", "install", "-q", "-e", f"{source}[survey]"], cwd=tmp_path,
               venv=venv))
    assert _absent(py, "torch", "transformers", "safetensors", "pytest") == [
        "torch", "transformers", "safetensors", "pytest"]
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    code, out, doc = _verify(py, empty)
    _assert_true_statuses(code, out, doc, NO_TOOLCHAIN)
    assert doc["root"] == str(source.resolve())
    assert doc["static_checks"] and all(c["passed"] for c in doc["static_checks"])
    _assert_documented("main-command", out)


def test_this_full_test_install(tmp_path: Path) -> None:
    code, out, doc = _verify(sys.executable, tmp_path)
    _assert_true_statuses(code, out, doc, NO_TOOLCHAIN)
    assert doc["root"] == str(ROOT)
    _assert_documented("test-install", out)
