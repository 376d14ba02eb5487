"""The LeanDojo trace reader (``qkforms.verify.lean_trace``) on hand-made traces.

The traces are built by :mod:`dojo_trace` in the on-disk format LeanDojo's extractor
writes (its docstring names the LeanDojo source files that define it), for the small
Lean sources below, and placed where the extractor puts them
(``.lake/build/ir/QKForms/X.ast.json``) with the manifest ``qkforms verify --lean-trace``
writes beside them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from dojo_trace import byte_idx_positions, make_trace

from qkforms.verify import lean_trace
from qkforms.verify.lean_project import scan
from qkforms.verify.lean_trace import MANIFEST, NO_TRACE, TRACE_DIR, premises_of

RANK = """\
import Mathlib.LinearAlgebra.Matrix.Rank
import QKForms.Basic

/-! # A module (a `sorry` in the module doc is no proof) -/

namespace QKForms

/-- Lemma 3 of the paper. [qkforms:lemma3] -/
theorem rank_le (A : Matrix (Fin 2) (Fin 2) ℝ) : A.rank ≤ 2 := by
  calc A.rank ≤ Fintype.card (Fin 2) := Matrix.rank_le_card_width A
    _ = 2 := Fintype.card_fin 2

/-- Not registered: its premises belong to no result. -/
theorem helper (x : ℝ) : frobSq (0 : Matrix (Fin 1) (Fin 1) ℝ) = 0 := by
  simp [frobSq, Real.sqrt_zero]

/-- Lemma 9 of the paper. [qkforms:lemma9] -/
theorem unfinished (x : ℝ) : frobSq (0 : Matrix (Fin 1) (Fin 1) ℝ) = x := by
  rw [frobSq]
  sorry

