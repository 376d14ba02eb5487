/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import Mathlib

/-!
# The pairing bound (Lemma 2)

For a symmetric `S` let `λ₊` be its positive eigenvalues and `λ₋` the absolute values of its
negative eigenvalues, both sorted decreasingly and padded with zeros to a common length, and
`ρ = ‖λ₋‖ / ‖λ₊‖`. The pairing score is `𝒫 = 1 - ‖λ₊ - λ₋‖ / ‖S‖`, and Lemma 2 states
`𝒫 = 1 - sqrt(1 - 2⟨λ₊, λ₋⟩/‖S‖²) ≤ 1 - |1 - ρ| / sqrt(1 + ρ²)`, with equality iff
`λ₋ = ρ λ₊` (THEORY §3).

## Main statements

* `QKForms.pairingScore_eq_one_sub_sqrt` (`[qkforms:lemma2]`): the closed form.
* `QKForms.pairingScore_le_pairingBound` (`[qkforms:lemma2]`): the bound.
* `QKForms.pairingScore_eq_pairingBound_iff` (`[qkforms:lemma2]`): the equality case.
* `QKForms.lemma2_pairing_bound` (`[qkforms:lemma2]`): the three together.

## Encoding

The lobes are two vectors `p = λ₊` and `q = λ₋` of an arbitrary real inner product space `E`
(e.g. `EuclideanSpace ℝ (Fin k)` for padded lobes of length `k`). The spectral theorem gives
`‖S‖² = ‖λ₊‖² + ‖λ₋‖²` (zero eigenvalues contribute nothing); this fact is used as the
*definition* of the denominator: `QKForms.pairingScore p q = 1 - ‖p - q‖ / sqrt(‖p‖² + ‖q‖²)`.
The hypothesis `λ₊ ≠ 0` is `p ≠ 0`. The lobes' entries being nonnegative is not needed: the
equality case holds for arbitrary vectors (equality in the reverse triangle inequality means
`q` is a nonnegative multiple of `p`, and that multiple is then `ρ = ‖q‖/‖p‖`).
-/

namespace QKForms

open scoped RealInnerProductSpace

variable {E : Type*} [NormedAddCommGroup E] [InnerProductSpace ℝ E]

/-- Pairing score `𝒫 = 1 - ‖p - q‖ / ‖S‖` with `‖S‖ = sqrt(‖p‖² + ‖q‖²)`. -/
noncomputable def pairingScore (p q : E) : ℝ := 1 - ‖p - q‖ / Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2)

/-- The pairing bound `1 - |1 - ρ| / sqrt(1 + ρ²)`. -/
noncomputable def pairingBound (ρ : ℝ) : ℝ := 1 - |1 - ρ| / Real.sqrt (1 + ρ ^ 2)

/-- The lobe ratio `ρ = ‖λ₋‖ / ‖λ₊‖`. -/
noncomputable def lobeRatio (p q : E) : ℝ := ‖q‖ / ‖p‖

variable {p q : E}

theorem sum_sq_norm_pos (hp : p ≠ 0) : 0 < ‖p‖ ^ 2 + ‖q‖ ^ 2 :=
  add_pos_of_pos_of_nonneg (pow_pos (norm_pos_iff.2 hp) 2) (sq_nonneg _)

