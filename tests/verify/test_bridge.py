"""``qkforms verify`` end to end on a small synthetic repository.

Each test builds a tiny qkforms-shaped repository in ``tmp_path`` (pins, a Lean
library with tagged declarations, an axiom script), points a monkeypatched registry
(with fixture checks and fixture hypothesis properties) at it, breaks one thing, and
checks that ``verify`` fails with the specific message, or says ``not run`` with the
reason. A fake ``lake`` on ``PATH`` (a script replaying recorded build and
``#print axioms`` output) drives the build-parsing path.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
import types
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import strategies as st

from dojo_trace import make_trace
from qkforms import properties, registry
from qkforms.cli import main
from qkforms.errors import QKFormsError, VerificationError
from qkforms.registry import Result
from qkforms.verify import NO_SOURCES, verify, write_axioms_script
from qkforms.verify.checkout import find_root
from qkforms.verify.lean_project import (
    LEAN_TOOLCHAIN,
    MATHLIB_REV,
    MATHLIB_TAG,
    render_axioms_script,
)
from qkforms.verify.lean_trace import NO_TRACE
from qkforms.verify.python_side import parse_sizes, run_properties
from qkforms.verify.verification_report import render_markdown, render_table

CHECKS = "qkforms_verify_fixture_checks"

# ------------------------------------------------------------------------------ fixtures


@dataclass(frozen=True)
class FakeCheckResult:
    id: str
    passed: bool
    method: str
    instances: int
    detail: str


def _good_check(result_id: str):
    def check(seed: int = 0, n: int = 3) -> FakeCheckResult:
        # an honest tiny check: sum of the first n odd numbers is n^2, for a seeded n
        m = n + seed % 5
        return FakeCheckResult(result_id, sum(2 * k + 1 for k in range(m)) == m * m, "exact",
                               m, f"n={m}")
    return check


@pytest.fixture
def checks_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    mod = types.ModuleType(CHECKS)
    for rid in ("alpha", "beta", "delta", "gamma"):
        setattr(mod, f"check_{rid}", _good_check(rid))
    monkeypatch.setitem(sys.modules, CHECKS, mod)
    return mod


MANIFEST = {
    "version": "1.1.0",
    "packagesDir": ".lake/packages",
    "packages": [
        {
            "url": "https://github.com/leanprover-community/mathlib4",
            "type": "git",
            "subDir": None,
            "scope": "leanprover-community",
            "rev": MATHLIB_REV,
            "name": "mathlib",
            "manifestFile": "lake-manifest.json",
            "inputRev": MATHLIB_TAG,
            "inherited": False,
            "configFile": "lakefile.lean",
        }
    ],
    "name": "qkforms",
    "lakeDir": ".lake",
}

LAKEFILE = f"""\
import Lake
open Lake DSL

-- an old pin in a comment must not count: @ "v4.9.0"
package qkforms where

require mathlib from git
  "https://github.com/leanprover-community/mathlib4.git" @ "{MATHLIB_TAG}"

@[default_target]
lean_lib QKForms where
  srcDir := "lean"
"""

LEAN_FILES = {
    "lean/QKForms.lean": "import QKForms.Basic\nimport QKForms.Alpha\nimport QKForms.Beta\n",
    "lean/QKForms/Basic.lean": """\
        import Mathlib

        /-! # Basic -/

        namespace QKForms

        noncomputable section

        /-- A helper. -/
        def double (n : ℕ) : ℕ := n + n

        end

        end QKForms
        """,
    "lean/QKForms/Alpha.lean": """\
        import QKForms.Basic

        /-! # Alpha

        The words sorry, admit and native_decide in a module doc are harmless. -/

        namespace QKForms

        /-- Lemma 0 of the paper. [qkforms:alpha] -- a `sorry` in a docstring is harmless -/
        theorem double_eq (n : ℕ) : double n = 2 * n := by
          unfold double
          omega

        /- a commented-out attempt:
        theorem bad : False := sorry -/
        noncomputable section
        def message : String := "sorry, axiom"
        end

        end QKForms
        """,
    "lean/names.toml": """\
        [names."String"]
        source = "core:Init/Prelude.lean"
        commit = "core"
        statement = "structure String"
        status = "read"
        """,
    "lean/QKForms/Beta.lean": """\
        import QKForms.Basic

        /-! # Beta -/

        namespace QKForms

        section Beta

        namespace Inner

        /-- Lemma 1 of the paper. [qkforms:beta] -/
        @[simp] theorem double_zero : double 0 = 0 := rfl

        end Inner

        /-- Lemma 2 of the paper. [qkforms:delta] -/
        theorem double_one : double 1 = 2 := rfl

        end Beta

        end QKForms
        """,
}

def alpha_sum(k: int) -> None:
    assert sum(range(k + 1)) == k * (k + 1) // 2


def beta_triangular(n: int) -> None:
    assert n * (n + 1) % 2 == 0


def gamma_wrong(n: int) -> None:
    assert n * n != 49, "a planted counterexample"


def delta_needs_a_missing_package(n: int) -> None:
    import qkforms_fixture_missing_package  # noqa: F401


@pytest.fixture
def fixture_properties(monkeypatch: pytest.MonkeyPatch) -> None:
    """The package's properties plus the fixture ones, removed again after the test."""
    monkeypatch.setattr(properties, "_DEFINED", dict(properties.all_properties()))
    for func in (alpha_sum, beta_triangular, gamma_wrong, delta_needs_a_missing_package):
        properties.prop(st.integers(0, 20))(func)


