/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import Mathlib

/-!
# Basic definitions for quadratic/bilinear forms of attention heads

Shared definitions used by every other file of `QKForms` (see `docs/architecture.md` §2).

## Main definitions

* `QKForms.frobSq A`: the squared Frobenius norm `∑ i j, A i j ^ 2` (docs/theory.md, "Conventions":
  the Lean side works with squared norms everywhere, avoiding square roots).
* `QKForms.symPart L = ½ (L + Lᵀ)`, `QKForms.skewPart L = ½ (L - Lᵀ)`.
* `QKForms.eigs A`: the eigenvalues of `A` with multiplicity, i.e. the roots of the
  characteristic polynomial (a `Multiset ℝ`).
* `QKForms.nPos`, `QKForms.nNeg`, `QKForms.nZero`: numbers of positive / negative / zero
  eigenvalues with multiplicity; `QKForms.signature A = (nPos A, nNeg A, nZero A)`.

## Main statements

* `QKForms.symPart_isHermitian`, `QKForms.symPart_add_skewPart`.
* `QKForms.eigs_eq_map_eigenvalues`: for a Hermitian (= symmetric, over `ℝ`) matrix, `eigs A` is
  the multiset of the values of `Matrix.IsHermitian.eigenvalues`.
* `QKForms.card_eigs_of_isHermitian`: there are `Fintype.card ι` of them.
* `QKForms.nPos_eq_card_filter` (and `nNeg`, `nZero` versions): counts through the
  eigenvalue function.
* `QKForms.nPos_add_nNeg_add_nZero`: the three counts add up to `Fintype.card ι`.
* `QKForms.rank_eq_nPos_add_nNeg`: the rank of a Hermitian matrix is `nPos + nNeg`.

## Encoding

Mathlib has no signature API, so the signature of a real symmetric matrix is defined here as
the counts of positive / negative / zero roots of its characteristic polynomial (docs/theory.md,
"Signature", Encoding). For a non-symmetric matrix the roots need not account for all
`Fintype.card ι` eigenvalues; every result of the library applies these counts to symmetric
matrices only.

The whole of Mathlib is imported: the spectral theorem for matrices moved between
`Mathlib/LinearAlgebra/Matrix/Spectrum.lean` and `Mathlib/Analysis/Matrix/Spectrum.lean`, and
`import Mathlib` is robust to such moves.
-/

namespace QKForms

noncomputable section

open scoped Matrix

section Definitions

variable {m n ι : Type*} [Fintype m] [Fintype n]

/-- Squared Frobenius norm `‖A‖² = ∑ i j, A i j ^ 2` (docs/theory.md, "Conventions"). -/
def frobSq (A : Matrix m n ℝ) : ℝ := ∑ i, ∑ j, A i j ^ 2

/-- Symmetric part `S = ½ (L + Lᵀ)` (docs/theory.md, "Conventions"). -/
def symPart (L : Matrix ι ι ℝ) : Matrix ι ι ℝ := (1 / 2 : ℝ) • (L + Lᵀ)

/-- Antisymmetric (skew) part `T = ½ (L - Lᵀ)` (docs/theory.md, "Conventions"). -/
def skewPart (L : Matrix ι ι ℝ) : Matrix ι ι ℝ := (1 / 2 : ℝ) • (L - Lᵀ)

variable [Fintype ι] [DecidableEq ι]

/-- Eigenvalues with multiplicity: the roots of the characteristic polynomial. -/
noncomputable def eigs (A : Matrix ι ι ℝ) : Multiset ℝ := A.charpoly.roots

/-- Number of positive eigenvalues, with multiplicity. -/
noncomputable def nPos (A : Matrix ι ι ℝ) : ℕ := Multiset.card ((eigs A).filter (0 < ·))

/-- Number of negative eigenvalues, with multiplicity. -/
noncomputable def nNeg (A : Matrix ι ι ℝ) : ℕ := Multiset.card ((eigs A).filter (· < 0))

/-- Number of zero eigenvalues, with multiplicity. -/
noncomputable def nZero (A : Matrix ι ι ℝ) : ℕ := Multiset.card ((eigs A).filter (· = 0))

/-- Signature `(n₊, n₋, n₀)` of a real (symmetric) matrix. -/
noncomputable def signature (A : Matrix ι ι ℝ) : ℕ × ℕ × ℕ := (nPos A, nNeg A, nZero A)

end Definitions

section Parts

variable {ι : Type*}

theorem symPart_transpose (L : Matrix ι ι ℝ) : (symPart L)ᵀ = symPart L := by
  ext i j
  simp only [symPart, Matrix.transpose_apply, Matrix.add_apply, Matrix.smul_apply, smul_eq_mul]
  ring

theorem skewPart_transpose (L : Matrix ι ι ℝ) : (skewPart L)ᵀ = -skewPart L := by
  ext i j
  simp only [skewPart, Matrix.transpose_apply, Matrix.neg_apply, Matrix.sub_apply,
    Matrix.smul_apply, smul_eq_mul]
  ring

