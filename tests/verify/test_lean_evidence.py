"""The evidence file of the external names (``lean/names.toml``, ``lean_evidence``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qkforms.errors import VerificationError
from qkforms.verify.lean_evidence import Evidence, check_evidence, load_evidence


def _repo(tmp_path: Path, lean: str, toml: str) -> Path:
    (tmp_path / "lean" / "QKForms").mkdir(parents=True)
    (tmp_path / "lean" / "QKForms" / "A.lean").write_text(lean, encoding="utf-8")
    (tmp_path / "lean" / "names.toml").write_text(toml, encoding="utf-8")
    return tmp_path


ENTRY = 'source = "Mathlib/X.lean"\ncommit = "{c}"\nstatement = "{s}"\nstatus = "read"\n'
PIN = "a3a10db0e9d66acbebf76c5e6a135066525ac900"


def test_check_evidence_reports_each_kind_of_gap(tmp_path: Path) -> None:
    lean = """theorem t (a b : ℝ) (h : a ≤ b) : a ≤ b + 0 := by
  rw [add_zero]
  exact (Finset.sum_congr (s₁ := ∅) h).trans (le_refl b)
"""
    toml = "\n".join([
        '[names."add_zero"]', ENTRY.format(c=PIN, s="theorem add_zero (a : M) : a + 0 = a"),
        '[names."Finset.sum_congr"]',
        ENTRY.format(c=PIN, s="theorem sum_congr (h₁ : s₁ = s₂) : s₁.sum f = s₂.sum g"),
        '[names."le_refl"]', ENTRY.format(c="abc", s="theorem le_refl (a : α) : a ≤ a"),
        "[fields]", 'trans = ["LE.le.trans"]',
    ])
    msgs = [str(p) for p in check_evidence(_repo(tmp_path, lean, toml))]
    assert any("le_refl: commit must be 40 hex digits" in m for m in msgs)
    assert any("[fields] trans -> LE.le.trans: LE.le.trans has no [names] entry" in m
               for m in msgs)
    assert any("`(s₁ := …)` of `Finset.sum_congr`" in m for m in msgs), msgs
    assert not any("add_zero" in m for m in msgs)


def test_check_evidence_passes_when_covered_and_suffix_matches(tmp_path: Path) -> None:
    lean = """open Finset in
theorem t (a b : ℝ) (h : a ≤ b) : a ≤ b := by
  exact (le_of_eq (sum_comm (s := ∅))).trans h
"""
    toml = "\n".join([
        '[names."Finset.sum_comm"]',
        ENTRY.format(c=PIN, s="theorem sum_comm {s : Finset γ} {t : Finset α} : …"),
        '[names."le_of_eq"]', ENTRY.format(c=PIN, s="theorem le_of_eq (h : a = b) : a ≤ b"),
        '[names."LE.le.trans"]', ENTRY.format(c=PIN, s="theorem LE.le.trans : a ≤ b → …"),
        "[fields]", 'trans = ["LE.le.trans"]',
    ])
    assert check_evidence(_repo(tmp_path, lean, toml)) == []


def test_unsure_entries_need_a_reason(tmp_path: Path) -> None:
    toml = '[names."foo"]\n' + ENTRY.format(c=PIN, s="theorem foo : True").replace(
        'status = "read"', 'status = "unsure"')
    msgs = [str(p) for p in check_evidence(_repo(tmp_path, "theorem t : True := foo\n", toml))]
    assert msgs == ["lean/names.toml: foo: 'unsure' entries need 'why'"]


def test_missing_or_malformed_evidence_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(VerificationError, match="evidence file is missing"):
        load_evidence(tmp_path / "names.toml")
    (tmp_path / "bad.toml").write_text("[names\n", encoding="utf-8")
    with pytest.raises(VerificationError, match="not valid TOML"):
        load_evidence(tmp_path / "bad.toml")


def test_resolve_prefers_the_shortest_suffix_match() -> None:
    ev = Evidence(names={"Matrix.mul_apply": {}, "Foo.Matrix.mul_apply": {}})
    assert ev.resolve("mul_apply") == "Matrix.mul_apply"
    assert ev.resolve("apply") is None


def test_field_notation_on_a_constant_resolves_through_its_prefix(tmp_path: Path) -> None:
    lean = "theorem t : Finset.univ.val = Finset.univ.val := rfl\n"
    entry = '[names."Finset.univ"]\n' + ENTRY.format(c=PIN, s="def univ : Finset α")
    assert [str(p) for p in check_evidence(_repo(tmp_path, lean, entry))] == [
        "lean/QKForms/A.lean:1: no evidence for the field(s) .val of `Finset.univ`"]
    (tmp_path / "lean" / "names.toml").write_text(
        entry + '[names."Finset.val"]\n' + ENTRY.format(c=PIN, s="structure Finset (α)")
        + '[fields]\nval = ["Finset.val"]\n', encoding="utf-8")
    assert check_evidence(tmp_path) == []


def test_stale_entries_are_reported_unless_reached_through_notation(tmp_path: Path) -> None:
    lean = "theorem t (a : ℝ) : a ≤ a := le_refl a\n"
    toml = "\n".join([
        '[names."le_refl"]', ENTRY.format(c=PIN, s="theorem le_refl (a : α) : a ≤ a"),
        '[names."old_lemma"]', ENTRY.format(c=PIN, s="theorem old_lemma : True"),
        '[names."nhds"]', ENTRY.format(c=PIN, s="def nhds (x : X) : Filter X"),
        'via = "notation 𝓝"',
        "[fields]", 'symm = ["le_refl"]',
    ])
    msgs = [str(p) for p in check_evidence(_repo(tmp_path, lean, toml))]
    assert len(msgs) == 2
    assert msgs[0].startswith("lean/names.toml: old_lemma: no file in lean/QKForms uses it")
    assert msgs[1] == "lean/names.toml: [fields] symm: no file in lean/QKForms uses it"
