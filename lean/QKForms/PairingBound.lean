/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.ProfileDefs

/-!
# The pairing bound (Lemma 2)

For a real symmetric matrix `S` let `λ₊` be its positive eigenvalues and `λ₋` the absolute values
of its negative eigenvalues, both sorted decreasingly and padded with zeros to a common length,
and `ρ = ‖λ₋‖ / ‖λ₊‖`. The pairing score is `𝒫(S) = 1 - ‖λ₊ - λ₋‖ / ‖S‖_F`, and Lemma 2 states:
if `λ₊ ≠ 0` then `𝒫(S) = 1 - sqrt(1 - 2⟨λ₊, λ₋⟩/‖S‖_F²) ≤ 1 - |1 - ρ| / sqrt(1 + ρ²)`, with
equality iff `λ₋ = ρ λ₊` (docs/theory.md, "Pairing").

## Main definitions

* `QKForms.posLobeVec S`, `QKForms.negLobeVec S`: the lobes `λ₊`, `λ₋` of `S` as vectors of
  `EuclideanSpace ℝ (Fin N)`, `N = Fintype.card ι`.
* `QKForms.pairingScoreSym S = 1 - ‖λ₊ - λ₋‖ / sqrt (frobSq S)`: the pairing score of `S`.
* `QKForms.pairingScore p q`, `QKForms.pairingBound ρ`, `QKForms.lobeRatio p q`: the same
  quantities for two vectors `p`, `q` of a real inner product space (the core of the proof).

## Main statements

* `QKForms.frobSq_eq_norm_sq_posLobeVec_add_norm_sq_negLobeVec`: the spectral step
  `‖S‖_F² = ‖λ₊‖² + ‖λ₋‖²` (zero eigenvalues contribute nothing; every nonzero eigenvalue
  lands in exactly one lobe).
* `QKForms.pairingScoreSym_eq_one_sub_sqrt` (`[qkforms:lemma2]`): the closed form.
* `QKForms.pairingScoreSym_le_pairingBound` (`[qkforms:lemma2]`): the bound.
* `QKForms.pairingScoreSym_eq_pairingBound_iff` (`[qkforms:lemma2]`): the equality case.
* `QKForms.lemma2_pairing_bound` (`[qkforms:lemma2]`): the three together.
* The vector core: `QKForms.pairingScore_eq_one_sub_sqrt`, `QKForms.pairingScore_le_pairingBound`
  and `QKForms.pairingScore_eq_pairingBound_iff`, for `p ≠ 0` and any `q`, with
  `sqrt (‖p‖² + ‖q‖²)` in the denominator.

## Encoding

"`S` symmetric" is `S.IsHermitian` (over `ℝ` this is `Sᵀ = S`). The lobes are those of
Definition 6 (`QKForms.posLobeOf`, `QKForms.negLobeOf` of `QKForms.eigs S`, in
`QKForms/ProfileDefs.lean`): the eigenvalues of `S` are sorted decreasingly once and
`λ₊ j = max μ_j 0`, `λ₋ j = max (-μ_{N-1-j}) 0`, so both lobes have length `N` (padding to a
common length larger than the number of positive or negative eigenvalues changes none of
`‖λ₊ - λ₋‖`, `‖λ₊‖`, `‖λ₋‖`, `⟨λ₊, λ₋⟩` and the equality case). They are turned into vectors of
`EuclideanSpace ℝ (Fin N)` by `WithLp.toLp 2`, so that `‖·‖` and `⟪·, ·⟫_ℝ` are the Euclidean
norm and inner product; `ρ` is `QKForms.lobeRatio λ₊ λ₋ = ‖λ₋‖ / ‖λ₊‖`; `‖S‖_F` is
`sqrt (frobSq S)`. The hypothesis `λ₊ ≠ 0` is `posLobeVec S ≠ 0`. The identity
`‖S‖_F² = ‖λ₊‖² + ‖λ₋‖²` is proved here from `QKForms.frobSq_eq_sum_sq_eigenvalues`; after it,
the matrix statements are the vector core applied to `p = λ₊`, `q = λ₋`. Nonnegativity of the
lobes is not needed by the core: equality in the reverse triangle inequality means `q` is a
nonnegative multiple of `p`, and that multiple is then `ρ = ‖q‖ / ‖p‖`.
-/

namespace QKForms

noncomputable section

open scoped InnerProductSpace

section Vectors

/-! ### The vector core -/

variable {E : Type*} [NormedAddCommGroup E] [InnerProductSpace ℝ E]

/-- Pairing score of two vectors: `1 - ‖p - q‖ / sqrt(‖p‖² + ‖q‖²)`. -/
def pairingScore (p q : E) : ℝ := 1 - ‖p - q‖ / Real.sqrt (‖p‖ ^ 2 + ‖q‖ ^ 2)

