/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.RankBalance

/-!
# Heads have balanced signature (Theorem 3)

Let `Q = W_Q, K = W_K : ℝ^N → ℝ^n` be the query and key maps of a head and
`J = (Q, K) : ℝ^N → ℝ^n × ℝ^n`, `x ↦ (Q x, K x)`, the stacked map. If `J` is surjective, the
symmetric form `S(x, y) = ½ (⟨K x, Q y⟩ + ⟨Q x, K y⟩)`, whose Gram matrix in the standard basis
is `symPart (W_Kᵀ * W_Q)`, has signature `(n, n, N - 2n)` (docs/theory.md, "Signature";
Theorem 3 = Theorem 1 of the introduction).

## Proof

* Upper bounds: `rank (W_Kᵀ W_Q) ≤ n`, so Lemma 3 gives `n₊ ≤ n`, `n₋ ≤ n`.
* The kernel of `S` is the kernel of `J`: if `S x = 0` then
  `⟨K y, Q x⟩ + ⟨Q y, K x⟩ = 0` for every `y`; surjectivity lets `(Q y, K y)` be
  `(0, Q x)` and `(K x, 0)`, giving `Q x = 0` and `K x = 0`.
* Rank–nullity for `S` and for `J` (whose range is everything, of dimension `2n`) gives
  `rank S = 2n`, and `rank S = n₊ + n₋` for a symmetric matrix.

## Main statements

* `QKForms.signature_symPart_of_surjective` (`[qkforms:thm3]`): general finite index types
  `κ` (head coordinates) and `ι` (model coordinates).
* `QKForms.signature_symPart_of_surjective_fin` (`[qkforms:thm3]`): `Fin n`, `Fin N`.
* `QKForms.signature_gram_of_surjective` (`[qkforms:thm3]`): the Gram matrix in an arbitrary
  basis (columns of an invertible `P`), as the paper's statement (any basis) requires.
* `QKForms.two_mul_card_le_of_surjective`: surjectivity forces `2n ≤ N`.

## Encoding

