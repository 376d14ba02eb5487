/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.Basic

/-!
# The Gram form of a head (Lemma 10, identity)

For `W_K, W_Q ∈ M_{n×N}(ℝ)` let `M = [W_K; W_Q] ∈ M_{2n×N}(ℝ)` (the stacked matrix) and
`𝒥 = [[0, I_n], [I_n, 0]]`. Then the symmetric part of `W_Kᵀ W_Q` is `S = ½ Mᵀ 𝒥 M`
(docs/theory.md, "Signature", Lemma 10).

## Main statements

* `QKForms.symPart_transpose_mul` : `S = ½ (W_Kᵀ W_Q + W_Qᵀ W_K)`.
* `QKForms.symPart_eq_half_stacked_swap_stacked` (`[qkforms:lemma10]`): `S = ½ Mᵀ 𝒥 M`.

## Encoding

Head coordinates are a finite type `κ` (`Fin n` in the paper); `M` is
`Matrix.fromRows W_K W_Q : Matrix (κ ⊕ κ) ι ℝ` and `𝒥` is
`Matrix.fromBlocks 0 1 1 0 : Matrix (κ ⊕ κ) (κ ⊕ κ) ℝ`
(Mathlib/Data/Matrix/ColumnRowPartitioned.lean, Mathlib/Data/Matrix/Block.lean). Only the
identity of Lemma 10 is formalized (core scope); the spectral consequences are not.
-/

namespace QKForms

noncomputable section

open scoped Matrix

variable {κ ι : Type*} [Fintype κ] [DecidableEq κ]

/-- The stacked matrix `M = [W_K; W_Q]`. -/
def stackedMatrix (K Q : Matrix κ ι ℝ) : Matrix (κ ⊕ κ) ι ℝ := Matrix.fromRows K Q

variable (κ) in
/-- The swap form `𝒥 = [[0, I], [I, 0]]` on `ℝ^κ ⊕ ℝ^κ`. -/
def swapForm : Matrix (κ ⊕ κ) (κ ⊕ κ) ℝ := Matrix.fromBlocks 0 1 1 0

/-- The symmetric part of a head's form: `S = ½ (W_Kᵀ W_Q + W_Qᵀ W_K)`. -/
theorem symPart_transpose_mul (K Q : Matrix κ ι ℝ) :
    symPart (Kᵀ * Q) = (1 / 2 : ℝ) • (Kᵀ * Q + Qᵀ * K) := by
  rw [symPart, Matrix.transpose_mul, Matrix.transpose_transpose]

/-- **Lemma 10 of the paper** (identity): `S = ½ Mᵀ 𝒥 M` with `M = [W_K; W_Q]` and
`𝒥 = [[0, I], [I, 0]]`. Uses `Matrix.transpose_fromRows`, `Matrix.fromCols_mul_fromBlocks`
and `Matrix.fromCols_mul_fromRows` (Mathlib/Data/Matrix/ColumnRowPartitioned.lean).
[qkforms:lemma10] -/
theorem symPart_eq_half_stacked_swap_stacked (K Q : Matrix κ ι ℝ) :
    symPart (Kᵀ * Q) =
      (1 / 2 : ℝ) • ((stackedMatrix K Q)ᵀ * swapForm κ * stackedMatrix K Q) := by
  rw [stackedMatrix, swapForm, Matrix.transpose_fromRows, Matrix.fromCols_mul_fromBlocks]
  simp only [Matrix.mul_zero, Matrix.mul_one, zero_add, add_zero]
  rw [Matrix.fromCols_mul_fromRows, symPart_transpose_mul, add_comm (Qᵀ * K)]

end

end QKForms