/-- **Lemma 2 of the paper** (closed form): `𝒫 = 1 - sqrt(1 - 2⟨λ₊, λ₋⟩ / ‖S‖²)`.
Uses `norm_sub_sq_real` (Mathlib/Analysis/InnerProductSpace/Basic.lean), `Real.sqrt_div` and
`Real.sqrt_sq` (Mathlib/Analysis/SpecialFunctions/Sqrt.lean / Pow). [qkforms:lemma2] -/
theorem pairingScore_eq_one_sub_sqrt (hp : p ≠ 0) :
    pairingScore p q = 1 - Real.sqrt (1 - 2 * ⟪p, q⟫_ℝ / (‖p‖ ^ 2 + ‖q‖ ^ 2)) := by
  have hT0 : ‖p‖ ^ 2 + ‖q‖ ^ 2 ≠ 0 := (sum_sq_norm_pos hp).ne'
  have h1 : 1 - 2 * ⟪p, q⟫_ℝ / (‖p‖ ^ 2 + ‖q‖ ^ 2) = ‖p - q‖ ^ 2 / (‖p‖ ^ 2 + ‖q‖ ^ 2) := by
    rw [norm_sub_sq_real, show ‖p‖ ^ 2 - 2 * ⟪p, q⟫_ℝ + ‖q‖ ^ 2 =
      (‖p‖ ^ 2 + ‖q‖ ^ 2) - 2 * ⟪p, q⟫_ℝ by ring, sub_div, div_self hT0]
  rw [h1, Real.sqrt_div (sq_nonneg _), Real.sqrt_sq (norm_nonneg _), pairingScore]

/-- `‖p‖ ρ = ‖q‖`. -/
theorem norm_mul_lobeRatio (hp : p ≠ 0) : ‖p‖ * lobeRatio p q = ‖q‖ := by
  rw [lobeRatio, div_eq_inv_mul, ← mul_assoc, mul_inv_cancel₀ (norm_ne_zero_iff.2 hp), one_mul]

/-- The bound in terms of norms: `1 - |1 - ρ|/sqrt(1 + ρ²) = 1 - |‖p‖ - ‖q‖| / ‖S‖`. -/
theorem pairingBound_lobeRatio (hp : p ≠ 0) :
    pairingBound (lobeRatio p q) = 1 - |‖p‖ - ‖q‖| / Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) := by
  have hpn : 0 < ‖p‖ := norm_pos_iff.2 hp
  have hρ := norm_mul_lobeRatio (q := q) hp
  have habs : |‖p‖ - ‖q‖| = ‖p‖ * |1 - lobeRatio p q| := by
    have h1 : ‖p‖ - ‖q‖ = ‖p‖ * (1 - lobeRatio p q) := by rw [mul_sub, mul_one, hρ]
    rw [h1, abs_mul, abs_of_pos hpn]
  have hsq : Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) = ‖p‖ * Real.sqrt (1 + lobeRatio p q ^ 2) := by
    have h2 : ‖p‖ ^ 2 + ‖q‖ ^ 2 = ‖p‖ ^ 2 * (1 + lobeRatio p q ^ 2) := by
      rw [← hρ]
      ring
    rw [h2, Real.sqrt_mul (sq_nonneg _), Real.sqrt_sq hpn.le]
  rw [pairingBound, hsq, habs, mul_div_mul_left _ _ hpn.ne']

/-- Equality in the reverse triangle inequality, inner-product form:
`‖p - q‖ = |‖p‖ - ‖q‖| ↔ ⟪p, q⟫ = ‖p‖ ‖q‖`. -/
theorem norm_sub_eq_abs_sub_norm_iff_inner (p q : E) :
    ‖p - q‖ = |‖p‖ - ‖q‖| ↔ ⟪p, q⟫_ℝ = ‖p‖ * ‖q‖ := by
  constructor
  · intro h
    have h2 : ‖p - q‖ ^ 2 = |‖p‖ - ‖q‖| ^ 2 := by rw [h]
    rw [norm_sub_sq_real, sq_abs] at h2
    linear_combination (-1 / 2 : ℝ) * h2
  · intro h
    have h2 : ‖p - q‖ ^ 2 = |‖p‖ - ‖q‖| ^ 2 := by
      rw [norm_sub_sq_real, sq_abs]
      linear_combination (-2 : ℝ) * h
    have h3 := congrArg Real.sqrt h2
    rwa [Real.sqrt_sq (norm_nonneg _), Real.sqrt_sq (abs_nonneg _)] at h3

/-- `‖q‖ • p = ‖p‖ • q ↔ q = ρ • p` for `p ≠ 0`. -/
theorem norm_smul_eq_norm_smul_iff (hp : p ≠ 0) :
    ‖q‖ • p = ‖p‖ • q ↔ q = lobeRatio p q • p := by
  have hpn : ‖p‖ ≠ 0 := norm_ne_zero_iff.2 hp
  constructor
  · intro h
    calc q = (‖p‖⁻¹ * ‖p‖) • q := by rw [inv_mul_cancel₀ hpn, one_smul]
      _ = ‖p‖⁻¹ • (‖p‖ • q) := by rw [mul_smul]
      _ = ‖p‖⁻¹ • (‖q‖ • p) := by rw [h]
      _ = lobeRatio p q • p := by rw [← mul_smul, lobeRatio, div_eq_inv_mul]
  · intro h
    calc ‖q‖ • p = (‖p‖ * lobeRatio p q) • p := by rw [norm_mul_lobeRatio hp]
      _ = ‖p‖ • (lobeRatio p q • p) := by rw [mul_smul]
      _ = ‖p‖ • q := by rw [← h]

/-- Equality in the reverse triangle inequality: `‖p - q‖ = |‖p‖ - ‖q‖| ↔ q = ρ • p`.
Uses `inner_eq_norm_mul_iff_real` (Mathlib/Analysis/InnerProductSpace/Basic.lean). -/
theorem norm_sub_eq_abs_sub_norm_iff (hp : p ≠ 0) :
    ‖p - q‖ = |‖p‖ - ‖q‖| ↔ q = lobeRatio p q • p := by
  rw [norm_sub_eq_abs_sub_norm_iff_inner, inner_eq_norm_mul_iff_real,
    norm_smul_eq_norm_smul_iff hp]

/-- **Lemma 2 of the paper** (pairing bound): `𝒫 ≤ 1 - |1 - ρ| / sqrt(1 + ρ²)`.
Uses `abs_norm_sub_norm_le` (Mathlib/Analysis/Normed/Group/Basic.lean). [qkforms:lemma2] -/
theorem pairingScore_le_pairingBound (hp : p ≠ 0) :
    pairingScore p q ≤ pairingBound (lobeRatio p q) := by
  rw [pairingBound_lobeRatio hp, pairingScore]
  have h := abs_norm_sub_norm_le p q
  have hs : 0 < Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) := Real.sqrt_pos.2 (sum_sq_norm_pos hp)
  have hdiv : |‖p‖ - ‖q‖| / Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) ≤
      ‖p - q‖ / Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) := by
    rw [div_eq_mul_inv, div_eq_mul_inv]
    exact mul_le_mul_of_nonneg_right h (inv_nonneg.2 hs.le)
  linarith

