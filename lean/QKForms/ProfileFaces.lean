/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.Profile

/-!
# Theorem 4: fibers of the profile map over the faces of the simplex

Let `L ≠ 0` with symmetric part `S`, lobes `α = posLobe L`, `β = negLobe L` and profile
`π(L) = (a, b, c, d)`.

## Main statements

* `QKForms.profile_mem_simplex` (`thm4.simplex`): `π(L) ∈ Δ₃`.
* `QKForms.profileA_eq_zero_iff`, `QKForms.profileA_eq_one_iff` (`thm4.a_face`):
  `a = 0 ↔ Lᵀ = L`, `a = 1 ↔ Lᵀ = -L`.
* `QKForms.profileB_eq_zero_iff`, `QKForms.profileB_eq_one_iff` (`thm4.b_face`):
  `b = 0 ↔ S ⪰ 0 ∨ -S ⪰ 0`; `b = 1 ↔ Lᵀ = L ∧ α = β`.
* `QKForms.profileD_eq_zero_iff_lobes`, `QKForms.exists_decomp_of_profileD_eq_zero`,
  `QKForms.profileD_eq_one_iff` (`thm4.d_face`): `d = 0 ↔ ∀ j, β_j ≤ α_j`; if `d = 0` then
  `S = H + P` with `H` symmetric, `eigs (-H) = eigs H`, `P ⪰ 0`, `H, P, S` pairwise commuting
  and `‖P‖² = c ‖L‖²`; `d = 1 ↔ Lᵀ = L ∧ -L ⪰ 0`.
* `QKForms.profileC_eq_zero_iff_lobes`, `QKForms.exists_decomp_of_profileC_eq_zero`,
  `QKForms.profileC_eq_one_iff` (`thm4.c_face`): the mirror statements, `S = H - P`,
  `‖P‖² = d ‖L‖²`, `c = 1 ↔ Lᵀ = L ∧ L ⪰ 0`.
* `QKForms.not_profileB_eq_zero_and_pos_and_pos` (`thm4.empty_edge`): no `L` has `b = 0`,
  `c > 0` and `d > 0`.

## Encoding

"`S` semidefinite" is `S.PosSemidef ∨ (-S).PosSemidef` (Mathlib's `Matrix.PosSemidef`, which
includes symmetry). "Spectrum of `H` symmetric about `0`" is `eigs (-H) = eigs H` (the eigenvalues
of `-H` are the negatives of those of `H`), "symmetric" is `Hᵀ = H`, commuting is `Commute`.
`α = β` is `∀ j, posLobe L j = negLobe L j`. The converse implication of Theorem 4 (3)
(`S = H + P` with such `H`, `P` forces `β ≤ α`, via Weyl-type counting) is proved in
`QKForms/ProfileFacesConverse.lean`, which also states the full equivalences; this file has
`d = 0 ↔ β ≤ α` and `d = 0 → ∃ H P`.
-/

namespace QKForms

open Matrix

noncomputable section

variable {ι : Type*} [Fintype ι] [DecidableEq ι]

section Simplex