def fixture_results() -> tuple[Result, ...]:
    return (
        Result("alpha", "Lemma 0", "double is twice", lean=("QKForms.double_eq",),
               lean_file="lean/QKForms/Alpha.lean", check=f"{CHECKS}:check_alpha",
               properties=("alpha_sum",)),
        Result("beta", "Lemma 1", "double of zero", lean=("QKForms.Inner.double_zero",),
               lean_file="lean/QKForms/Beta.lean", check=f"{CHECKS}:check_beta",
               properties=("beta_triangular",)),
        Result("delta", "Lemma 2", "double of one", lean=("QKForms.double_one",),
               lean_file="lean/QKForms/Beta.lean", check=f"{CHECKS}:check_delta"),
        Result("gamma", "Corollary 0", "not formalized", check=f"{CHECKS}:check_gamma"),
    )


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


def rows(report) -> dict[str, tuple[str, str, str, str]]:
    return {
        r.result.id: (r.lean.status, r.exact.status, r.prop.status, r.verdict)
        for r in report.rows
    }


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"fixture drifted: {old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def failures_with(report, needle: str) -> list[str]:
    return [m for m in report.failures() if needle in m]


# --------------------------------------------------------------------------- clean repo


def test_clean_repo_without_toolchain_is_incomplete_not_passed(repo: Path) -> None:
    report = verify(repo)
    assert report.failures() == []
    assert report.exit_status == 0
    assert all(c.passed for c in report.static)
    assert rows(report) == {
        "alpha": ("not run", "pass", "pass", "incomplete"),
        "beta": ("not run", "pass", "pass", "incomplete"),
        "delta": ("not run", "pass", "none", "incomplete"),
        "gamma": ("not formalized", "pass", "none", "pass"),
    }
    alpha = report.rows[0]
    assert "no Lean toolchain: `lake` is not on PATH; enable: install elan" in alpha.lean.detail
    assert [(p.name, p.status) for p in report.rows[1].prop.runs] == [("beta_triangular",
                                                                       "pass")]
    assert report.rows[1].prop.runs[0].examples == 100  # the ci profile's budget
    assert report.not_run_counts() == {"Lean": 3, "exact": 0, "property": 0}
    assert report.summary_line() == (
        "1 pass, 3 incomplete, 0 fail, 0 disagree; not run: Lean 3, exact 0, property 0; "
        "verify OK (nothing failed)")


def test_lean_require_without_lake_fails(repo: Path) -> None:
    report = verify(repo, lean="require", property_tests=False)
    assert report.exit_status == 1
    assert failures_with(report, "--lean require: `lake` is not on PATH")
    assert rows(report)["alpha"][0] == "not run"  # never "built" without a build


# ------------------------------------------------------------------------ static Lean


def test_planted_sorry_fails_static_check_and_row(repo: Path) -> None:
    edit(repo / "lean/QKForms/Alpha.lean", "  unfold double\n  omega", "  sorry")
    report = verify(repo, lean="skip", property_tests=False)
    assert report.exit_status == 1
    msgs = failures_with(report, "static check forbidden")
    assert len(msgs) == 1
    assert "lean/QKForms/Alpha.lean:11: forbidden `sorry`" in msgs[0]
    assert rows(report)["alpha"][0] == "failed"
    assert rows(report)["beta"][0] == "not run"


def test_sorry_in_an_imported_file_fails_its_importers(repo: Path) -> None:
    edit(repo / "lean/QKForms/Basic.lean", "n + n", "by admit")
    report = verify(repo, lean="skip", property_tests=False)
    lean = {k: v[0] for k, v in rows(report).items()}
    assert lean == {"alpha": "failed", "beta": "failed", "delta": "failed",
                    "gamma": "not formalized"}
    assert "`admit` at lean/QKForms/Basic.lean:10" in report.rows[0].lean.detail


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("def message", "axiom cheat : False\ndef message", "forbidden `axiom`"),
        ("  omega", "  native_decide", "forbidden `native_decide`"),
    ],
)
def test_other_forbidden_tokens(repo: Path, old: str, new: str, message: str) -> None:
    edit(repo / "lean/QKForms/Alpha.lean", old, new)
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, message)
    assert report.exit_status == 1


def test_removed_declaration_fails(repo: Path) -> None:
    edit(repo / "lean/QKForms/Beta.lean", "theorem double_one", "theorem double_one'")
    report = verify(repo, lean="skip", property_tests=False)
    assert report.exit_status == 1
    assert failures_with(
        report,
        "delta: registered declaration QKForms.double_one is not declared in lean/",
    )
    assert rows(report)["delta"][0] == "failed"


def test_declaration_in_wrong_file_fails(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = list(fixture_results())
    results[2] = Result("delta", "Lemma 2", "t", lean=("QKForms.double_one",),
                        lean_file="lean/QKForms/Alpha.lean", check=f"{CHECKS}:check_delta")
    monkeypatch.setattr(registry, "RESULTS", tuple(results))
    write_axioms_script(repo, results)
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, "QKForms.double_one is declared in lean/QKForms/Beta.lean, "
                                 "which is neither the registered file lean/QKForms/Alpha.lean "
                                 "nor related to it by imports")


