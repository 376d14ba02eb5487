/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.Basic

/-!
# Rank balance (Lemma 3)

If `L ∈ M_N(ℝ)` has rank at most `r`, its symmetric part has at most `r` positive and at
most `r` negative eigenvalues, counted with multiplicity (docs/theory.md,
"Signature", Lemma 3).

## Proof

Let `S = symPart L`, `U` its orthogonal eigenvector matrix (`Matrix.IsHermitian.eigenvectorUnitary`)
and `V` the columns of `U` belonging to a set `P` of eigenvalues of one strict sign. For
`x : P → ℝ`, `(V x) ⬝ (S (V x)) = ∑ j, λ_j x_j²` (`Vᵀ V = 1`, `S V = V diag(λ)`), and
`(V x) ⬝ (S (V x)) = (V x) ⬝ (L (V x))`. Hence `L * V` is injective on `P → ℝ`, so
`|P| = rank (L * V) ≤ rank L`. This is the paper's argument (the positive span meets
`ker L` trivially) written with matrices.

## Main statements

* `QKForms.nPos_symPart_le_rank`, `QKForms.nNeg_symPart_le_rank` (`[qkforms:lemma3]`)
* `QKForms.nPos_symPart_le_and_nNeg_symPart_le_of_rank_le` (`[qkforms:lemma3]`)

## Encoding

Counts of eigenvalues are `QKForms.nPos`/`QKForms.nNeg` of `Basic.lean` (roots of the
characteristic polynomial with multiplicity); the rank is `Matrix.rank`.
-/

namespace QKForms

noncomputable section

open scoped Matrix

variable {ι : Type*} [Fintype ι]

section Quadratic

/-- The quadratic form `x ⬝ᵥ (A *ᵥ x)` as a double sum. -/
theorem dotProduct_mulVec_self_eq_sum (A : Matrix ι ι ℝ) (x : ι → ℝ) :
    x ⬝ᵥ (A *ᵥ x) = ∑ i, ∑ j, x i * A i j * x j := by
  simp only [dotProduct, Matrix.mulVec, Finset.mul_sum]
  refine Finset.sum_congr rfl fun i _ => Finset.sum_congr rfl fun j _ => ?_
  ring

/-- `L` and its symmetric part have the same quadratic form. -/
theorem dotProduct_symPart_mulVec (L : Matrix ι ι ℝ) (x : ι → ℝ) :
    x ⬝ᵥ (symPart L *ᵥ x) = x ⬝ᵥ (L *ᵥ x) := by
  rw [dotProduct_mulVec_self_eq_sum, dotProduct_mulVec_self_eq_sum]
  have hT : ∑ i, ∑ j, x i * L j i * x j = ∑ i, ∑ j, x i * L i j * x j := by
    rw [Finset.sum_comm]
    refine Finset.sum_congr rfl fun i _ => Finset.sum_congr rfl fun j _ => ?_
    ring
  have hS : ∑ i, ∑ j, x i * symPart L i j * x j =
      (1 / 2 : ℝ) * (∑ i, ∑ j, x i * L i j * x j) +
        (1 / 2 : ℝ) * ∑ i, ∑ j, x i * L j i * x j := by
    simp only [Finset.mul_sum, ← Finset.sum_add_distrib]
    refine Finset.sum_congr rfl fun i _ => Finset.sum_congr rfl fun j _ => ?_
    rw [symPart_apply]
    ring
  rw [hS, hT]
  ring

end Quadratic

variable [DecidableEq ι]

section Eigenvectors

variable {A : Matrix ι ι ℝ}

/-- Columns of the eigenvector matrix are orthonormal: `∑ a, U a i * U a j = δ i j`.
From `Matrix.mem_unitaryGroup_iff'` (Mathlib/LinearAlgebra/UnitaryGroup.lean) applied to
`Matrix.IsHermitian.eigenvectorUnitary` (Mathlib/Analysis/Matrix/Spectrum.lean). -/
theorem sum_eigenvectorUnitary_mul (hA : A.IsHermitian) (i j : ι) :
    ∑ a, (hA.eigenvectorUnitary : Matrix ι ι ℝ) a i * (hA.eigenvectorUnitary : Matrix ι ι ℝ) a j =
      if i = j then 1 else 0 := by
  have hU : star (hA.eigenvectorUnitary : Matrix ι ι ℝ) * (hA.eigenvectorUnitary : Matrix ι ι ℝ)
      = 1 :=
    Matrix.mem_unitaryGroup_iff'.1 hA.eigenvectorUnitary.2
  have h := congrFun (congrFun hU i) j
  simpa only [Matrix.mul_apply, Matrix.star_apply, star_trivial, Matrix.one_apply] using h