/-- The symmetric part is Hermitian (over `ℝ`: symmetric). -/
theorem symPart_isHermitian (L : Matrix ι ι ℝ) : (symPart L).IsHermitian := by
  -- `Matrix.IsHermitian A` is by definition `Aᴴ = A` (Mathlib/LinearAlgebra/Matrix/Hermitian.lean);
  -- `conjTranspose_eq_transpose_of_trivial` is in Mathlib/LinearAlgebra/Matrix/ConjTranspose.lean
  show (symPart L)ᴴ = symPart L
  rw [Matrix.conjTranspose_eq_transpose_of_trivial, symPart_transpose]

theorem symPart_add_skewPart (L : Matrix ι ι ℝ) : symPart L + skewPart L = L := by
  ext i j
  simp only [symPart, skewPart, Matrix.add_apply, Matrix.sub_apply, Matrix.transpose_apply,
    Matrix.smul_apply, smul_eq_mul]
  ring

theorem symPart_neg (L : Matrix ι ι ℝ) : symPart (-L) = -symPart L := by
  ext i j
  simp only [symPart, Matrix.add_apply, Matrix.neg_apply, Matrix.transpose_apply,
    Matrix.smul_apply, smul_eq_mul]
  ring

theorem symPart_apply (L : Matrix ι ι ℝ) (i j : ι) :
    symPart L i j = (1 / 2 : ℝ) * (L i j + L j i) := by
  simp only [symPart, Matrix.add_apply, Matrix.transpose_apply, Matrix.smul_apply, smul_eq_mul]

theorem skewPart_apply (L : Matrix ι ι ℝ) (i j : ι) :
    skewPart L i j = (1 / 2 : ℝ) * (L i j - L j i) := by
  simp only [skewPart, Matrix.sub_apply, Matrix.transpose_apply, Matrix.smul_apply, smul_eq_mul]

end Parts

section Counting

/-- Positive and negative elements of a multiset of reals are its nonzero elements. -/
theorem card_filter_pos_add_card_filter_neg (s : Multiset ℝ) :
    Multiset.card (s.filter (0 < ·)) + Multiset.card (s.filter (· < 0)) =
      Multiset.card (s.filter (· ≠ 0)) := by
  induction s using Multiset.induction with
  | empty => simp
  | cons a s ih =>
    rcases lt_trichotomy a 0 with h | h | h
    · have h1 : ¬ (0 < a) := not_lt.2 h.le
      rw [Multiset.filter_cons_of_neg (p := (0 < ·)) s h1,
        Multiset.filter_cons_of_pos (p := (· < 0)) s h,
        Multiset.filter_cons_of_pos (p := (· ≠ 0)) s h.ne,
        Multiset.card_cons, Multiset.card_cons]
      omega
    · subst h
      have h1 : ¬ ((0 : ℝ) < 0) := lt_irrefl 0
      have h2 : ¬ ((0 : ℝ) ≠ 0) := fun h => h rfl
      rw [Multiset.filter_cons_of_neg (p := (0 < ·)) s h1,
        Multiset.filter_cons_of_neg (p := (· < 0)) s h1,
        Multiset.filter_cons_of_neg (p := (· ≠ 0)) s h2]
      exact ih
    · have h1 : ¬ (a < 0) := not_lt.2 h.le
      rw [Multiset.filter_cons_of_pos (p := (0 < ·)) s h,
        Multiset.filter_cons_of_neg (p := (· < 0)) s h1,
        Multiset.filter_cons_of_pos (p := (· ≠ 0)) s h.ne',
        Multiset.card_cons, Multiset.card_cons]
      omega

/-- Nonzero and zero elements of a multiset of reals make up the whole multiset. -/
theorem card_filter_ne_add_card_filter_eq (s : Multiset ℝ) :
    Multiset.card (s.filter (· ≠ 0)) + Multiset.card (s.filter (· = 0)) =
      Multiset.card s := by
  induction s using Multiset.induction with
  | empty => simp
  | cons a s ih =>
    by_cases h : a = 0
    · have h2 : ¬ (a ≠ 0) := fun h' => h' h
      rw [Multiset.filter_cons_of_neg (p := (· ≠ 0)) s h2,
        Multiset.filter_cons_of_pos (p := (· = 0)) s h,
        Multiset.card_cons, Multiset.card_cons]
      omega
    · rw [Multiset.filter_cons_of_pos (p := (· ≠ 0)) s h,
        Multiset.filter_cons_of_neg (p := (· = 0)) s h,
        Multiset.card_cons, Multiset.card_cons]
      omega

end Counting

section Spectrum

variable {ι : Type*} [Fintype ι] [DecidableEq ι]