def test_declaration_in_an_imported_or_importing_file_is_accepted(
    repo: Path, monkeypatch
) -> None:
    results = list(fixture_results())
    # QKForms.double lives in Basic.lean, which Alpha.lean imports; delta's file is Basic.lean,
    # which Beta.lean (declaring double_one) imports
    results[0] = Result("alpha", "Lemma 0", "t", lean=("QKForms.double_eq", "QKForms.double"),
                        lean_file="lean/QKForms/Alpha.lean", check=f"{CHECKS}:check_alpha")
    results[2] = Result("delta", "Lemma 2", "t", lean=("QKForms.double_one",),
                        lean_file="lean/QKForms/Basic.lean", check=f"{CHECKS}:check_delta")
    monkeypatch.setattr(registry, "RESULTS", tuple(results))
    edit(repo / "lean/QKForms/Basic.lean", "/-- A helper. -/", "/-- A helper. [qkforms:alpha] -/")
    write_axioms_script(repo, results)
    report = verify(repo, lean="skip", property_tests=False)
    assert report.failures() == []
    # a sorry in Beta.lean (where delta's declaration lives) fails delta, though the
    # registered file Basic.lean is clean
    edit(repo / "lean/QKForms/Beta.lean", "double 1 = 2 := rfl", "double 1 = 2 := sorry")
    report = verify(repo, lean="skip", property_tests=False)
    assert rows(report)["delta"][0] == "failed"
    assert rows(report)["alpha"][0] == "not run"


def test_unregistered_tag_and_missing_tag_fail(repo: Path) -> None:
    beta = repo / "lean/QKForms/Beta.lean"
    edit(beta, "[qkforms:delta]", "[qkforms:epsilon]")
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, "tag [qkforms:epsilon] names no registered result")
    assert failures_with(report, "QKForms.double_one is registered for delta but its docstring "
                                 "lacks the tag [qkforms:delta]")


def test_tag_for_unformalized_result_fails(repo: Path) -> None:
    edit(repo / "lean/QKForms/Basic.lean", "/-- A helper. -/", "/-- A helper. [qkforms:gamma] -/")
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, "tag [qkforms:gamma] but the registry says gamma is not "
                                 "formalized")
    assert failures_with(report, "QKForms.double is tagged [qkforms:gamma] but is not registered")


@pytest.mark.parametrize(
    ("rel", "old", "new", "message"),
    [
        ("lean-toolchain", "v4.27.0", "v4.26.0",
         "lean-toolchain pins 'leanprover/lean4:v4.26.0', expected 'leanprover/lean4:v4.27.0'"),
        ("lakefile.lean", '@ "v4.27.0"', '@ "master"',
         "lakefile.lean requires mathlib @ 'master', expected 'v4.27.0'"),
        ("lake-manifest.json", MATHLIB_REV, "0" * 40,
         f"lake-manifest.json mathlib rev is '{'0' * 40}', expected '{MATHLIB_REV}'"),
        ("lake-manifest.json", '"inputRev": "v4.27.0"', '"inputRev": "v4.26.0"',
         "lake-manifest.json mathlib inputRev is 'v4.26.0', expected 'v4.27.0'"),
    ],
)
def test_mismatched_pin_fails(repo: Path, rel: str, old: str, new: str, message: str) -> None:
    edit(repo / rel, old, new)
    report = verify(repo, lean="skip", property_tests=False)
    assert report.exit_status == 1
    assert failures_with(report, "static check pins: " + message)


def test_missing_lakefile_fails(repo: Path) -> None:
    (repo / "lakefile.lean").unlink()
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, "static check pins: lakefile.lean is missing")


def test_unimported_module_and_missing_import_fail(repo: Path) -> None:
    (repo / "lean/QKForms/Extra.lean").write_text("import QKForms.Basic\n")
    top = repo / "lean/QKForms.lean"
    edit(top, "import QKForms.Beta", "import QKForms.Beta\nimport QKForms.Gone")
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, "lean/QKForms.lean does not import QKForms.Extra")
    assert failures_with(report, "lean/QKForms.lean imports QKForms.Gone, which has no file")


def test_stale_axioms_script_fails(repo: Path) -> None:
    edit(repo / "lean/scripts/Axioms.lean", "#print axioms QKForms.double_one\n", "")
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, "lean/scripts/Axioms.lean is out of date with the registry")


def test_axioms_script_lists_every_registered_declaration_once() -> None:
    text = render_axioms_script(fixture_results())
    assert text.startswith("import QKForms\n")
    prints = [ln for ln in text.splitlines() if ln.startswith("#print axioms")]
    assert prints == [
        "#print axioms QKForms.double_eq",
        "#print axioms QKForms.Inner.double_zero",
        "#print axioms QKForms.double_one",
    ]


# ------------------------------------------------------------------------ Python side


