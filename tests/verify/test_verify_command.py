"""``qkforms verify`` on the command line: table, JSON, Markdown, exit status, axiom script."""

from __future__ import annotations

import json
from pathlib import Path

from verify_repo import FakeCheckResult, fixture_results

from qkforms.cli import main
from qkforms.verify.lean_project import (
    render_axioms_script,
)

pytest_plugins = ["verify_fixtures"]


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