/-- For a Hermitian (i.e. symmetric) real matrix, `eigs A` is the multiset of the values of the
eigenvalue function `hA.eigenvalues`. Uses `Matrix.IsHermitian.roots_charpoly_eq_eigenvalues`
(Mathlib/Analysis/Matrix/Spectrum.lean; formerly Mathlib/LinearAlgebra/Matrix/Spectrum.lean),
whose statement carries `RCLike.ofReal ∘ hA.eigenvalues`; for `𝕜 = ℝ` the map `RCLike.ofReal` is
the identity by definition (`RCLike.ofReal_real_eq_id` is proved by `rfl`). -/
theorem eigs_eq_map_eigenvalues {A : Matrix ι ι ℝ} (hA : A.IsHermitian) :
    eigs A = Multiset.map hA.eigenvalues Finset.univ.val := by
  -- `eigs A` unfolds to `A.charpoly.roots`, and `RCLike.ofReal ∘ hA.eigenvalues` is
  -- `hA.eigenvalues` by definition for `𝕜 = ℝ`: the statement of Mathlib's lemma is ours up to
  -- definitional unfolding, which `exact` checks. The second branch makes the two steps
  -- explicit (`RCLike.ofReal_real_eq_id`, then `Function.id_comp`), for the case where the
  -- unifier does not unfold `RCLike.ofReal`; `simpa` either closes the goal or fails.
  -- closes by: the first branch (`exact`, up to definitional unfolding) at the pin
  first
  | exact hA.roots_charpoly_eq_eigenvalues
  | simpa only [eigs, RCLike.ofReal_real_eq_id, Function.id_comp] using
      hA.roots_charpoly_eq_eigenvalues

/-- A Hermitian real matrix has `Fintype.card ι` eigenvalues with multiplicity. -/
theorem card_eigs_of_isHermitian {A : Matrix ι ι ℝ} (hA : A.IsHermitian) :
    Multiset.card (eigs A) = Fintype.card ι := by
  rw [eigs_eq_map_eigenvalues hA, Multiset.card_map]
  exact Finset.card_univ

/-- Counting eigenvalues of a Hermitian matrix satisfying a predicate through the eigenvalue
function. -/
theorem card_filter_eigs {A : Matrix ι ι ℝ} (hA : A.IsHermitian) (p : ℝ → Prop)
    [DecidablePred p] :
    Multiset.card ((eigs A).filter p) =
      (Finset.univ.filter fun i => p (hA.eigenvalues i)).card := by
  rw [eigs_eq_map_eigenvalues hA, Multiset.filter_map, Multiset.card_map]
  -- `Finset.card (Finset.filter q univ)` is `Multiset.card (Multiset.filter q univ.val)` by the
  -- definitions of `Finset.card` and `Finset.filter`, and `p ∘ f` is `fun i => p (f i)`. The
  -- second branch unfolds exactly these three definitions by name.
  -- closes by: the first branch (`rfl`) at the pin
  first
  | rfl
  | simp only [Finset.card, Finset.filter, Function.comp_def]

theorem nPos_eq_card_filter {A : Matrix ι ι ℝ} (hA : A.IsHermitian) :
    nPos A = (Finset.univ.filter fun i => 0 < hA.eigenvalues i).card :=
  card_filter_eigs hA (0 < ·)

theorem nNeg_eq_card_filter {A : Matrix ι ι ℝ} (hA : A.IsHermitian) :
    nNeg A = (Finset.univ.filter fun i => hA.eigenvalues i < 0).card :=
  card_filter_eigs hA (· < 0)

theorem nZero_eq_card_filter {A : Matrix ι ι ℝ} (hA : A.IsHermitian) :
    nZero A = (Finset.univ.filter fun i => hA.eigenvalues i = 0).card :=
  card_filter_eigs hA (· = 0)

/-- The number of nonzero eigenvalues (with multiplicity) is `nPos + nNeg`. -/
theorem nPos_add_nNeg (A : Matrix ι ι ℝ) :
    nPos A + nNeg A = Multiset.card ((eigs A).filter (· ≠ 0)) :=
  card_filter_pos_add_card_filter_neg (eigs A)

/-- For a Hermitian matrix the three counts of the signature add up to the size. -/
theorem nPos_add_nNeg_add_nZero {A : Matrix ι ι ℝ} (hA : A.IsHermitian) :
    nPos A + nNeg A + nZero A = Fintype.card ι := by
  rw [nPos_add_nNeg, ← card_eigs_of_isHermitian hA]
  exact card_filter_ne_add_card_filter_eq (eigs A)

/-- The rank of a Hermitian real matrix is its number of nonzero eigenvalues, `nPos + nNeg`.
Uses `Matrix.IsHermitian.rank_eq_card_non_zero_eigs` (Mathlib/Analysis/Matrix/Spectrum.lean)
and `Fintype.card_subtype` (Mathlib/Data/Fintype/Card.lean). -/
theorem rank_eq_nPos_add_nNeg {A : Matrix ι ι ℝ} (hA : A.IsHermitian) :
    A.rank = nPos A + nNeg A := by
  -- the `Fintype` instance of the subtype is the one of Mathlib's statement; `rw` with
  -- `Fintype.card_subtype` (which takes that instance as an argument) keeps it
  rw [hA.rank_eq_card_non_zero_eigs, Fintype.card_subtype, nPos_add_nNeg]
  exact (card_filter_eigs hA (· ≠ 0)).symm

end Spectrum

end

end QKForms
