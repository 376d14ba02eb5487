/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.GramSpectrum
import QKForms.Profile
import QKForms.LobeEstimates

/-!
# The profile of a head from its Gram data (Definition 6 reduction; Lemma 10, profile part)

Let `M = [W_K; W_Q] ∈ M_{2n×N}(ℝ)` be the stacked matrix of a head and `F = [K'; Q']` with
`K', Q' ∈ M_{n×k}(ℝ)` any pair with the same Gram matrix, `F Fᵀ = M Mᵀ` (for instance the
factor the survey computes, docs/theory.md §12.2: `K' = W_K R`, `Q' = W_Q R` for an
orthonormal basis `R` of the row space of `M`, or the rows of a Cholesky, pivoted or
semidefinite factor of `G`). Then the form `L_red = K'ᵀ Q'`, computed from `2n × 2n` data,
has the same profile as `L = W_Kᵀ W_Q` (Definition 6 of the paper, "the profile is unchanged
by the reduction"; the profile part of Lemma 10), and the same squared norm, `tr L²`,
symmetric energy and skew energy.

## Main statements

* `QKForms.profile_eq_of_filter_pos_eigs_eq`: two forms (of any sizes) whose symmetric parts
  have the same positive eigenvalues, whose negatives have the same positive eigenvalues, and
  which have the same `‖L‖²` and `‖T‖²`, have the same profile (the lobes of Definition 6 see
  only the nonzero eigenvalues; padding changes nothing).
* `QKForms.energies_eq_of_gram_eq` (`[qkforms:lemma10]`): `‖L‖²`, `tr L²`, `‖T‖²` and `‖S‖²`
  depend only on `M Mᵀ` (`‖L‖² = tr(W_K W_Kᵀ W_Q W_Qᵀ)`, `tr L² = tr((W_Q W_Kᵀ)²)`, Lemma 5).
* `QKForms.profile_transpose_mul_eq_of_gram_eq` (`[qkforms:def6]`, `[qkforms:lemma10]`):
  `π(W_Kᵀ W_Q) = π(K'ᵀ Q')` whenever `[K'; Q'] [K'; Q']ᵀ = M Mᵀ`.

## Encoding

The lobes of `L` are `posLobe L`, `negLobe L : Fin N → ℝ` (`QKForms/ProfileDefs.lean`, padded to
`N = Fintype.card ι`); those of `L_red` are padded to `k`. The proof reads both lobes through
the positive eigenvalues of `S` and of `-S` (`negLobe L = posLobe (-L)`,
`QKForms.posLobe_neg_negLobe_neg`), takes the equality of those multisets from the spectral
part of Lemma 10 (`QKForms/GramSpectrum.lean`, with the middle matrices `½ 𝒥` and `-½ 𝒥`), and
removes the padding with the sorting lemmas of `QKForms/LobeEstimates.lean`
(`QKForms.Sorting`). The pair `K', Q'` is the row split of the factor `F`
(`F = stackedMatrix K' Q'`); no relation between `k` and `N` is assumed.
-/

namespace QKForms

noncomputable section

open scoped Matrix

section Lobes

/-- `{max λ 0 : λ ∈ m} = {λ ∈ m : λ > 0} + (zeros)`, as multisets. -/
theorem map_max_zero_eq_filter_pos_add_replicate (m : Multiset ℝ) :
    m.map (fun y => max y 0) =
      m.filter (0 < ·) + Multiset.replicate (Multiset.card (m.filter fun y => ¬ 0 < y)) 0 := by
  induction m using Multiset.induction with
  | empty =>
    -- `Multiset.map_zero`, `Multiset.filter_zero`, `Multiset.card_zero`,
    -- `Multiset.replicate_zero` and `add_zero` are simp lemmas: both sides are `0`
    simp
  | cons a s ih =>
    by_cases h : 0 < a
    · -- `max a 0 = a` joins the positive part
      rw [Multiset.map_cons, Multiset.filter_cons_of_pos (p := (0 < ·)) s h,
        Multiset.filter_cons_of_neg (p := fun y => ¬ 0 < y) s (fun hn => hn h), ih,
        max_eq_left h.le, Multiset.cons_add]
    · -- `max a 0 = 0` joins the zeros
      rw [Multiset.map_cons, Multiset.filter_cons_of_neg (p := (0 < ·)) s h,
        Multiset.filter_cons_of_pos (p := fun y => ¬ 0 < y) s h, Multiset.card_cons,
        Multiset.replicate_succ, ih, max_eq_right (not_lt.1 h), Multiset.add_cons]

/-- The lobe `α` of a multiset through its positive part: `α_j` is the `j`-th entry of the
decreasing sort of `{λ ∈ m : λ > 0}` (`0` past its end), for every padding length `k`. Uses
`QKForms.Sorting.sortDesc_map_of_monotone`, `QKForms.Sorting.getD_map_of_map_zero` and
`QKForms.Sorting.sortedEntry_add_replicate_zero` (`QKForms/LobeEstimates.lean`). -/
theorem posLobeOf_eq_sortedEntry_filter_pos (k : ℕ) (m : Multiset ℝ) (j : Fin k) :
    posLobeOf k m j = sortedEntry (m.filter (0 < ·)) j := by
  have hf : Monotone (fun y : ℝ => max y 0) := fun a b hab => max_le_max hab le_rfl
  have hf0 : (fun y : ℝ => max y 0) 0 = 0 := max_self 0
  have hnn : ∀ y ∈ m.filter (0 < ·), 0 ≤ y := fun y hy => le_of_lt (Multiset.of_mem_filter hy)
  calc posLobeOf k m j = max (sortedEntry m j) 0 := rfl
    _ = sortedEntry (m.map fun y => max y 0) j := by
        unfold sortedEntry
        rw [Sorting.sortDesc_map_of_monotone hf m,
          Sorting.getD_map_of_map_zero (f := fun y : ℝ => max y 0) hf0]
    _ = sortedEntry (m.filter (0 < ·) +
          Multiset.replicate (Multiset.card (m.filter fun y => ¬ 0 < y)) 0) j := by
        rw [map_max_zero_eq_filter_pos_add_replicate]
    _ = sortedEntry (m.filter (0 < ·)) j := Sorting.sortedEntry_add_replicate_zero hnn _ j

/-- Sums over zero-padded decreasing sorts do not depend on the padding length (both reduce to
the length `min N k`, `QKForms.Sorting.sum_fin_sortedEntry₂`). -/
theorem sum_sortedEntry₂_eq_of_card_le (g : ℝ → ℝ → ℝ) (hg : g 0 0 = 0) {A B : Multiset ℝ}
    {N k : ℕ} (hAN : Multiset.card A ≤ N) (hBN : Multiset.card B ≤ N)
    (hAk : Multiset.card A ≤ k) (hBk : Multiset.card B ≤ k) :
    ∑ j : Fin N, g (sortedEntry A j) (sortedEntry B j) =
      ∑ j : Fin k, g (sortedEntry A j) (sortedEntry B j) :=
  (Sorting.sum_fin_sortedEntry₂ g hg (le_min hAN hAk) (le_min hBN hBk) (min_le_left N k)).trans
    (Sorting.sum_fin_sortedEntry₂ g hg (le_min hAN hAk) (le_min hBN hBk)
      (min_le_right N k)).symm

variable {ι r : Type*} [Fintype ι] [DecidableEq ι] [Fintype r] [DecidableEq r]

/-- The positive lobe of `L` through the positive eigenvalues of its symmetric part. -/
theorem posLobe_eq_sortedEntry_filter_pos (L : Matrix ι ι ℝ) (j : Fin (Fintype.card ι)) :
    posLobe L j = sortedEntry ((eigs (symPart L)).filter (0 < ·)) j :=
  -- `posLobe L` is by definition `posLobeOf (Fintype.card ι) (eigs (symPart L))`
  posLobeOf_eq_sortedEntry_filter_pos _ _ j

/-- The negative lobe of `L` through the positive eigenvalues of the symmetric part of `-L`
(`β(L) = α(-L)`, `QKForms.posLobe_neg_negLobe_neg`, `QKForms/Profile.lean`). -/
theorem negLobe_eq_sortedEntry_filter_pos (L : Matrix ι ι ℝ) (j : Fin (Fintype.card ι)) :
    negLobe L j = sortedEntry ((eigs (symPart (-L))).filter (0 < ·)) j :=
  (congrFun (posLobe_neg_negLobe_neg L).1 j).symm.trans
    (posLobeOf_eq_sortedEntry_filter_pos _ _ j)

/-- A symmetric matrix has at most `Fintype.card ι` eigenvalues with any property. Uses
`Multiset.filter_le` and `Multiset.card_le_card`. -/
theorem card_filter_eigs_le {A : Matrix ι ι ℝ} (hA : A.IsHermitian) (p : ℝ → Prop)
    [DecidablePred p] : Multiset.card ((eigs A).filter p) ≤ Fintype.card ι := by
  rw [← card_eigs_of_isHermitian hA]
  exact Multiset.card_le_card (Multiset.filter_le p (eigs A))

/-- **The profile sees only the nonzero spectrum.** Two forms `L ∈ M_N(ℝ)`, `L' ∈ M_k(ℝ)`
whose symmetric parts have the same positive eigenvalues, whose negatives `-L`, `-L'` have the
same positive eigenvalues (i.e. the same negative eigenvalues, negated), and which have the
same `‖L‖²` and `‖T‖²`, have the same profile (Definition 6 of the paper: padding changes
nothing, zero eigenvalues contribute nothing). -/
theorem profile_eq_of_filter_pos_eigs_eq {L : Matrix ι ι ℝ} {L' : Matrix r r ℝ}
    (hpos : (eigs (symPart L)).filter (0 < ·) = (eigs (symPart L')).filter (0 < ·))
    (hneg : (eigs (symPart (-L))).filter (0 < ·) = (eigs (symPart (-L'))).filter (0 < ·))
    (hF : frobSq L = frobSq L') (hT : frobSq (skewPart L) = frobSq (skewPart L')) :
    profile L = profile L' := by
  have hA : Multiset.card ((eigs (symPart L)).filter (0 < ·)) ≤ Fintype.card ι :=
    card_filter_eigs_le (symPart_isHermitian L) _
  have hB : Multiset.card ((eigs (symPart (-L))).filter (0 < ·)) ≤ Fintype.card ι :=
    card_filter_eigs_le (symPart_isHermitian (-L)) _
  have hA' : Multiset.card ((eigs (symPart L)).filter (0 < ·)) ≤ Fintype.card r := by
    rw [hpos]
    exact card_filter_eigs_le (symPart_isHermitian L') _
  have hB' : Multiset.card ((eigs (symPart (-L))).filter (0 < ·)) ≤ Fintype.card r := by
    rw [hneg]
    exact card_filter_eigs_le (symPart_isHermitian (-L')) _
  -- every lobe sum `∑ j, g (α j) (β j)` with `g 0 0 = 0` agrees
  have key : ∀ g : ℝ → ℝ → ℝ, g 0 0 = 0 →
      ∑ j, g (posLobe L j) (negLobe L j) = ∑ j, g (posLobe L' j) (negLobe L' j) := by
    intro g hg
    calc ∑ j, g (posLobe L j) (negLobe L j)
        = ∑ j : Fin (Fintype.card ι), g (sortedEntry ((eigs (symPart L)).filter (0 < ·)) j)
            (sortedEntry ((eigs (symPart (-L))).filter (0 < ·)) j) :=
          Finset.sum_congr rfl fun j _ => by
            rw [posLobe_eq_sortedEntry_filter_pos L j, negLobe_eq_sortedEntry_filter_pos L j]
      _ = ∑ j : Fin (Fintype.card r), g (sortedEntry ((eigs (symPart L)).filter (0 < ·)) j)
            (sortedEntry ((eigs (symPart (-L))).filter (0 < ·)) j) :=
          sum_sortedEntry₂_eq_of_card_le g hg hA hB hA' hB'
      _ = ∑ j : Fin (Fintype.card r), g (sortedEntry ((eigs (symPart L')).filter (0 < ·)) j)
            (sortedEntry ((eigs (symPart (-L'))).filter (0 < ·)) j) := by
          rw [hpos, hneg]
      _ = ∑ j, g (posLobe L' j) (negLobe L' j) :=
          Finset.sum_congr rfl fun j _ => by
            rw [posLobe_eq_sortedEntry_filter_pos L' j, negLobe_eq_sortedEntry_filter_pos L' j]
  -- `lobeCross α β = ∑ j, α j * β j` and `lobeExcess α β = ∑ j, max (α j - β j) 0 ^ 2`
  have hX : lobeCross (posLobe L) (negLobe L) = lobeCross (posLobe L') (negLobe L') :=
    key (fun x y => x * y) (by
      show (0 : ℝ) * 0 = 0
      norm_num)
  have hC : lobeExcess (posLobe L) (negLobe L) = lobeExcess (posLobe L') (negLobe L') :=
    key (fun x y => max (x - y) 0 ^ 2) (by
      show max ((0 : ℝ) - 0) 0 ^ 2 = 0
      rw [sub_self, max_self]
      norm_num)
  have hD : lobeExcess (negLobe L) (posLobe L) = lobeExcess (negLobe L') (posLobe L') :=
    key (fun x y => max (y - x) 0 ^ 2) (by
      show max ((0 : ℝ) - 0) 0 ^ 2 = 0
      rw [sub_self, max_self]
      norm_num)
  unfold profile profileA profileB profileC profileD
  rw [hF, hT, hX, hC, hD]

end Lobes

section Gram

variable {κ ι r : Type*} [Fintype κ] [DecidableEq κ] [Fintype ι] [DecidableEq ι]
  [Fintype r] [DecidableEq r]

/-- The Gram matrix in blocks: `M Mᵀ = [[W_K W_Kᵀ, W_K W_Qᵀ], [W_Q W_Kᵀ, W_Q W_Qᵀ]]`. Uses
`Matrix.transpose_fromRows` and `Matrix.fromRows_mul_fromCols`
(Mathlib/Data/Matrix/ColumnRowPartitioned.lean). -/
theorem stacked_mul_transpose_stacked (K Q : Matrix κ ι ℝ) :
    stackedMatrix K Q * (stackedMatrix K Q)ᵀ =
      Matrix.fromBlocks (K * Kᵀ) (K * Qᵀ) (Q * Kᵀ) (Q * Qᵀ) := by
  rw [stackedMatrix, Matrix.transpose_fromRows, Matrix.fromRows_mul_fromCols]

/-- Equal Gram matrices have equal blocks (`Matrix.fromBlocks_inj`,
Mathlib/Data/Matrix/Block.lean). -/
theorem gram_blocks_eq_of_gram_eq {K Q : Matrix κ ι ℝ} {K' Q' : Matrix κ r ℝ}
    (hG : stackedMatrix K' Q' * (stackedMatrix K' Q')ᵀ =
      stackedMatrix K Q * (stackedMatrix K Q)ᵀ) :
    K' * K'ᵀ = K * Kᵀ ∧ K' * Q'ᵀ = K * Qᵀ ∧ Q' * K'ᵀ = Q * Kᵀ ∧ Q' * Q'ᵀ = Q * Qᵀ := by
  rw [stacked_mul_transpose_stacked, stacked_mul_transpose_stacked] at hG
  exact Matrix.fromBlocks_inj.1 hG

/-- `‖W_Kᵀ W_Q‖² = tr(W_K W_Kᵀ W_Q W_Qᵀ)`. Uses `QKForms.frobSq_eq_trace_transpose_mul` and
`Matrix.trace_mul_comm` (Mathlib/LinearAlgebra/Matrix/Trace.lean). -/
theorem frobSq_transpose_mul_eq_trace (K Q : Matrix κ ι ℝ) :
    frobSq (Kᵀ * Q) = Matrix.trace (K * Kᵀ * (Q * Qᵀ)) := by
  rw [frobSq_eq_trace_transpose_mul, Matrix.transpose_mul, Matrix.transpose_transpose]
  calc Matrix.trace (Qᵀ * K * (Kᵀ * Q)) = Matrix.trace (Qᵀ * (K * Kᵀ * Q)) := by
        simp only [Matrix.mul_assoc]
    _ = Matrix.trace (K * Kᵀ * Q * Qᵀ) := Matrix.trace_mul_comm _ _
    _ = Matrix.trace (K * Kᵀ * (Q * Qᵀ)) := by rw [Matrix.mul_assoc (K * Kᵀ)]

/-- `tr((W_Kᵀ W_Q)²) = tr((W_Q W_Kᵀ)²)`. -/
theorem trace_transpose_mul_sq_eq (K Q : Matrix κ ι ℝ) :
    Matrix.trace (Kᵀ * Q * (Kᵀ * Q)) = Matrix.trace (Q * Kᵀ * (Q * Kᵀ)) := by
  calc Matrix.trace (Kᵀ * Q * (Kᵀ * Q)) = Matrix.trace (Kᵀ * (Q * Kᵀ * Q)) := by
        simp only [Matrix.mul_assoc]
    _ = Matrix.trace (Q * Kᵀ * Q * Kᵀ) := Matrix.trace_mul_comm _ _
    _ = Matrix.trace (Q * Kᵀ * (Q * Kᵀ)) := by rw [Matrix.mul_assoc (Q * Kᵀ)]

/-- **Lemma 10 of the paper** (energies from the Gram data): if
`[K'; Q'] [K'; Q']ᵀ = [W_K; W_Q] [W_K; W_Q]ᵀ`, the forms `L = W_Kᵀ W_Q` and `L' = K'ᵀ Q'` have
the same squared norm `‖L‖²`, the same `tr L²`, the same skew energy `‖T‖²` and the same
symmetric energy `‖S‖²` (the last two by Lemma 5). [qkforms:lemma10] -/
theorem energies_eq_of_gram_eq {K Q : Matrix κ ι ℝ} {K' Q' : Matrix κ r ℝ}
    (hG : stackedMatrix K' Q' * (stackedMatrix K' Q')ᵀ =
      stackedMatrix K Q * (stackedMatrix K Q)ᵀ) :
    frobSq (K'ᵀ * Q') = frobSq (Kᵀ * Q) ∧
      Matrix.trace (K'ᵀ * Q' * (K'ᵀ * Q')) = Matrix.trace (Kᵀ * Q * (Kᵀ * Q)) ∧
      frobSq (skewPart (K'ᵀ * Q')) = frobSq (skewPart (Kᵀ * Q)) ∧
      frobSq (symPart (K'ᵀ * Q')) = frobSq (symPart (Kᵀ * Q)) := by
  obtain ⟨hKK, -, hQK, hQQ⟩ := gram_blocks_eq_of_gram_eq hG
  have hF : frobSq (K'ᵀ * Q') = frobSq (Kᵀ * Q) := by
    rw [frobSq_transpose_mul_eq_trace, frobSq_transpose_mul_eq_trace, hKK, hQQ]
  have htr : Matrix.trace (K'ᵀ * Q' * (K'ᵀ * Q')) = Matrix.trace (Kᵀ * Q * (Kᵀ * Q)) := by
    rw [trace_transpose_mul_sq_eq, trace_transpose_mul_sq_eq, hQK]
  refine ⟨hF, htr, ?_, ?_⟩
  · -- `QKForms.frobSq_skewPart_eq : ‖T‖² = ½ ‖L‖² - ½ tr(L * L)` (Lemma 5)
    rw [frobSq_skewPart_eq, frobSq_skewPart_eq, hF, htr]
  · -- `QKForms.frobSq_symPart_eq : ‖S‖² = ½ ‖L‖² + ½ tr(L * L)` (Lemma 5)
    rw [frobSq_symPart_eq, frobSq_symPart_eq, hF, htr]

/-- **Definition 6 of the paper** (the reduction keeps the profile) and **Lemma 10 of the
paper** (profile from the Gram data): if the pair `K', Q' ∈ M_{n×k}(ℝ)` has the Gram matrix of
the head, `[K'; Q'] [K'; Q']ᵀ = M Mᵀ` with `M = [W_K; W_Q]`, then the form `L_red = K'ᵀ Q'`
computed from it has the profile of `L = W_Kᵀ W_Q`: `π(L) = π(L_red)`.
[qkforms:def6] [qkforms:lemma10] -/
theorem profile_transpose_mul_eq_of_gram_eq {K Q : Matrix κ ι ℝ} {K' Q' : Matrix κ r ℝ}
    (hG : stackedMatrix K' Q' * (stackedMatrix K' Q')ᵀ =
      stackedMatrix K Q * (stackedMatrix K Q)ᵀ) :
    profile (Kᵀ * Q) = profile (K'ᵀ * Q') := by
  obtain ⟨hF, -, hT, -⟩ := energies_eq_of_gram_eq hG
  refine profile_eq_of_filter_pos_eigs_eq ?_ ?_ hF.symm hT.symm
  · -- `S = Mᵀ (½ 𝒥) M` and `S_red = Fᵀ (½ 𝒥) F` with `F = [K'; Q']`
    rw [symPart_eq_stacked_mul K Q, symPart_eq_stacked_mul K' Q']
    exact filter_eigs_transpose_mul_mul_eq _ hG (0 < ·) (lt_irrefl 0)
  · -- `-S = Mᵀ (-½ 𝒥) M` and `-S_red = Fᵀ (-½ 𝒥) F`
    rw [symPart_neg, symPart_neg, neg_symPart_eq_stacked_mul K Q,
      neg_symPart_eq_stacked_mul K' Q']
    exact filter_eigs_transpose_mul_mul_eq _ hG (0 < ·) (lt_irrefl 0)

end Gram

end

end QKForms
