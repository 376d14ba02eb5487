"""A small synthetic qkforms repository for the ``qkforms verify`` tests, and helpers.

The repository (pins, a Lean library with tagged declarations) and its registry rows
(:func:`fixture_results`, with fixture checks and fixture hypothesis properties), the
fake ``lake`` script and the outputs it replays; the fixtures that build them are in
:mod:`verify_fixtures`. ``rows``, ``edit`` and ``failures_with`` help the tests read a
report and break the repository.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from qkforms.registry import Result
from qkforms.verify.lean_project import MATHLIB_REV, MATHLIB_TAG

CHECKS = "qkforms_verify_fixture_checks"

# ------------------------------------------------------------------------ the repository


@dataclass(frozen=True)
class FakeCheckResult:
    id: str
    passed: bool
    method: str
    instances: int
    detail: str


def good_check(result_id: str):
    def check(seed: int = 0, n: int = 3) -> FakeCheckResult:
        # an honest tiny check: sum of the first n odd numbers is n^2, for a seeded n
        m = n + seed % 5
        return FakeCheckResult(result_id, sum(2 * k + 1 for k in range(m)) == m * m, "exact",
                               m, f"n={m}")
    return check


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


