/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.LobeEstimates
import QKForms.RankOne

/-!
# Accumulation on Θ (Theorem 5 of the paper), from proportional lobes

Theorem 5 of the paper (`docs/theory.md`, "Accumulation on Θ"): let `X > 0` with finite nonzero
second moment, `u, v > 0`, `ρ = u / v`; for each `n` let `N_n ≥ 2n` and `S_n ∈ M_{N_n}(ℝ)`
symmetric with eigenvalues `v X_1, …, v X_n`, `-u X'_1, …, -u X'_n` and `N_n - 2n` zeros, the
`X_i, X'_i` independent copies of `X`. Then almost surely
`π(S_n) → (1 / (1 + ρ²)) (0, 2ρ, (1 - ρ)₊², (ρ - 1)₊²) ∈ p(Θ)`, `p(a, b, c, d) = (0, a + b, c, d)`.

The probabilistic input of the proof is Lemma 6 (`‖β_n - ρα_n‖ / ‖α_n‖ → 0` a.s.); everything
else is deterministic. This file proves the deterministic part along one sample path, and its
almost-sure consequence for any random sample on which Lemma 6 holds almost surely.

## Main definitions

* `QKForms.accumulationSpectrum u v x x' n N`: the multiset
  `{v x_i}_{i<n} + {-u x'_i}_{i<n} + (N - 2n)·{0}`.
* `QKForms.accumulationLimit ρ = (0, 2ρ, (1-ρ)₊², (ρ-1)₊²) / (1 + ρ²)`.
* `QKForms.Accumulation.thetaPoint t = ((1-t²)/2, (1-t²)/2, t₊², t₋²)` (the parametrization of
  Θ, Proposition 4) and `QKForms.Accumulation.mergeAB (a, b, c, d) = (0, a + b, c, d)` (the map
  `p`).

## Main statements

* `QKForms.accumulation_of_proportionalLobes` (Theorem 5, deterministic form): along a
  sample path `x, x' > 0` on which the conclusion of Lemma 6 holds
  (`lobeMisfit u v x x' n → 0`), every sequence of symmetric matrices with spectra
  `accumulationSpectrum u v x x' n (N n)` has `profile (S n) → accumulationLimit (u / v)`.
* `QKForms.accumulation_ae_of_proportionalLobes`: the same almost surely, for almost surely
  positive random sample paths on which Lemma 6 holds almost surely;
  `QKForms.ae_forall_pos_of_map_eq`: random variables with a common law `γ`,
  `γ((-∞, 0]) = 0`, are almost surely all positive.
* `QKForms.accumulationLimit_mem_image_theta`: the limit is `p(θ(t))` with
  `t = (1 - ρ)/√(1 + ρ²) ∈ [-1, 1]`; `QKForms.accumulationLimit_mem_mergeAB_image_Theta`: the limit
  lies in `p '' Θ` for the family `Θ = QKForms.Theta` of Proposition 4.
* `QKForms.strictMonoOn_edgeB`, `QKForms.strictAntiOn_edgeB`, `QKForms.bijOn_edgeB_Ioc`,
  `QKForms.bijOn_edgeB_Ici`: edge tracing, the `b`-coordinate `2ρ/(1+ρ²)` is a strictly
  increasing bijection `(0, 1] → (0, 1]` and a strictly decreasing bijection `[1, ∞) → (0, 1]`;
  `QKForms.accumulationLimit_d_eq_zero`, `QKForms.accumulationLimit_c_eq_zero`: the limit lies
  on the edge `{a = 0, d = 0}` for `ρ ≤ 1` and on `{a = 0, c = 0}` for `ρ ≥ 1`.

## Encoding

The matrices are `S n : Matrix (Fin (N n)) (Fin (N n)) ℝ` with `(S n)ᵀ = S n`, and the
eigenvalue hypothesis is the equality of multisets `eigs (S n) = accumulationSpectrum …`
(`eigs` = roots of the characteristic polynomial, `QKForms/Basic.lean`). Limits in
`ℝ × ℝ × ℝ × ℝ` are for the product topology. This file states Theorem 5 *from* the conclusion
of Lemma 6 (pathwise, or almost surely), and the names of the theorems say so; the
unconditional almost-sure Theorem 5, `QKForms.accumulation_ae`, is in
`QKForms/ProportionalLobes.lean`, next to Lemma 6 (`QKForms.proportionalLobes`), with the
hypotheses of Lemma 6. "`X > 0`" is, as in Lemma 6, positivity almost surely: the pathwise form
assumes `x i, x' i > 0` along the one sample path it is about, and the almost-sure form assumes
`∀ᵐ ω, ∀ i, 0 < X i ω ∧ 0 < X' i ω` (as two hypotheses), which `ae_forall_pos_of_map_eq` derives
from `γ((-∞, 0]) = 0`.
-/

open Filter Topology
open scoped Matrix

noncomputable section

namespace QKForms

/-- The eigenvalue multiset of Theorem 5 of the paper:
`{v x_i}_{i<n} + {-u x'_i}_{i<n} + (N - 2n)·{0}`. -/
noncomputable def accumulationSpectrum (u v : ℝ) (x x' : ℕ → ℝ) (n N : ℕ) : Multiset ℝ :=
  scaledSample v x n + scaledSample (-u) x' n + Multiset.replicate (N - 2 * n) 0

/-- The limit profile of Theorem 5 of the paper:
`(1/(1+ρ²)) · (0, 2ρ, (1-ρ)₊², (ρ-1)₊²)`. -/
noncomputable def accumulationLimit (ρ : ℝ) : ℝ × ℝ × ℝ × ℝ :=
  (0, 2 * ρ / (1 + ρ ^ 2), max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2), max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2))

namespace Accumulation

open Sorting

/-! ### Lobes of a multiset through sorted images -/

