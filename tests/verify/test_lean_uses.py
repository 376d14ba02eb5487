"""The scanner of the external names a Lean source uses (``lean_uses``)."""

from __future__ import annotations

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


def test_question_marks_inside_names_are_not_holes() -> None:
    src = "theorem t (l : List ℝ) : True := by\n  rw [List.getD_eq_getElem?_getD] at ?_\n"
    assert _names(src) == {"List", "List.getD_eq_getElem?_getD"}