The stacked map is `QKForms.stackedMap W_Q W_K = W_Q.mulVecLin.prod W_K.mulVecLin`, the
linear map `x ↦ (W_Q x, W_K x)`; nondegeneracy of the head is `Function.Surjective` of it,
which is the paper's hypothesis verbatim. The symmetric form is represented by its Gram
matrix in the standard basis, `symPart (W_Kᵀ * W_Q)`; the Gram matrix in an arbitrary basis
(columns of an invertible `P`) is covered by `QKForms.signature_gram_of_surjective`, which
reduces to the standard basis of the head `(W_Q P, W_K P)` (no appeal to Sylvester's law).
The signature is `QKForms.signature` (counts of positive / negative / zero eigenvalues with
multiplicity).
-/

namespace QKForms

noncomputable section

open scoped Matrix

variable {κ ι : Type*} [Fintype κ] [DecidableEq κ] [Fintype ι] [DecidableEq ι]

/-- The stacked map `J = (Q, K) : x ↦ (W_Q x, W_K x)` of a head. -/
noncomputable def stackedMap (Q K : Matrix κ ι ℝ) : (ι → ℝ) →ₗ[ℝ] (κ → ℝ) × (κ → ℝ) :=
  Q.mulVecLin.prod K.mulVecLin

theorem stackedMap_apply (Q K : Matrix κ ι ℝ) (x : ι → ℝ) :
    stackedMap Q K x = (Q *ᵥ x, K *ᵥ x) :=
  -- `LinearMap.prod_apply` and `Matrix.mulVecLin_apply` both hold by `rfl`
  rfl

/-- `symPart M *ᵥ x = ½ (M *ᵥ x + Mᵀ *ᵥ x)`. -/
theorem symPart_mulVec (M : Matrix ι ι ℝ) (x : ι → ℝ) :
    symPart M *ᵥ x = (1 / 2 : ℝ) • (M *ᵥ x + Mᵀ *ᵥ x) := by
  ext i
  simp only [Matrix.mulVec, dotProduct, Pi.smul_apply, Pi.add_apply, smul_eq_mul, symPart_apply,
    Matrix.transpose_apply]
  rw [← Finset.sum_add_distrib, Finset.mul_sum]
  refine Finset.sum_congr rfl fun j _ => ?_
  ring

/-- `y ⬝ᵥ (Kᵀ *ᵥ v) = (K *ᵥ y) ⬝ᵥ v`. -/
theorem dotProduct_transpose_mulVec_eq (K : Matrix κ ι ℝ) (y : ι → ℝ) (v : κ → ℝ) :
    y ⬝ᵥ (Kᵀ *ᵥ v) = (K *ᵥ y) ⬝ᵥ v := by
  rw [Matrix.dotProduct_mulVec, Matrix.vecMul_transpose]

/-- The symmetric form of a head: `yᵀ S x = ½ (⟨K y, Q x⟩ + ⟨Q y, K x⟩)`. -/
theorem dotProduct_symPart_mulVec_head (K Q : Matrix κ ι ℝ) (x y : ι → ℝ) :
    y ⬝ᵥ (symPart (Kᵀ * Q) *ᵥ x) =
      (1 / 2 : ℝ) * ((K *ᵥ y) ⬝ᵥ (Q *ᵥ x) + (Q *ᵥ y) ⬝ᵥ (K *ᵥ x)) := by
  rw [symPart_mulVec, Matrix.transpose_mul, Matrix.transpose_transpose,
    ← Matrix.mulVec_mulVec, ← Matrix.mulVec_mulVec, dotProduct_smul, dotProduct_add,
    dotProduct_transpose_mulVec_eq, dotProduct_transpose_mulVec_eq, smul_eq_mul]

/-- If the stacked map is surjective, the kernel of the symmetric part of `W_Kᵀ W_Q` is the
kernel of the stacked map. -/
theorem ker_symPart_eq_ker_stackedMap (Q K : Matrix κ ι ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) :
    LinearMap.ker (symPart (Kᵀ * Q)).mulVecLin = LinearMap.ker (stackedMap Q K) := by
  ext x
  rw [LinearMap.mem_ker, LinearMap.mem_ker, Matrix.mulVecLin_apply, stackedMap_apply,
    Prod.mk_eq_zero]
  constructor
  · intro hx
    have key : ∀ y, (K *ᵥ y) ⬝ᵥ (Q *ᵥ x) + (Q *ᵥ y) ⬝ᵥ (K *ᵥ x) = 0 := by
      intro y
      have h := dotProduct_symPart_mulVec_head K Q x y
      rw [hx, dotProduct_zero] at h
      linarith
    obtain ⟨y₁, hy₁⟩ := hJ (0, Q *ᵥ x)
    obtain ⟨y₂, hy₂⟩ := hJ (K *ᵥ x, 0)
    rw [stackedMap_apply, Prod.mk.injEq] at hy₁ hy₂
    have h1 := key y₁
    rw [hy₁.1, hy₁.2, zero_dotProduct, add_zero] at h1
    have h2 := key y₂
    rw [hy₂.1, hy₂.2, zero_dotProduct, zero_add] at h2
    exact ⟨dotProduct_self_eq_zero.1 h1, dotProduct_self_eq_zero.1 h2⟩
  · rintro ⟨hQ, hK⟩
    rw [symPart_mulVec, Matrix.transpose_mul, Matrix.transpose_transpose,
      ← Matrix.mulVec_mulVec, ← Matrix.mulVec_mulVec, hQ, hK, Matrix.mulVec_zero,
      Matrix.mulVec_zero, add_zero, smul_zero]

/-- Rank–nullity for the surjective stacked map:
`2 n + dim ker J = N` (as `finrank` of `ι → ℝ`). Uses `LinearMap.finrank_range_add_finrank_ker`
(Mathlib/LinearAlgebra/FiniteDimensional/Lemmas.lean), `LinearMap.range_eq_top`,
`Submodule.topEquiv`, `LinearEquiv.finrank_eq`, `Module.finrank_prod` and `Module.finrank_pi`
(Mathlib/LinearAlgebra/Dimension/*). -/
theorem two_mul_card_add_finrank_ker_stackedMap (Q K : Matrix κ ι ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) :
    2 * Fintype.card κ + Module.finrank ℝ (LinearMap.ker (stackedMap Q K)) =
      Fintype.card ι := by
  -- Every step that involves a Mathlib lemma is a term checked up to defeq (`calc` steps), so
  -- the instance paths of `finrank` in Mathlib's statements need not match ours syntactically;
  -- `rw` only rewrites with equations stated in this file.
  have hcard : Module.finrank ℝ (κ → ℝ) = Fintype.card κ := Module.finrank_pi ℝ
  have htop : Module.finrank ℝ (LinearMap.range (stackedMap Q K)) = 2 * Fintype.card κ := by
    rw [LinearMap.range_eq_top.2 hJ]
    calc Module.finrank ℝ (⊤ : Submodule ℝ ((κ → ℝ) × (κ → ℝ)))
        = Module.finrank ℝ ((κ → ℝ) × (κ → ℝ)) := LinearEquiv.finrank_eq Submodule.topEquiv
      _ = Module.finrank ℝ (κ → ℝ) + Module.finrank ℝ (κ → ℝ) := Module.finrank_prod
      _ = 2 * Fintype.card κ := by rw [hcard, two_mul]
  calc 2 * Fintype.card κ + Module.finrank ℝ (LinearMap.ker (stackedMap Q K))
      = Module.finrank ℝ (LinearMap.range (stackedMap Q K)) +
          Module.finrank ℝ (LinearMap.ker (stackedMap Q K)) := by rw [htop]
    _ = Module.finrank ℝ (ι → ℝ) := LinearMap.finrank_range_add_finrank_ker (stackedMap Q K)
    _ = Fintype.card ι := Module.finrank_pi ℝ

/-- The rank of the symmetric part of a nondegenerate head is `2 n`. -/
theorem rank_symPart_of_surjective (Q K : Matrix κ ι ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) :
    (symPart (Kᵀ * Q)).rank = 2 * Fintype.card κ := by
  have hker := ker_symPart_eq_ker_stackedMap Q K hJ
  have h1 : (symPart (Kᵀ * Q)).rank + Module.finrank ℝ (LinearMap.ker (stackedMap Q K)) =
      Fintype.card ι :=
    calc (symPart (Kᵀ * Q)).rank + Module.finrank ℝ (LinearMap.ker (stackedMap Q K))
        = Module.finrank ℝ (LinearMap.range (symPart (Kᵀ * Q)).mulVecLin) +
            Module.finrank ℝ (LinearMap.ker (stackedMap Q K)) :=
          -- `Matrix.rank A` is by definition `finrank R (LinearMap.range A.mulVecLin)`
          -- (Mathlib/LinearAlgebra/Matrix/Rank.lean)
          rfl
      _ = Module.finrank ℝ (LinearMap.range (symPart (Kᵀ * Q)).mulVecLin) +
            Module.finrank ℝ (LinearMap.ker (symPart (Kᵀ * Q)).mulVecLin) := by
          rw [hker]
      _ = Module.finrank ℝ (ι → ℝ) :=
          LinearMap.finrank_range_add_finrank_ker (symPart (Kᵀ * Q)).mulVecLin
      _ = Fintype.card ι := Module.finrank_pi ℝ
  have h2 := two_mul_card_add_finrank_ker_stackedMap Q K hJ
  omega

/-- Surjectivity of the stacked map forces `N ≥ 2n` (docs/theory.md, "Signature"). -/
theorem two_mul_card_le_of_surjective (Q K : Matrix κ ι ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) :
    2 * Fintype.card κ ≤ Fintype.card ι := by
  have h := two_mul_card_add_finrank_ker_stackedMap Q K hJ
  omega

/-- The rank of a head's bilinear form is at most the head dimension. -/
theorem rank_transpose_mul_le (Q K : Matrix κ ι ℝ) : (Kᵀ * Q).rank ≤ Fintype.card κ :=
  (Matrix.rank_mul_le_left _ _).trans (Matrix.rank_le_card_width _)

/-- **Theorem 3 of the paper** (heads have balanced attention; Theorem 1 of the introduction):
if the stacked map `x ↦ (W_Q x, W_K x)` is surjective, the symmetric part of `W_Kᵀ W_Q` has
signature `(n, n, N - 2n)` with `n = |κ|`, `N = |ι|`. [qkforms:thm3] -/
theorem signature_symPart_of_surjective (Q K : Matrix κ ι ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) :
    signature (symPart (Kᵀ * Q)) =
      (Fintype.card κ, Fintype.card κ, Fintype.card ι - 2 * Fintype.card κ) := by
  have hS := symPart_isHermitian (Kᵀ * Q)
  have hpos := (nPos_symPart_le_rank (Kᵀ * Q)).trans (rank_transpose_mul_le Q K)
  have hneg := (nNeg_symPart_le_rank (Kᵀ * Q)).trans (rank_transpose_mul_le Q K)
  have hsum : nPos (symPart (Kᵀ * Q)) + nNeg (symPart (Kᵀ * Q)) = 2 * Fintype.card κ := by
    rw [← rank_eq_nPos_add_nNeg hS, rank_symPart_of_surjective Q K hJ]
  have htot := nPos_add_nNeg_add_nZero hS
  simp only [signature, Prod.mk.injEq]
  refine ⟨?_, ?_, ?_⟩ <;> omega

/-- **Theorem 3 of the paper**, for `W_Q, W_K ∈ M_{n×N}(ℝ)`: signature `(n, n, N - 2n)`.
[qkforms:thm3] -/
theorem signature_symPart_of_surjective_fin {n N : ℕ} (Q K : Matrix (Fin n) (Fin N) ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) :
    signature (symPart (Kᵀ * Q)) = (n, n, N - 2 * n) := by
  have h := signature_symPart_of_surjective Q K hJ
  simp only [Fintype.card_fin] at h
  exact h

section Basis

/-! ### Gram matrix in an arbitrary basis

The paper states the signature for the Gram matrix `G_ij = S(b_i, b_j)` in an arbitrary basis
`b` of `ℝ^N`. With `b_j` the `j`-th column of an invertible `P` (`P * P' = 1`), `G` is the
symmetric part of `(W_K P)ᵀ (W_Q P)` (`QKForms.symPart_gram_apply`), i.e. the Gram matrix in the
standard basis of the head `(W_Q P, W_K P)`, whose stacked map is again surjective. -/

/-- Precomposing a head with an invertible `P` keeps the stacked map surjective. -/
theorem surjective_stackedMap_mul (Q K : Matrix κ ι ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) (P P' : Matrix ι ι ℝ) (hPP' : P * P' = 1) :
    Function.Surjective (stackedMap (Q * P) (K * P)) := by
  intro uv
  obtain ⟨x, hx⟩ := hJ uv
  refine ⟨P' *ᵥ x, ?_⟩
  have hx' : P *ᵥ (P' *ᵥ x) = x := by
    rw [Matrix.mulVec_mulVec, hPP', Matrix.one_mulVec]
  rw [stackedMap_apply, ← Matrix.mulVec_mulVec, ← Matrix.mulVec_mulVec, hx']
  exact hx

/-- The entries of `symPart ((W_K P)ᵀ (W_Q P))` are the values `S(b_i, b_j)` of the symmetric
form on the columns `b_i = P e_i`. -/
theorem symPart_gram_apply (Q K : Matrix κ ι ℝ) (P : Matrix ι ι ℝ) (i j : ι) :
    symPart ((K * P)ᵀ * (Q * P)) i j =
      (1 / 2 : ℝ) * ((K *ᵥ fun a => P a i) ⬝ᵥ (Q *ᵥ fun a => P a j) +
        (Q *ᵥ fun a => P a i) ⬝ᵥ (K *ᵥ fun a => P a j)) := by
  have h : ∀ i j, ((K * P)ᵀ * (Q * P)) i j =
      (K *ᵥ fun a => P a i) ⬝ᵥ (Q *ᵥ fun a => P a j) := by
    intro i j
    -- both sides unfold to `∑ r, (∑ a, K r a * P a i) * ∑ a, Q r a * P a j`
    simp only [Matrix.mul_apply, Matrix.transpose_apply, Matrix.mulVec, dotProduct]
  rw [symPart_apply, h, h, dotProduct_comm (K *ᵥ fun a => P a j)]

/-- **Theorem 3 of the paper**, in an arbitrary basis: the Gram matrix `G_ij = S(b_i, b_j)` of
the symmetric form in the basis of the columns of an invertible `P` has signature
`(n, n, N - 2n)`. [qkforms:thm3] -/
theorem signature_gram_of_surjective (Q K : Matrix κ ι ℝ)
    (hJ : Function.Surjective (stackedMap Q K)) (P P' : Matrix ι ι ℝ) (hPP' : P * P' = 1) :
    signature (symPart ((K * P)ᵀ * (Q * P))) =
      (Fintype.card κ, Fintype.card κ, Fintype.card ι - 2 * Fintype.card κ) :=
  signature_symPart_of_surjective (Q * P) (K * P) (surjective_stackedMap_mul Q K hJ P P' hPP')

end Basis

end

end QKForms