/-- The `j`-th column of the eigenvector matrix is an eigenvector for `hA.eigenvalues j`.
From `Matrix.IsHermitian.mulVec_eigenvectorBasis` and `eigenvectorUnitary_apply`
(Mathlib/Analysis/Matrix/Spectrum.lean). -/
theorem mulVec_eigenvectorUnitary_col (hA : A.IsHermitian) (j : ι) :
    A *ᵥ (fun a => (hA.eigenvectorUnitary : Matrix ι ι ℝ) a j) =
      hA.eigenvalues j • (fun a => (hA.eigenvectorUnitary : Matrix ι ι ℝ) a j) := by
  -- the right-hand side `_` is the coerced eigenvector `⇑(hA.eigenvectorBasis j)`. Mathlib
  -- proves `eigenvectorUnitary_apply` by `rfl`, so the column *is* that eigenvector up to
  -- definitional unfolding (and eta): the second branch is `exact` alone, with no `rw` needing
  -- the column to occur syntactically.
  -- closes by: the first branch (`rw` with the column equation, then `exact`) at the pin
  first
  | (rw [show (fun a => (hA.eigenvectorUnitary : Matrix ι ι ℝ) a j) = _ from
        funext fun a => hA.eigenvectorUnitary_apply a j]
     exact hA.mulVec_eigenvectorBasis j)
  | exact hA.mulVec_eigenvectorBasis j

/-- The columns `j` with `p j` of the eigenvector matrix of a Hermitian matrix. -/
noncomputable def eigenCols (hA : A.IsHermitian) (p : ι → Prop) : Matrix ι {j // p j} ℝ :=
  Matrix.of fun a j => (hA.eigenvectorUnitary : Matrix ι ι ℝ) a j.1

variable (hA : A.IsHermitian) (p : ι → Prop) [DecidablePred p]

theorem eigenCols_transpose_mul_self : (eigenCols hA p)ᵀ * eigenCols hA p = 1 := by
  ext i j
  rw [Matrix.mul_apply]
  simp only [eigenCols, Matrix.transpose_apply, Matrix.of_apply]
  rw [sum_eigenvectorUnitary_mul, Matrix.one_apply]
  by_cases h : i = j
  · rw [if_pos (congrArg Subtype.val h), if_pos h]
  · rw [if_neg (fun h' => h (Subtype.ext h')), if_neg h]

