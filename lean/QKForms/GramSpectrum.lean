/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.GramForm

/-!
# The spectrum of a head from any factor of its Gram matrix (Lemma 10, spectral part)

For a head `W_K, W_Q ∈ M_{n×N}(ℝ)` with stacked matrix `M = [W_K; W_Q] ∈ M_{2n×N}(ℝ)`, Gram
matrix `G = M Mᵀ` and `𝒥 = [[0, I_n], [I_n, 0]]`, Lemma 10 of the paper (docs/theory.md §3)
computes the symmetric part `S = ½ Mᵀ 𝒥 M` of `L = W_Kᵀ W_Q` from `2n × 2n` data. This file
proves the spectral half, for **any** factor `F ∈ M_{2n×k}(ℝ)` of the Gram matrix,
`F Fᵀ = G`, with `k` arbitrary: Cholesky, pivoted or semidefinite factorizations of
rank-deficient heads and the orthonormal-basis reduction of docs/theory.md §12.2 are all
covered. The symmetric `k × k` matrix `½ Fᵀ 𝒥 F` (the one the survey diagonalizes,
`qkforms.gram`) has the same nonzero eigenvalues as `S`, with multiplicity, hence the same
numbers of positive and of negative eigenvalues; and so has `½ 𝒥 G`.

## Main statements

* `QKForms.X_pow_mul_charpoly_transpose_mul_mul_eq`: if `F Fᵀ = P Pᵀ`, then
  `X^k χ(Pᵀ B P) = X^N χ(Fᵀ B F)` for every square `B` (Mathlib's rectangular
  `Matrix.charpoly_mul_comm'`, applied to both factors; both products have the partner
  `B (P Pᵀ)`).
* `QKForms.filter_eigs_eq_of_X_pow_mul_charpoly_eq`: characteristic polynomials that agree up
  to powers of `X` have the same roots satisfying any predicate that `0` fails.
* `QKForms.X_pow_mul_charpoly_symPart_eq_swap_gram` (`[qkforms:lemma10]`):
  `X^{2n} χ(S) = X^N χ(½ 𝒥 G)`.
* `QKForms.X_pow_mul_charpoly_symPart_eq_of_gram_factor` (`[qkforms:lemma10]`):
  `X^k χ(S) = X^N χ(½ Fᵀ 𝒥 F)` whenever `F Fᵀ = M Mᵀ`.
* `QKForms.filter_ne_zero_eigs_symPart_eq_swap_gram`,
  `QKForms.filter_ne_zero_eigs_symPart_eq_of_gram_factor` (`[qkforms:lemma10]`): the nonzero
  eigenvalues, with multiplicity, of `S` and of `½ 𝒥 G`, resp. of `½ Fᵀ 𝒥 F`, agree.
* `QKForms.nPos_symPart_eq_of_gram_factor`, `QKForms.nNeg_symPart_eq_of_gram_factor`
  (`[qkforms:lemma10]`): so do the numbers of positive and of negative eigenvalues (the
  signature up to zeros).

## Encoding

