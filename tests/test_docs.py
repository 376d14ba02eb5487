"""The docs site builds offline and puts each result beside its Lean source and check."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from qkforms.registry import RESULTS

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the docs from a copy of docs/ (the build writes generated pages)."""
    work = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "docs", work / "docs", ignore=shutil.ignore_patterns("_build"))
    for name in ("lean", "python"):
        (work / name).symlink_to(ROOT / name)
    # a recorded verify run, as scripts/build-docs.sh writes it (exact checks only: fast)
    gen = work / "docs" / "_generated"
    gen.mkdir(exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "qkforms", "verify", "--lean-dir", str(ROOT), "--lean", "skip",
         "--no-property-tests", "--json", str(gen / "verify.json")],
        check=False, capture_output=True, text=True,
    )
    out = work / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(work / "docs"), str(out)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert not errors, "\n".join(errors)
    return out


def text_of(path: Path) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")).split())


def test_every_registered_result_has_a_page(site: Path) -> None:
    for r in RESULTS:
        page = site / "results" / f"{r.id}.html"
        assert page.exists(), r.id
        body = text_of(page)
        assert "Statement" in body and "Proof sketch" in body
        assert r.check.split(":")[1] in body  # the exact check is named ...
        assert "def " + r.check.split(":")[1] + " (" in body  # ... and its source shown


def test_result_pages_show_lean_source_and_honest_status(site: Path) -> None:
    html = (site / "results" / "thm3.html").read_text(encoding="utf-8")
    assert "signature_symPart_of_surjective" in html
    assert "[qkforms:thm3]" in html  # the docstring tag, i.e. the source itself
    assert "not run" in html  # the Lean column of the recorded verify run
    assert "not been compiled" in text_of(site / "results" / "thm3.html")
    cor1 = text_of(site / "results" / "cor1.html")
    assert "Not formalized in Lean" in cor1
    # premises: the recorded run had no LeanDojo trace, and the page says so
    thm3 = text_of(site / "results" / "thm3.html")
    assert 'id="premises"' in html
    assert "The Mathlib and project declarations the Lean proofs name" in thm3
    assert "Premise report: not run (no LeanDojo trace:" in thm3
    assert "Premise report" not in cor1


def test_result_page_lists_the_recorded_premises() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("qkresults", ROOT / "docs/_ext/qkresults.py")
    assert spec is not None and spec.loader is not None
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    decl = {"name": "QKForms.x", "file": "lean/QKForms/X.lean", "status": "pass", "detail": "",
            "premises": {"Mathlib": ["Matrix.rank", "Matrix.trace"],
                         "project": ["QKForms.symPart"]}, "sorry": []}
    verify = {"results": [{"id": "thm3", "lean": {"premises": {
        "status": "pass", "detail": "3 distinct premises, no sorry", "declarations": [decl]}}}]}
    assert ext.premises_of(verify, "thm3").splitlines() == [
        "Premise report: **pass** (3 distinct premises, no sorry).", "",
        "`QKForms.x` uses:", "", "* Mathlib: `Matrix.rank`, `Matrix.trace`",
        "* project: `QKForms.symPart`"]
    assert ext.premises_of(verify, "lemma3") == ("This id was not in the recorded `qkforms "
                                                 "verify` run.")
    assert ext.premises_of(None, "thm3").startswith("No `qkforms verify` run was recorded")


def test_dependency_graph_and_offline_math(site: Path) -> None:
    index = (site / "results" / "index.html").read_text(encoding="utf-8")
    assert index.count('class="qk-depgraph"') == 1
    assert index.count("<rect") == len(RESULTS)
    for page in site.rglob("*.html"):
        scripts = re.findall(r'<script[^>]+src="([^"]+)"', page.read_text(encoding="utf-8"))
        remote = [s for s in scripts if s.startswith(("http:", "https:", "//"))]
        assert not remote, f"{page.name} loads scripts from the network: {remote}"
    assert (site / "_static" / "mathjax" / "tex-chtml.js").exists()


def test_api_reference_has_the_core(site: Path) -> None:
    api = text_of(site / "api.html")
    for name in ("gram_spectrum", "profile_from_eigenvalues", "theta_distance", "head_signature"):
        assert name in api


def test_docs_page_renders_math_in_a_real_browser(site: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on this machine (scripts/test.sh installs Debian's)")
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=15000",
    ]
    page = (site / "results" / "thm3.html").as_uri()
    dom = subprocess.run([chromium, *flags, "--dump-dom", page], capture_output=True,
                         text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "mjx-container" in dom.stdout  # MathJax (bundled) typeset the formulas
    shot = tmp_path / "thm3.png"
    subprocess.run([chromium, *flags, "--window-size=1200,900", f"--screenshot={shot}", page],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000
    json.dumps({"screenshot": str(shot)})  # artifact path, printed on failure by pytest -ra
