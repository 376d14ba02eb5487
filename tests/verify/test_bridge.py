"""``verify()`` end to end on the synthetic repository (:mod:`verify_repo`).

Each test breaks one thing in the repository or the registry and checks that ``verify``
fails with the specific message, or says ``not run`` with the reason: the static Lean
checks, the exact checks and the properties, and a run outside any checkout.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from verify_repo import (
    CHECKS,
    FakeCheckResult,
    edit,
    failures_with,
    fixture_results,
    good_check,
    rows,
)

from qkforms import registry
from qkforms.cli import main
from qkforms.errors import QKFormsError, VerificationError
from qkforms.registry import Result
from qkforms.verify import NO_SOURCES, verify, write_axioms_script
from qkforms.verify.lean_project import MATHLIB_REV, render_axioms_script
from qkforms.verify.python_side import parse_sizes

pytest_plugins = ["verify_fixtures"]


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
    checks_module.check_gamma = good_check("alpha")
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