def test_broken_check_without_a_lean_build_fails_but_is_no_disagreement(
    repo: Path, checks_module: types.ModuleType
) -> None:
    def broken(seed: int = 0) -> FakeCheckResult:
        return FakeCheckResult("beta", False, "exact", 4, "signature (2, 1, 1) != (1, 1, 2)")

    checks_module.check_beta = broken
    report = verify(repo, lean="skip", property_tests=False)
    assert report.exit_status == 1
    assert rows(report)["beta"] == ("not run", "fail", "not run", "fail")
    assert failures_with(report, "DISAGREEMENT") == []  # only one side ran
    assert failures_with(report, "beta: exact check failed: signature (2, 1, 1) != (1, 1, 2)")


def test_crashing_or_missing_check_fails(repo: Path, checks_module: types.ModuleType) -> None:
    def crash(seed: int = 0) -> FakeCheckResult:
        raise ZeroDivisionError("division by zero")

    checks_module.check_gamma = crash
    del checks_module.check_delta
    report = verify(repo, lean="skip", property_tests=False)
    assert rows(report)["gamma"][1:] == ("fail", "none", "fail")
    assert failures_with(report, "raised ZeroDivisionError: division by zero")
    assert failures_with(report, f"check check_delta is missing from {CHECKS}")
    assert rows(report)["delta"][3] == "fail"


def test_check_needing_a_missing_package_is_not_run(repo: Path, checks_module) -> None:
    def needs_package(seed: int = 0) -> FakeCheckResult:
        import qkforms_fixture_missing_package  # noqa: F401

        raise AssertionError("unreachable")

    checks_module.check_gamma = needs_package
    report = verify(repo, lean="skip", property_tests=False)
    gamma = next(r for r in report.rows if r.result.id == "gamma")
    assert (gamma.exact.status, gamma.verdict) == ("not run", "incomplete")
    assert "needs the package `qkforms_fixture_missing_package`, which is not installed" in (
        gamma.exact.detail)
    assert "pip install qkforms_fixture_missing_package" in gamma.exact.detail
    assert report.exit_status == 0


def test_check_reporting_the_wrong_id_fails(repo: Path, checks_module) -> None:
    checks_module.check_gamma = _good_check("alpha")
    report = verify(repo, lean="skip", property_tests=False)
    assert failures_with(report, "reported id 'alpha', expected 'gamma'")


def test_seed_and_sizes_reach_the_checks(repo: Path) -> None:
    common, per_id = parse_sizes(["n=4", "gamma:n=6"])
    report = verify(repo, lean="skip", property_tests=False, seed=2, sizes=common,
                    id_sizes=per_id)
    by_id = {r.result.id: r.exact for r in report.rows}
    assert by_id["alpha"].instances == 6  # n=4 plus seed 2
    assert by_id["alpha"].kwargs == {"n": 4}
    assert by_id["gamma"].instances == 8
    # a size no check takes is refused, not silently dropped (issue #19, class 3)
    with pytest.raises(QKFormsError, match="unknown size 'unused'"):
        parse_sizes(["unused=1"])


def test_failing_missing_and_unrunnable_properties(repo: Path, monkeypatch) -> None:
    results = list(fixture_results())
    results[3] = Result("gamma", "Corollary 0", "t", check=f"{CHECKS}:check_gamma",
                        properties=("gamma_wrong",))
    results[2] = Result("delta", "Lemma 2", "t", lean=("QKForms.double_one",),
                        lean_file="lean/QKForms/Beta.lean", check=f"{CHECKS}:check_delta",
                        properties=("delta_renamed",))
    results[1] = Result("beta", "Lemma 1", "t", lean=("QKForms.Inner.double_zero",),
                        lean_file="lean/QKForms/Beta.lean", check=f"{CHECKS}:check_beta",
                        properties=("delta_needs_a_missing_package",))
    monkeypatch.setattr(registry, "RESULTS", tuple(results))
    report = verify(repo, lean="skip")
    assert rows(report)["gamma"] == ("not formalized", "pass", "fail", "fail")
    assert rows(report)["delta"] == ("not run", "pass", "fail", "fail")
    assert rows(report)["beta"] == ("not run", "pass", "not run", "incomplete")
    # the error and hypothesis' counterexample ("Falsifying example"/"Failing test case")
    [failed] = failures_with(report, "gamma: properties failed: gamma_wrong: AssertionError: "
                                     "a planted counterexample | ")
    assert failed.endswith(" gamma_wrong( n=7, )")
    assert failures_with(report, "delta_renamed: no such property in qkforms.properties")
    beta = next(r for r in report.rows if r.result.id == "beta")
    assert "needs the package `qkforms_fixture_missing_package`" in beta.prop.detail
    assert rows(report)["alpha"][2] == "pass"


# ------------------------------------------------------------------------- fake lake