theorem mul_eigenCols :
    A * eigenCols hA p =
      eigenCols hA p * Matrix.diagonal (fun j : {j // p j} => hA.eigenvalues j.1) := by
  ext a j
  rw [Matrix.mul_diagonal, Matrix.mul_apply]
  have h := congrFun (mulVec_eigenvectorUnitary_col hA j.1) a
  simp only [Matrix.mulVec, dotProduct, Pi.smul_apply, smul_eq_mul] at h
  simp only [eigenCols, Matrix.of_apply]
  rw [h, mul_comm]

/-- On the span of the chosen eigenvectors the quadratic form of `A` is diagonal. -/
theorem dotProduct_mulVec_eigenCols (x : {j // p j} → ℝ) :
    (eigenCols hA p *ᵥ x) ⬝ᵥ (A *ᵥ (eigenCols hA p *ᵥ x)) =
      ∑ j, hA.eigenvalues j.1 * x j ^ 2 := by
  rw [Matrix.mulVec_mulVec, mul_eigenCols hA p, ← Matrix.mulVec_mulVec,
    Matrix.dotProduct_mulVec, ← Matrix.vecMul_transpose (eigenCols hA p) x,
    Matrix.vecMul_vecMul, eigenCols_transpose_mul_self hA p, Matrix.vecMul_one]
  simp only [dotProduct, Matrix.mulVec_diagonal]
  refine Finset.sum_congr rfl fun j _ => ?_
  ring

end Eigenvectors

section Balance

variable (L : Matrix ι ι ℝ) (hS : (symPart L).IsHermitian) (p : ι → Prop) [DecidablePred p]

/-- If all chosen eigenvalues of `symPart L` have the strict sign of `s`, then `L * V` is
injective on the chosen coordinates. -/
theorem injective_mulVecLin_mul_eigenCols (s : ℝ) (hp : ∀ j, p j → 0 < s * hS.eigenvalues j) :
    Function.Injective (L * eigenCols hS p).mulVecLin := by
  refine (injective_iff_map_eq_zero _).2 fun x hx => ?_
  rw [Matrix.mulVecLin_apply, ← Matrix.mulVec_mulVec] at hx
  have hq : ∑ j, hS.eigenvalues j.1 * x j ^ 2 = 0 := by
    rw [← dotProduct_mulVec_eigenCols hS p x, dotProduct_symPart_mulVec, hx, dotProduct_zero]
  have hq' : ∑ j, s * hS.eigenvalues j.1 * x j ^ 2 = 0 := by
    have h : ∑ j, s * hS.eigenvalues j.1 * x j ^ 2 = s * ∑ j, hS.eigenvalues j.1 * x j ^ 2 := by
      rw [Finset.mul_sum]
      refine Finset.sum_congr rfl fun j _ => ?_
      ring
    rw [h, hq, mul_zero]
  have hnonneg : ∀ j ∈ (Finset.univ : Finset {j // p j}),
      0 ≤ s * hS.eigenvalues j.1 * x j ^ 2 :=
    fun j _ => mul_nonneg (hp j.1 j.2).le (sq_nonneg (x j))
  have hterm := (Finset.sum_eq_zero_iff_of_nonneg hnonneg).1 hq'
  funext j
  rcases mul_eq_zero.1 (hterm j (Finset.mem_univ j)) with h | h
  · exact absurd h (hp j.1 j.2).ne'
  · exact (pow_eq_zero_iff two_ne_zero).1 h

/-- The number of chosen eigenvalues (all of one strict sign) is at most `rank L`.
Uses `Module.finrank_pi`, `LinearMap.finrank_range_of_inj` and `Matrix.rank_mul_le_left`
(Mathlib/LinearAlgebra/Dimension/Constructions.lean, Mathlib/LinearAlgebra/Matrix/Rank.lean). -/
theorem card_le_rank_of_sign (s : ℝ) (hp : ∀ j, p j → 0 < s * hS.eigenvalues j) :
    Fintype.card {j // p j} ≤ L.rank :=
  -- every step is a term checked up to defeq, so the instance paths of `finrank` in Mathlib's
  -- statements need not match ours syntactically; `Matrix.rank A` is by definition
  -- `finrank R (LinearMap.range A.mulVecLin)` (Mathlib/LinearAlgebra/Matrix/Rank.lean)
  calc Fintype.card {j // p j} = Module.finrank ℝ ({j // p j} → ℝ) :=
        (Module.finrank_pi ℝ).symm
    _ = (L * eigenCols hS p).rank :=
        (LinearMap.finrank_range_of_inj (injective_mulVecLin_mul_eigenCols L hS p s hp)).symm
    _ ≤ L.rank := Matrix.rank_mul_le_left _ _

end Balance

/-- **Lemma 3 of the paper** (positive half): `n₊(S) ≤ rank L`. [qkforms:lemma3] -/
theorem nPos_symPart_le_rank (L : Matrix ι ι ℝ) : nPos (symPart L) ≤ L.rank := by
  have hS := symPart_isHermitian L
  calc nPos (symPart L)
      = (Finset.univ.filter fun j => 0 < hS.eigenvalues j).card := nPos_eq_card_filter hS
    _ = Fintype.card {j // 0 < hS.eigenvalues j} := (Fintype.card_subtype _).symm
    _ ≤ L.rank := card_le_rank_of_sign L hS (fun j => 0 < hS.eigenvalues j) 1 fun j hj => by
        rw [one_mul]
        exact hj

/-- **Lemma 3 of the paper** (negative half): `n₋(S) ≤ rank L`. [qkforms:lemma3] -/
theorem nNeg_symPart_le_rank (L : Matrix ι ι ℝ) : nNeg (symPart L) ≤ L.rank := by
  have hS := symPart_isHermitian L
  calc nNeg (symPart L)
      = (Finset.univ.filter fun j => hS.eigenvalues j < 0).card := nNeg_eq_card_filter hS
    _ = Fintype.card {j // hS.eigenvalues j < 0} := (Fintype.card_subtype _).symm
    _ ≤ L.rank := card_le_rank_of_sign L hS (fun j => hS.eigenvalues j < 0) (-1) fun j hj => by
        have hj' : hS.eigenvalues j < 0 := hj
        linarith

/-- **Lemma 3 of the paper** (rank balance): if `rank L ≤ r` then the symmetric part of `L` has
at most `r` positive and at most `r` negative eigenvalues (with multiplicity).
[qkforms:lemma3] -/
theorem nPos_symPart_le_and_nNeg_symPart_le_of_rank_le {L : Matrix ι ι ℝ} {r : ℕ}
    (h : L.rank ≤ r) : nPos (symPart L) ≤ r ∧ nNeg (symPart L) ≤ r :=
  ⟨(nPos_symPart_le_rank L).trans h, (nNeg_symPart_le_rank L).trans h⟩

end

end QKForms