/-- **Lemma 2 of the paper** (equality case): `𝒫 = 1 - |1 - ρ| / sqrt(1 + ρ²)` iff
`λ₋ = ρ λ₊`. [qkforms:lemma2] -/
theorem pairingScore_eq_pairingBound_iff (hp : p ≠ 0) :
    pairingScore p q = pairingBound (lobeRatio p q) ↔ q = lobeRatio p q • p := by
  have hs : 0 < Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) := Real.sqrt_pos.2 (sum_sq_norm_pos hp)
  rw [pairingBound_lobeRatio hp, pairingScore, ← norm_sub_eq_abs_sub_norm_iff hp]
  constructor
  · intro h
    have h2 : ‖p - q‖ / Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) =
        |‖p‖ - ‖q‖| / Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2) := by linarith
    rwa [div_left_inj' hs.ne'] at h2
  · intro h
    rw [h]

/-- **Lemma 2 of the paper**, closed form, bound and equality case together.
[qkforms:lemma2] -/
theorem lemma2_pairing_bound (hp : p ≠ 0) :
    pairingScore p q = 1 - Real.sqrt (1 - 2 * ⟪p, q⟫_ℝ / (‖p‖ ^ 2 + ‖q‖ ^ 2)) ∧
    pairingScore p q ≤ pairingBound (lobeRatio p q) ∧
    (pairingScore p q = pairingBound (lobeRatio p q) ↔ q = lobeRatio p q • p) :=
  ⟨pairingScore_eq_one_sub_sqrt hp, pairingScore_le_pairingBound hp,
    pairingScore_eq_pairingBound_iff hp⟩

end QKForms