FAKE_LAKE = """\
#!{python}
# A stand-in `lake`: logs each call, replays the recorded output of its kind, and plays
# LeanDojo's extractor by copying a recorded trace to where ExtractData.lean writes it.
import os, pathlib, shutil, sys
rec = pathlib.Path(os.environ["FAKE_LAKE_DIR"])
args = sys.argv[1:]
note = ""
if args[0] == "build" and len(args) > 1:
    key = "build-" + args[1].lstrip("+")
    if not (rec / (key + ".out")).exists():
        sys.stdout.write("\\u2714 [1/1] Built " + args[1].lstrip("+") + "\\n")
        key = None
elif args[0] == "build":
    key = "build"
elif args[:3] == ["env", "lean", "--print-prefix"]:
    key = "prefix"
elif args[:3] == ["env", "lean", "--run"]:
    target = pathlib.Path(args[4])
    note = " [source present]" if target.is_file() else " [source missing]"
    key = "trace-" + args[4]
    fixture = rec / ("trace-" + args[4].replace("/", ".") + ".json")
    if fixture.exists():
        out = pathlib.Path(".lake/build/ir") / target.with_suffix(".ast.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fixture, out)
    key = "trace" if (rec / "trace.out").exists() else None
elif args[0] == "env":
    key = "audit"
    n = len(list(rec.glob("audit-script-*.lean")))
    shutil.copyfile(args[2], rec / f"audit-script-{{n}}.lean")
else:
    key = "cache"
with open(rec / "calls.log", "a") as log:
    log.write(" ".join(args) + note + " @ " + os.getcwd() + "\\n")
if key is None:
    sys.exit(0)
sys.stdout.write((rec / (key + ".out")).read_text())
sys.exit(int((rec / (key + ".rc")).read_text()))
"""

BUILD_OK = """\
✔ [2/6] Built QKForms.Basic
⚠ [3/6] Built QKForms.Alpha
warning: ././lean/QKForms/Alpha.lean:9:8: declaration uses 'sorry'
✔ [4/6] Built QKForms.Beta
✔ [6/6] Built QKForms
Build completed successfully.
"""

AUDIT_MIXED = """\
lean/scripts/Axioms.lean:14:0: info: 'QKForms.double_eq' depends on axioms: [propext,
 sorryAx,
 Classical.choice]
lean/scripts/Axioms.lean:17:0: info: 'QKForms.Inner.double_zero' depends on axioms: \
[QKForms.cheat, propext]
lean/scripts/Axioms.lean:20:0: info: 'QKForms.double_one' depends on axioms: [propext, \
Classical.choice, Quot.sound]
"""

AUDIT_CLEAN = """\
'QKForms.double_eq' depends on axioms: [propext, Classical.choice, Quot.sound]
'QKForms.Inner.double_zero' does not depend on any axioms
'QKForms.double_one' depends on axioms: [propext]
"""


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


def test_fake_lake_sorry_and_nonstandard_axiom(repo: Path, fake_lake) -> None:
    calls = fake_lake(BUILD_OK, 0, AUDIT_MIXED)
    report = verify(repo, property_tests=False)
    assert calls.read_text().splitlines() == [
        f"build @ {repo}",
        f"env lean lean/scripts/Axioms.lean @ {repo}",
    ]
    assert rows(report) == {
        "alpha": ("failed", "pass", "not run", "fail"),
        "beta": ("failed", "pass", "not run", "fail"),
        "delta": ("built", "pass", "none", "pass"),
        "gamma": ("not formalized", "pass", "none", "pass"),
    }
    assert report.exit_status == 1
    assert failures_with(report, "alpha: Lean failed: QKForms.double_eq: depends on sorryAx")
    assert failures_with(
        report, "beta: Lean failed: QKForms.Inner.double_zero: depends on non-standard axioms: "
                "QKForms.cheat")
    decl = report.rows[2].lean.declarations[0]
    assert decl["axioms"] == ["propext", "Classical.choice", "Quot.sound"]
    assert report.toolchain["lake"].endswith("lake")


def test_fake_lake_clean_build_passes(repo: Path, fake_lake) -> None:
    fake_lake(BUILD_OK.replace("⚠", "✔"), 0, AUDIT_CLEAN)
    report = verify(repo, lean="require", lake_cache=True)
    assert report.failures() == []
    assert report.exit_status == 0
    assert [v[0] for v in rows(report).values()] == ["built", "built", "built", "not formalized"]
    assert rows(report)["alpha"][3] == "pass"
    assert report.toolchain["cache"]["returncode"] == 0


BETA_FAILS = (
    "✔ [2/6] Built QKForms.Basic (1.2s)\n✖ [4/6] Building QKForms.Beta (2.0s)\n"
    "error: ././././lean/QKForms/Beta.lean:12:2: type mismatch\n"
    "  rfl\n"
    "has type\n"
    "error: Lean exited with code 1\nSome required targets logged failures:\n"
    "- QKForms.Beta\nerror: build failed\n"
)


