/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.Basic

/-!
# Symmetric and skew energy identities (Lemma 5)

For a real square matrix `L` with symmetric part `S = ½ (L + Lᵀ)` and skew part
`T = ½ (L - Lᵀ)` (docs/theory.md, "Energies"):

* `‖L‖² = ‖S‖² + ‖T‖²`,
* `‖S‖² = ½ ‖L‖² + ½ tr(L²)`, `‖T‖² = ½ ‖L‖² - ½ tr(L²)`,
* for `L ≠ 0`: `‖S‖²/‖L‖² = ½ + tr(L²)/(2‖L‖²)` and `‖T‖²/‖L‖² = ½ - tr(L²)/(2‖L‖²)`,
* `tr S = tr L`, and for a head `tr (W_Kᵀ W_Q) = ⟨W_K, W_Q⟩_F`.

## Main statements

* `QKForms.frobSq_eq_frobSq_symPart_add_frobSq_skewPart` (`[qkforms:lemma5]`)
* `QKForms.frobSq_symPart_eq` and `QKForms.frobSq_skewPart_eq` (`[qkforms:lemma5]`)
* `QKForms.frobSq_symPart_div_frobSq` and `QKForms.frobSq_skewPart_div_frobSq`
  (`[qkforms:lemma5]`)
* `QKForms.trace_symPart`, `QKForms.trace_transpose_mul_eq_sum`

## Encoding

`‖L‖²` is `frobSq L = ∑ i j, L i j ^ 2` (docs/theory.md, "Conventions") and `tr(L²)` is
`Matrix.trace (L * L)`. The divided forms are stated under `L ≠ 0`; the proof derives
`frobSq L ≠ 0` from it (`QKForms.frobSq_ne_zero`).
-/

namespace QKForms

noncomputable section

open scoped Matrix

section Frobenius

variable {m n : Type*} [Fintype m] [Fintype n]

theorem frobSq_nonneg (A : Matrix m n ℝ) : 0 ≤ frobSq A :=
  Finset.sum_nonneg fun i _ => Finset.sum_nonneg fun j _ => sq_nonneg (A i j)

/-- `frobSq A = 0` exactly when `A = 0`. Uses `Finset.sum_eq_zero_iff_of_nonneg`
(Mathlib/Algebra/Order/BigOperators/Group/Finset.lean). -/
theorem frobSq_eq_zero_iff (A : Matrix m n ℝ) : frobSq A = 0 ↔ A = 0 := by
  constructor
  · intro h
    have h0 : ∑ i, ∑ j, A i j ^ 2 = 0 := h
    have hrow : ∀ i ∈ (Finset.univ : Finset m), 0 ≤ ∑ j, A i j ^ 2 :=
      fun i _ => Finset.sum_nonneg fun j _ => sq_nonneg (A i j)
    ext i j
    have hi : ∑ j, A i j ^ 2 = 0 :=
      (Finset.sum_eq_zero_iff_of_nonneg hrow).1 h0 i (Finset.mem_univ i)
    have hentry : ∀ j ∈ (Finset.univ : Finset n), 0 ≤ A i j ^ 2 :=
      fun j _ => sq_nonneg (A i j)
    have hij : A i j ^ 2 = 0 :=
      (Finset.sum_eq_zero_iff_of_nonneg hentry).1 hi j (Finset.mem_univ j)
    show A i j = 0
    exact (pow_eq_zero_iff two_ne_zero).1 hij
  · rintro rfl
    unfold frobSq
    refine Finset.sum_eq_zero fun i _ => Finset.sum_eq_zero fun j _ => ?_
    rw [Matrix.zero_apply]
    norm_num

theorem frobSq_ne_zero {A : Matrix m n ℝ} (hA : A ≠ 0) : frobSq A ≠ 0 :=
  fun h => hA ((frobSq_eq_zero_iff A).1 h)

theorem frobSq_pos {A : Matrix m n ℝ} (hA : A ≠ 0) : 0 < frobSq A :=
  lt_of_le_of_ne (frobSq_nonneg A) (frobSq_ne_zero hA).symm

end Frobenius

variable {ι : Type*} [Fintype ι]

/-- `tr (L * L) = ∑ i j, L i j * L j i`. -/
theorem trace_mul_self_eq_sum (L : Matrix ι ι ℝ) :
    (L * L).trace = ∑ i, ∑ j, L i j * L j i := by
  simp only [Matrix.trace, Matrix.diag_apply, Matrix.mul_apply]

/-- Summing the squares of the transposed entries gives `frobSq`. -/
theorem sum_sum_sq_transpose (L : Matrix ι ι ℝ) : ∑ i, ∑ j, L j i ^ 2 = frobSq L := by
  rw [frobSq, Finset.sum_comm]

/-- **Lemma 5 of the paper** (second identity): `‖S‖² = ½‖L‖² + ½ tr(L²)`. [qkforms:lemma5] -/
theorem frobSq_symPart_eq (L : Matrix ι ι ℝ) :
    frobSq (symPart L) = (1 / 2 : ℝ) * frobSq L + (1 / 2 : ℝ) * (L * L).trace := by
  have h1 : frobSq (symPart L) = ∑ i, ∑ j,
      ((1 / 4 : ℝ) * L i j ^ 2 + (1 / 2 : ℝ) * (L i j * L j i) + (1 / 4 : ℝ) * L j i ^ 2) := by
    unfold frobSq
    refine Finset.sum_congr rfl fun i _ => Finset.sum_congr rfl fun j _ => ?_
    rw [symPart_apply]
    ring
  have hF : ∑ i, ∑ j, L i j ^ 2 = frobSq L := rfl
  rw [h1, trace_mul_self_eq_sum]
  simp only [Finset.sum_add_distrib, ← Finset.mul_sum]
  rw [sum_sum_sq_transpose L, hF]
  ring

