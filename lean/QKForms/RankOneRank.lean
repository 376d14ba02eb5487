/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.RankOne

/-!
# Proposition 4 with `Matrix.rank L = 1`

`QKForms/RankOne.lean` states Proposition 4 of the paper (docs/theory.md §7) for rank-one
matrices written as nonzero outer products, `L ≠ 0 ∧ ∃ u v, L = vecMulVec u v`. This file
proves that this is exactly `Matrix.rank L = 1`, and restates the profile formula and the
family `Θ` with the rank.

## Main statements

* `QKForms.rank_eq_one_iff` (`[qkforms:prop4]`): `L.rank = 1 ↔ L ≠ 0 ∧ ∃ u v, L = vecMulVec u v`.
* `QKForms.profile_of_rank_eq_one`, `QKForms.profile_of_rank_eq_one_of_frobSq_eq_one`
  (`[qkforms:prop4]`): the profile of a rank-one `L`, at any scale and for `‖L‖ = 1`.
* `QKForms.image_profile_rank_eq_one_eq_Theta` (`[qkforms:prop4]`): for `N ≥ 2`,
  `π '' {L | rank L = 1} = Θ`.

## Encoding

The rank is Mathlib's `Matrix.rank A = finrank ℝ (range A.mulVecLin)`
(Mathlib/LinearAlgebra/Matrix/Rank.lean). The outer product `u vᵀ` is `Matrix.vecMulVec u v`.
The hypothesis `2 ≤ Fintype.card ι` of the set statement is the one of `RankOne.lean`.
-/

namespace QKForms

noncomputable section

open Matrix

variable {ι : Type*} [Fintype ι] [DecidableEq ι]

/-- The `i`-th entry of the `j`-th column: `(L *ᵥ eⱼ) i = L i j`. -/
theorem mulVec_single_one_apply (L : Matrix ι ι ℝ) (i j : ι) :
    (L *ᵥ Pi.single j 1) i = L i j := by
  -- the explicit sum uses `Finset.sum_eq_single`, `Pi.single_eq_same`, `Pi.single_eq_of_ne`;
  -- `simp` (through `Matrix.mulVec_single_one` or the sum) is the fallback
  -- closes by: the explicit sum (first branch)
  first
  | -- `(L *ᵥ v) i` is by definition `∑ k, L i k * v k` (`Matrix.mulVec`, `dotProduct`)
    show ∑ k, L i k * Pi.single j (1 : ℝ) k = L i j
    rw [Finset.sum_eq_single j]
    · rw [Pi.single_eq_same, _root_.mul_one]
    · intro k _ hk
      rw [Pi.single_eq_of_ne hk, MulZeroClass.mul_zero]
    · intro h
      exact absurd (Finset.mem_univ j) h
  | simp [Matrix.mulVec, dotProduct, Pi.single_apply]

/-- A matrix of rank `0` is zero. Uses `Submodule.finrank_eq_zero`
(Mathlib/LinearAlgebra/Dimension/), `LinearMap.mem_range_self` and `Submodule.mem_bot`. -/
theorem eq_zero_of_rank_eq_zero {L : Matrix ι ι ℝ} (h : L.rank = 0) : L = 0 := by
  -- `Matrix.rank L` is by definition `finrank ℝ (LinearMap.range L.mulVecLin)`
  have hbot : LinearMap.range L.mulVecLin = ⊥ := Submodule.finrank_eq_zero.1 h
  ext i j
  have hmem : L *ᵥ Pi.single j 1 ∈ LinearMap.range L.mulVecLin :=
    LinearMap.mem_range_self L.mulVecLin (Pi.single j 1)
  rw [hbot, Submodule.mem_bot] at hmem
  calc L i j = (L *ᵥ Pi.single j 1) i := (mulVec_single_one_apply L i j).symm
    _ = 0 := congrFun hmem i

/-- A nonzero outer product has rank one. Uses `Matrix.rank_vecMulVec_le`
(Mathlib/LinearAlgebra/Matrix/Rank.lean). -/
theorem rank_eq_one_of_eq_vecMulVec {L : Matrix ι ι ℝ} {u v : ι → ℝ}
    (huv : L = vecMulVec u v) (hL : L ≠ 0) : L.rank = 1 := by
  have hle : L.rank ≤ 1 := by
    rw [huv]
    exact Matrix.rank_vecMulVec_le u v
  have hne : L.rank ≠ 0 := fun h => hL (eq_zero_of_rank_eq_zero h)
  omega

