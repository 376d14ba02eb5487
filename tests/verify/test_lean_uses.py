"""The Lean name extractor and the evidence file (``lean/names.toml``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from qkforms.errors import VerificationError
from qkforms.verify.lean_evidence import Evidence, check_evidence, load_evidence
from qkforms.verify.lean_uses import project_names, uses


def _names(src: str, kind: str = "name") -> set[str]:
    return {u.name for u in uses(src) if u.kind == kind}


def test_binders_are_not_external_names() -> None:
    src = """theorem t {ι : Type*} [Fintype ι] (x y : ℝ) (hx : 0 < x) : True := by
  have key : x ≤ x := le_refl x
  obtain ⟨a, ha⟩ : ∃ a : ℝ, a = x := ⟨x, rfl⟩
  rcases lt_trichotomy a 0 with h1 | h2 | h3
  · intro z hz
    exact fun w hw => trivial
  · refine Finset.sum_congr rfl fun i hi => ?_
    simp only [Set.mem_setOf_eq] at hi
  · set q := x + y with hq
    filter_upwards [foo] with ω hω
    exact (∑ j ∈ Finset.range 3, (j : ℝ)) = ∑ k, k
"""
    names = _names(src)
    for local in ("key", "ha", "h1", "h2", "h3", "z", "hz", "w", "hw", "i", "hi", "q", "hq",
                  "ω", "hω", "j", "k", "a", "x", "hx", "ι"):
        assert local not in names, local
    for ext in ("Fintype", "le_refl", "lt_trichotomy", "Finset.sum_congr", "Set.mem_setOf_eq",
                "foo", "Finset.range"):
        assert ext in names, ext


def test_type_ascription_is_a_use_not_a_binder() -> None:
    src = "theorem t : (2 : ℝ) ≠ 0 := by\n  exact (two_ne_zero : (2 : ℝ) ≠ 0)\n"
    assert "two_ne_zero" in _names(src)


def test_project_declarations_are_not_external() -> None:
    src = """namespace QKForms
noncomputable def frobSq (x : ℝ) : ℝ := x
theorem frobSq_nonneg (x : ℝ) (h : 0 ≤ x) : 0 ≤ frobSq x := h
end QKForms
"""
    assert _names(src) == set()
    assert {"QKForms.frobSq", "frobSq", "frobSq_nonneg"} <= project_names([src])


def test_fields_on_locals_and_parentheses_and_leading_dots() -> None:
    src = """theorem t (a b c : ℝ) (h : a ≤ b) (h' : b ≤ c) : a ≤ c ∨ False := by
  exact .inl ((h.trans h').trans (le_refl c))
"""
    assert _names(src, "field") == {"inl", "trans"}
    assert _names(src) == {"le_refl"}


def test_named_arguments_and_case_names() -> None:
    src = """theorem t (s : Multiset ℝ) (hI : True) : True := by
  induction s using Multiset.induction_on with
  | empty => trivial
  | cons a s ih => exact (hI.elim (i := a))
  rw [Multiset.filter_cons_of_neg (p := (0 < ·)) s]
"""
    assert _names(src, "case") == {"Multiset.induction_on|empty", "Multiset.induction_on|cons"}
    assert _names(src, "arg") == {".elim(i)", "Multiset.filter_cons_of_neg(p)"}


def test_comments_and_strings_are_ignored() -> None:
    src = '/-- uses `Foo.bar` -/\ntheorem t : True := trivial -- Baz.qux\n#eval "Quux.x"\n'
    assert _names(src) == set()


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


def test_question_marks_inside_names_are_not_holes() -> None:
    src = "theorem t (l : List ℝ) : True := by\n  rw [List.getD_eq_getElem?_getD] at ?_\n"
    assert _names(src) == {"List", "List.getD_eq_getElem?_getD"}


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
