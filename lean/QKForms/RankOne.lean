/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.ProfileFaces

/-!
# Proposition 4: profiles of rank-one matrices and the family Θ

## Main statements

* `QKForms.profile_of_eq_vecMulVec` (Proposition 4, general scale): for a nonzero rank-one
  `L = u vᵀ`, with `F = ‖L‖²` and `t = tr L`,
  `π(L) = ((F - t²)/(2F), (F - t²)/(2F), (t₊)²/F, (t₋)²/F)`.
* `QKForms.profile_of_eq_vecMulVec_of_frobSq_eq_one` (Proposition 4 as stated, `‖L‖ = 1`):
  `π(L) = ((1 - t²)/2, (1 - t²)/2, t₊², t₋²)`.
* `QKForms.image_profile_rankOne_eq_Theta` (Proposition 4, the family Θ): for `N ≥ 2` the set of
  profiles of rank-one matrices is exactly `Θ = {(a, b, c, d) ∈ Δ₃ : a = b, cd = 0}`.

## Encoding

A rank-one matrix is written `L = vecMulVec u v` (`= u vᵀ`, Mathlib's `Matrix.vecMulVec`) with
`L ≠ 0`; this is the usual characterization of rank one (a matrix has rank one iff it is a
nonzero outer product). The set statement is
`profile '' {L | L ≠ 0 ∧ ∃ u v, L = vecMulVec u v} = Theta`, with the hypothesis
`2 ≤ Fintype.card ι` made explicit (for `N = 1` only the vertices `c = 1`, `d = 1` occur).
`t₊ = max t 0`, `t₋ = max (-t) 0`.

The proof does not compute the characteristic polynomial: with `V` the orthogonal eigenvector
matrix of `S`, `diag(λ) = Vᵀ S V = sym((Vᵀu)(Vᵀv)ᵀ)`, so `λ_p = c_p d_p` and
`c_p d_q + c_q d_p = 0` for `p ≠ q`, whence `λ_p λ_q = -(c_q d_p)² ≤ 0`: `S` has at most one
positive and at most one negative eigenvalue. The two remaining lobe entries are then fixed by
`α₀ - β₀ = tr S = t` and `α₀² + β₀² = ‖S‖² = (F + t²)/2` (Lemma 5).
-/

noncomputable section

namespace QKForms

open Matrix

variable {ι : Type*} [Fintype ι] [DecidableEq ι]

section Algebra

theorem conj_vecMulVec_apply (V : Matrix ι ι ℝ) (u v : ι → ℝ) (i j : ι) :
    (Vᵀ * vecMulVec u v * V) i j = (∑ k, V k i * u k) * (∑ l, v l * V l j) := by
  rw [Finset.sum_mul_sum]
  simp only [Matrix.mul_apply, Matrix.transpose_apply, Matrix.vecMulVec_apply, Finset.sum_mul]
  rw [Finset.sum_comm]
  apply Finset.sum_congr rfl
  intro k _
  apply Finset.sum_congr rfl
  intro l _
  ring

theorem trace_vecMulVec (u v : ι → ℝ) : (vecMulVec u v).trace = ∑ i, u i * v i := by
  simp only [Matrix.trace, Matrix.diag_apply, Matrix.vecMulVec_apply]

theorem trace_vecMulVec_mul_self (u v : ι → ℝ) :
    (vecMulVec u v * vecMulVec u v).trace = (vecMulVec u v).trace ^ 2 := by
  rw [trace_mul_self_eq_sum, trace_vecMulVec, sq, Finset.sum_mul_sum]
  simp only [Matrix.vecMulVec_apply]
  apply Finset.sum_congr rfl
  intro i _
  apply Finset.sum_congr rfl
  intro j _
  ring

theorem frobSq_vecMulVec (u v : ι → ℝ) :
    frobSq (vecMulVec u v) = (∑ i, u i ^ 2) * (∑ j, v j ^ 2) := by
  unfold frobSq
  rw [Finset.sum_mul_sum]
  apply Finset.sum_congr rfl
  intro i _
  apply Finset.sum_congr rfl
  intro j _
  rw [Matrix.vecMulVec_apply, mul_pow]

/-- `Vᵀ (V D Vᵀ) V = D` for `Vᵀ V = 1`. -/
theorem conj_cancel {V D S : Matrix ι ι ℝ} (hV : Vᵀ * V = 1) (h : S = V * D * Vᵀ) :
    Vᵀ * S * V = D := by
  rw [h]
  calc Vᵀ * (V * D * Vᵀ) * V = (Vᵀ * V) * D * (Vᵀ * V) := by
        simp only [Matrix.mul_assoc]
    _ = D := by rw [hV, Matrix.one_mul, Matrix.mul_one]

/-- The real inequality behind "at most one eigenvalue of each sign". -/
theorem mul_nonpos_of_rankOne_entries {a b cp dp cq dq : ℝ}
    (ha : a = 1 / 2 * (cp * dp + cp * dp)) (hb : b = 1 / 2 * (cq * dq + cq * dq))
    (h0 : (0 : ℝ) = 1 / 2 * (cp * dq + cq * dp)) : a * b ≤ 0 := by
  have e1 : cp * dq = -(cq * dp) := by linarith
  have key : a * b = -(cq * dp) ^ 2 := by
    rw [ha, hb]
    calc 1 / 2 * (cp * dp + cp * dp) * (1 / 2 * (cq * dq + cq * dq))
        = (cp * dq) * (cq * dp) := by ring
      _ = -(cq * dp) * (cq * dp) := by rw [e1]
      _ = -(cq * dp) ^ 2 := by ring
  rw [key]
  exact neg_nonpos.2 (sq_nonneg _)

theorem mul_nonpos_of_diagonal_eq_symPart_conj {V : Matrix ι ι ℝ} {u v d : ι → ℝ}
    (h : diagonal d = symPart (Vᵀ * vecMulVec u v * V)) {p q : ι} (hpq : p ≠ q) :
    d p * d q ≤ 0 := by
  have hpp := congrFun (congrFun h p) p
  have hqq := congrFun (congrFun h q) q
  have hpq' := congrFun (congrFun h p) q
  rw [Matrix.diagonal_apply_eq, symPart_apply, conj_vecMulVec_apply] at hpp
  rw [Matrix.diagonal_apply_eq, symPart_apply, conj_vecMulVec_apply] at hqq
  rw [Matrix.diagonal_apply_ne _ hpq, symPart_apply, conj_vecMulVec_apply,
    conj_vecMulVec_apply] at hpq'
  exact mul_nonpos_of_rankOne_entries hpp hqq hpq'

/-- The symmetric part of a rank-one matrix has no two eigenvalues of the same strict sign. -/
theorem eigenvalues_mul_nonpos_of_eq_vecMulVec {L : Matrix ι ι ℝ} {u v : ι → ℝ}
    (hLuv : L = vecMulVec u v) {p q : ι} (hpq : p ≠ q) :
    (symPart_isHermitian L).eigenvalues p * (symPart_isHermitian L).eigenvalues q ≤ 0 := by
  subst hLuv
  have hD := conj_cancel (eigMat_transpose_mul (symPart_isHermitian (vecMulVec u v)))
    (spectral_real (symPart_isHermitian (vecMulVec u v)))
  rw [← symPart_conj] at hD
  exact mul_nonpos_of_diagonal_eq_symPart_conj hD.symm hpq

theorem posLobe_eq_zero_of_lt_of_eq_vecMulVec {L : Matrix ι ι ℝ} {u v : ι → ℝ}
    (hLuv : L = vecMulVec u v) {i j : Fin (Fintype.card ι)} (hij : i < j) :
    posLobe L j = 0 := by
  rw [posLobe_eq_eigenvalues₀]
  apply max_eq_right_iff.2
  by_contra hpos
  push_neg at hpos
  have hmono : (symPart_isHermitian L).eigenvalues₀ j ≤ (symPart_isHermitian L).eigenvalues₀ i :=
    (symPart_isHermitian L).eigenvalues₀_antitone hij.le
  have hne : eigIndexEquiv ι i ≠ eigIndexEquiv ι j :=
    fun h => (ne_of_lt hij) ((eigIndexEquiv ι).injective h)
  have hprod := eigenvalues_mul_nonpos_of_eq_vecMulVec hLuv hne
  simp only [eigenvalues_eq_eigenvalues₀, Equiv.symm_apply_apply] at hprod
  have h2 := mul_pos (lt_of_lt_of_le hpos hmono) hpos
  linarith

theorem negLobe_eq_zero_of_lt_of_eq_vecMulVec {L : Matrix ι ι ℝ} {u v : ι → ℝ}
    (hLuv : L = vecMulVec u v) {i j : Fin (Fintype.card ι)} (hij : i < j) :
    negLobe L j = 0 := by
  rw [negLobe_eq_eigenvalues₀]
  apply max_eq_right_iff.2
  by_contra hpos
  push_neg at hpos
  have hrev : Fin.rev j < Fin.rev i := Fin.rev_lt_rev.2 hij
  have hmono : (symPart_isHermitian L).eigenvalues₀ (Fin.rev i) ≤
      (symPart_isHermitian L).eigenvalues₀ (Fin.rev j) :=
    (symPart_isHermitian L).eigenvalues₀_antitone hrev.le
  have hne : eigIndexEquiv ι (Fin.rev j) ≠ eigIndexEquiv ι (Fin.rev i) :=
    fun h => (ne_of_lt hrev) ((eigIndexEquiv ι).injective h)
  have hprod := eigenvalues_mul_nonpos_of_eq_vecMulVec hLuv hne
  simp only [eigenvalues_eq_eigenvalues₀, Equiv.symm_apply_apply] at hprod
  have h1 : (symPart_isHermitian L).eigenvalues₀ (Fin.rev j) < 0 := by linarith
  have h2 := mul_pos_of_neg_of_neg h1 (lt_of_le_of_lt hmono h1)
  linarith

/-- `∑ α - ∑ β = tr S = tr L`. -/
theorem sum_posLobe_sub_sum_negLobe (L : Matrix ι ι ℝ) :
    ∑ j, posLobe L j - ∑ j, negLobe L j = L.trace := by
  have hα : ∀ j, posLobe L j = max ((symPart_isHermitian L).eigenvalues₀ j) 0 :=
    posLobe_eq_eigenvalues₀ L
  have hβ : ∀ j, negLobe L j = max (-(symPart_isHermitian L).eigenvalues₀ (Fin.rev j)) 0 :=
    negLobe_eq_eigenvalues₀ L
  have hrev : ∑ j, max (-(symPart_isHermitian L).eigenvalues₀ (Fin.rev j)) 0 =
      ∑ j, max (-(symPart_isHermitian L).eigenvalues₀ j) 0 :=
    Equiv.sum_comp Fin.revPerm (fun j => max (-(symPart_isHermitian L).eigenvalues₀ j) 0)
  have htr : (symPart L).trace = ∑ j, (symPart_isHermitian L).eigenvalues₀ j := by
    conv_lhs => rw [spectral_real (symPart_isHermitian L)]
    rw [trace_conj_of_orthogonal (eigMat_transpose_mul (symPart_isHermitian L)),
      Matrix.trace_diagonal]
    exact Equiv.sum_comp (eigIndexEquiv ι).symm (symPart_isHermitian L).eigenvalues₀
  simp only [hα, hβ]
  rw [hrev, ← Finset.sum_sub_distrib, ← trace_symPart, htr]
  apply Finset.sum_congr rfl
  intro j _
  exact max_sub_max_neg _

theorem card_pos_of_ne_zero {L : Matrix ι ι ℝ} (hL : L ≠ 0) : 0 < Fintype.card ι := by
  rcases Nat.eq_zero_or_pos (Fintype.card ι) with h | h
  · exfalso
    apply hL
    haveI : IsEmpty ι := Fintype.card_eq_zero_iff.1 h
    ext i
    exact isEmptyElim i
  · exact h

end Algebra

section Formula

/-- The four coordinates of the profile of a nonzero rank-one matrix. -/
theorem profile_coords_of_eq_vecMulVec {L : Matrix ι ι ℝ} {u v : ι → ℝ}
    (hLuv : L = vecMulVec u v) (hL : L ≠ 0) :
    profileA L = (frobSq L - L.trace ^ 2) / (2 * frobSq L) ∧
      profileB L = (frobSq L - L.trace ^ 2) / (2 * frobSq L) ∧
      profileC L = max L.trace 0 ^ 2 / frobSq L ∧
      profileD L = max (-L.trace) 0 ^ 2 / frobSq L := by
  obtain ⟨k0, hk0⟩ : ∃ k0 : Fin (Fintype.card ι), k0.val = 0 :=
    ⟨⟨0, card_pos_of_ne_zero hL⟩, rfl⟩
  have hlt : ∀ j, j ≠ k0 → k0 < j := by
    intro j hj
    rw [Fin.lt_iff_val_lt_val, hk0]
    rcases Nat.eq_zero_or_pos j.val with h | h
    · exact absurd (Fin.ext (h.trans hk0.symm)) hj
    · exact h
  have hα0 : ∀ j, j ≠ k0 → posLobe L j = 0 :=
    fun j hj => posLobe_eq_zero_of_lt_of_eq_vecMulVec hLuv (hlt j hj)
  have hβ0 : ∀ j, j ≠ k0 → negLobe L j = 0 :=
    fun j hj => negLobe_eq_zero_of_lt_of_eq_vecMulVec hLuv (hlt j hj)
  have single : ∀ f : Fin (Fintype.card ι) → ℝ, (∀ j, j ≠ k0 → f j = 0) → ∑ j, f j = f k0 :=
    fun f hf => Finset.sum_eq_single k0 (fun j _ hj => hf j hj)
      (fun h => absurd (Finset.mem_univ k0) h)
  have hX : lobeCross (posLobe L) (negLobe L) = posLobe L k0 * negLobe L k0 :=
    single (fun j => posLobe L j * negLobe L j) (fun j hj => by
      show posLobe L j * negLobe L j = 0
      -- `MulZeroClass.zero_mul`: the root `zero_mul` is an `export` alias, not a declaration
      rw [hα0 j hj, MulZeroClass.zero_mul])
  have hC : lobeExcess (posLobe L) (negLobe L) = max (posLobe L k0 - negLobe L k0) 0 ^ 2 :=
    single (fun j => max (posLobe L j - negLobe L j) 0 ^ 2) (fun j hj => by
      show max (posLobe L j - negLobe L j) 0 ^ 2 = 0
      rw [hα0 j hj, hβ0 j hj, sub_self, max_self]
      norm_num)
  have hD : lobeExcess (negLobe L) (posLobe L) = max (negLobe L k0 - posLobe L k0) 0 ^ 2 :=
    single (fun j => max (negLobe L j - posLobe L j) 0 ^ 2) (fun j hj => by
      show max (negLobe L j - posLobe L j) 0 ^ 2 = 0
      rw [hα0 j hj, hβ0 j hj, sub_self, max_self]
      norm_num)
  have hsumα : ∑ j, posLobe L j = posLobe L k0 := single (posLobe L) hα0
  have hsumβ : ∑ j, negLobe L j = negLobe L k0 := single (negLobe L) hβ0
  have hsqα : ∑ j, posLobe L j ^ 2 = posLobe L k0 ^ 2 :=
    single (fun j => posLobe L j ^ 2) (fun j hj => by
      show posLobe L j ^ 2 = 0
      rw [hα0 j hj]
      norm_num)
  have hsqβ : ∑ j, negLobe L j ^ 2 = negLobe L k0 ^ 2 :=
    single (fun j => negLobe L j ^ 2) (fun j hj => by
      show negLobe L j ^ 2 = 0
      rw [hβ0 j hj]
      norm_num)
  have hdiff : posLobe L k0 - negLobe L k0 = L.trace := by
    rw [← hsumα, ← hsumβ]
    exact sum_posLobe_sub_sum_negLobe L
  have hsq2 : posLobe L k0 ^ 2 + negLobe L k0 ^ 2 = frobSq (symPart L) := by
    rw [← hsqα, ← hsqβ]
    exact sum_sq_posLobe_add_sum_sq_negLobe L
  have htr2 : (L * L).trace = L.trace ^ 2 := by
    rw [hLuv]
    exact trace_vecMulVec_mul_self u v
  have hSsq : frobSq (symPart L) = 1 / 2 * frobSq L + 1 / 2 * L.trace ^ 2 := by
    rw [frobSq_symPart_eq, htr2]
  have hTsq : frobSq (skewPart L) = 1 / 2 * frobSq L - 1 / 2 * L.trace ^ 2 := by
    rw [frobSq_skewPart_eq, htr2]
  refine ⟨?_, ?_, ?_, ?_⟩
  · unfold profileA
    have e : 1 / 2 * frobSq L - 1 / 2 * L.trace ^ 2 = (frobSq L - L.trace ^ 2) / 2 := by ring
    -- `div_div : a / b / c = a / (b * c)`
    rw [hTsq, e, div_div]
  · unfold profileB
    rw [hX]
    have e : 2 * (posLobe L k0 * negLobe L k0) = (frobSq L - L.trace ^ 2) / 2 := by
      have e0 : 2 * (posLobe L k0 * negLobe L k0) =
          (posLobe L k0 ^ 2 + negLobe L k0 ^ 2) - (posLobe L k0 - negLobe L k0) ^ 2 := by ring
      rw [e0, hsq2, hdiff, hSsq]
      ring
    rw [e, div_div]
  · unfold profileC
    rw [hC, hdiff]
  · unfold profileD
    have e : negLobe L k0 - posLobe L k0 = -L.trace := by linarith
    rw [hD, e]

/-- **Proposition 4 of the paper** (any scale): a nonzero rank-one `L = u vᵀ` with
`F = ‖L‖²`, `t = tr L` has `π(L) = ((F - t²)/(2F), (F - t²)/(2F), (t₊)²/F, (t₋)²/F)`.
[qkforms:prop4] -/
theorem profile_of_eq_vecMulVec {L : Matrix ι ι ℝ} {u v : ι → ℝ} (hLuv : L = vecMulVec u v)
    (hL : L ≠ 0) :
    profile L = ((frobSq L - L.trace ^ 2) / (2 * frobSq L),
      (frobSq L - L.trace ^ 2) / (2 * frobSq L), max L.trace 0 ^ 2 / frobSq L,
      max (-L.trace) 0 ^ 2 / frobSq L) := by
  obtain ⟨ha, hb, hc, hd⟩ := profile_coords_of_eq_vecMulVec hLuv hL
  unfold profile
  rw [ha, hb, hc, hd]

/-- **Proposition 4 of the paper** (as stated, `‖L‖ = 1`): a rank-one `L = u vᵀ` with
`‖L‖² = 1` and `t = tr L` has `π(L) = ((1 - t²)/2, (1 - t²)/2, t₊², t₋²)`. [qkforms:prop4] -/
theorem profile_of_eq_vecMulVec_of_frobSq_eq_one {L : Matrix ι ι ℝ} {u v : ι → ℝ}
    (hLuv : L = vecMulVec u v) (h1 : frobSq L = 1) :
    profile L = ((1 - L.trace ^ 2) / 2, (1 - L.trace ^ 2) / 2, max L.trace 0 ^ 2,
      max (-L.trace) 0 ^ 2) := by
  have hL : L ≠ 0 := by
    intro h0
    rw [h0, frobSq_zero_matrix] at h1
    exact zero_ne_one h1
  rw [profile_of_eq_vecMulVec hLuv hL, h1, _root_.mul_one, div_one, div_one]

end Formula

section Theta

/-- The family `Θ = {(a, b, c, d) ∈ Δ₃ : a = b, cd = 0}` of Proposition 4 of the paper. -/
def Theta : Set (ℝ × ℝ × ℝ × ℝ) :=
  {p | 0 ≤ p.1 ∧ 0 ≤ p.2.1 ∧ 0 ≤ p.2.2.1 ∧ 0 ≤ p.2.2.2 ∧
    p.1 + p.2.1 + p.2.2.1 + p.2.2.2 = 1 ∧ p.1 = p.2.1 ∧ p.2.2.1 * p.2.2.2 = 0}

/-- A vector supported on two coordinates `i0 ≠ i1`. -/
def twoPoint (i0 i1 : ι) (x y : ℝ) : ι → ℝ :=
  fun j => if j = i0 then x else if j = i1 then y else 0

theorem sum_twoPoint_mul {i0 i1 : ι} (hne : i0 ≠ i1) (x y x' y' : ℝ) :
    ∑ j, twoPoint i0 i1 x y j * twoPoint i0 i1 x' y' j = x * x' + y * y' := by
  have h : ∀ j, twoPoint i0 i1 x y j * twoPoint i0 i1 x' y' j =
      (if j = i0 then x * x' else 0) + (if j = i1 then y * y' else 0) := by
    intro j
    show (if j = i0 then x else if j = i1 then y else 0) *
        (if j = i0 then x' else if j = i1 then y' else 0) =
      (if j = i0 then x * x' else 0) + (if j = i1 then y * y' else 0)
    -- In each case the second branch lets `simp` decide every `if` from the hypotheses (after
    -- `subst`, the conditions `j = j` are decided by `simp` itself), whatever the order in which
    -- the `ite`s occur and whichever variable `subst` eliminated.
    by_cases h0 : j = i0
    · subst h0
      -- closes by: the first branch (`rw`, closed by its `rfl`) at the pin
      first
      | (rw [if_pos rfl, if_pos rfl, if_pos rfl, if_neg hne, add_zero]
         done)
      | simp [hne]
    · by_cases h1 : j = i1
      · subst h1
        -- closes by: the first branch (`rw`, closed by its `rfl`) at the pin
        first
        | (rw [if_neg h0, if_neg h0, if_neg h0, if_pos rfl, if_pos rfl, if_pos rfl, zero_add]
           done)
        | simp [h0]
      · -- closes by: the first branch (`rw`, then `norm_num` on `0 * 0 = 0 + 0`) at the pin
        first
        | (rw [if_neg h0, if_neg h0, if_neg h0, if_neg h1, if_neg h1, if_neg h1]
           norm_num
           done)
        | simp [h0, h1]
  rw [Finset.sum_congr rfl (fun j _ => h j), Finset.sum_add_distrib]
  -- `Finset.sum_ite_eq' : ∑ x ∈ s, ite (x = a) (b x) 0 = ite (a ∈ s) (b a) 0`
  rw [Finset.sum_ite_eq', Finset.sum_ite_eq', if_pos (Finset.mem_univ _),
    if_pos (Finset.mem_univ _)]

theorem sum_twoPoint_sq {i0 i1 : ι} (hne : i0 ≠ i1) (x y : ℝ) :
    ∑ j, twoPoint i0 i1 x y j ^ 2 = x ^ 2 + y ^ 2 := by
  calc ∑ j, twoPoint i0 i1 x y j ^ 2 = ∑ j, twoPoint i0 i1 x y j * twoPoint i0 i1 x y j := by
        apply Finset.sum_congr rfl
        intro j _
        rw [sq]
    _ = x * x + y * y := sum_twoPoint_mul hne x y x y
    _ = x ^ 2 + y ^ 2 := by ring

/-- **Proposition 4 of the paper** (the family Θ): if `N ≥ 2`, the set of profiles of rank-one
matrices is exactly `Θ = {(a, b, c, d) ∈ Δ₃ : a = b, cd = 0}`. [qkforms:prop4] -/
theorem image_profile_rankOne_eq_Theta (hN : 2 ≤ Fintype.card ι) :
    profile '' {L : Matrix ι ι ℝ | L ≠ 0 ∧ ∃ u v : ι → ℝ, L = vecMulVec u v} = Theta := by
  ext p
  constructor
  · rintro ⟨L, ⟨hL, u, v, hLuv⟩, rfl⟩
    obtain ⟨⟨hA0, hB0, hC0, hD0⟩, hsum⟩ := profile_mem_simplex hL
    obtain ⟨ha, hb, hc, hd⟩ := profile_coords_of_eq_vecMulVec hLuv hL
    rw [Theta, Set.mem_setOf_eq]
    refine ⟨hA0, hB0, hC0, hD0, hsum, ?_, ?_⟩
    · show profileA L = profileB L
      rw [ha, hb]
    · show profileC L * profileD L = 0
      rw [hc, hd]
      rcases le_total 0 L.trace with h | h
      · rw [max_eq_right (neg_nonpos.2 h)]
        ring
      · rw [max_eq_right h]
        ring
  · obtain ⟨a, b, c, d⟩ := p
    intro hp
    simp only [Theta, Set.mem_setOf_eq] at hp
    obtain ⟨ha0, hb0, hc0, hd0, hsum, hab, hcd⟩ := hp
    -- two distinct coordinates
    -- `Fintype.exists_pair_of_one_lt_card (h : 1 < card α) : ∃ a b : α, a ≠ b`
    obtain ⟨i0, i1, hne⟩ : ∃ i0 i1 : ι, i0 ≠ i1 :=
      Fintype.exists_pair_of_one_lt_card (by omega)
    -- the parameter `t = √c - √d`
    have hcd' : Real.sqrt c * Real.sqrt d = 0 := by
      rw [← Real.sqrt_mul hc0, hcd, Real.sqrt_zero]
    have hsc : Real.sqrt c ^ 2 = c := Real.sq_sqrt hc0
    have hsd : Real.sqrt d ^ 2 = d := Real.sq_sqrt hd0
    have ht2 : (Real.sqrt c - Real.sqrt d) ^ 2 = c + d := by
      have e : (Real.sqrt c - Real.sqrt d) ^ 2 =
          Real.sqrt c ^ 2 + Real.sqrt d ^ 2 - 2 * (Real.sqrt c * Real.sqrt d) := by ring
      rw [e, hsc, hsd, hcd']
      ring
    have hs0 : 0 ≤ 1 - (Real.sqrt c - Real.sqrt d) ^ 2 := by
      rw [ht2]
      linarith
    have hss : Real.sqrt (1 - (Real.sqrt c - Real.sqrt d) ^ 2) ^ 2 =
        1 - (Real.sqrt c - Real.sqrt d) ^ 2 := Real.sq_sqrt hs0
    -- the matrix `L = e_{i0} (t e_{i0} + s e_{i1})ᵀ`
    have hF : frobSq (vecMulVec (twoPoint i0 i1 1 0)
        (twoPoint i0 i1 (Real.sqrt c - Real.sqrt d)
          (Real.sqrt (1 - (Real.sqrt c - Real.sqrt d) ^ 2)))) = 1 := by
      rw [frobSq_vecMulVec, sum_twoPoint_sq hne, sum_twoPoint_sq hne, hss]
      ring
    have htr : (vecMulVec (twoPoint i0 i1 1 0)
        (twoPoint i0 i1 (Real.sqrt c - Real.sqrt d)
          (Real.sqrt (1 - (Real.sqrt c - Real.sqrt d) ^ 2)))).trace =
        Real.sqrt c - Real.sqrt d := by
      rw [trace_vecMulVec, sum_twoPoint_mul hne]
      ring
    refine ⟨vecMulVec (twoPoint i0 i1 1 0)
        (twoPoint i0 i1 (Real.sqrt c - Real.sqrt d)
          (Real.sqrt (1 - (Real.sqrt c - Real.sqrt d) ^ 2))), ⟨?_, _, _, rfl⟩, ?_⟩
    · intro h0
      rw [h0, frobSq_zero_matrix] at hF
      exact zero_ne_one hF
    · rw [profile_of_eq_vecMulVec_of_frobSq_eq_one rfl hF, htr, ht2]
      have hpos : max (Real.sqrt c - Real.sqrt d) 0 ^ 2 = c := by
        rcases mul_eq_zero.1 hcd with h | h
        · have h' : Real.sqrt c = 0 := by rw [h, Real.sqrt_zero]
          rw [h', zero_sub, max_eq_right (neg_nonpos.2 (Real.sqrt_nonneg d)), h]
          ring
        · have h' : Real.sqrt d = 0 := by rw [h, Real.sqrt_zero]
          rw [h', sub_zero, max_eq_left (Real.sqrt_nonneg c), hsc]
      have hneg : max (-(Real.sqrt c - Real.sqrt d)) 0 ^ 2 = d := by
        rcases mul_eq_zero.1 hcd with h | h
        · have h' : Real.sqrt c = 0 := by rw [h, Real.sqrt_zero]
          rw [h', zero_sub, neg_neg, max_eq_left (Real.sqrt_nonneg d), hsd]
        · have h' : Real.sqrt d = 0 := by rw [h, Real.sqrt_zero]
          rw [h', sub_zero, max_eq_right (neg_nonpos.2 (Real.sqrt_nonneg c)), h]
          ring
      have ha' : (1 - (c + d)) / 2 = a := by linarith
      rw [hpos, hneg, ha', hab]

end Theta

end QKForms

end
