"""The Lean side of ``verify`` with a fake ``lake`` on PATH (:mod:`verify_repo`).

The fake replays recorded ``lake build`` and ``#print axioms`` output: declarations
judged by their axioms, per-module builds after a failed whole build, the audit of what
built, and the LeanDojo trace run by ``--lean-trace``.
"""

from __future__ import annotations

import json
from pathlib import Path

from dojo_trace import make_trace
from verify_repo import (
    AUDIT_CLEAN,
    AUDIT_MIXED,
    BUILD_OK,
    FakeCheckResult,
    edit,
    failures_with,
    rows,
)

from qkforms.cli import main
from qkforms.verify import verify
from qkforms.verify.lean_trace import NO_TRACE
from qkforms.verify.verification_report import render_markdown, render_table

pytest_plugins = ["verify_fixtures"]


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
    """Traces (LeanDojo's format, tests/verify/dojo_trace.py) the fake extractor will 'write'."""
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
