/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.BalancedSignature

/-!
# Heads with dead dimensions: Theorem 3 for the live part

`L = W_Kᵀ W_Q = ∑_i k_i q_iᵀ` over the rows `q_i`, `k_i` of `W_Q`, `W_K`. A head coordinate `i`
with `q_i = 0` or `k_i = 0` (for instance a zero gain of a q/k normalization folded into the
weights) contributes nothing to `L`: deleting it gives a smaller pair `W_Q', W_K' ∈ M_{n'×N}` with
the same form. If the stacked map of the live pair is surjective, Theorem 3 applied to it gives
the signature `(n', n', N - 2n')` of the head (docs/theory.md §3, heads with dead dimensions),
although the head itself is degenerate (its stacked map has a zero row, so it is not onto).

## Main statements

* `QKForms.signature_symPart_of_eq_transpose_mul_of_surjective` (`[qkforms:thm3.live]`): if
  `W_Kᵀ W_Q = W_K'ᵀ W_Q'` for some pair `W_Q', W_K' ∈ M_{n'×N}` whose stacked map is surjective,
  the signature of `S = symPart (W_Kᵀ W_Q)` is `(n', n', N - 2n')`.
* `QKForms.transpose_mul_submatrix_eq_of_dead` : dead coordinates contribute nothing,
  `W_K'ᵀ W_Q' = W_Kᵀ W_Q` for the rows in a set `p` outside of which `q_i = 0` or `k_i = 0`.
* `QKForms.signature_symPart_of_dead` (`[qkforms:thm3.live]`): the two together.

## Encoding

Head coordinates are a finite type `κ` (`Fin n`); the live coordinates are the subtype
`{i // p i}` of a decidable predicate `p`, and the live pair is
`(W_Q.submatrix Subtype.val id, W_K.submatrix Subtype.val id)` (the rows in `p`). "`q_i = 0`"
is `W_Q i = 0` (the row, a function `ι → ℝ`). The live pair may be any pair with the same form
in the first statement: `κ'` is an arbitrary finite type (`n' = Fintype.card κ'`). Surjectivity
is that of `QKForms.stackedMap` (`QKForms/BalancedSignature.lean`).
-/

namespace QKForms

noncomputable section

open scoped Matrix

variable {κ κ' ι : Type*} [Fintype κ] [DecidableEq κ] [Fintype κ'] [DecidableEq κ']
  [Fintype ι] [DecidableEq ι]

/-- **Corollary of Theorem 3 of the paper** (the live part of a head): if
`W_Kᵀ W_Q = W_K'ᵀ W_Q'` for some pair `W_Q', W_K' ∈ M_{n'×N}` whose stacked map
`x ↦ (W_Q' x, W_K' x)` is surjective, then the symmetric part of `W_Kᵀ W_Q` has signature
`(n', n', N - 2n')`. [qkforms:thm3.live] -/
theorem signature_symPart_of_eq_transpose_mul_of_surjective (Q K : Matrix κ ι ℝ)
    (Q' K' : Matrix κ' ι ℝ) (hL : Kᵀ * Q = K'ᵀ * Q')
    (hJ : Function.Surjective (stackedMap Q' K')) :
    signature (symPart (Kᵀ * Q)) =
      (Fintype.card κ', Fintype.card κ', Fintype.card ι - 2 * Fintype.card κ') := by
  rw [hL]
  exact signature_symPart_of_surjective Q' K' hJ

/-- Dead coordinates contribute nothing: if every row index `i` outside `p` has `q_i = 0` or
`k_i = 0`, the rows in `p` give the same form, `W_K'ᵀ W_Q' = W_Kᵀ W_Q`. Uses
`Finset.sum_subtype` and `Finset.sum_filter_of_ne`
(Mathlib/Algebra/BigOperators/Group/Finset/Basic.lean). -/
theorem transpose_mul_submatrix_eq_of_dead (Q K : Matrix κ ι ℝ) (p : κ → Prop)
    [DecidablePred p] (hdead : ∀ i, ¬ p i → Q i = 0 ∨ K i = 0) :
    (K.submatrix (Subtype.val : {i // p i} → κ) id)ᵀ * Q.submatrix Subtype.val id = Kᵀ * Q := by
  ext a b
  -- a term `(W_K)_{ia} (W_Q)_{ib}` of the sum can be nonzero only for `i` in `p`
  have hterm : ∀ i ∈ (Finset.univ : Finset κ), Kᵀ a i * Q i b ≠ 0 → p i := by
    intro i _ hi
    by_contra hp
    rcases hdead i hp with h | h
    · have hQ : Q i b = 0 := congrFun h b
      apply hi
      rw [hQ, MulZeroClass.mul_zero]
    · have hK : K i a = 0 := congrFun h a
      apply hi
      rw [Matrix.transpose_apply, hK, MulZeroClass.zero_mul]
  rw [Matrix.mul_apply, Matrix.mul_apply]
  calc ∑ i : {i // p i}, (K.submatrix Subtype.val id)ᵀ a i * Q.submatrix Subtype.val id i b
      = ∑ i : {i // p i}, Kᵀ a i * Q i b := by
        -- closes by: `rfl` (`transpose`, `submatrix` and `id` unfold to the same entries);
        -- `simp only` with their `_apply` lemmas is the fallback
        first
        | rfl
        | simp only [Matrix.transpose_apply, Matrix.submatrix_apply, id]
    _ = ∑ i ∈ Finset.univ.filter p, Kᵀ a i * Q i b :=
        (Finset.sum_subtype (Finset.univ.filter p)
          (fun i => by
            rw [Finset.mem_filter]
            exact ⟨fun h => h.2, fun h => ⟨Finset.mem_univ i, h⟩⟩)
          (fun i => Kᵀ a i * Q i b)).symm
    _ = ∑ i, Kᵀ a i * Q i b := Finset.sum_filter_of_ne hterm

/-- **Corollary of Theorem 3 of the paper** (heads with dead dimensions): if every head
coordinate `i` outside a set `p` is dead (`q_i = 0` or `k_i = 0`) and the stacked map of the
live rows is surjective, the symmetric part of `W_Kᵀ W_Q` has signature `(n', n', N - 2n')`
with `n' = |p|`. [qkforms:thm3.live] -/
theorem signature_symPart_of_dead (Q K : Matrix κ ι ℝ) (p : κ → Prop) [DecidablePred p]
    (hdead : ∀ i, ¬ p i → Q i = 0 ∨ K i = 0)
    (hJ : Function.Surjective (stackedMap (Q.submatrix (Subtype.val : {i // p i} → κ) id)
      (K.submatrix Subtype.val id))) :
    signature (symPart (Kᵀ * Q)) =
      (Fintype.card {i // p i}, Fintype.card {i // p i},
        Fintype.card ι - 2 * Fintype.card {i // p i}) :=
  signature_symPart_of_eq_transpose_mul_of_surjective Q K _ _
    (transpose_mul_submatrix_eq_of_dead Q K p hdead).symm hJ

end

end QKForms