`M = stackedMatrix W_K W_Q : Matrix (κ ⊕ κ) ι ℝ` and `𝒥 = swapForm κ` (`QKForms/GramForm.lean`);
a factor is any `F : Matrix (κ ⊕ κ) r ℝ` over a finite type `r` with
`F * Fᵀ = M * Mᵀ`. Eigenvalues with multiplicity are the roots of the characteristic
polynomial (`QKForms.eigs`, `QKForms/Basic.lean`); "the nonzero eigenvalues" is
`(eigs A).filter (· ≠ 0)`. The paper states Lemma 10 for a surjective `M` ("the nonzero
spectrum of `S` is the spectrum of `½ 𝒥 G`"); the statements here need no surjectivity and
keep the filter on both sides (for a surjective `M` the matrix `½ 𝒥 G` is invertible, so the
filter on its side removes nothing; that step is not formalized here). The characteristic
polynomial form is the one of the paper's proof ("char. polynomials differ by a power of the
variable").
-/

namespace QKForms

noncomputable section

open scoped Matrix Polynomial

section Factors

variable {m ι r : Type*} [Fintype m] [DecidableEq m] [Fintype ι] [DecidableEq ι]
  [Fintype r] [DecidableEq r]

/-- `c • (Pᵀ B P) = Pᵀ (c • B) P`. Uses `Matrix.mul_smul : M * (a • N) = a • (M * N)` and
`Matrix.smul_mul : a • M * N = a • (M * N)` (Mathlib/Data/Matrix/Mul.lean). -/
theorem smul_transpose_mul_mul (c : ℝ) (P : Matrix m ι ℝ) (B : Matrix m m ℝ) :
    c • (Pᵀ * B * P) = Pᵀ * (c • B) * P := by
  -- the right side is `(Pᵀ * (c • B)) * P`: `mul_smul` turns it into `(c • (Pᵀ * B)) * P`,
  -- then `smul_mul` into `c • (Pᵀ * B * P)`; `simp only` with the same two lemmas normalizes
  -- the right side the same way. `done` makes the first branch fail (not linger) should the
  -- closing `rfl` of `rw` not identify the two `SMul` instance paths.
  -- closes by: the `rw` chain (first branch)
  first
  | rw [Matrix.mul_smul, Matrix.smul_mul]; done
  | simp only [Matrix.mul_smul, Matrix.smul_mul]

/-- **Two factors of one Gram matrix.** If `F Fᵀ = P Pᵀ`, then for every square `B` the
characteristic polynomials of `Pᵀ B P` (`N × N`) and `Fᵀ B F` (`k × k`) agree up to powers of
`X`: `X^k χ(Pᵀ B P) = X^N χ(Fᵀ B F)`. Both products have the `AB`/`BA` partner `B (P Pᵀ)`.
Uses `Matrix.charpoly_mul_comm' (A : Matrix m n R) (B : Matrix n m R) :
X ^ Fintype.card n * (A * B).charpoly = X ^ Fintype.card m * (B * A).charpoly`
(Mathlib/LinearAlgebra/Matrix/Charpoly/Basic.lean; Charpoly/MulComm.lean in 2025). -/
theorem X_pow_mul_charpoly_transpose_mul_mul_eq (B : Matrix m m ℝ) {P : Matrix m ι ℝ}
    {F : Matrix m r ℝ} (hF : F * Fᵀ = P * Pᵀ) :
    Polynomial.X ^ Fintype.card r * (Pᵀ * B * P).charpoly =
      Polynomial.X ^ Fintype.card ι * (Fᵀ * B * F).charpoly := by
  have hP : Polynomial.X ^ Fintype.card m * (Pᵀ * (B * P)).charpoly =
      Polynomial.X ^ Fintype.card ι * (B * P * Pᵀ).charpoly :=
    Matrix.charpoly_mul_comm' Pᵀ (B * P)
  have hQ : Polynomial.X ^ Fintype.card m * (Fᵀ * (B * F)).charpoly =
      Polynomial.X ^ Fintype.card r * (B * F * Fᵀ).charpoly :=
    Matrix.charpoly_mul_comm' Fᵀ (B * F)
  have hmid : B * F * Fᵀ = B * P * Pᵀ := by
    rw [Matrix.mul_assoc B F, Matrix.mul_assoc B P, hF]
  have hP' : Pᵀ * B * P = Pᵀ * (B * P) := Matrix.mul_assoc Pᵀ B P
  have hF' : Fᵀ * B * F = Fᵀ * (B * F) := Matrix.mul_assoc Fᵀ B F
  -- cancel the common factor `X ^ card m` (`ℝ[X]` is a domain)
  apply mul_left_cancel₀
    (pow_ne_zero (Fintype.card m) (Polynomial.X_ne_zero : (Polynomial.X : ℝ[X]) ≠ 0))
  calc Polynomial.X ^ Fintype.card m *
        (Polynomial.X ^ Fintype.card r * (Pᵀ * B * P).charpoly)
      = Polynomial.X ^ Fintype.card r *
          (Polynomial.X ^ Fintype.card m * (Pᵀ * (B * P)).charpoly) := by
        rw [hP']
        ring
    _ = Polynomial.X ^ Fintype.card r *
          (Polynomial.X ^ Fintype.card ι * (B * F * Fᵀ).charpoly) := by
        rw [hP, hmid]
    _ = Polynomial.X ^ Fintype.card ι *
          (Polynomial.X ^ Fintype.card r * (B * F * Fᵀ).charpoly) := by
        ring
    _ = Polynomial.X ^ Fintype.card ι *
          (Polynomial.X ^ Fintype.card m * (Fᵀ * (B * F)).charpoly) := by
        rw [hQ]
    _ = Polynomial.X ^ Fintype.card m *
          (Polynomial.X ^ Fintype.card ι * (Fᵀ * B * F).charpoly) := by
        rw [hF']
        ring

/-- The zeros that a factor `X ^ a` contributes to the roots fail every predicate that `0`
fails. Uses `Multiset.filter_eq_nil`, `Multiset.mem_of_mem_nsmul` and `Multiset.mem_singleton`
(Mathlib/Data/Multiset/). -/
theorem filter_nsmul_singleton_zero (p : ℝ → Prop) [DecidablePred p] (hp : ¬ p 0) (a : ℕ) :
    (a • ({0} : Multiset ℝ)).filter p = 0 :=
  Multiset.filter_eq_nil.2 fun x hx => by
    rw [Multiset.mem_singleton.1 (Multiset.mem_of_mem_nsmul hx)]
    exact hp

/-- Characteristic polynomials equal up to powers of `X` have the same roots satisfying any
predicate `p` with `¬ p 0`, with multiplicity. Uses `Polynomial.roots_mul` (roots of a nonzero
product) and `Polynomial.roots_X_pow : (X ^ n).roots = n • {0}`
(Mathlib/Algebra/Polynomial/Roots.lean), and `Matrix.charpoly_monic`. -/
theorem filter_eigs_eq_of_X_pow_mul_charpoly_eq {A : Matrix ι ι ℝ} {B : Matrix r r ℝ}
    {a b : ℕ} (h : Polynomial.X ^ a * A.charpoly = Polynomial.X ^ b * B.charpoly)
    (p : ℝ → Prop) [DecidablePred p] (hp : ¬ p 0) : (eigs A).filter p = (eigs B).filter p := by
  have hA : (Polynomial.X ^ a * A.charpoly : ℝ[X]) ≠ 0 :=
    mul_ne_zero (pow_ne_zero a Polynomial.X_ne_zero) A.charpoly_monic.ne_zero
  have hB : (Polynomial.X ^ b * B.charpoly : ℝ[X]) ≠ 0 :=
    mul_ne_zero (pow_ne_zero b Polynomial.X_ne_zero) B.charpoly_monic.ne_zero
  have hr := congrArg Polynomial.roots h
  -- `hr : (X ^ a * χ A).roots = (X ^ b * χ B).roots`; each side splits into `n • {0} + roots`
  rw [Polynomial.roots_mul hA, Polynomial.roots_mul hB, Polynomial.roots_X_pow,
    Polynomial.roots_X_pow] at hr
  have hf := congrArg (Multiset.filter p) hr
  rw [Multiset.filter_add, Multiset.filter_add, filter_nsmul_singleton_zero p hp,
    filter_nsmul_singleton_zero p hp, zero_add, zero_add] at hf
  -- `eigs A` is by definition `A.charpoly.roots`
  exact hf

/-- The nonzero eigenvalues of `Pᵀ B P` and `Fᵀ B F` agree when `F Fᵀ = P Pᵀ` (any predicate
`p` with `¬ p 0`). -/
theorem filter_eigs_transpose_mul_mul_eq (B : Matrix m m ℝ) {P : Matrix m ι ℝ}
    {F : Matrix m r ℝ} (hF : F * Fᵀ = P * Pᵀ) (p : ℝ → Prop) [DecidablePred p] (hp : ¬ p 0) :
    (eigs (Pᵀ * B * P)).filter p = (eigs (Fᵀ * B * F)).filter p :=
  filter_eigs_eq_of_X_pow_mul_charpoly_eq (X_pow_mul_charpoly_transpose_mul_mul_eq B hF) p hp

end Factors

section Head

variable {κ ι r : Type*} [Fintype κ] [DecidableEq κ] [Fintype ι] [DecidableEq ι]
  [Fintype r] [DecidableEq r]

/-- `S = Mᵀ (½ 𝒥) M`: the identity of Lemma 10 with the factor `½` moved inside. -/
theorem symPart_eq_stacked_mul (K Q : Matrix κ ι ℝ) :
    symPart (Kᵀ * Q) =
      (stackedMatrix K Q)ᵀ * ((1 / 2 : ℝ) • swapForm κ) * stackedMatrix K Q := by
  rw [symPart_eq_half_stacked_swap_stacked, smul_transpose_mul_mul]

/-- `-S = Mᵀ (-½ 𝒥) M`. Uses `neg_smul : -r • x = -(r • x)` (Mathlib/Algebra/Module/Defs.lean),
right to left; the fallbacks move the sign out of the product instead (`Matrix.mul_neg`,
`Matrix.neg_mul`), by `rw` and then by `simp only`. -/
theorem neg_symPart_eq_stacked_mul (K Q : Matrix κ ι ℝ) :
    -symPart (Kᵀ * Q) =
      (stackedMatrix K Q)ᵀ * ((-(1 / 2 : ℝ)) • swapForm κ) * stackedMatrix K Q := by
  -- each `rw` branch ends in `done`: it closes the goal (by the closing `rfl` of `rw`) or
  -- fails, so `first` never commits to a branch that leaves a goal (the `Neg ℝ` of
  -- `neg_smul` and that of the statement are different instance paths)
  -- closes by: the `rw` chain through `← neg_smul` (first branch)
  first
  | rw [symPart_eq_half_stacked_swap_stacked, ← neg_smul, smul_transpose_mul_mul]; done
  | rw [symPart_eq_stacked_mul, neg_smul, Matrix.mul_neg, Matrix.neg_mul]; done
  | rw [symPart_eq_stacked_mul]
    simp only [neg_smul, Matrix.mul_neg, Matrix.neg_mul]

/-- **Lemma 10 of the paper** (characteristic polynomials, Gram form): with `G = M Mᵀ`,
`X^{2n} χ(S) = X^N χ(½ 𝒥 G)` for every head; `S = symPart (W_Kᵀ W_Q)`. Uses
`Matrix.charpoly_mul_comm'` with `A = Mᵀ`, `B = (½ 𝒥) M`. [qkforms:lemma10] -/
theorem X_pow_mul_charpoly_symPart_eq_swap_gram (K Q : Matrix κ ι ℝ) :
    Polynomial.X ^ Fintype.card (κ ⊕ κ) * (symPart (Kᵀ * Q)).charpoly =
      Polynomial.X ^ Fintype.card ι *
        ((1 / 2 : ℝ) • (swapForm κ * (stackedMatrix K Q * (stackedMatrix K Q)ᵀ))).charpoly := by
  have h := Matrix.charpoly_mul_comm' (stackedMatrix K Q)ᵀ
    (((1 / 2 : ℝ) • swapForm κ) * stackedMatrix K Q)
  have e1 : symPart (Kᵀ * Q) =
      (stackedMatrix K Q)ᵀ * (((1 / 2 : ℝ) • swapForm κ) * stackedMatrix K Q) := by
    rw [symPart_eq_stacked_mul, Matrix.mul_assoc]
  have e2 : ((1 / 2 : ℝ) • swapForm κ) * stackedMatrix K Q * (stackedMatrix K Q)ᵀ =
      (1 / 2 : ℝ) • (swapForm κ * (stackedMatrix K Q * (stackedMatrix K Q)ᵀ)) := by
    rw [Matrix.smul_mul, Matrix.smul_mul, Matrix.mul_assoc]
  rw [e1, ← e2]
  exact h

/-- **Lemma 10 of the paper** (nonzero spectrum, Gram form): the nonzero eigenvalues of
`S = symPart (W_Kᵀ W_Q)` and of `½ 𝒥 G`, `G = M Mᵀ`, with multiplicity, are the same multiset.
[qkforms:lemma10] -/
theorem filter_ne_zero_eigs_symPart_eq_swap_gram (K Q : Matrix κ ι ℝ) :
    (eigs (symPart (Kᵀ * Q))).filter (· ≠ 0) =
      (eigs ((1 / 2 : ℝ) • (swapForm κ * (stackedMatrix K Q * (stackedMatrix K Q)ᵀ)))).filter
        (· ≠ 0) :=
  filter_eigs_eq_of_X_pow_mul_charpoly_eq (X_pow_mul_charpoly_symPart_eq_swap_gram K Q)
    (· ≠ 0) (fun h => h rfl)

/-- **Lemma 10 of the paper** (characteristic polynomials from any Gram factor): if
`F Fᵀ = M Mᵀ` for some `F ∈ M_{2n×k}(ℝ)`, then `X^k χ(S) = X^N χ(½ Fᵀ 𝒥 F)`.
[qkforms:lemma10] -/
theorem X_pow_mul_charpoly_symPart_eq_of_gram_factor (K Q : Matrix κ ι ℝ)
    {F : Matrix (κ ⊕ κ) r ℝ} (hF : F * Fᵀ = stackedMatrix K Q * (stackedMatrix K Q)ᵀ) :
    Polynomial.X ^ Fintype.card r * (symPart (Kᵀ * Q)).charpoly =
      Polynomial.X ^ Fintype.card ι * ((1 / 2 : ℝ) • (Fᵀ * swapForm κ * F)).charpoly := by
  -- `S = Mᵀ (½ 𝒥) M` on the left, `½ (Fᵀ 𝒥 F) = Fᵀ (½ 𝒥) F` on the right
  rw [symPart_eq_stacked_mul, smul_transpose_mul_mul]
  exact X_pow_mul_charpoly_transpose_mul_mul_eq ((1 / 2 : ℝ) • swapForm κ) hF

/-- **Lemma 10 of the paper** (nonzero spectrum from any Gram factor): if `F Fᵀ = M Mᵀ`, the
nonzero eigenvalues of `S = symPart (W_Kᵀ W_Q)` and of `½ Fᵀ 𝒥 F`, with multiplicity, are the
same multiset. [qkforms:lemma10] -/
theorem filter_ne_zero_eigs_symPart_eq_of_gram_factor (K Q : Matrix κ ι ℝ)
    {F : Matrix (κ ⊕ κ) r ℝ} (hF : F * Fᵀ = stackedMatrix K Q * (stackedMatrix K Q)ᵀ) :
    (eigs (symPart (Kᵀ * Q))).filter (· ≠ 0) =
      (eigs ((1 / 2 : ℝ) • (Fᵀ * swapForm κ * F))).filter (· ≠ 0) :=
  filter_eigs_eq_of_X_pow_mul_charpoly_eq (X_pow_mul_charpoly_symPart_eq_of_gram_factor K Q hF)
    (· ≠ 0) (fun h => h rfl)

/-- **Lemma 10 of the paper** (signature from any Gram factor, positive part): if
`F Fᵀ = M Mᵀ`, then `S` and `½ Fᵀ 𝒥 F` have the same number of positive eigenvalues.
[qkforms:lemma10] -/
theorem nPos_symPart_eq_of_gram_factor (K Q : Matrix κ ι ℝ)
    {F : Matrix (κ ⊕ κ) r ℝ} (hF : F * Fᵀ = stackedMatrix K Q * (stackedMatrix K Q)ᵀ) :
    nPos (symPart (Kᵀ * Q)) = nPos ((1 / 2 : ℝ) • (Fᵀ * swapForm κ * F)) :=
  -- `nPos A` is by definition `Multiset.card ((eigs A).filter (0 < ·))`
  congrArg Multiset.card (filter_eigs_eq_of_X_pow_mul_charpoly_eq
    (X_pow_mul_charpoly_symPart_eq_of_gram_factor K Q hF) (0 < ·) (lt_irrefl 0))

/-- **Lemma 10 of the paper** (signature from any Gram factor, negative part): if
`F Fᵀ = M Mᵀ`, then `S` and `½ Fᵀ 𝒥 F` have the same number of negative eigenvalues.
[qkforms:lemma10] -/
theorem nNeg_symPart_eq_of_gram_factor (K Q : Matrix κ ι ℝ)
    {F : Matrix (κ ⊕ κ) r ℝ} (hF : F * Fᵀ = stackedMatrix K Q * (stackedMatrix K Q)ᵀ) :
    nNeg (symPart (Kᵀ * Q)) = nNeg ((1 / 2 : ℝ) • (Fᵀ * swapForm κ * F)) :=
  -- `nNeg A` is by definition `Multiset.card ((eigs A).filter (· < 0))`
  congrArg Multiset.card (filter_eigs_eq_of_X_pow_mul_charpoly_eq
    (X_pow_mul_charpoly_symPart_eq_of_gram_factor K Q hF) (· < 0) (lt_irrefl 0))

end Head

end

end QKForms