/-- `α_j = (max μ_j 0)` is the `j`-th entry of the decreasing sort of `{max λ 0}`. -/
theorem posLobeOf_eq_sortedEntry_map (k : ℕ) (m : Multiset ℝ) (j : Fin k) :
    posLobeOf k m j = sortedEntry (m.map fun y => max y 0) j := by
  have hf : Monotone (fun y : ℝ => max y 0) := fun a b hab => max_le_max hab le_rfl
  have hf0 : (fun y : ℝ => max y 0) 0 = 0 := max_self 0
  show max ((sortDesc m).getD (j : ℕ) 0) 0 = (sortDesc (m.map fun y => max y 0)).getD (j : ℕ) 0
  rw [sortDesc_map_of_monotone hf m, getD_map_of_map_zero (f := fun y : ℝ => max y 0) hf0]

/-- When `m` has exactly `k` elements, `β_j = max (-μ_{k-1-j}) 0` is the `j`-th entry of the
decreasing sort of `{max (-λ) 0}`. -/
theorem negLobeOf_eq_sortedEntry_map {k : ℕ} {m : Multiset ℝ} (hm : Multiset.card m = k)
    (j : Fin k) : negLobeOf k m j = sortedEntry (m.map fun y => max (-y) 0) j := by
  have hg : Antitone (fun y : ℝ => max (-y) 0) := fun a b hab => max_le_max (neg_le_neg hab) le_rfl
  have hg0 : (fun y : ℝ => max (-y) 0) 0 = 0 := by
    show max (-(0 : ℝ)) 0 = 0
    rw [neg_zero, max_self]
  have hlen : (sortDesc m).length = k := by rw [length_sortDesc, hm]
  have hj : (j : ℕ) < (sortDesc m).length := by rw [hlen]; exact j.isLt
  show max (-(sortDesc m).getD (Fin.rev j : ℕ) 0) 0
    = (sortDesc (m.map fun y => max (-y) 0)).getD (j : ℕ) 0
  rw [sortDesc_map_of_antitone hg m, getD_map_of_map_zero (f := fun y : ℝ => max (-y) 0) hg0,
    getD_reverse_of_lt _ hj]
  -- What remains is an equation of two indices, `↑(Fin.rev j)` and `length - 1 - ↑j`. The
  -- first branch rewrites the goal into `k - (↑j + 1)` and `k - 1 - ↑j`; the second proves the
  -- index equation on its own (`omega`) and rewrites with it once.
  -- closes by: the first branch at the pin
  first
  | (rw [hlen, Fin.val_rev]
     have e : k - ((j : ℕ) + 1) = k - 1 - (j : ℕ) := by omega
     rw [e]
     done)
  | (have e2 : ((Fin.rev j : Fin k) : ℕ) = (sortDesc m).length - 1 - (j : ℕ) := by
       rw [Fin.val_rev, hlen]
       omega
     rw [e2])

/-! ### The spectrum of Theorem 5 -/

