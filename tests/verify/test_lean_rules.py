"""House rules of the Lean sources (``qkforms.verify.lean_rules``)."""

from __future__ import annotations

from qkforms.verify.lean_rules import house_rule_violations


def _rules(src: str) -> list[tuple[int, str]]:
    return [(v.line, v.rule) for v in house_rule_violations(src, "X.lean")]


def test_def_needs_noncomputable_section() -> None:
    src = "namespace A\ndef half : ℝ := 1 / 2\nend A\n"
    assert _rules(src) == [(2, "noncomputable")]
    ok = "namespace A\nnoncomputable section\ndef half : ℝ := 1 / 2\nend\nend A\n"
    assert _rules(ok) == []
    # a theorem-only module needs nothing
    assert _rules("theorem t : True := trivial\n") == []


def test_first_needs_a_closes_by_comment() -> None:
    bad = "theorem t : True := by\n  first\n  | trivial\n  | simp\n"
    assert _rules(bad) == [(2, "first")]
    good = "theorem t : True := by\n  -- closes by: trivial (at the pin)\n  first\n  | trivial\n"
    assert _rules(good) == []
    # `first` in a comment or a name is not a tactic
    assert _rules("-- first we\ntheorem first_thing : True := trivial\n") == []


def test_scoped_notation_needs_its_open() -> None:
    bad = "theorem t (S : Matrix (Fin 2) (Fin 2) ℝ) : Sᵀ = Sᵀ := rfl\n"
    assert _rules(bad) == [(1, "notation")]
    assert _rules("open scoped Matrix\n" + bad) == []
    assert _rules("open Filter Matrix Topology\n" + bad) == []
    # opened only after the use: still a violation
    assert _rules(bad + "open Matrix\n") == [(1, "notation")]
    inner = "theorem t (p q : E) : ⟪p, q⟫_ℝ = ⟪p, q⟫_ℝ := rfl\n"
    assert _rules("open scoped RealInnerProductSpace\n" + inner) == [(2, "notation")]
    assert _rules("open scoped InnerProductSpace\n" + inner) == []
    real = "theorem t (p q : E) : ⟪p, q⟫ = ⟪p, q⟫ := rfl\n"
    assert _rules("open scoped InnerProductSpace\n" + real) == [(2, "notation")]
    assert _rules("open scoped RealInnerProductSpace\n" + real) == []
    assert _rules("theorem t : Tendsto f atTop (𝓝 0) := h\n") == [(1, "notation")]