def test_one_broken_module_fails_only_the_results_it_holds(repo: Path, fake_lake) -> None:
    # the whole build fails; each module is then built on its own, in import order
    calls = fake_lake(BETA_FAILS, 1, AUDIT_CLEAN, modules={"QKForms.Beta": (BETA_FAILS, 1)})
    report = verify(repo, property_tests=False)
    assert calls.read_text().splitlines() == [
        f"build @ {repo}",
        f"build +QKForms.Basic @ {repo}",
        f"build +QKForms.Alpha @ {repo}",
        f"build +QKForms.Beta @ {repo}",
        # QKForms imports Beta: not built; then the audit of what built
        f"env lean {report.toolchain['audit']['command'][-1]} @ {repo}",
    ]
    assert {k: v[0] for k, v in rows(report).items()} == {
        "alpha": "built", "beta": "failed", "delta": "failed", "gamma": "not formalized",
    }
    modules = {m["module"]: (m["status"], m["detail"], m["errors"])
               for m in report.toolchain["modules"]}
    assert modules["QKForms.Basic"][0] == modules["QKForms.Alpha"][0] == "built"
    assert modules["QKForms.Beta"] == (
        "failed",
        "`lake build +QKForms.Beta` failed (exit 1): error: lean/QKForms/Beta.lean:12:2: "
        "type mismatch",
        ["error: lean/QKForms/Beta.lean:12:2: type mismatch", "  rfl", "has type"])
    assert modules["QKForms"][:2] == (
        "not run", "not built: it imports QKForms.Beta, which did not build")
    # the audit imported only the modules that built and asked only for their declarations
    script = (calls.parent / "audit-script-0.lean").read_text()
    assert [ln for ln in script.splitlines() if ln.startswith(("import", "#print"))] == [
        "import QKForms.Basic", "import QKForms.Alpha", "#print axioms QKForms.double_eq"]
    beta = next(r for r in report.rows if r.result.id == "beta")
    assert beta.lean.detail == ("QKForms.Inner.double_zero: module QKForms.Beta failed to "
                                "build: error: lean/QKForms/Beta.lean:12:2: type mismatch")
    assert beta.lean.declarations[0]["modules"] == [
        {"module": "QKForms.Beta", "status": "failed"}]
    assert failures_with(report, "`lake build` failed (exit 1)")
    assert report.exit_status == 1
    table = render_table(report)
    assert "Lean build per module:\n  [built] QKForms.Basic\n" in table
    assert ("  [FAILED] QKForms.Beta: `lake build +QKForms.Beta` failed (exit 1): error: "
            "lean/QKForms/Beta.lean:12:2: type mismatch\n          rfl\n        has type\n"
            ) in table
    assert "| `QKForms.Beta` | failed | error: lean/QKForms/Beta.lean:12:2: type mismatch" \
        in render_markdown(report)


def test_a_broken_shared_module_leaves_its_importers_not_run(repo: Path, fake_lake) -> None:
    log = ("✖ [2/6] Building QKForms.Basic\n"
           "error: lean/QKForms/Basic.lean:10:30: unknown identifier 'nn'\nerror: build failed\n")
    calls = fake_lake(log, 1, AUDIT_CLEAN, modules={"QKForms.Basic": (log, 1)})
    report = verify(repo, property_tests=False)
    assert calls.read_text().splitlines() == [f"build @ {repo}", f"build +QKForms.Basic @ {repo}"]
    assert {k: v[0] for k, v in rows(report).items()} == {
        "alpha": "not run", "beta": "not run", "delta": "not run", "gamma": "not formalized",
    }
    alpha = report.rows[0]
    assert alpha.lean.detail == (
        "QKForms.double_eq: module QKForms.Alpha not built: it imports QKForms.Basic, which "
        "did not build; axioms not audited")
    assert report.toolchain["audit"] is None  # nothing left to audit
    assert report.exit_status == 1 and failures_with(report, "`lake build` failed (exit 1)")


def test_fake_lake_audit_missing_declaration(repo: Path, fake_lake) -> None:
    audit = AUDIT_CLEAN.replace("'QKForms.double_one' depends on axioms: [propext]\n",
                                "Axioms.lean:20:14: error: unknown constant 'QKForms.double_one'\n")
    fake_lake(BUILD_OK, 0, audit, 1)
    report = verify(repo, property_tests=False)
    assert rows(report)["delta"][0] == "failed"
    assert failures_with(report, "QKForms.double_one: no `#print axioms` output")
    assert failures_with(report, "axiom audit `lake env lean lean/scripts/Axioms.lean` failed")


def test_python_failure_of_built_proof_is_a_loud_disagreement(
    repo: Path, fake_lake, checks_module, capsys
) -> None:
    fake_lake(BUILD_OK, 0, AUDIT_CLEAN)
    checks_module.check_delta = lambda seed=0: FakeCheckResult("delta", False, "exact", 1, "bad")
    code = main(["verify", "--lean-dir", str(repo), "--no-property-tests"])
    out = capsys.readouterr().out
    assert code == 1
    assert ("delta: DISAGREEMENT: the Lean proof built and passed the axiom audit, but the "
            "Python side fails") in out
    assert "verify FAILED" in out


# ------------------------------------------------------------------ LeanDojo trace


def _record_traces(rec: Path, repo: Path) -> None:
    """Traces (LeanDojo's format, tests/dojo_trace.py) the fake extractor will 'write'."""
    premises = {"double": ("QKForms.double", "QKForms.Basic"), "rfl": ("rfl", "Init.Prelude"),
                "String": ("String", "Init.Prelude")}
    for mod in ("Basic", "Alpha", "Beta"):
        src = (repo / f"lean/QKForms/{mod}.lean").read_text()
        (rec / f"trace-QKForms.{mod}.lean.json").write_text(
            json.dumps(make_trace(src, premises)))