variable {u v : ℝ} {x x' : ℕ → ℝ}

theorem card_accumulationSpectrum (u v : ℝ) (x x' : ℕ → ℝ) {n N : ℕ} (h : 2 * n ≤ N) :
    Multiset.card (accumulationSpectrum u v x x' n N) = N := by
  unfold accumulationSpectrum
  rw [Multiset.card_add, Multiset.card_add, card_scaledSample, card_scaledSample,
    Multiset.card_replicate]
  omega

theorem map_self_of_pos {c : ℝ} (hc : 0 < c) {y : ℕ → ℝ} (hy : ∀ i, 0 < y i) (n : ℕ) :
    (scaledSample c y n).map (fun z => max z 0) = scaledSample c y n := by
  have h : (scaledSample c y n).map (fun z => max z 0) = (scaledSample c y n).map (fun z => z) :=
    Multiset.map_congr rfl fun z hz => max_eq_left (pos_of_mem_scaledSample hc hy hz).le
  rw [h, Multiset.map_id']

theorem map_zero_of_neg {c : ℝ} (hc : 0 < c) {y : ℕ → ℝ} (hy : ∀ i, 0 < y i) (n : ℕ) :
    (scaledSample (-c) y n).map (fun z => max z 0) = Multiset.replicate n 0 := by
  rw [Multiset.eq_replicate]
  refine ⟨by rw [Multiset.card_map, card_scaledSample], fun b hb => ?_⟩
  obtain ⟨z, hz, rfl⟩ := Multiset.mem_map.1 hb
  obtain ⟨i, _, rfl⟩ := mem_scaledSample hz
  have h1 : -c * y i ≤ 0 := by nlinarith [hy i]
  exact max_eq_right h1

theorem map_neg_zero_of_pos {c : ℝ} (hc : 0 < c) {y : ℕ → ℝ} (hy : ∀ i, 0 < y i) (n : ℕ) :
    (scaledSample c y n).map (fun z => max (-z) 0) = Multiset.replicate n 0 := by
  rw [Multiset.eq_replicate]
  refine ⟨by rw [Multiset.card_map, card_scaledSample], fun b hb => ?_⟩
  obtain ⟨z, hz, rfl⟩ := Multiset.mem_map.1 hb
  exact max_eq_right (by linarith [pos_of_mem_scaledSample hc hy hz])

theorem map_neg_of_neg {c : ℝ} (hc : 0 < c) {y : ℕ → ℝ} (hy : ∀ i, 0 < y i) (n : ℕ) :
    (scaledSample (-c) y n).map (fun z => max (-z) 0) = scaledSample c y n := by
  unfold scaledSample
  rw [Multiset.map_map]
  refine Multiset.map_congr rfl fun i _ => ?_
  show max (-(-c * y i)) 0 = c * y i
  rw [neg_mul, neg_neg]
  exact max_eq_left (mul_pos hc (hy i)).le

/-- The positive parts of the spectrum: `{v x_i} + (n + (N - 2n))·{0}`. -/
theorem map_pos_accumulationSpectrum (hu : 0 < u) (hv : 0 < v) (hx : ∀ i, 0 < x i)
    (hx' : ∀ i, 0 < x' i) (n N : ℕ) :
    (accumulationSpectrum u v x x' n N).map (fun y => max y 0)
      = scaledSample v x n + Multiset.replicate (n + (N - 2 * n)) 0 := by
  unfold accumulationSpectrum
  rw [Multiset.map_add, Multiset.map_add, map_self_of_pos hv hx, map_zero_of_neg hu hx',
    Multiset.map_replicate, max_self, Multiset.replicate_add, add_assoc]

/-- The negative parts of the spectrum: `{u x'_i} + (n + (N - 2n))·{0}`. -/
theorem map_neg_accumulationSpectrum (hu : 0 < u) (hv : 0 < v) (hx : ∀ i, 0 < x i)
    (hx' : ∀ i, 0 < x' i) (n N : ℕ) :
    (accumulationSpectrum u v x x' n N).map (fun y => max (-y) 0)
      = scaledSample u x' n + Multiset.replicate (n + (N - 2 * n)) 0 := by
  have hz : max (-(0 : ℝ)) 0 = 0 := by rw [neg_zero, max_self]
  unfold accumulationSpectrum
  rw [Multiset.map_add, Multiset.map_add, map_neg_zero_of_pos hv hx n, map_neg_of_neg hu hx',
    Multiset.map_replicate, hz, add_comm (Multiset.replicate n 0) (scaledSample u x' n),
    Multiset.replicate_add, add_assoc]

theorem posLobeOf_accumulationSpectrum (hu : 0 < u) (hv : 0 < v) (hx : ∀ i, 0 < x i)
    (hx' : ∀ i, 0 < x' i) (n N k : ℕ) (j : Fin k) :
    posLobeOf k (accumulationSpectrum u v x x' n N) j = sortedEntry (scaledSample v x n) j := by
  rw [posLobeOf_eq_sortedEntry_map, map_pos_accumulationSpectrum hu hv hx hx' n N,
    sortedEntry_add_replicate_zero (s := scaledSample v x n)
      (fun y hy => (pos_of_mem_scaledSample hv hx hy).le)]

theorem negLobeOf_accumulationSpectrum (hu : 0 < u) (hv : 0 < v) (hx : ∀ i, 0 < x i)
    (hx' : ∀ i, 0 < x' i) {n N k : ℕ} (hN : 2 * n ≤ N) (hk : N = k) (j : Fin k) :
    negLobeOf k (accumulationSpectrum u v x x' n N) j = sortedEntry (scaledSample u x' n) j := by
  have hm : Multiset.card (accumulationSpectrum u v x x' n N) = k := by
    rw [card_accumulationSpectrum u v x x' hN, hk]
  rw [negLobeOf_eq_sortedEntry_map hm, map_neg_accumulationSpectrum hu hv hx hx' n N,
    sortedEntry_add_replicate_zero (s := scaledSample u x' n)
      (fun y hy => (pos_of_mem_scaledSample hu hx' hy).le)]

/-- The lobe misfit computed on the padded lobes of the spectrum is the misfit of Lemma 6. -/
theorem l2_misfit_eq_lobeMisfit (hu : 0 < u) (hv : 0 < v) (hx : ∀ i, 0 < x i)
    (hx' : ∀ i, 0 < x' i) {n N k : ℕ} (hN : 2 * n ≤ N) (hk : N = k) :
    Vec.l2 (fun j : Fin k => negLobeOf k (accumulationSpectrum u v x x' n N) j
        - u / v * posLobeOf k (accumulationSpectrum u v x x' n N) j)
      / Vec.l2 (posLobeOf k (accumulationSpectrum u v x x' n N))
      = lobeMisfit u v x x' n := by
  have hα : posLobeOf k (accumulationSpectrum u v x x' n N)
      = fun j : Fin k => sortedEntry (scaledSample v x n) j :=
    funext fun j => posLobeOf_accumulationSpectrum hu hv hx hx' n N k j
  have hβ : negLobeOf k (accumulationSpectrum u v x x' n N)
      = fun j : Fin k => sortedEntry (scaledSample u x' n) j :=
    funext fun j => negLobeOf_accumulationSpectrum hu hv hx hx' hN hk j
  have hA : Multiset.card (scaledSample v x n) ≤ n := le_of_eq (card_scaledSample v x n)
  have hB : Multiset.card (scaledSample u x' n) ≤ n := le_of_eq (card_scaledSample u x' n)
  have hnk : n ≤ k := by omega
  rw [hα, hβ]
  show Real.sqrt (∑ j : Fin k, (sortedEntry (scaledSample u x' n) j
          - u / v * sortedEntry (scaledSample v x n) j) ^ 2)
        / Real.sqrt (∑ j : Fin k, sortedEntry (scaledSample v x n) j ^ 2)
      = Real.sqrt (∑ j : Fin n, (sortedEntry (scaledSample u x' n) j
          - u / v * sortedEntry (scaledSample v x n) j) ^ 2)
        / Real.sqrt (∑ j : Fin n, sortedEntry (scaledSample v x n) j ^ 2)
  -- the hypotheses `g 0 0 = 0` are stated after `show`, which removes the beta-redexes
  have hg₁ : (fun a b : ℝ => (b - u / v * a) ^ 2) 0 0 = 0 := by
    show ((0 : ℝ) - u / v * 0) ^ 2 = 0
    ring
  have hg₂ : (fun a _ : ℝ => a ^ 2) 0 0 = 0 := by
    show (0 : ℝ) ^ 2 = 0
    ring
  rw [sum_fin_sortedEntry₂ (fun a b => (b - u / v * a) ^ 2) hg₁ hA hB hnk,
    sum_fin_sortedEntry₂ (fun a _ => a ^ 2) hg₂ hA hB hnk]

/-- `‖S‖² = ‖α‖² + ‖β‖²` for a symmetric matrix with the spectrum of Theorem 5. -/
theorem frobSq_eq_sum_sq_lobes (hu : 0 < u) (hv : 0 < v) (hx : ∀ i, 0 < x i)
    (hx' : ∀ i, 0 < x' i) {n N : ℕ} (hN : 2 * n ≤ N) (S : Matrix (Fin N) (Fin N) ℝ)
    (hS : Sᵀ = S) (heig : eigs S = accumulationSpectrum u v x x' n N) :
    frobSq S = ∑ j, posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2
      + ∑ j, negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2 := by
  have hH : S.IsHermitian := by
    show Sᴴ = S
    rw [Matrix.conjTranspose_eq_transpose_of_trivial]
    exact hS
  have hk : N = Fintype.card (Fin N) := (Fintype.card_fin N).symm
  have hnk : n ≤ Fintype.card (Fin N) := by omega
  have hα : ∑ j, posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2
      = ((scaledSample v x n).map fun y => y ^ 2).sum := by
    rw [← sum_fin_sortedEntry (fun y => y ^ 2) (by norm_num) (scaledSample v x n)
      (N := Fintype.card (Fin N)) (by rw [card_scaledSample]; exact hnk)]
    exact Finset.sum_congr rfl fun j _ => by
      rw [posLobeOf_accumulationSpectrum hu hv hx hx' n N _ j]
  have hβ : ∑ j, negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2
      = ((scaledSample u x' n).map fun y => y ^ 2).sum := by
    rw [← sum_fin_sortedEntry (fun y => y ^ 2) (by norm_num) (scaledSample u x' n)
      (N := Fintype.card (Fin N)) (by rw [card_scaledSample]; exact hnk)]
    exact Finset.sum_congr rfl fun j _ => by
      rw [negLobeOf_accumulationSpectrum hu hv hx hx' hN hk j]
  have hz : ((Multiset.replicate (N - 2 * n) (0 : ℝ)).map fun y => y ^ 2).sum = 0 := by
    rw [Multiset.map_replicate, Multiset.sum_replicate]
    simp
  have hneg : ∑ i ∈ Finset.range n, (-u * x' i) ^ 2 = ∑ i ∈ Finset.range n, (u * x' i) ^ 2 :=
    Finset.sum_congr rfl fun i _ => by ring
  rw [hα, hβ, frobSq_eq_sum_sq_eigs hH, heig]
  unfold accumulationSpectrum
  -- The first branch depends on the number and order of the instances each `rw` finds (two
  -- `map_add`, two `sum_add`, three `sum_map_scaledSample`: `v x` on both sides, `-u x'`,
  -- `u x'`); the second rewrites with the same facts by `simp only`, wherever they match.
  -- closes by: the first branch (its closing `rfl` is syntactic) at the pin
  first
  | (rw [Multiset.map_add, Multiset.map_add, Multiset.sum_add, Multiset.sum_add, hz, add_zero,
        sum_map_scaledSample, sum_map_scaledSample, sum_map_scaledSample, hneg]
     done)
  | simp only [Multiset.map_add, Multiset.sum_add, hz, add_zero, sum_map_scaledSample, hneg]

/-- The positive lobe is nonzero as soon as `n ≥ 1`. -/
theorem l2_posLobeOf_pos (hv : 0 < v) (hu : 0 < u) (hx : ∀ i, 0 < x i) (hx' : ∀ i, 0 < x' i)
    {n N k : ℕ} (hn : 1 ≤ n) (hnk : n ≤ k) :
    0 < Vec.l2 (posLobeOf k (accumulationSpectrum u v x x' n N)) := by
  rw [Vec.l2_pos_iff]
  have h1 : ∑ j, posLobeOf k (accumulationSpectrum u v x x' n N) j ^ 2
      = ((scaledSample v x n).map fun y => y ^ 2).sum := by
    rw [← sum_fin_sortedEntry (fun y => y ^ 2) (by norm_num) (scaledSample v x n)
      (N := k) (by rw [card_scaledSample]; exact hnk)]
    exact Finset.sum_congr rfl fun j _ => by
      rw [posLobeOf_accumulationSpectrum hu hv hx hx' n N k j]
  rw [h1, sum_map_scaledSample]
  apply Finset.sum_pos
  · intro i _
    exact pow_pos (mul_pos hv (hx i)) 2
  · exact Finset.nonempty_range_iff.2 (by omega)

/-- The profile of `S`, written with the lobes of its spectrum and `‖S‖² = ‖α‖² + ‖β‖²`. -/
theorem profile_eq_lobes (hu : 0 < u) (hv : 0 < v) (hx : ∀ i, 0 < x i)
    (hx' : ∀ i, 0 < x' i) {n N : ℕ} (hN : 2 * n ≤ N) (S : Matrix (Fin N) (Fin N) ℝ)
    (hS : Sᵀ = S) (heig : eigs S = accumulationSpectrum u v x x' n N) :
    profile S =
      (0,
        2 * (∑ j, posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j
            * negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j)
          / (∑ j, posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2
            + ∑ j, negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2),
        (∑ j, max (posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j
            - negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j) 0 ^ 2)
          / (∑ j, posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2
            + ∑ j, negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2),
        (∑ j, max (negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j
            - posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j) 0 ^ 2)
          / (∑ j, posLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2
            + ∑ j, negLobeOf (Fintype.card (Fin N)) (accumulationSpectrum u v x x' n N) j ^ 2))
      := by
  rw [profile_eq_of_isSymm hS heig, frobSq_eq_sum_sq_lobes hu hv hx hx' hN S hS heig]
  all_goals rfl

end Accumulation

open Accumulation

/-- **Theorem 5 of the paper (accumulation), deterministic form from Lemma 6.**
Let `u, v > 0`, `ρ = u / v`, and let `x, x' : ℕ → ℝ` be a sample path with `x i, x' i > 0` on
which the conclusion of Lemma 6 holds: `‖β_n - ρ α_n‖ / ‖α_n‖ → 0` (`lobeMisfit u v x x'`).
For each `n` let `N n ≥ 2n` and `S n` be a symmetric `N n × N n` matrix whose eigenvalue multiset
is `{v x_i} + {-u x'_i} + (N n - 2n)·{0}`. Then
`profile (S n) → (0, 2ρ, (1-ρ)₊², (ρ-1)₊²) / (1 + ρ²)`.

*Encoding.* This is the deterministic heart of Theorem 5: the almost-sure statement follows by
applying it on the almost-sure event where the sample is positive and Lemma 6 holds
(`accumulation_ae_of_proportionalLobes`). Lemma 6 is `QKForms.proportionalLobes` and the
combination is `QKForms.accumulation_ae` (`QKForms/ProportionalLobes.lean`). [qkforms:thm5] -/
theorem accumulation_of_proportionalLobes {u v : ℝ} (hu : 0 < u) (hv : 0 < v) {x x' : ℕ → ℝ}
    (hx : ∀ i, 0 < x i) (hx' : ∀ i, 0 < x' i) {N : ℕ → ℕ} (hN : ∀ n, 2 * n ≤ N n)
    (S : ∀ n, Matrix (Fin (N n)) (Fin (N n)) ℝ) (hS : ∀ n, (S n)ᵀ = S n)
    (heigs : ∀ n, eigs (S n) = accumulationSpectrum u v x x' n (N n))
    (hlobes : Tendsto (lobeMisfit u v x x') atTop (𝓝 0)) :
    Tendsto (fun n => profile (S n)) atTop (𝓝 (accumulationLimit (u / v))) := by
  have hρ : 0 ≤ u / v := (div_pos hu hv).le
  have hk : ∀ n, N n = Fintype.card (Fin (N n)) := fun n => (Fintype.card_fin (N n)).symm
  have hδ : Tendsto (fun n => Vec.l2 (fun j =>
        negLobeOf (Fintype.card (Fin (N n))) (accumulationSpectrum u v x x' n (N n)) j
          - u / v * posLobeOf (Fintype.card (Fin (N n))) (accumulationSpectrum u v x x' n (N n)) j)
        / Vec.l2 (posLobeOf (Fintype.card (Fin (N n))) (accumulationSpectrum u v x x' n (N n))))
      atTop (𝓝 0) :=
    hlobes.congr fun n => (l2_misfit_eq_lobeMisfit hu hv hx hx' (hN n) (hk n)).symm
  have hpos : ∀ᶠ n in atTop,
      0 < Vec.l2 (posLobeOf (Fintype.card (Fin (N n))) (accumulationSpectrum u v x x' n (N n))) :=
    eventually_atTop.2 ⟨1, fun n hn =>
      l2_posLobeOf_pos hv hu hx hx' hn (by rw [← hk n]; have := hN n; omega)⟩
  obtain ⟨hb, hc, hd⟩ := Vec.tendsto_lobeProfile_of_tendsto
    (κ := fun n => Fin (Fintype.card (Fin (N n)))) hρ
    (fun n => posLobeOf (Fintype.card (Fin (N n))) (accumulationSpectrum u v x x' n (N n)))
    (fun n => negLobeOf (Fintype.card (Fin (N n))) (accumulationSpectrum u v x x' n (N n)))
    (fun n j => posLobeOf_nonneg _ _ j) hpos hδ
  have h0 : Tendsto (fun _ : ℕ => (0 : ℝ)) atTop (𝓝 0) := tendsto_const_nhds
  have hall := h0.prodMk_nhds (hb.prodMk_nhds (hc.prodMk_nhds hd))
  exact hall.congr fun n => (profile_eq_lobes hu hv hx hx' (hN n) (S n) (hS n) (heigs n)).symm

/-- Random variables with a common law `γ`, `γ((-∞, 0]) = 0`, are almost surely all positive: if
every `Y i` is measurable with `P.map (Y i) = γ`, then `∀ᵐ ω ∂P, ∀ i, 0 < Y i ω` (each
`{Y i ≤ 0}` is `P`-null, and a countable union of null sets is null; no independence is used). -/
theorem ae_forall_pos_of_map_eq {Ω : Type*} [MeasurableSpace Ω] {P : MeasureTheory.Measure Ω}
    {Y : ℕ → Ω → ℝ} {γ : MeasureTheory.Measure ℝ} (hYm : ∀ i, Measurable (Y i))
    (hlaw : ∀ i, P.map (Y i) = γ) (hγ : γ (Set.Iic 0) = 0) :
    ∀ᵐ ω ∂P, ∀ i, 0 < Y i ω := by
  refine MeasureTheory.ae_all_iff.2 fun i => ?_
  have hnull : P (Y i ⁻¹' Set.Iic 0) = 0 := by
    rw [← MeasureTheory.Measure.map_apply (hYm i) measurableSet_Iic, hlaw i]
    exact hγ
  have e : {ω | ¬ 0 < Y i ω} = Y i ⁻¹' Set.Iic 0 := by
    ext ω
    simp only [Set.mem_setOf_eq, Set.mem_preimage, Set.mem_Iic, not_lt]
  rw [MeasureTheory.ae_iff, e]
  exact hnull

/-- **Theorem 5 of the paper, almost-sure form from Lemma 6.** If `X, X' : ℕ → Ω → ℝ` are
almost surely positive (`∀ᵐ ω, ∀ i, 0 < X i ω`, and the same for `X'`) and the conclusion of
Lemma 6 holds almost surely, then almost surely `profile (S ω n) → accumulationLimit (u / v)` for
every choice of symmetric matrices `S ω n` with the spectra of Theorem 5.

*Encoding.* The positivity of the sample is only needed on the almost-sure event where the
pathwise form `accumulation_of_proportionalLobes` is applied; `ae_forall_pos_of_map_eq` derives
it from `γ((-∞, 0]) = 0`, the hypothesis of Lemma 6 (`QKForms.proportionalLobes`,
`QKForms/ProportionalLobes.lean`). [qkforms:thm5] -/
theorem accumulation_ae_of_proportionalLobes {Ω : Type*} [MeasurableSpace Ω]
    {P : MeasureTheory.Measure Ω} {u v : ℝ} (hu : 0 < u) (hv : 0 < v) {X X' : ℕ → Ω → ℝ}
    (hX : ∀ᵐ ω ∂P, ∀ i, 0 < X i ω) (hX' : ∀ᵐ ω ∂P, ∀ i, 0 < X' i ω)
    {N : ℕ → ℕ} (hN : ∀ n, 2 * n ≤ N n)
    (S : Ω → ∀ n, Matrix (Fin (N n)) (Fin (N n)) ℝ) (hS : ∀ ω n, (S ω n)ᵀ = S ω n)
    (heigs : ∀ ω n,
      eigs (S ω n) = accumulationSpectrum u v (fun i => X i ω) (fun i => X' i ω) n (N n))
    (hlobes : ∀ᵐ ω ∂P,
      Tendsto (lobeMisfit u v (fun i => X i ω) (fun i => X' i ω)) atTop (𝓝 0)) :
    ∀ᵐ ω ∂P, Tendsto (fun n => profile (S ω n)) atTop (𝓝 (accumulationLimit (u / v))) := by
  filter_upwards [hX, hX', hlobes] with ω hωX hωX' hω
  exact accumulation_of_proportionalLobes hu hv hωX hωX' hN (S ω) (hS ω) (heigs ω) hω

/-! ### The limit lies in `p(Θ)` and traces the edges of `Δ` -/

namespace Accumulation

/-- The parametrization `θ(t) = ((1-t²)/2, (1-t²)/2, t₊², t₋²)` of the rank-one family Θ
(Proposition 4 of the paper). -/
noncomputable def thetaPoint (t : ℝ) : ℝ × ℝ × ℝ × ℝ :=
  ((1 - t ^ 2) / 2, (1 - t ^ 2) / 2, max t 0 ^ 2, max (-t) 0 ^ 2)

/-- The map `p(a, b, c, d) = (0, a + b, c, d)` of Theorem 5 of the paper. -/
noncomputable def mergeAB (q : ℝ × ℝ × ℝ × ℝ) : ℝ × ℝ × ℝ × ℝ := (0, q.1 + q.2.1, q.2.2.1, q.2.2.2)

end Accumulation

/-- **Theorem 5 of the paper, membership in `p(Θ)`**: for `ρ ≥ 0`,
`accumulationLimit ρ = p(θ(t))` with `t = (1 - ρ)/√(1 + ρ²)`, and `|t| ≤ 1`.
[qkforms:thm5] -/
theorem accumulationLimit_mem_image_theta {ρ : ℝ} (hρ : 0 ≤ ρ) :
    |(1 - ρ) / Real.sqrt (1 + ρ ^ 2)| ≤ 1 ∧
      accumulationLimit ρ = mergeAB (thetaPoint ((1 - ρ) / Real.sqrt (1 + ρ ^ 2))) := by
  have hD : 0 < 1 + ρ ^ 2 := by positivity
  have hs : 0 < Real.sqrt (1 + ρ ^ 2) := Real.sqrt_pos.2 hD
  have hs2 : Real.sqrt (1 + ρ ^ 2) ^ 2 = 1 + ρ ^ 2 := Real.sq_sqrt hD.le
  have hsinv : 0 ≤ (Real.sqrt (1 + ρ ^ 2))⁻¹ := inv_nonneg.2 hs.le
  have ht2 : ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2 = (1 - ρ) ^ 2 / (1 + ρ ^ 2) := by
    rw [div_pow, hs2]
  have h1t : 1 - ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2 = 2 * ρ / (1 + ρ ^ 2) := by
    rw [ht2, eq_div_iff hD.ne', sub_mul, div_mul_cancel₀ _ hD.ne']
    ring
  have hsq : ∀ c : ℝ, (max c 0 * (Real.sqrt (1 + ρ ^ 2))⁻¹) ^ 2 = max c 0 ^ 2 / (1 + ρ ^ 2) := by
    intro c
    rw [mul_pow, inv_pow, hs2, div_eq_mul_inv]
  refine ⟨?_, ?_⟩
  · have hle : ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2 ≤ 1 := by
      have h2 : 0 ≤ 2 * ρ / (1 + ρ ^ 2) := div_nonneg (by linarith) hD.le
      linarith [h1t]
    rw [← Real.sqrt_sq_eq_abs]
    calc Real.sqrt (((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2) ≤ Real.sqrt 1 := Real.sqrt_le_sqrt hle
      _ = 1 := Real.sqrt_one
  · have hc : max ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) 0 ^ 2 = max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2) := by
      rw [div_eq_mul_inv, Vec.max_mul_zero_of_nonneg (1 - ρ) hsinv, hsq]
    have hd : max (-((1 - ρ) / Real.sqrt (1 + ρ ^ 2))) 0 ^ 2 = max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2) := by
      have e : -((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) = (ρ - 1) * (Real.sqrt (1 + ρ ^ 2))⁻¹ := by
        rw [div_eq_mul_inv]
        ring
      rw [e, Vec.max_mul_zero_of_nonneg (ρ - 1) hsinv, hsq]
    have hb : (1 - ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2) / 2
        + (1 - ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2) / 2 = 2 * ρ / (1 + ρ ^ 2) := by
      rw [h1t]
      ring
    show ((0 : ℝ), 2 * ρ / (1 + ρ ^ 2), max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2),
        max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2))
      = ((0 : ℝ), (1 - ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2) / 2
          + (1 - ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) ^ 2) / 2,
        max ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)) 0 ^ 2,
        max (-((1 - ρ) / Real.sqrt (1 + ρ ^ 2))) 0 ^ 2)
    rw [hb, hc, hd]

namespace Accumulation

/-- `θ(t)` lies in the family `Θ` of Proposition 4 (`QKForms.Theta`, `QKForms/RankOne.lean`)
for `|t| ≤ 1`. -/
theorem thetaPoint_mem_Theta {t : ℝ} (ht : |t| ≤ 1) : thetaPoint t ∈ Theta := by
  have ht2 : t ^ 2 ≤ 1 := by
    obtain ⟨h1, h2⟩ := abs_le.1 ht
    nlinarith
  have hsplit : max t 0 ^ 2 + max (-t) 0 ^ 2 = t ^ 2 := by
    rcases le_total 0 t with h | h
    · rw [max_eq_left h, max_eq_right (by linarith : -t ≤ 0)]
      ring
    · rw [max_eq_right h, max_eq_left (by linarith : (0 : ℝ) ≤ -t)]
      ring
  have hprod : max t 0 ^ 2 * max (-t) 0 ^ 2 = 0 := by
    rcases le_total 0 t with h | h
    · rw [max_eq_right (by linarith : -t ≤ 0)]
      ring
    · rw [max_eq_right h]
      ring
  show 0 ≤ (1 - t ^ 2) / 2 ∧ 0 ≤ (1 - t ^ 2) / 2 ∧ 0 ≤ max t 0 ^ 2 ∧ 0 ≤ max (-t) 0 ^ 2 ∧
    (1 - t ^ 2) / 2 + (1 - t ^ 2) / 2 + max t 0 ^ 2 + max (-t) 0 ^ 2 = 1 ∧
    (1 - t ^ 2) / 2 = (1 - t ^ 2) / 2 ∧ max t 0 ^ 2 * max (-t) 0 ^ 2 = 0
  exact ⟨by linarith, by linarith, sq_nonneg _, sq_nonneg _, by linarith, rfl, hprod⟩

end Accumulation

/-- **Theorem 5 of the paper, the limit lies in `p(Θ)`**: for `ρ ≥ 0`,
`accumulationLimit ρ ∈ p(Θ)` with `p(a, b, c, d) = (0, a + b, c, d)` and `Θ` the family of
Proposition 4 (`QKForms.Theta`); the preimage is `θ(t)`, `t = (1 - ρ)/√(1 + ρ²)`.
[qkforms:thm5] -/
theorem accumulationLimit_mem_mergeAB_image_Theta {ρ : ℝ} (hρ : 0 ≤ ρ) :
    accumulationLimit ρ ∈ mergeAB '' Theta := by
  obtain ⟨ht, heq⟩ := accumulationLimit_mem_image_theta hρ
  exact ⟨thetaPoint ((1 - ρ) / Real.sqrt (1 + ρ ^ 2)), thetaPoint_mem_Theta ht, heq.symm⟩

/-- **Edge tracing (Theorem 5 of the paper)**: for `ρ ≤ 1` the limit lies on the edge
`{a = 0, d = 0}` of `Δ₃`. [qkforms:thm5] -/
theorem accumulationLimit_d_eq_zero {ρ : ℝ} (hρ : ρ ≤ 1) : (accumulationLimit ρ).2.2.2 = 0 := by
  show max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2) = 0
  rw [max_eq_right (by linarith : ρ - 1 ≤ 0)]
  ring

/-- **Edge tracing (Theorem 5 of the paper)**: for `ρ ≥ 1` the limit lies on the edge
`{a = 0, c = 0}` of `Δ₃`. [qkforms:thm5] -/
theorem accumulationLimit_c_eq_zero {ρ : ℝ} (hρ : 1 ≤ ρ) : (accumulationLimit ρ).2.2.1 = 0 := by
  show max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2) = 0
  rw [max_eq_right (by linarith : 1 - ρ ≤ 0)]
  ring

/-- The limit lies in the simplex: its coordinates add up to `1`. -/
theorem accumulationLimit_sum (ρ : ℝ) :
    (accumulationLimit ρ).1 + (accumulationLimit ρ).2.1 + (accumulationLimit ρ).2.2.1
      + (accumulationLimit ρ).2.2.2 = 1 := by
  have hD : (1 + ρ ^ 2) ≠ 0 := by positivity
  show 0 + 2 * ρ / (1 + ρ ^ 2) + max (1 - ρ) 0 ^ 2 / (1 + ρ ^ 2) + max (ρ - 1) 0 ^ 2 / (1 + ρ ^ 2)
    = 1
  have e : ∀ a b : ℝ, 0 + 2 * ρ / (1 + ρ ^ 2) + a / (1 + ρ ^ 2) + b / (1 + ρ ^ 2)
      = (2 * ρ + a + b) / (1 + ρ ^ 2) := fun a b => by ring
  rw [e, div_eq_one_iff_eq hD]
  rcases le_total ρ 1 with h | h
  · rw [max_eq_left (by linarith : (0 : ℝ) ≤ 1 - ρ), max_eq_right (by linarith : ρ - 1 ≤ 0)]
    ring
  · rw [max_eq_right (by linarith : 1 - ρ ≤ 0), max_eq_left (by linarith : (0 : ℝ) ≤ ρ - 1)]
    ring

/-! ### Edge tracing: the `b`-coordinate `2ρ/(1+ρ²)` -/

theorem edgeB_sub (x y : ℝ) :
    2 * y / (1 + y ^ 2) - 2 * x / (1 + x ^ 2)
      = 2 * (y - x) * (1 - x * y) / ((1 + y ^ 2) * (1 + x ^ 2)) := by
  have hx : (1 + x ^ 2) ≠ 0 := by positivity
  have hy : (1 + y ^ 2) ≠ 0 := by positivity
  rw [div_sub_div _ _ hy hx]
  congr 1
  ring

theorem one_sub_edgeB (x : ℝ) : 1 - 2 * x / (1 + x ^ 2) = (x - 1) ^ 2 / (1 + x ^ 2) := by
  have hne : (1 + x ^ 2) ≠ 0 := by positivity
  rw [eq_div_iff hne, sub_mul, div_mul_cancel₀ _ hne]
  ring

theorem edgeB_le_one (x : ℝ) : 2 * x / (1 + x ^ 2) ≤ 1 := by
  have h : 0 ≤ 1 - 2 * x / (1 + x ^ 2) := by
    rw [one_sub_edgeB]
    positivity
  linarith

theorem edgeB_inv {x : ℝ} (hx : x ≠ 0) : 2 * x⁻¹ / (1 + x⁻¹ ^ 2) = 2 * x / (1 + x ^ 2) := by
  have h1 : (1 + x⁻¹ ^ 2) ≠ 0 := by positivity
  have h2 : (1 + x ^ 2) ≠ 0 := by positivity
  have hxy : x * x⁻¹ = 1 := mul_inv_cancel₀ hx
  rw [div_eq_div_iff h1 h2]
  linear_combination (2 * x - 2 * x⁻¹) * hxy

/-- **Edge tracing (Theorem 5 of the paper)**: `ρ ↦ 2ρ/(1+ρ²)` is strictly increasing on
`(0, 1]`. [qkforms:thm5] -/
theorem strictMonoOn_edgeB : StrictMonoOn (fun ρ : ℝ => 2 * ρ / (1 + ρ ^ 2)) (Set.Ioc 0 1) := by
  intro x hx y hy hxy
  show 2 * x / (1 + x ^ 2) < 2 * y / (1 + y ^ 2)
  have hpos : 0 < 2 * (y - x) * (1 - x * y) / ((1 + y ^ 2) * (1 + x ^ 2)) := by
    apply div_pos
    · apply mul_pos
      · linarith
      · nlinarith [mul_nonneg hx.1.le (sub_nonneg.2 hy.2), hy.2]
    · positivity
  rw [← edgeB_sub] at hpos
  linarith

/-- **Edge tracing (Theorem 5 of the paper)**: `ρ ↦ 2ρ/(1+ρ²)` is strictly decreasing on
`[1, ∞)`. [qkforms:thm5] -/
theorem strictAntiOn_edgeB : StrictAntiOn (fun ρ : ℝ => 2 * ρ / (1 + ρ ^ 2)) (Set.Ici 1) := by
  intro x hx y hy hxy
  show 2 * y / (1 + y ^ 2) < 2 * x / (1 + x ^ 2)
  have hx1 : (1 : ℝ) ≤ x := hx
  have hneg : 2 * (y - x) * (1 - x * y) / ((1 + y ^ 2) * (1 + x ^ 2)) < 0 := by
    apply div_neg_of_neg_of_pos
    · apply mul_neg_of_pos_of_neg
      · linarith
      · nlinarith [mul_le_mul_of_nonneg_right hx1 (by linarith : (0 : ℝ) ≤ y)]
    · positivity
  rw [← edgeB_sub] at hneg
  linarith

theorem continuous_edgeB : Continuous (fun ρ : ℝ => 2 * ρ / (1 + ρ ^ 2)) := by
  have hf : Continuous (fun ρ : ℝ => 2 * ρ) := by fun_prop
  have hg : Continuous (fun ρ : ℝ => 1 + ρ ^ 2) := by fun_prop
  -- `Continuous.div` (Mathlib/Topology/Algebra/GroupWithZero.lean) concludes `Continuous (f / g)`.
  -- The second branch states the nonvanishing goal explicitly (no beta-redex left for
  -- `positivity` to see through).
  -- closes by: the first branch at the pin
  first
  | exact hf.div hg fun ρ => by positivity
  | exact hf.div hg fun ρ => (by positivity : (1 : ℝ) + ρ ^ 2 ≠ 0)

/-- Every `b ∈ (0, 1]` is `2ρ/(1+ρ²)` for some `ρ ∈ (0, 1]` (intermediate value theorem). -/
theorem exists_edgeB_eq {b : ℝ} (hb : b ∈ Set.Ioc (0 : ℝ) 1) :
    ∃ ρ ∈ Set.Ioc (0 : ℝ) 1, 2 * ρ / (1 + ρ ^ 2) = b := by
  have h0 : 2 * (0 : ℝ) / (1 + 0 ^ 2) = 0 := by norm_num
  have h1 : 2 * (1 : ℝ) / (1 + 1 ^ 2) = 1 := by norm_num
  have hmem : b ∈ Set.Icc (2 * (0 : ℝ) / (1 + 0 ^ 2)) (2 * 1 / (1 + 1 ^ 2)) := by
    rw [h0, h1]
    exact ⟨hb.1.le, hb.2⟩
  obtain ⟨ρ, hρ, hρb⟩ :=
    intermediate_value_Icc (zero_le_one : (0 : ℝ) ≤ 1) continuous_edgeB.continuousOn hmem
  refine ⟨ρ, ⟨?_, hρ.2⟩, hρb⟩
  rcases hρ.1.eq_or_lt with h | h
  · exfalso
    subst h
    have hb0 : b = 0 := by
      rw [← hρb]
      norm_num
    linarith [hb.1]
  · exact h

/-- **Edge tracing (Theorem 5 of the paper)**: `ρ ↦ 2ρ/(1+ρ²)` is a bijection from `(0, 1]`
onto `(0, 1]` (the limit runs along the edge `{a = 0, d = 0}` from the vertex `c = 1`,
`ρ → 0`, to the vertex `b = 1`, `ρ = 1`). [qkforms:thm5] -/
theorem bijOn_edgeB_Ioc :
    Set.BijOn (fun ρ : ℝ => 2 * ρ / (1 + ρ ^ 2)) (Set.Ioc 0 1) (Set.Ioc 0 1) := by
  refine ⟨?_, strictMonoOn_edgeB.injOn, ?_⟩
  · intro ρ hρ
    have h0 : 0 < ρ := hρ.1
    show 0 < 2 * ρ / (1 + ρ ^ 2) ∧ 2 * ρ / (1 + ρ ^ 2) ≤ 1
    exact ⟨div_pos (by linarith) (by positivity), edgeB_le_one ρ⟩
  · intro b hb
    obtain ⟨ρ, hρ, hρb⟩ := exists_edgeB_eq hb
    exact ⟨ρ, hρ, hρb⟩

/-- **Edge tracing (Theorem 5 of the paper)**: `ρ ↦ 2ρ/(1+ρ²)` is a bijection from `[1, ∞)`
onto `(0, 1]` (the limit runs along the edge `{a = 0, c = 0}` from the vertex `b = 1`,
`ρ = 1`, to the vertex `d = 1`, `ρ → ∞`). [qkforms:thm5] -/
theorem bijOn_edgeB_Ici :
    Set.BijOn (fun ρ : ℝ => 2 * ρ / (1 + ρ ^ 2)) (Set.Ici 1) (Set.Ioc 0 1) := by
  refine ⟨?_, strictAntiOn_edgeB.injOn, ?_⟩
  · intro ρ hρ
    have h1 : (1 : ℝ) ≤ ρ := hρ
    show 0 < 2 * ρ / (1 + ρ ^ 2) ∧ 2 * ρ / (1 + ρ ^ 2) ≤ 1
    exact ⟨div_pos (by linarith) (by positivity), edgeB_le_one ρ⟩
  · intro b hb
    obtain ⟨ρ, hρ, hρb⟩ := exists_edgeB_eq hb
    have hρ0 : ρ ≠ 0 := hρ.1.ne'
    refine ⟨ρ⁻¹, ?_, ?_⟩
    · show (1 : ℝ) ≤ ρ⁻¹
      have hmul : ρ * ρ⁻¹ = 1 := mul_inv_cancel₀ hρ0
      nlinarith [hρ.1, hρ.2, hmul]
    · show 2 * ρ⁻¹ / (1 + ρ⁻¹ ^ 2) = b
      rw [edgeB_inv hρ0, hρb]

end QKForms

end