/-- The pairing bound `1 - |1 - ρ| / sqrt(1 + ρ²)`. -/
def pairingBound (ρ : ℝ) : ℝ := 1 - |1 - ρ| / Real.sqrt (1 + ρ ^ 2)

/-- The lobe ratio `ρ = ‖q‖ / ‖p‖` (for the lobes: `‖λ₋‖ / ‖λ₊‖`). -/
def lobeRatio (p q : E) : ℝ := ‖q‖ / ‖p‖

variable {p q : E}

theorem sum_sq_norm_pos (hp : p ≠ 0) : 0 < ‖p‖ ^ 2 + ‖q‖ ^ 2 :=
  add_pos_of_pos_of_nonneg (pow_pos (norm_pos_iff.2 hp) 2) (sq_nonneg _)

/-- Vector core of Lemma 2 (closed form): `1 - sqrt(1 - 2⟪p, q⟫ / (‖p‖² + ‖q‖²))`.
Uses `norm_sub_sq_real` (Mathlib/Analysis/InnerProductSpace/Basic.lean), `Real.sqrt_div` and
`Real.sqrt_sq` (Mathlib/Analysis/Real/Sqrt.lean). -/
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

/-- Vector core of Lemma 2 (bound): `pairingScore p q ≤ 1 - |1 - ρ| / sqrt(1 + ρ²)`.
Uses `abs_norm_sub_norm_le` (Mathlib/Analysis/Normed/Group/Basic.lean). -/
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

/-- Vector core of Lemma 2 (equality case): equality in the bound iff `q = ρ • p`. -/
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

end Vectors

section Matrices

/-! ### Lemma 2 for a real symmetric matrix -/

/-- `‖v‖² = ∑ j, v j ^ 2` for `v : Fin k → ℝ` seen in `EuclideanSpace ℝ (Fin k)`.
Uses `EuclideanSpace.norm_sq_eq` (Mathlib/Analysis/InnerProductSpace/PiL2.lean); the
coordinates of `WithLp.toLp 2 v` are those of `v` by definition (`PiLp.toLp_apply` is `rfl`). -/
theorem norm_sq_toLp {k : ℕ} (v : Fin k → ℝ) :
    ‖(WithLp.toLp 2 v : EuclideanSpace ℝ (Fin k))‖ ^ 2 = ∑ j, v j ^ 2 := by
  rw [EuclideanSpace.norm_sq_eq]
  -- the second branch is the idiom of the public formalization that builds at the pin
  -- (`simp` with `Real.norm_eq_abs` and `sq_abs` after `EuclideanSpace.norm_sq_eq`)
  -- closes by: the first branch (termwise `show`, then `rw`) at the pin
  first
  | (refine Finset.sum_congr rfl fun j _ => ?_
     show ‖v j‖ ^ 2 = v j ^ 2
     rw [Real.norm_eq_abs, sq_abs]
     done)
  | simp [Real.norm_eq_abs, sq_abs]

variable {ι : Type*} [Fintype ι] [DecidableEq ι]

/-- The positive lobe `λ₊` of `S` (Definition 6 padding, length `N = Fintype.card ι`) as a vector
of `EuclideanSpace ℝ (Fin N)`. -/
def posLobeVec (S : Matrix ι ι ℝ) : EuclideanSpace ℝ (Fin (Fintype.card ι)) :=
  WithLp.toLp 2 (posLobeOf (Fintype.card ι) (eigs S))

/-- The negative lobe `λ₋` of `S` (absolute values of the negative eigenvalues, Definition 6
padding) as a vector of `EuclideanSpace ℝ (Fin N)`. -/
def negLobeVec (S : Matrix ι ι ℝ) : EuclideanSpace ℝ (Fin (Fintype.card ι)) :=
  WithLp.toLp 2 (negLobeOf (Fintype.card ι) (eigs S))

/-- The pairing score `𝒫(S) = 1 - ‖λ₊ - λ₋‖ / ‖S‖_F` of a (symmetric) matrix, with
`‖S‖_F = sqrt (frobSq S)`. -/
def pairingScoreSym (S : Matrix ι ι ℝ) : ℝ :=
  1 - ‖posLobeVec S - negLobeVec S‖ / Real.sqrt (frobSq S)

theorem norm_sq_posLobeVec (S : Matrix ι ι ℝ) :
    ‖posLobeVec S‖ ^ 2 = ∑ j, posLobeOf (Fintype.card ι) (eigs S) j ^ 2 :=
  norm_sq_toLp (posLobeOf (Fintype.card ι) (eigs S))