def test_lean_trace_runs_the_extractor_and_reports_premises(
    repo: Path, fake_lake, tmp_path: Path
) -> None:
    calls = fake_lake(BUILD_OK.replace("⚠", "✔"), 0, AUDIT_CLEAN)
    _record_traces(calls.parent, repo)
    extractor = tmp_path / "ExtractData.lean"
    extractor.write_text("-- LeanDojo's extractor stands here\n")
    report = verify(repo, property_tests=False, lean_trace=True, dojo_extractor=extractor)
    lines = calls.read_text().splitlines()
    assert lines[2:] == [f"env lean --print-prefix @ {repo}"] + [
        f"env lean --run {extractor} QKForms/{m}.lean [source present] @ {repo}"
        for m in ("Basic", "Alpha", "Beta")]  # the modules that built, in import order
    # the links the extractor needs are gone again, the trace and its manifest stay
    assert not (repo / "QKForms").exists() and not (repo / "QKForms.lean").exists()
    assert not (repo / ".lake/packages/lean4").exists()
    manifest = json.loads((repo / ".lake/build/ir/qkforms-trace.json").read_text())
    assert manifest["files"]["lean/QKForms/Alpha.lean"]["returncode"] == 0
    assert report.failures() == []
    prem = {r.result.id: r.premises for r in report.rows}
    assert prem["gamma"] is None  # not formalized
    assert (prem["alpha"].status, prem["alpha"].detail) == ("pass", "1 distinct premises, "
                                                                    "no sorry")
    assert prem["alpha"].declarations[0].premises == {"project": ("QKForms.double",)}
    assert prem["beta"].declarations[0].premises == {"Lean core": ("rfl",),
                                                     "project": ("QKForms.double",)}
    doc = report.to_dict()
    assert doc["results"][2]["lean"]["premises"]["declarations"][0]["premises"] == {
        "Lean core": ["rfl"], "project": ["QKForms.double"]}
    assert doc["summary"]["premises"] == {"pass": 3, "fail": 0, "not run": 0}
    assert doc["toolchain"]["trace"]["run"]["files"]["lean/QKForms/Beta.lean"]["trace"] == (
        ".lake/build/ir/QKForms/Beta.ast.json")
    table = render_table(report)
    assert ("premises (LeanDojo trace):\n  alpha: pass: 1 distinct premises, no sorry (project "
            "1 over its declarations)\n") in table
    assert "  - `QKForms.Inner.double_zero`, Lean core: `rfl`" in render_markdown(report)
    # a later run without --lean-trace reads the same trace while the sources are unchanged
    again = verify(repo, property_tests=False)
    assert again.rows[0].premises.status == "pass"
    edit(repo / "lean/QKForms/Alpha.lean", "omega", "omega\n")
    stale = verify(repo, property_tests=False)
    assert stale.rows[0].premises.detail.startswith("the trace of lean/QKForms/Alpha.lean is "
                                                    "stale")
    assert stale.rows[1].premises.status == "pass"


def test_a_sorry_seen_in_the_trace_fails_the_lean_column(repo: Path, fake_lake,
                                                         tmp_path: Path) -> None:
    calls = fake_lake(BUILD_OK.replace("⚠", "✔"), 0, AUDIT_CLEAN)
    edit(repo / "lean/QKForms/Beta.lean", "double 1 = 2 := rfl", "double 1 = 2 := by\n  sorry")
    _record_traces(calls.parent, repo)
    extractor = tmp_path / "ExtractData.lean"
    extractor.write_text("--\n")
    report = verify(repo, property_tests=False, lean_trace=True, dojo_extractor=extractor,
                    lean="auto")
    delta = next(r for r in report.rows if r.result.id == "delta")
    assert delta.lean.status == "failed"
    # the static scan sees the sorry too; the trace adds its own finding
    assert delta.lean.detail == ("`sorry` at lean/QKForms/Beta.lean:18; premises (LeanDojo "
                                 "trace): QKForms.double_one uses `sorry` in the proof")
    assert failures_with(report, "premises (LeanDojo trace): QKForms.double_one uses `sorry`")


def test_lean_trace_without_extractor_or_toolchain_is_not_run(repo: Path, monkeypatch) -> None:
    monkeypatch.setattr("qkforms.verify.lean_trace.find_extractor", lambda: None)
    report = verify(repo, property_tests=False, lean_trace=True)  # no lake on PATH
    assert report.rows[0].premises.detail.startswith(
        "--lean-trace: no Lean build ran (no Lean toolchain: `lake` is not on PATH")
    assert report.exit_status == 0  # premises are a report, their absence no failure
    plain = verify(repo, property_tests=False)
    assert f"premises (LeanDojo trace): not run ({NO_TRACE})" in render_table(plain)
    assert f"## Premises (LeanDojo trace)\n\nNot run: {NO_TRACE}\n" in render_markdown(plain)


def test_lean_trace_without_the_extractor(repo: Path, fake_lake, monkeypatch) -> None:
    fake_lake(BUILD_OK, 0, AUDIT_CLEAN)
    monkeypatch.setattr("qkforms.verify.lean_trace.find_extractor", lambda: None)
    report = verify(repo, property_tests=False, lean_trace=True)
    assert report.rows[0].premises.detail == (
        "--lean-trace: LeanDojo's extractor not found; enable: `pip install --no-deps "
        "lean-dojo-v2==1.0.9` or --dojo-extractor FILE")


# ------------------------------------------------------------------------------- CLI