end QKForms
"""

#: identifier as written -> (full name, module declaring it)
PREMISES = {
    "Matrix": ("Matrix", "Mathlib.Data.Matrix.Defs"),
    "Fin": ("Fin", "Init.Prelude"),
    "Fintype.card": ("Fintype.card", "Mathlib.Data.Fintype.Card"),
    "Matrix.rank_le_card_width": ("Matrix.rank_le_card_width",
                                  "Mathlib.LinearAlgebra.Matrix.Rank"),
    "Fintype.card_fin": ("Fintype.card_fin", "Mathlib.Data.Fintype.Card"),
    "A.rank": ("Matrix.rank", "Mathlib.LinearAlgebra.Matrix.Rank"),
    "frobSq": ("QKForms.frobSq", "QKForms.Basic"),
    "Real.sqrt_zero": ("Real.sqrt_zero", "Mathlib.Analysis.SpecialFunctions.Sqrt"),
}


def _write(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def _trace(root: Path, rel: str, data: dict, *, returncode: int = 0,
           manifest_files: dict | None = None) -> None:
    """Put the trace of ``rel`` where the extractor writes it, and the manifest."""
    _write(root, lean_trace.trace_json_path(rel), json.dumps(data))
    files = manifest_files if manifest_files is not None else {}
    files[rel] = {"module": "QKForms.Rank",
                  "sha256": hashlib.sha256((root / rel).read_bytes()).hexdigest(),
                  "returncode": returncode, "seconds": 1.0,
                  "output_tail": ["lean/QKForms/Rank.lean", "PANIC at ..."] if returncode else [],
                  "trace": lean_trace.trace_json_path(rel)}
    _write(root, f"{TRACE_DIR}/{MANIFEST}", json.dumps(
        {"schema": "qkforms.lean-trace/1", "extractor": {}, "toolchain": "", "files": files}))


@pytest.fixture
def traced(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    _write(root, "lean/QKForms/Rank.lean", RANK)
    _trace(root, "lean/QKForms/Rank.lean", make_trace(RANK, PREMISES))
    return root


def _report(root: Path, results: dict[str, tuple[str, ...]], trace_dir: Path | None = None):
    return premises_of(root, scan(root).declared(), results, trace_dir)


def test_premises_per_declaration_grouped_by_origin(traced: Path) -> None:
    out, why = _report(traced, {"lemma3": ("QKForms.rank_le",)})
    assert why == ""
    p = out["lemma3"]
    assert (p.status, p.detail) == ("pass", "6 distinct premises, no sorry")
    [d] = p.declarations
    # the helper's premises (Real.sqrt_zero, frobSq) are in another command: not counted
    assert d.premises == {
        "Lean core": ("Fin",),
        "Mathlib": ("Fintype.card", "Fintype.card_fin", "Matrix", "Matrix.rank",
                    "Matrix.rank_le_card_width"),
    }
    assert (d.name, d.file, d.status, d.sorry) == (
        "QKForms.rank_le", "lean/QKForms/Rank.lean", "pass", ())


def test_project_premises_and_a_sorry_in_the_proof_fail(traced: Path) -> None:
    out, _ = _report(traced, {"lemma9": ("QKForms.unfinished",),
                              "lemma3": ("QKForms.rank_le",)})
    p = out["lemma9"]
    assert p.status == "fail"
    assert p.detail == "QKForms.unfinished uses `sorry` in the proof"
    assert p.declarations[0].premises["project"] == ("QKForms.frobSq",)
    assert out["lemma3"].status == "pass"  # the sorry of another declaration is not its own


def test_a_sorryAx_premise_fails(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    src = RANK.replace("  sorry\n", "  exact sorryAx _ false\n")
    _write(root, "lean/QKForms/Rank.lean", src)
    _trace(root, "lean/QKForms/Rank.lean",
           make_trace(src, {**PREMISES, "sorryAx": ("sorryAx", "Init.Prelude")}))
    out, _ = _report(root, {"lemma9": ("QKForms.unfinished",)})
    assert (out["lemma9"].status, out["lemma9"].detail) == (
        "fail", "QKForms.unfinished uses sorryAx")
    assert out["lemma9"].declarations[0].sorry == ("sorryAx",)


def test_byte_index_positions_are_read_too(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root, "lean/QKForms/Rank.lean", RANK)
    _trace(root, "lean/QKForms/Rank.lean", byte_idx_positions(make_trace(RANK, PREMISES)))
    out, _ = _report(root, {"lemma3": ("QKForms.rank_le",)})
    assert out["lemma3"].detail == "6 distinct premises, no sorry"


def test_no_trace_is_not_run_with_the_way_to_enable_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root, "lean/QKForms/Rank.lean", RANK)
    out, why = _report(root, {"lemma3": ("QKForms.rank_le",)})
    assert why == NO_TRACE
    assert (out["lemma3"].status, out["lemma3"].detail) == ("not run", NO_TRACE)
    assert "pip install --no-deps lean-dojo-v2==1.0.9" in NO_TRACE
    assert "qkforms verify --lean-trace" in NO_TRACE
    # a trace without the manifest (not made by `qkforms verify --lean-trace`) is not read
    _write(root, lean_trace.trace_json_path("lean/QKForms/Rank.lean"),
           json.dumps(make_trace(RANK, PREMISES)))
    out, why = _report(root, {"lemma3": ("QKForms.rank_le",)})
    assert out["lemma3"].status == "not run"
    assert why.startswith(f"no {MANIFEST} in {root / TRACE_DIR}: a LeanDojo trace not made by")


def test_a_stale_trace_is_not_read(traced: Path) -> None:
    src = traced / "lean/QKForms/Rank.lean"
    src.write_text(RANK.replace("A.rank ≤ 2", "A.rank ≤ 3"), encoding="utf-8")
    out, _ = _report(traced, {"lemma3": ("QKForms.rank_le",)})
    assert (out["lemma3"].status, out["lemma3"].detail) == (
        "not run", "the trace of lean/QKForms/Rank.lean is stale (the source changed since it "
                   "was traced)")


def test_a_failed_extraction_and_an_untraced_file_are_not_run(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root, "lean/QKForms/Rank.lean", RANK)
    _write(root, "lean/QKForms/Other.lean", "namespace QKForms\n/-- [qkforms:thm3] -/\n"
                                            "theorem other : True := trivial\nend QKForms\n")
    _trace(root, "lean/QKForms/Rank.lean", make_trace(RANK, PREMISES), returncode=1)
    out, _ = _report(root, {"lemma3": ("QKForms.rank_le",), "thm3": ("QKForms.other",),
                            "x": ("QKForms.nowhere",)})
    assert out["lemma3"].detail == ("LeanDojo's extractor failed on lean/QKForms/Rank.lean "
                                    "(exit 1): lean/QKForms/Rank.lean | PANIC at ...")
    assert out["thm3"].detail == ("lean/QKForms/Other.lean was not traced (it did not build, "
                                  "or the trace predates it)")
    assert out["x"].detail == "QKForms.nowhere is not declared in lean/"
    assert {p.status for p in out.values()} == {"not run"}


def test_a_trace_that_does_not_match_the_source_is_not_run(traced: Path) -> None:
    data = make_trace(RANK.replace("rank_le", "rank_bound"), PREMISES)
    _trace(traced, "lean/QKForms/Rank.lean", data)
    out, _ = _report(traced, {"lemma3": ("QKForms.rank_le",)})
    assert out["lemma3"].detail == ("no command declaring QKForms.rank_le at "
                                    "lean/QKForms/Rank.lean:9 in the trace (format drift?)")


def test_trace_dir_option_reads_a_copied_trace(traced: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "artifact" / "ir"
    shutil.copytree(traced / TRACE_DIR, copy)
    shutil.rmtree(traced / TRACE_DIR)
    assert _report(traced, {"lemma3": ("QKForms.rank_le",)})[0]["lemma3"].status == "not run"
    out, _ = _report(traced, {"lemma3": ("QKForms.rank_le",)}, copy)
    assert out["lemma3"].status == "pass"


def test_find_extractor_in_an_installed_lean_dojo_v2(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    info = site / "lean_dojo_v2-1.0.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lean-dojo-v2\n"
                                   "Version: 1.0.9\n")
    monkeypatch.syspath_prepend(str(site))
    assert lean_trace.find_extractor() is None  # installed, but no extractor file
    ex = _write(site, lean_trace.EXTRACTOR_IN_DIST, "import Lean\n")
    assert lean_trace.find_extractor() == ex
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(site)])
    assert lean_trace.find_extractor() != ex