/-- **Lemma 5 of the paper** (third identity): `‖T‖² = ½‖L‖² - ½ tr(L²)`. [qkforms:lemma5] -/
theorem frobSq_skewPart_eq (L : Matrix ι ι ℝ) :
    frobSq (skewPart L) = (1 / 2 : ℝ) * frobSq L - (1 / 2 : ℝ) * (L * L).trace := by
  have h1 : frobSq (skewPart L) = ∑ i, ∑ j,
      ((1 / 4 : ℝ) * L i j ^ 2 - (1 / 2 : ℝ) * (L i j * L j i) + (1 / 4 : ℝ) * L j i ^ 2) := by
    unfold frobSq
    refine Finset.sum_congr rfl fun i _ => Finset.sum_congr rfl fun j _ => ?_
    rw [skewPart_apply]
    ring
  have hF : ∑ i, ∑ j, L i j ^ 2 = frobSq L := rfl
  rw [h1, trace_mul_self_eq_sum]
  simp only [Finset.sum_add_distrib, Finset.sum_sub_distrib, ← Finset.mul_sum]
  rw [sum_sum_sq_transpose L, hF]
  ring

/-- **Lemma 5 of the paper** (first identity): `‖L‖² = ‖S‖² + ‖T‖²`. [qkforms:lemma5] -/
theorem frobSq_eq_frobSq_symPart_add_frobSq_skewPart (L : Matrix ι ι ℝ) :
    frobSq L = frobSq (symPart L) + frobSq (skewPart L) := by
  rw [frobSq_symPart_eq, frobSq_skewPart_eq]
  ring

/-- **Lemma 5 of the paper** (divided form, symmetric part): for `L ≠ 0`,
`‖S‖²/‖L‖² = ½ + tr(L²)/(2‖L‖²)`. [qkforms:lemma5] -/
theorem frobSq_symPart_div_frobSq {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    frobSq (symPart L) / frobSq L = 1 / 2 + (L * L).trace / (2 * frobSq L) := by
  have hF : frobSq L ≠ 0 := frobSq_ne_zero hL
  rw [div_eq_iff hF, add_mul, div_mul_eq_mul_div (L * L).trace (2 * frobSq L) (frobSq L),
    mul_div_mul_right _ _ hF, frobSq_symPart_eq]
  ring

/-- **Lemma 5 of the paper** (divided form, skew part): for `L ≠ 0`,
`‖T‖²/‖L‖² = ½ - tr(L²)/(2‖L‖²)`. [qkforms:lemma5] -/
theorem frobSq_skewPart_div_frobSq {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    frobSq (skewPart L) / frobSq L = 1 / 2 - (L * L).trace / (2 * frobSq L) := by
  have hF : frobSq L ≠ 0 := frobSq_ne_zero hL
  rw [div_eq_iff hF, sub_mul, div_mul_eq_mul_div (L * L).trace (2 * frobSq L) (frobSq L),
    mul_div_mul_right _ _ hF, frobSq_skewPart_eq]
  ring

/-- **Lemma 5 of the paper**, all three identities and both divided forms (for `L ≠ 0`).
[qkforms:lemma5] -/
theorem lemma5_energy_identities {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    frobSq L = frobSq (symPart L) + frobSq (skewPart L) ∧
    frobSq (symPart L) = (1 / 2 : ℝ) * frobSq L + (1 / 2 : ℝ) * (L * L).trace ∧
    frobSq (skewPart L) = (1 / 2 : ℝ) * frobSq L - (1 / 2 : ℝ) * (L * L).trace ∧
    frobSq (symPart L) / frobSq L = 1 / 2 + (L * L).trace / (2 * frobSq L) ∧
    frobSq (skewPart L) / frobSq L = 1 / 2 - (L * L).trace / (2 * frobSq L) :=
  ⟨frobSq_eq_frobSq_symPart_add_frobSq_skewPart L, frobSq_symPart_eq L, frobSq_skewPart_eq L,
    frobSq_symPart_div_frobSq hL, frobSq_skewPart_div_frobSq hL⟩

/-- The symmetric part has the same trace: `tr S = tr L` (a corollary of Lemma 5 in the paper). -/
theorem trace_symPart (L : Matrix ι ι ℝ) : (symPart L).trace = L.trace := by
  rw [symPart, Matrix.trace_smul, Matrix.trace_add, Matrix.trace_transpose, smul_eq_mul]
  ring

/-- For a head, `tr (W_Kᵀ W_Q) = ∑ r i, (W_K)_{ri} (W_Q)_{ri} = ⟨W_K, W_Q⟩_F` (paper,
Appendix A). -/
theorem trace_transpose_mul_eq_sum {κ : Type*} [Fintype κ] (K Q : Matrix κ ι ℝ) :
    (Kᵀ * Q).trace = ∑ r, ∑ i, K r i * Q r i := by
  simp only [Matrix.trace, Matrix.diag_apply, Matrix.mul_apply, Matrix.transpose_apply]
  exact Finset.sum_comm

end

end QKForms