def test_cli_writes_table_json_and_markdown(repo: Path, tmp_path: Path, capsys) -> None:
    js, md = tmp_path / "out" / "verify.json", tmp_path / "out" / "verify.md"
    code = main(["verify", "--lean-dir", str(repo), "--json", str(js), "--markdown", str(md),
                 "--seed", "1", "--size", "n=2"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"Lean sources: {repo}; Lean build: not run (no Lean toolchain" in out
    table = [ln.split() for ln in out.splitlines() if ln.startswith(("alpha", "gamma"))]
    assert table == [["alpha", "Lemma", "0", "not", "run", "pass", "pass", "incomplete"],
                     ["gamma", "Corollary", "0", "not", "formalized", "pass", "none", "pass"]]
    assert "  Lean of 3 result(s) (alpha, beta, delta): no Lean toolchain" in out
    doc = json.loads(js.read_text())
    assert doc["schema"] == "qkforms.verify/3"
    assert doc["options"]["seed"] == 1 and doc["options"]["sizes"] == {"n": 2}
    assert [r["id"] for r in doc["results"]] == ["alpha", "beta", "delta", "gamma"]
    assert doc["results"][0]["lean"]["status"] == "not run"
    assert doc["summary"]["not_run"] == {"Lean": 3, "exact": 0, "property": 0}
    assert doc["results"][0]["property"]["properties"][0]["name"] == "alpha_sum"
    assert doc["results"][0]["exact"]["instances"] == 3
    assert doc["summary"]["exit_status"] == 0
    assert {c["name"] for c in doc["static_checks"]} >= {"pins", "forbidden", "declarations"}
    page = md.read_text()
    assert "| `alpha` | Lemma 0: double is twice | not run | `QKForms.double_eq` |" in page
    assert "## Not run" in page
    assert "Nothing failed." in page
    assert "(Lean [qkforms:&lt;id&gt;] tags match the registry): ok" in page  # no raw HTML


def test_cli_failure_exit_and_only(repo: Path, capsys, checks_module) -> None:
    checks_module.check_gamma = lambda seed=0: FakeCheckResult("gamma", False, "exact", 1, "no")
    assert main(["verify", "--lean-dir", str(repo), "--only", "alpha", "--no-property-tests"]) == 0
    assert main(["verify", "--lean-dir", str(repo), "--only", "gamma", "--no-property-tests"]) == 1
    assert main(["verify", "--lean-dir", str(repo), "--only", "nosuch"]) == 1
    assert "unknown result id or group 'nosuch'" in capsys.readouterr().err


def test_cli_write_axioms_script(repo: Path) -> None:
    script = repo / "lean/scripts/Axioms.lean"
    script.unlink()
    assert main(["verify", "--lean-dir", str(repo), "--write-axioms-script"]) == 0
    assert script.read_text() == render_axioms_script(fixture_results())


def test_find_root_searches_upward(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = repo / "lean" / "QKForms"
    monkeypatch.chdir(deep)
    assert find_root() == repo
    assert find_root(deep) == repo


def test_run_properties_statuses(fixture_properties) -> None:
    out = run_properties(["alpha_sum", "gamma_wrong", "delta_needs_a_missing_package",
                          "no_such_property", "alpha_sum"], max_examples=30)
    assert list(out) == ["alpha_sum", "gamma_wrong", "delta_needs_a_missing_package",
                         "no_such_property"]
    assert {k: v.status for k, v in out.items()} == {
        "alpha_sum": "pass", "gamma_wrong": "fail", "delta_needs_a_missing_package": "not run",
        "no_such_property": "fail",
    }
    assert out["alpha_sum"].detail == "passed (up to 30 examples)"
    assert out["gamma_wrong"].detail.endswith(" gamma_wrong( n=7, )")


def test_missing_lean_sources_are_not_run_with_the_way_to_enable_them(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """As after `pip install qkforms` from a wheel, run outside any checkout."""
    def no_checkout(start=None):
        raise VerificationError("no qkforms repository root")

    monkeypatch.setattr("qkforms.verify.checkout.find_root", no_checkout)
    monkeypatch.chdir(tmp_path)
    report = verify(property_tests=False)
    assert report.root is None and report.static == []
    assert {k: v[0] for k, v in rows(report).items()} == {
        "alpha": "not run", "beta": "not run", "delta": "not run", "gamma": "not formalized"}
    assert report.rows[0].lean.detail == NO_SOURCES
    assert "`qkforms verify --lean-dir DIR` with DIR a qkforms checkout" in NO_SOURCES
    assert report.exit_status == 0 and report.failures() == []
    required = verify(lean="require", property_tests=False)
    assert required.exit_status == 1
    assert required.failures() == [f"--lean require: {NO_SOURCES}"]
    # --lean-dir points at a checkout: the static checks run again
    assert main(["verify", "--lean-dir", str(repo), "--no-property-tests"]) == 0
    out = capsys.readouterr().out
    assert "[ok] declarations" in out and "not run: Lean 3, exact 0, property 2" in out
    assert main(["verify", "--no-property-tests"]) == 0
    out = capsys.readouterr().out
    assert f"static Lean checks: not run ({NO_SOURCES})" in out


def test_lean_dir_must_be_a_checkout(tmp_path: Path, capsys) -> None:
    with pytest.raises(QKFormsError, match="not a qkforms checkout"):
        verify(tmp_path, property_tests=False)
    assert main(["verify", "--lean-dir", str(tmp_path / "nope")]) == 1
    assert "not a directory" in capsys.readouterr().err
    assert main(["verify", "--root", str(tmp_path / "nope")]) == 1  # the former option name
    assert "--lean-dir" in capsys.readouterr().err