/-- **Theorem 4 of the paper (simplex).** For `L ≠ 0` the profile lies in the simplex `Δ₃`:
its coordinates are nonnegative and add up to `1`. [qkforms:thm4.simplex] -/
theorem profile_mem_simplex {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    (0 ≤ profileA L ∧ 0 ≤ profileB L ∧ 0 ≤ profileC L ∧ 0 ≤ profileD L) ∧
      profileA L + profileB L + profileC L + profileD L = 1 :=
  ⟨profile_coords_nonneg L, profile_coords_sum_eq_one hL⟩

end Simplex

section AFace

theorem skewPart_eq_zero_iff (L : Matrix ι ι ℝ) : skewPart L = 0 ↔ Lᵀ = L := by
  constructor
  · intro h
    have h2 : L - Lᵀ = (2 : ℝ) • skewPart L := by
      unfold skewPart
      rw [smul_smul, show (2 : ℝ) * (1 / 2) = 1 by norm_num, one_smul]
    rw [h, smul_zero] at h2
    exact (sub_eq_zero.1 h2).symm
  · intro h
    exact skewPart_eq_zero_of_transpose_eq h

theorem symPart_eq_zero_iff (L : Matrix ι ι ℝ) : symPart L = 0 ↔ Lᵀ = -L := by
  rw [eq_neg_iff_add_eq_zero, add_comm]
  constructor
  · intro h
    have h2 : L + Lᵀ = (2 : ℝ) • symPart L := by
      unfold symPart
      rw [smul_smul, show (2 : ℝ) * (1 / 2) = 1 by norm_num, one_smul]
    rw [h, smul_zero] at h2
    exact h2
  · intro h
    unfold symPart
    rw [h, smul_zero]

/-- **Theorem 4 (1) of the paper**, first half: for `L ≠ 0`, `a = 0` iff `L` is symmetric.
[qkforms:thm4.a_face] -/
theorem profileA_eq_zero_iff {L : Matrix ι ι ℝ} (hL : L ≠ 0) : profileA L = 0 ↔ Lᵀ = L := by
  unfold profileA
  rw [div_eq_zero_iff, or_iff_left (frobSq_ne_zero hL), frobSq_eq_zero_iff,
    skewPart_eq_zero_iff]

/-- **Theorem 4 (1) of the paper**, second half: for `L ≠ 0`, `a = 1` iff `L` is antisymmetric.
[qkforms:thm4.a_face] -/
theorem profileA_eq_one_iff {L : Matrix ι ι ℝ} (hL : L ≠ 0) : profileA L = 1 ↔ Lᵀ = -L := by
  have hsplit := frobSq_eq_frobSq_symPart_add_frobSq_skewPart L
  unfold profileA
  rw [div_eq_one_iff_eq (frobSq_ne_zero hL), ← symPart_eq_zero_iff,
    ← frobSq_eq_zero_iff (symPart L)]
  constructor
  · intro h
    linarith
  · intro h
    linarith

end AFace

section Lobes

theorem posLobe_antitone (L : Matrix ι ι ℝ) : Antitone (posLobe L) := by
  intro i j hij
  rw [posLobe_eq_eigenvalues₀ L i, posLobe_eq_eigenvalues₀ L j]
  have h := (symPart_isHermitian L).eigenvalues₀_antitone hij
  -- `max_le_max : a ≤ c → b ≤ d → max a b ≤ max c d` (Mathlib/Order/MinMax.lean)
  exact max_le_max h le_rfl

theorem negLobe_antitone (L : Matrix ι ι ℝ) : Antitone (negLobe L) := by
  intro i j hij
  rw [negLobe_eq_eigenvalues₀ L i, negLobe_eq_eigenvalues₀ L j]
  have h := neg_le_neg ((symPart_isHermitian L).eigenvalues₀_antitone (Fin.rev_le_rev.2 hij))
  exact max_le_max h le_rfl

/-- Two nonnegative decreasing lists with `⟨α, β⟩ = 0`: one of them vanishes. -/
theorem lobe_eq_zero_of_lobeCross_eq_zero {k : ℕ} {α β : Fin k → ℝ} (hα0 : ∀ j, 0 ≤ α j)
    (hβ0 : ∀ j, 0 ≤ β j) (hα : Antitone α) (hβ : Antitone β) (h : lobeCross α β = 0) :
    (∀ j, α j = 0) ∨ (∀ j, β j = 0) := by
  have hsum : ∑ j, α j * β j = 0 := h
  have hterm : ∀ j, α j * β j = 0 := by
    intro j
    exact (Finset.sum_eq_zero_iff_of_nonneg (fun j _ => mul_nonneg (hα0 j) (hβ0 j))).1 hsum j
      (Finset.mem_univ j)
  by_contra hcon
  push_neg at hcon
  obtain ⟨⟨i, hi⟩, ⟨j, hj⟩⟩ := hcon
  have hi' : 0 < α i := lt_of_le_of_ne (hα0 i) (Ne.symm hi)
  have hj' : 0 < β j := lt_of_le_of_ne (hβ0 j) (Ne.symm hj)
  have h1 : α i ≤ α (min i j) := hα (min_le_left i j)
  have h2 : β j ≤ β (min i j) := hβ (min_le_right i j)
  have h3 := hterm (min i j)
  have h4 : 0 < α (min i j) * β (min i j) :=
    mul_pos (lt_of_lt_of_le hi' h1) (lt_of_lt_of_le hj' h2)
  linarith

theorem lobeCross_eq_zero_of_left {k : ℕ} {α β : Fin k → ℝ} (h : ∀ j, α j = 0) :
    lobeCross α β = 0 := by
  unfold lobeCross
  apply Finset.sum_eq_zero
  intro j _
  rw [h j, zero_mul]

theorem lobeCross_eq_zero_of_right {k : ℕ} {α β : Fin k → ℝ} (h : ∀ j, β j = 0) :
    lobeCross α β = 0 := by
  unfold lobeCross
  apply Finset.sum_eq_zero
  intro j _
  rw [h j, mul_zero]

/-- `‖(α - β)₊‖² = 0` iff `α ≤ β` coordinatewise. -/
theorem lobeExcess_eq_zero_iff {k : ℕ} (α β : Fin k → ℝ) :
    lobeExcess α β = 0 ↔ ∀ j, α j ≤ β j := by
  unfold lobeExcess
  rw [Finset.sum_eq_zero_iff_of_nonneg (fun j _ => sq_nonneg (max (α j - β j) 0))]
  constructor
  · intro h j
    have h1 := h j (Finset.mem_univ j)
    have h2 : max (α j - β j) 0 = 0 := (pow_eq_zero_iff two_ne_zero).1 h1
    have h3 := max_eq_right_iff.1 h2
    linarith
  · intro h j _
    have h1 : α j - β j ≤ 0 := by linarith [h j]
    rw [max_eq_right h1]
    norm_num

end Lobes

section Semidefinite

/-- `V diag(d) Vᵀ` (with `V` the eigenvector matrix) is PSD iff `d ≥ 0`. -/
theorem posSemidef_conj_diagonal_iff {S : Matrix ι ι ℝ} (hS : S.IsHermitian) (d : ι → ℝ) :
    (eigMat hS * diagonal d * (eigMat hS)ᵀ).PosSemidef ↔ ∀ i, 0 ≤ d i := by
  have hT : (eigMat hS)ᴴ = (eigMat hS)ᵀ := conjTranspose_eq_transpose_of_trivial _
  constructor
  · intro h
    -- `Matrix.PosSemidef.conjTranspose_mul_mul_same` (Mathlib/LinearAlgebra/Matrix/PosDef.lean)
    have h2 := h.conjTranspose_mul_mul_same (eigMat hS)
    have h3 : (eigMat hS)ᴴ * (eigMat hS * diagonal d * (eigMat hS)ᵀ) * eigMat hS =
        diagonal d := by
      rw [hT]
      calc (eigMat hS)ᵀ * (eigMat hS * diagonal d * (eigMat hS)ᵀ) * eigMat hS
          = ((eigMat hS)ᵀ * eigMat hS) * diagonal d * ((eigMat hS)ᵀ * eigMat hS) := by
            simp only [Matrix.mul_assoc]
        _ = diagonal d := by
            rw [eigMat_transpose_mul, Matrix.one_mul, Matrix.mul_one]
    rw [h3] at h2
    -- `Matrix.posSemidef_diagonal_iff` (same file)
    exact fun i => (Matrix.posSemidef_diagonal_iff.1 h2) i
  · intro h
    -- `Matrix.PosSemidef.mul_mul_conjTranspose_same` (same file)
    have h2 := (Matrix.posSemidef_diagonal_iff.2 h).mul_mul_conjTranspose_same (eigMat hS)
    rw [hT] at h2
    exact h2

theorem posSemidef_iff_forall_eigenvalues_nonneg {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    S.PosSemidef ↔ ∀ i, 0 ≤ hS.eigenvalues i := by
  have h := posSemidef_conj_diagonal_iff hS hS.eigenvalues
  -- fold `V diag(λ) Vᵀ` back to `S` (only the left side of `h` contains it)
  rw [← spectral_real hS] at h
  exact h

theorem neg_posSemidef_iff_forall_eigenvalues_nonpos {S : Matrix ι ι ℝ} (hS : S.IsHermitian) :
    (-S).PosSemidef ↔ ∀ i, hS.eigenvalues i ≤ 0 := by
  rw [neg_eq_conj_diagonal hS, posSemidef_conj_diagonal_iff]
  constructor
  · intro h i
    have h1 : 0 ≤ -hS.eigenvalues i := h i
    linarith
  · intro h i
    show 0 ≤ -hS.eigenvalues i
    linarith [h i]

/-- `α = 0` iff `-S` is positive semidefinite. -/
theorem posLobe_eq_zero_iff (L : Matrix ι ι ℝ) :
    (∀ j, posLobe L j = 0) ↔ (-symPart L).PosSemidef := by
  rw [neg_posSemidef_iff_forall_eigenvalues_nonpos (symPart_isHermitian L)]
  constructor
  · intro h i
    rw [eigenvalues_eq_eigenvalues₀]
    have h1 := h ((eigIndexEquiv ι).symm i)
    rw [posLobe_eq_eigenvalues₀] at h1
    exact max_eq_right_iff.1 h1
  · intro h j
    rw [posLobe_eq_eigenvalues₀]
    have h1 := h (eigIndexEquiv ι j)
    rw [eigenvalues_eq_eigenvalues₀, Equiv.symm_apply_apply] at h1
    exact max_eq_right_iff.2 h1

/-- `β = 0` iff `S` is positive semidefinite. -/
theorem negLobe_eq_zero_iff (L : Matrix ι ι ℝ) :
    (∀ j, negLobe L j = 0) ↔ (symPart L).PosSemidef := by
  rw [posSemidef_iff_forall_eigenvalues_nonneg (symPart_isHermitian L)]
  constructor
  · intro h i
    rw [eigenvalues_eq_eigenvalues₀]
    have h1 := h (Fin.rev ((eigIndexEquiv ι).symm i))
    rw [negLobe_eq_eigenvalues₀, Fin.rev_rev] at h1
    have h2 := max_eq_right_iff.1 h1
    linarith
  · intro h j
    rw [negLobe_eq_eigenvalues₀]
    have h1 := h (eigIndexEquiv ι (Fin.rev j))
    rw [eigenvalues_eq_eigenvalues₀, Equiv.symm_apply_apply] at h1
    apply max_eq_right_iff.2
    linarith

end Semidefinite

section BFace

theorem lobeCross_eq_zero_iff_profileB_eq_zero {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    profileB L = 0 ↔ lobeCross (posLobe L) (negLobe L) = 0 := by
  unfold profileB
  rw [div_eq_zero_iff, or_iff_left (frobSq_ne_zero hL), mul_eq_zero,
    or_iff_right (two_ne_zero : (2 : ℝ) ≠ 0)]

/-- **Theorem 4 (2) of the paper**, first half: for `L ≠ 0`, `b = 0` iff the symmetric part
is (positive or negative) semidefinite; this includes `S = 0`. [qkforms:thm4.b_face] -/
theorem profileB_eq_zero_iff {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    profileB L = 0 ↔ (symPart L).PosSemidef ∨ (-symPart L).PosSemidef := by
  rw [lobeCross_eq_zero_iff_profileB_eq_zero hL, ← posLobe_eq_zero_iff, ← negLobe_eq_zero_iff]
  constructor
  · intro h
    rcases lobe_eq_zero_of_lobeCross_eq_zero (posLobe_nonneg L) (negLobe_nonneg L)
      (posLobe_antitone L) (negLobe_antitone L) h with h1 | h1
    · exact Or.inr h1
    · exact Or.inl h1
  · rintro (h | h)
    · exact lobeCross_eq_zero_of_right h
    · exact lobeCross_eq_zero_of_left h

/-- **Theorem 4 (2) of the paper**, second half (vertex `b = 1`): for `L ≠ 0`, `b = 1` iff `L`
is symmetric and `α = β` (the spectrum of `S` is symmetric about zero). [qkforms:thm4.b_face] -/
theorem profileB_eq_one_iff {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    profileB L = 1 ↔ Lᵀ = L ∧ ∀ j, posLobe L j = negLobe L j := by
  have hF := frobSq_ne_zero hL
  have hnum := profile_numerators_sum L
  have hsplit := frobSq_eq_frobSq_symPart_add_frobSq_skewPart L
  have hC := lobeExcess_nonneg (posLobe L) (negLobe L)
  have hD := lobeExcess_nonneg (negLobe L) (posLobe L)
  have hT := frobSq_nonneg (skewPart L)
  unfold profileB
  rw [div_eq_one_iff_eq hF]
  constructor
  · intro h
    have hC0 : lobeExcess (posLobe L) (negLobe L) = 0 := by linarith
    have hD0 : lobeExcess (negLobe L) (posLobe L) = 0 := by linarith
    have hT0 : frobSq (skewPart L) = 0 := by linarith
    refine ⟨(skewPart_eq_zero_iff L).1 (eq_zero_of_frobSq_eq_zero hT0), fun j => ?_⟩
    exact le_antisymm ((lobeExcess_eq_zero_iff _ _).1 hC0 j)
      ((lobeExcess_eq_zero_iff _ _).1 hD0 j)
  · rintro ⟨hsym, heq⟩
    have hC0 : lobeExcess (posLobe L) (negLobe L) = 0 :=
      (lobeExcess_eq_zero_iff _ _).2 fun j => le_of_eq (heq j)
    have hD0 : lobeExcess (negLobe L) (posLobe L) = 0 :=
      (lobeExcess_eq_zero_iff _ _).2 fun j => le_of_eq (heq j).symm
    have hT0 : frobSq (skewPart L) = 0 := by
      rw [skewPart_eq_zero_of_transpose_eq hsym]
      exact frobSq_zero_matrix
    linarith

end BFace

section EmptyEdge

/-- **Theorem 4 of the paper (empty edge).** No nonzero `L` has `b = 0` with `c > 0` and
`d > 0`: in particular the open edge of `Δ₃` between the vertices `c = 1` and `d = 1` has empty
fiber. [qkforms:thm4.empty_edge] -/
theorem not_profileB_eq_zero_and_pos_and_pos {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    ¬ (profileB L = 0 ∧ 0 < profileC L ∧ 0 < profileD L) := by
  rintro ⟨hb, hc, hd⟩
  rw [lobeCross_eq_zero_iff_profileB_eq_zero hL] at hb
  rcases lobe_eq_zero_of_lobeCross_eq_zero (posLobe_nonneg L) (negLobe_nonneg L)
    (posLobe_antitone L) (negLobe_antitone L) hb with h1 | h1
  · have hC0 : lobeExcess (posLobe L) (negLobe L) = 0 :=
      (lobeExcess_eq_zero_iff _ _).2 fun j => by rw [h1 j]; exact negLobe_nonneg L j
    unfold profileC at hc
    rw [hC0, zero_div] at hc
    exact lt_irrefl _ hc
  · have hD0 : lobeExcess (negLobe L) (posLobe L) = 0 :=
      (lobeExcess_eq_zero_iff _ _).2 fun j => by rw [h1 j]; exact posLobe_nonneg L j
    unfold profileD at hd
    rw [hD0, zero_div] at hd
    exact lt_irrefl _ hd

end EmptyEdge

section Decomposition

/-- Eigenvalue of `H` at the sorted index `k`: `β_k - β_{N-1-k}`. -/
noncomputable def hEig (L : Matrix ι ι ℝ) (k : Fin (Fintype.card ι)) : ℝ :=
  negLobe L k - negLobe L (Fin.rev k)

/-- Eigenvalue of `P` at the sorted index `k`: `α_k - β_k`. -/
noncomputable def pEig (L : Matrix ι ι ℝ) (k : Fin (Fintype.card ι)) : ℝ :=
  posLobe L k - negLobe L k

/-- The balanced part `H` of the decomposition `S = H + P` (Theorem 4 (3)): in an orthonormal
eigenbasis of `S` (sorted decreasingly), `H` has eigenvalue `β_k - β_{N-1-k}` on the `k`-th
eigenvector. When `β ≤ α` (so `S` has at most as many negative as positive eigenvalues) this is
`β_j` on the `j`-th positive and `-β_j` on the `j`-th negative eigenvector, `0` elsewhere. -/
noncomputable def decompH (L : Matrix ι ι ℝ) : Matrix ι ι ℝ :=
  eigMat (symPart_isHermitian L) *
    diagonal (fun i => hEig L ((eigIndexEquiv ι).symm i)) * (eigMat (symPart_isHermitian L))ᵀ

/-- The remainder `P = S - H`: eigenvalue `α_k - β_k` on the `k`-th eigenvector. -/
noncomputable def decompP (L : Matrix ι ι ℝ) : Matrix ι ι ℝ :=
  eigMat (symPart_isHermitian L) *
    diagonal (fun i => pEig L ((eigIndexEquiv ι).symm i)) * (eigMat (symPart_isHermitian L))ᵀ

theorem transpose_conj_diagonal (V : Matrix ι ι ℝ) (d : ι → ℝ) :
    (V * diagonal d * Vᵀ)ᵀ = V * diagonal d * Vᵀ := by
  simp only [Matrix.transpose_mul, Matrix.transpose_transpose, Matrix.diagonal_transpose,
    Matrix.mul_assoc]

theorem neg_conj_diagonal (V : Matrix ι ι ℝ) (d : ι → ℝ) :
    -(V * diagonal d * Vᵀ) = V * diagonal (fun i => -d i) * Vᵀ := by
  -- `Matrix.diagonal_neg : -diagonal d = diagonal fun i => -d i`
  -- (Mathlib/Data/Matrix/Diagonal.lean)
  have hd : diagonal (fun i => -d i) = -diagonal d := (Matrix.diagonal_neg d).symm
  rw [hd, Matrix.mul_neg, Matrix.neg_mul]

theorem commute_conj_diagonal {V : Matrix ι ι ℝ} (hV : Vᵀ * V = 1) (d₁ d₂ : ι → ℝ) :
    Commute (V * diagonal d₁ * Vᵀ) (V * diagonal d₂ * Vᵀ) := by
  have key : ∀ a b : ι → ℝ, (V * diagonal a * Vᵀ) * (V * diagonal b * Vᵀ) =
      V * diagonal (fun i => a i * b i) * Vᵀ := by
    intro a b
    calc (V * diagonal a * Vᵀ) * (V * diagonal b * Vᵀ)
        = V * diagonal a * (Vᵀ * V) * diagonal b * Vᵀ := by
          simp only [Matrix.mul_assoc]
      _ = V * diagonal (fun i => a i * b i) * Vᵀ := by
          rw [hV, Matrix.mul_one, Matrix.mul_assoc V (diagonal a), diagonal_mul_diagonal]
  show (V * diagonal d₁ * Vᵀ) * (V * diagonal d₂ * Vᵀ) =
    (V * diagonal d₂ * Vᵀ) * (V * diagonal d₁ * Vᵀ)
  rw [key, key]
  -- The first branch rewrites the function `fun i => d₁ i * d₂ i` (a lambda pattern); the
  -- second applies `congrArg` to the same function equation, with no pattern to find.
  -- closes by: the first branch (its closing `rfl` is syntactic) at the pin
  first
  | (rw [show (fun i => d₁ i * d₂ i) = (fun i => d₂ i * d₁ i) from
        funext fun i => mul_comm (d₁ i) (d₂ i)]
     done)
  | exact congrArg (fun f => V * diagonal f * Vᵀ) (funext fun i => mul_comm (d₁ i) (d₂ i))

theorem symPart_eq_decompH_add_decompP (L : Matrix ι ι ℝ) :
    symPart L = decompH L + decompP L := by
  have hpt : ∀ i, (symPart_isHermitian L).eigenvalues i =
      hEig L ((eigIndexEquiv ι).symm i) + pEig L ((eigIndexEquiv ι).symm i) := by
    intro i
    rw [eigenvalues_eq_eigenvalues₀]
    unfold hEig pEig
    have h := max_sub_max_neg ((symPart_isHermitian L).eigenvalues₀ ((eigIndexEquiv ι).symm i))
    -- The first branch rewrites the three lobe values one instance at a time (the two
    -- `negLobe_eq_eigenvalues₀` at the indices `k` and `Fin.rev k`, in the order `rw` finds
    -- them); the second rewrites them all by `simp only`. `linarith` ends both.
    -- closes by: the first branch at the pin
    first
    | (rw [posLobe_eq_eigenvalues₀, negLobe_eq_eigenvalues₀, negLobe_eq_eigenvalues₀,
          Fin.rev_rev]
       linarith)
    | (simp only [posLobe_eq_eigenvalues₀, negLobe_eq_eigenvalues₀, Fin.rev_rev]
       linarith)
  have hd : diagonal (symPart_isHermitian L).eigenvalues =
      diagonal (fun i => hEig L ((eigIndexEquiv ι).symm i)) +
        diagonal (fun i => pEig L ((eigIndexEquiv ι).symm i)) := by
    rw [diagonal_add]
    exact congrArg diagonal (funext hpt)
  unfold decompH decompP
  -- `V Dh Vᵀ + V Dp Vᵀ = (V Dh + V Dp) Vᵀ = V (Dh + Dp) Vᵀ = V diag(λ) Vᵀ = S`. The second
  -- branch ends with the spectral theorem as a term instead of a backward rewrite.
  -- closes by: the first branch at the pin
  first
  | (rw [← Matrix.add_mul, ← Matrix.mul_add, ← hd, ← spectral_real (symPart_isHermitian L)]
     done)
  | (rw [← Matrix.add_mul, ← Matrix.mul_add, ← hd]
     exact spectral_real (symPart_isHermitian L))

theorem decompH_transpose (L : Matrix ι ι ℝ) : (decompH L)ᵀ = decompH L := by
  unfold decompH
  exact transpose_conj_diagonal _ _

/-- The spectrum of `H` is symmetric about zero. -/
theorem eigs_neg_decompH (L : Matrix ι ι ℝ) : eigs (-decompH L) = eigs (decompH L) := by
  have hV := eigMat_transpose_mul (symPart_isHermitian L)
  have h3 : (fun k => -hEig L k) = hEig L ∘ Fin.revPerm := by
    funext k
    show -hEig L k = hEig L (Fin.rev k)
    unfold hEig
    rw [Fin.rev_rev]
    ring
  unfold decompH
  rw [neg_conj_diagonal, eigs_conj_diagonal hV, eigs_conj_diagonal hV]
  calc _ = Multiset.map (fun k => -hEig L k) Finset.univ.val :=
        map_univ_val_comp_equiv (eigIndexEquiv ι).symm (fun k => -hEig L k)
    _ = Multiset.map (hEig L ∘ Fin.revPerm) Finset.univ.val := by rw [h3]
    _ = Multiset.map (hEig L) Finset.univ.val := map_univ_val_comp_equiv Fin.revPerm (hEig L)
    _ = _ := (map_univ_val_comp_equiv (eigIndexEquiv ι).symm (hEig L)).symm

theorem decompP_posSemidef {L : Matrix ι ι ℝ} (h : ∀ j, negLobe L j ≤ posLobe L j) :
    (decompP L).PosSemidef := by
  unfold decompP
  rw [posSemidef_conj_diagonal_iff]
  intro i
  show 0 ≤ pEig L ((eigIndexEquiv ι).symm i)
  unfold pEig
  linarith [h ((eigIndexEquiv ι).symm i)]

theorem commute_decompH_decompP (L : Matrix ι ι ℝ) : Commute (decompH L) (decompP L) := by
  unfold decompH decompP
  exact commute_conj_diagonal (eigMat_transpose_mul (symPart_isHermitian L)) _ _

theorem frobSq_decompP {L : Matrix ι ι ℝ} (h : ∀ j, negLobe L j ≤ posLobe L j) :
    frobSq (decompP L) = lobeExcess (posLobe L) (negLobe L) := by
  unfold decompP
  rw [frobSq_conj_of_orthogonal (eigMat_transpose_mul (symPart_isHermitian L)), frobSq_diagonal]
  refine (Equiv.sum_comp (eigIndexEquiv ι).symm (fun k => pEig L k ^ 2)).trans ?_
  unfold lobeExcess pEig
  apply Finset.sum_congr rfl
  intro k _
  rw [max_eq_left (sub_nonneg.2 (h k))]

/-- The decomposition of Theorem 4 (3), for lobes with `β ≤ α`. -/
theorem exists_decomp_of_negLobe_le {L : Matrix ι ι ℝ} (h : ∀ j, negLobe L j ≤ posLobe L j) :
    ∃ H P : Matrix ι ι ℝ, symPart L = H + P ∧ Hᵀ = H ∧ eigs (-H) = eigs H ∧ P.PosSemidef ∧
      Commute H (symPart L) ∧ Commute P (symPart L) ∧ Commute H P ∧
      frobSq P = lobeExcess (posLobe L) (negLobe L) := by
  have hHP := commute_decompH_decompP L
  refine ⟨decompH L, decompP L, symPart_eq_decompH_add_decompP L, decompH_transpose L,
    eigs_neg_decompH L, decompP_posSemidef h, ?_, ?_, hHP, frobSq_decompP h⟩
  · rw [symPart_eq_decompH_add_decompP L]
    exact (Commute.refl (decompH L)).add_right hHP
  · rw [symPart_eq_decompH_add_decompP L]
    exact hHP.symm.add_right (Commute.refl (decompP L))

end Decomposition

section DFace

theorem lobeExcess_eq_profileC_mul {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    lobeExcess (posLobe L) (negLobe L) = profileC L * frobSq L := by
  unfold profileC
  -- `div_mul_cancel₀ (a : G₀) (h : b ≠ 0) : a / b * b = a`
  -- (Mathlib/Algebra/GroupWithZero/Units/Basic.lean)
  exact (div_mul_cancel₀ _ (frobSq_ne_zero hL)).symm

/-- **Theorem 4 (3) of the paper**, lobe form: for `L ≠ 0`, `d = 0` iff `β_j ≤ α_j` for every
`j`. [qkforms:thm4.d_face] -/
theorem profileD_eq_zero_iff_lobes {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    profileD L = 0 ↔ ∀ j, negLobe L j ≤ posLobe L j := by
  unfold profileD
  rw [div_eq_zero_iff, or_iff_left (frobSq_ne_zero hL), lobeExcess_eq_zero_iff]

/-- **Theorem 4 (3) of the paper**, decomposition: if `L ≠ 0` and `d = 0`, then `S = H + P`
with `H` symmetric whose spectrum is symmetric about `0` (`eigs (-H) = eigs H`), `P` positive
semidefinite, `H`, `P`, `S` pairwise commuting, and `‖P‖² = c ‖L‖²`.
(The converse is `QKForms.profileD_eq_zero_of_eq_add`.) [qkforms:thm4.d_face] -/
theorem exists_decomp_of_profileD_eq_zero {L : Matrix ι ι ℝ} (hL : L ≠ 0)
    (hd : profileD L = 0) :
    ∃ H P : Matrix ι ι ℝ, symPart L = H + P ∧ Hᵀ = H ∧ eigs (-H) = eigs H ∧ P.PosSemidef ∧
      Commute H (symPart L) ∧ Commute P (symPart L) ∧ Commute H P ∧
      frobSq P = profileC L * frobSq L := by
  obtain ⟨H, P, h1, h2, h3, h4, h5, h6, h7, h8⟩ :=
    exists_decomp_of_negLobe_le ((profileD_eq_zero_iff_lobes hL).1 hd)
  exact ⟨H, P, h1, h2, h3, h4, h5, h6, h7, h8.trans (lobeExcess_eq_profileC_mul hL)⟩

/-- **Theorem 4 (3) of the paper**, vertex: for `L ≠ 0`, `d = 1` iff `L` is symmetric negative
semidefinite. [qkforms:thm4.d_face] -/
theorem profileD_eq_one_iff {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    profileD L = 1 ↔ Lᵀ = L ∧ (-L).PosSemidef := by
  have hF := frobSq_ne_zero hL
  have hnum := profile_numerators_sum L
  have hsplit := frobSq_eq_frobSq_symPart_add_frobSq_skewPart L
  have hX := lobeCross_nonneg (posLobe_nonneg L) (negLobe_nonneg L)
  have hC := lobeExcess_nonneg (posLobe L) (negLobe L)
  have hT := frobSq_nonneg (skewPart L)
  constructor
  · intro h
    unfold profileD at h
    rw [div_eq_one_iff_eq hF] at h
    have hX0 : lobeCross (posLobe L) (negLobe L) = 0 := by linarith
    have hC0 : lobeExcess (posLobe L) (negLobe L) = 0 := by linarith
    have hT0 : frobSq (skewPart L) = 0 := by linarith
    have hsym : Lᵀ = L := (skewPart_eq_zero_iff L).1 (eq_zero_of_frobSq_eq_zero hT0)
    have hle := (lobeExcess_eq_zero_iff _ _).1 hC0
    have hα : ∀ j, posLobe L j = 0 := by
      rcases lobe_eq_zero_of_lobeCross_eq_zero (posLobe_nonneg L) (negLobe_nonneg L)
        (posLobe_antitone L) (negLobe_antitone L) hX0 with h1 | h1
      · exact h1
      · intro j
        have h2 := hle j
        rw [h1 j] at h2
        exact le_antisymm h2 (posLobe_nonneg L j)
    have hneg := (posLobe_eq_zero_iff L).1 hα
    rw [symPart_eq_self_of_transpose_eq hsym] at hneg
    exact ⟨hsym, hneg⟩
  · rintro ⟨hsym, hneg⟩
    have hneg' : (-symPart L).PosSemidef := by
      rw [symPart_eq_self_of_transpose_eq hsym]
      exact hneg
    have hα := (posLobe_eq_zero_iff L).2 hneg'
    have hX0 : lobeCross (posLobe L) (negLobe L) = 0 := lobeCross_eq_zero_of_left hα
    have hC0 : lobeExcess (posLobe L) (negLobe L) = 0 :=
      (lobeExcess_eq_zero_iff _ _).2 fun j => by rw [hα j]; exact negLobe_nonneg L j
    have hT0 : frobSq (skewPart L) = 0 := by
      rw [skewPart_eq_zero_of_transpose_eq hsym]
      exact frobSq_zero_matrix
    unfold profileD
    rw [div_eq_one_iff_eq hF]
    linarith

end DFace

section CFace

theorem profileD_neg (L : Matrix ι ι ℝ) : profileD (-L) = profileC L :=
  congrArg (fun p : ℝ × ℝ × ℝ × ℝ => p.2.2.2) (profile_neg L)

theorem profileC_neg (L : Matrix ι ι ℝ) : profileC (-L) = profileD L :=
  congrArg (fun p : ℝ × ℝ × ℝ × ℝ => p.2.2.1) (profile_neg L)

/-- **Theorem 4 (4) of the paper**, lobe form: for `L ≠ 0`, `c = 0` iff `α_j ≤ β_j` for every
`j`. [qkforms:thm4.c_face] -/
theorem profileC_eq_zero_iff_lobes {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    profileC L = 0 ↔ ∀ j, posLobe L j ≤ negLobe L j := by
  unfold profileC
  rw [div_eq_zero_iff, or_iff_left (frobSq_ne_zero hL), lobeExcess_eq_zero_iff]

/-- **Theorem 4 (4) of the paper**, decomposition: if `L ≠ 0` and `c = 0`, then `S = H - P`
with `H` symmetric whose spectrum is symmetric about `0`, `P` positive semidefinite, `H`, `P`,
`S` pairwise commuting, and `‖P‖² = d ‖L‖²`. (Obtained from Theorem 4 (3) applied to `-L`.)
[qkforms:thm4.c_face] -/
theorem exists_decomp_of_profileC_eq_zero {L : Matrix ι ι ℝ} (hL : L ≠ 0)
    (hc : profileC L = 0) :
    ∃ H P : Matrix ι ι ℝ, symPart L = H - P ∧ Hᵀ = H ∧ eigs (-H) = eigs H ∧ P.PosSemidef ∧
      Commute H (symPart L) ∧ Commute P (symPart L) ∧ Commute H P ∧
      frobSq P = profileD L * frobSq L := by
  have hL' : -L ≠ 0 := neg_ne_zero.2 hL
  have hd' : profileD (-L) = 0 := by
    rw [profileD_neg]
    exact hc
  obtain ⟨H, P, h1, h2, h3, h4, h5, h6, h7, h8⟩ := exists_decomp_of_profileD_eq_zero hL' hd'
  have hS : symPart L = -symPart (-L) := by
    rw [symPart_neg, neg_neg]
  refine ⟨-H, P, ?_, ?_, ?_, h4, ?_, ?_, h7.neg_left, ?_⟩
  · rw [hS, h1, neg_add, sub_eq_add_neg]
  · rw [Matrix.transpose_neg, h2]
  · rw [neg_neg]
    exact h3.symm
  · rw [hS]
    exact h5.neg_left.neg_right
  · rw [hS]
    exact h6.neg_right
  · rw [h8, profileC_neg, frobSq_neg]

/-- **Theorem 4 (4) of the paper**, vertex: for `L ≠ 0`, `c = 1` iff `L` is symmetric positive
semidefinite. [qkforms:thm4.c_face] -/
theorem profileC_eq_one_iff {L : Matrix ι ι ℝ} (hL : L ≠ 0) :
    profileC L = 1 ↔ Lᵀ = L ∧ L.PosSemidef := by
  rw [← profileD_neg, profileD_eq_one_iff (neg_ne_zero.2 hL), Matrix.transpose_neg, neg_inj,
    neg_neg]

end CFace

end

end QKForms