/-- A matrix of rank one is an outer product: its range is a line `ℝ w`, so the `j`-th column
is `c_j w` and `L = w cᵀ`. Uses `finrank_eq_one_iff'`
(Mathlib/LinearAlgebra/Dimension/FreeAndStrongRankCondition.lean). -/
theorem exists_eq_vecMulVec_of_rank_eq_one {L : Matrix ι ι ℝ} (hL : L.rank = 1) :
    ∃ u v : ι → ℝ, L = vecMulVec u v := by
  have hr : Module.finrank ℝ (LinearMap.range L.mulVecLin) = 1 := hL
  obtain ⟨w, -, hw⟩ := finrank_eq_one_iff'.1 hr
  have hcol : ∀ j, ∃ c : ℝ, c • (w : ι → ℝ) = L *ᵥ Pi.single j 1 := fun j => by
    obtain ⟨c, hc⟩ := hw ⟨L *ᵥ Pi.single j 1, LinearMap.mem_range_self L.mulVecLin (Pi.single j 1)⟩
    exact ⟨c, congrArg Subtype.val hc⟩
  choose c hc using hcol
  refine ⟨(w : ι → ℝ), c, ?_⟩
  ext i j
  rw [Matrix.vecMulVec_apply, ← mulVec_single_one_apply L i j, ← hc j, Pi.smul_apply,
    smul_eq_mul, mul_comm]

/-- **Proposition 4 of the paper** (rank one, statement link): a real square matrix has rank
one exactly when it is a nonzero outer product `u vᵀ`, the encoding of "rank one" in
`QKForms/RankOne.lean`. [qkforms:prop4] -/
theorem rank_eq_one_iff (L : Matrix ι ι ℝ) :
    L.rank = 1 ↔ L ≠ 0 ∧ ∃ u v : ι → ℝ, L = vecMulVec u v := by
  constructor
  · intro hL
    refine ⟨fun h0 => ?_, exists_eq_vecMulVec_of_rank_eq_one hL⟩
    rw [h0, Matrix.rank_zero] at hL
    exact zero_ne_one hL
  · rintro ⟨hL, u, v, huv⟩
    exact rank_eq_one_of_eq_vecMulVec huv hL

/-- **Proposition 4 of the paper** (any scale, with the rank): if `rank L = 1`, `F = ‖L‖²` and
`t = tr L`, then `π(L) = ((F - t²)/(2F), (F - t²)/(2F), (t₊)²/F, (t₋)²/F)`. [qkforms:prop4] -/
theorem profile_of_rank_eq_one {L : Matrix ι ι ℝ} (hL : L.rank = 1) :
    profile L = ((frobSq L - L.trace ^ 2) / (2 * frobSq L),
      (frobSq L - L.trace ^ 2) / (2 * frobSq L), max L.trace 0 ^ 2 / frobSq L,
      max (-L.trace) 0 ^ 2 / frobSq L) := by
  obtain ⟨hL0, u, v, huv⟩ := (rank_eq_one_iff L).1 hL
  exact profile_of_eq_vecMulVec huv hL0

/-- **Proposition 4 of the paper** (as stated, with the rank): if `rank L = 1`, `‖L‖ = 1` and
`t = tr L`, then `π(L) = ((1 - t²)/2, (1 - t²)/2, t₊², t₋²)`. [qkforms:prop4] -/
theorem profile_of_rank_eq_one_of_frobSq_eq_one {L : Matrix ι ι ℝ} (hL : L.rank = 1)
    (h1 : frobSq L = 1) :
    profile L = ((1 - L.trace ^ 2) / 2, (1 - L.trace ^ 2) / 2, max L.trace 0 ^ 2,
      max (-L.trace) 0 ^ 2) := by
  obtain ⟨-, u, v, huv⟩ := (rank_eq_one_iff L).1 hL
  exact profile_of_eq_vecMulVec_of_frobSq_eq_one huv h1

/-- **Proposition 4 of the paper** (the family Θ, with the rank): for `N ≥ 2` the set of
profiles of the matrices of rank one is `Θ = {(a, b, c, d) ∈ Δ₃ : a = b, cd = 0}`.
[qkforms:prop4] -/
theorem image_profile_rank_eq_one_eq_Theta (hN : 2 ≤ Fintype.card ι) :
    profile '' {L : Matrix ι ι ℝ | L.rank = 1} = Theta := by
  have hset : {L : Matrix ι ι ℝ | L.rank = 1} =
      {L : Matrix ι ι ℝ | L ≠ 0 ∧ ∃ u v : ι → ℝ, L = vecMulVec u v} := by
    ext L
    -- membership in `{L | p L}` is `p L` by definition (`Set.mem_setOf_eq`)
    exact rank_eq_one_iff L
  rw [hset]
  exact image_profile_rankOne_eq_Theta hN

end

end QKForms