theorem norm_sq_negLobeVec (S : Matrix ι ι ℝ) :
    ‖negLobeVec S‖ ^ 2 = ∑ j, negLobeOf (Fintype.card ι) (eigs S) j ^ 2 :=
  norm_sq_toLp (negLobeOf (Fintype.card ι) (eigs S))

/-- Each eigenvalue of a symmetric `S` lands in exactly one lobe and the zero eigenvalues in
none: `∑ λ₊ⱼ² + ∑ λ₋ⱼ² = ∑ᵢ λᵢ² = ‖S‖_F²`. Uses the antitone enumeration
`Matrix.IsHermitian.eigenvalues₀` of `eigs S` (`QKForms.posLobeOf_eq_of_antitone`,
`QKForms.negLobeOf_eq_of_antitone`, `QKForms.map_eigenvalues₀_eq_eigs`),
`QKForms.frobSq_eq_sum_sq_eigenvalues`, `QKForms.sum_sq_max_add_sum_sq_max_neg_rev` (the
`Fin.revPerm` reindexing, in `ProfileDefs.lean`) and `Equiv.sum_comp` (reindexing by
`QKForms.eigIndexEquiv`). -/
theorem sum_sq_posLobeOf_add_sum_sq_negLobeOf {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    ∑ j, posLobeOf (Fintype.card ι) (eigs S) j ^ 2 +
      ∑ j, negLobeOf (Fintype.card ι) (eigs S) j ^ 2 = frobSq S := by
  have hpos : ∀ j, posLobeOf (Fintype.card ι) (eigs S) j = max (hS.eigenvalues₀ j) 0 :=
    posLobeOf_eq_of_antitone hS.eigenvalues₀ hS.eigenvalues₀_antitone
      (map_eigenvalues₀_eq_eigs hS)
  have hneg : ∀ j,
      negLobeOf (Fintype.card ι) (eigs S) j = max (-hS.eigenvalues₀ (Fin.rev j)) 0 :=
    negLobeOf_eq_of_antitone hS.eigenvalues₀ hS.eigenvalues₀_antitone
      (map_eigenvalues₀_eq_eigs hS)
  have hfrob : frobSq S = ∑ j, hS.eigenvalues₀ j ^ 2 := by
    rw [frobSq_eq_sum_sq_eigenvalues hS]
    simp only [eigenvalues_eq_eigenvalues₀ hS]
    exact Equiv.sum_comp (eigIndexEquiv ι).symm (fun j => hS.eigenvalues₀ j ^ 2)
  calc ∑ j, posLobeOf (Fintype.card ι) (eigs S) j ^ 2 +
        ∑ j, negLobeOf (Fintype.card ι) (eigs S) j ^ 2
      = ∑ j, max (hS.eigenvalues₀ j) 0 ^ 2 +
          ∑ j, max (-hS.eigenvalues₀ (Fin.rev j)) 0 ^ 2 := by
        simp only [hpos, hneg]
    _ = ∑ j, hS.eigenvalues₀ j ^ 2 := sum_sq_max_add_sum_sq_max_neg_rev hS.eigenvalues₀
    _ = frobSq S := hfrob.symm

/-- The spectral step of Lemma 2: for a symmetric `S`, `‖S‖_F² = ‖λ₊‖² + ‖λ₋‖²`. -/
theorem frobSq_eq_norm_sq_posLobeVec_add_norm_sq_negLobeVec {S : Matrix ι ι ℝ}
    (hS : S.IsHermitian) : frobSq S = ‖posLobeVec S‖ ^ 2 + ‖negLobeVec S‖ ^ 2 := by
  rw [norm_sq_posLobeVec, norm_sq_negLobeVec]
  exact (sum_sq_posLobeOf_add_sum_sq_negLobeOf hS).symm

/-- For a symmetric `S` the pairing score is the vector pairing score of its lobes. -/
theorem pairingScoreSym_eq_pairingScore {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    pairingScoreSym S = pairingScore (posLobeVec S) (negLobeVec S) := by
  have h := frobSq_eq_norm_sq_posLobeVec_add_norm_sq_negLobeVec hS
  -- unfold both sides (by `show`, i.e. up to definitional unfolding, which also identifies the
  -- instance paths of `‖·‖` and `-` on `EuclideanSpace`); they differ only in the denominator
  -- The second branch is one term, `congrArg` of the denominator equation, checked by `exact`
  -- up to the same unfolding.
  -- closes by: the first branch (`show`, then `rw [h]`, whose `rfl` is syntactic) at the pin
  first
  | (show 1 - ‖posLobeVec S - negLobeVec S‖ / Real.sqrt (frobSq S) =
        1 - ‖posLobeVec S - negLobeVec S‖ / Real.sqrt (‖posLobeVec S‖ ^ 2 + ‖negLobeVec S‖ ^ 2)
     rw [h]
     done)
  | exact congrArg (fun F => 1 - ‖posLobeVec S - negLobeVec S‖ / Real.sqrt F) h

/-- **Lemma 2 of the paper** (closed form): for a real symmetric `S` with `λ₊ ≠ 0`,
`𝒫(S) = 1 - sqrt(1 - 2⟨λ₊, λ₋⟩ / ‖S‖_F²)`. [qkforms:lemma2] -/
theorem pairingScoreSym_eq_one_sub_sqrt {S : Matrix ι ι ℝ} (hS : S.IsHermitian)
    (hpos : posLobeVec S ≠ 0) :
    pairingScoreSym S = 1 - Real.sqrt (1 - 2 * ⟪posLobeVec S, negLobeVec S⟫_ℝ / frobSq S) := by
  -- closes by: the first branch (two rewrites, then `exact` up to the instance paths of `‖·‖`)
  -- at the pin; the second chains the same three facts with `Eq.trans`, rewriting nothing
  first
  | (rw [pairingScoreSym_eq_pairingScore hS,
        frobSq_eq_norm_sq_posLobeVec_add_norm_sq_negLobeVec hS]
     exact pairingScore_eq_one_sub_sqrt hpos)
  | exact (pairingScoreSym_eq_pairingScore hS).trans ((pairingScore_eq_one_sub_sqrt hpos).trans
      (congrArg (fun F => 1 - Real.sqrt (1 - 2 * ⟪posLobeVec S, negLobeVec S⟫_ℝ / F))
        (frobSq_eq_norm_sq_posLobeVec_add_norm_sq_negLobeVec hS)).symm)

/-- **Lemma 2 of the paper** (pairing bound): for a real symmetric `S` with `λ₊ ≠ 0` and
`ρ = ‖λ₋‖ / ‖λ₊‖`, `𝒫(S) ≤ 1 - |1 - ρ| / sqrt(1 + ρ²)`. [qkforms:lemma2] -/
theorem pairingScoreSym_le_pairingBound {S : Matrix ι ι ℝ} (hS : S.IsHermitian)
    (hpos : posLobeVec S ≠ 0) :
    pairingScoreSym S ≤ pairingBound (lobeRatio (posLobeVec S) (negLobeVec S)) := by
  rw [pairingScoreSym_eq_pairingScore hS]
  exact pairingScore_le_pairingBound hpos

/-- **Lemma 2 of the paper** (equality case): for a real symmetric `S` with `λ₊ ≠ 0`, equality
holds in the pairing bound iff `λ₋ = ρ λ₊`. [qkforms:lemma2] -/
theorem pairingScoreSym_eq_pairingBound_iff {S : Matrix ι ι ℝ} (hS : S.IsHermitian)
    (hpos : posLobeVec S ≠ 0) :
    pairingScoreSym S = pairingBound (lobeRatio (posLobeVec S) (negLobeVec S)) ↔
      negLobeVec S = lobeRatio (posLobeVec S) (negLobeVec S) • posLobeVec S := by
  rw [pairingScoreSym_eq_pairingScore hS]
  exact pairingScore_eq_pairingBound_iff hpos

/-- **Lemma 2 of the paper** (pairing bound), closed form, bound and equality case together:
for a real symmetric `S` with `λ₊ ≠ 0` and `ρ = ‖λ₋‖ / ‖λ₊‖`,
`𝒫(S) = 1 - sqrt(1 - 2⟨λ₊, λ₋⟩/‖S‖_F²) ≤ 1 - |1 - ρ| / sqrt(1 + ρ²)`, with equality iff
`λ₋ = ρ λ₊`. [qkforms:lemma2] -/
theorem lemma2_pairing_bound {S : Matrix ι ι ℝ} (hS : S.IsHermitian)
    (hpos : posLobeVec S ≠ 0) :
    pairingScoreSym S = 1 - Real.sqrt (1 - 2 * ⟪posLobeVec S, negLobeVec S⟫_ℝ / frobSq S) ∧
    pairingScoreSym S ≤ pairingBound (lobeRatio (posLobeVec S) (negLobeVec S)) ∧
    (pairingScoreSym S = pairingBound (lobeRatio (posLobeVec S) (negLobeVec S)) ↔
      negLobeVec S = lobeRatio (posLobeVec S) (negLobeVec S) • posLobeVec S) :=
  ⟨pairingScoreSym_eq_one_sub_sqrt hS hpos, pairingScoreSym_le_pairingBound hS hpos,
    pairingScoreSym_eq_pairingBound_iff hS hpos⟩

end Matrices

end

end QKForms
