/-
Copyright (c) 2026 qkforms contributors. Released under Apache 2.0 license.
-/
import QKForms.ProfileDefs
import QKForms.LobeEstimates

/-!
# Proportional lobes (Lemma 6 of the paper): objects and deterministic sorting facts

Lemma 6 of the paper (THEORY §2): let `X > 0` a.s. with `0 < E X² < ∞`, `u, v > 0`,
`ρ = u / v`; let `α_n` be the decreasing sort of `v X_1, …, v X_n` and `β_n` the decreasing sort
of `u X'_1, …, u X'_n` (all `X_i, X'_i` independent copies of `X`). Then
`‖β_n - ρ α_n‖ / ‖α_n‖ → 0` almost surely.

This file sets up the objects of Lemma 6 for a *fixed* sample path `x, x' : ℕ → ℝ` and proves
the deterministic facts about decreasing sorts that the accumulation theorem (Theorem 5,
`QKForms/Accumulation.lean`) needs.

## Main definitions

* `QKForms.scaledSample c x n`: the multiset `{c x_0, …, c x_(n-1)}`.
* `QKForms.sampleLobe c x n : Fin n → ℝ`: its decreasing sort (`α_n` for `c = v`, `β_n` for
  `c = u`), through `QKForms.sortedEntry` of `QKForms/ProfileDefs.lean`.
* `QKForms.lobeMisfit u v x x' n = ‖β_n - (u/v) α_n‖ / ‖α_n‖`: the quantity of Lemma 6.

## Main statements

* `QKForms.Sorting.sortDesc_map_of_monotone`, `QKForms.Sorting.sortDesc_map_of_antitone`,
  `QKForms.Sorting.sortDesc_add_replicate_zero`: sorting commutes with monotone maps, turns
  antitone maps into reversal, and puts added zeros at the end (for nonnegative multisets).
* `QKForms.Sorting.sum_fin_sortedEntry`, `QKForms.Sorting.sum_fin_sortedEntry₂`: sums over the
  zero-padded sort do not depend on the amount of padding.
* `QKForms.sum_sq_sampleLobe`: `‖α_n‖² = ∑_{i<n} (c x_i)²` (sorting does not change the
  sum of squares); `QKForms.sampleLobe_eq_mul`: `sort(c x) = c · sort(x)` for `c ≥ 0`.
* `QKForms.lobeMisfit_eq` and `QKForms.tendsto_lobeMisfit_of_moments` (deterministic reduction
  of Lemma 6): the misfit tends to `0` along every sample path on which `(1/n) ∑ x_i²`,
  `(1/n) ∑ x'_i²` and the sorted cross term `⟨Y_n, Y'_n⟩/n` have a common positive limit.

## Status of Lemma 6

The almost-sure statement of Lemma 6 itself is **not** formalized in this library yet; no
declaration carries the tag of Lemma 6. What is missing is probabilistic: the strong law for
`(1/n) ∑ X_i²` (Mathlib's `ProbabilityTheory.strong_law_ae`, with the independence and
identical-distribution hypotheses transported from the encoding of THEORY §2) and, above all,
the almost-sure limit `⟨Y_n, Y'_n⟩/n → E X²` of the sorted cross term. Theorem 5 is proved from the
conclusion of Lemma 6 along each sample path, as the deterministic theorem
`QKForms.accumulation_of_proportionalLobes` (`QKForms/Accumulation.lean`).

## Encoding

A sample path is a pair of sequences `x, x' : ℕ → ℝ` (indices from `0`). Vectors are functions
`Fin n → ℝ`; the norm is `QKForms.Vec.l2` (`QKForms/LobeEstimates.lean`).
-/

open Filter Topology

namespace QKForms

/-- The multiset `{c x_0, …, c x_(n-1)}` of the first `n` scaled sample values. -/
noncomputable def scaledSample (c : ℝ) (x : ℕ → ℝ) (n : ℕ) : Multiset ℝ :=
  (Multiset.range n).map fun i => c * x i

/-- The decreasing sort of `c x_0, …, c x_(n-1)` as a vector `Fin n → ℝ` (Lemma 6 of the
paper: `α_n` for `c = v`, `β_n` for `c = u`). -/
noncomputable def sampleLobe (c : ℝ) (x : ℕ → ℝ) (n : ℕ) : Fin n → ℝ :=
  fun j => sortedEntry (scaledSample c x n) j

/-- The misfit `‖β_n - ρ α_n‖ / ‖α_n‖` of Lemma 6 of the paper, with `ρ = u / v`,
`α_n = sampleLobe v x n` and `β_n = sampleLobe u x' n`. -/
noncomputable def lobeMisfit (u v : ℝ) (x x' : ℕ → ℝ) (n : ℕ) : ℝ :=
  Vec.l2 (fun j => sampleLobe u x' n j - u / v * sampleLobe v x n j) / Vec.l2 (sampleLobe v x n)

theorem card_scaledSample (c : ℝ) (x : ℕ → ℝ) (n : ℕ) :
    Multiset.card (scaledSample c x n) = n := by
  unfold scaledSample
  rw [Multiset.card_map, Multiset.card_range]

theorem mem_scaledSample {c : ℝ} {x : ℕ → ℝ} {n : ℕ} {y : ℝ} (hy : y ∈ scaledSample c x n) :
    ∃ i, i < n ∧ c * x i = y := by
  unfold scaledSample at hy
  obtain ⟨i, hi, rfl⟩ := Multiset.mem_map.1 hy
  exact ⟨i, Multiset.mem_range.1 hi, rfl⟩

theorem pos_of_mem_scaledSample {c : ℝ} {x : ℕ → ℝ} {n : ℕ} (hc : 0 < c) (hx : ∀ i, 0 < x i)
    {y : ℝ} (hy : y ∈ scaledSample c x n) : 0 < y := by
  obtain ⟨i, _, rfl⟩ := mem_scaledSample hy
  exact mul_pos hc (hx i)

/-- `∑_{y ∈ {c x_i}} f y = ∑_{i<n} f (c x_i)`. -/
theorem sum_map_scaledSample (f : ℝ → ℝ) (c : ℝ) (x : ℕ → ℝ) (n : ℕ) :
    ((scaledSample c x n).map f).sum = ∑ i ∈ Finset.range n, f (c * x i) := by
  unfold scaledSample
  simp only [Multiset.map_map, Function.comp_def, Finset.sum_eq_multiset_sum, Finset.range_val]

namespace Sorting

/-- `(l.map f)[j] = f (l[j])` for `getD` with default `0`, when `f 0 = 0`. -/
theorem getD_map_of_map_zero {f : ℝ → ℝ} (hf : f 0 = 0) :
    ∀ (l : List ℝ) (j : ℕ), (l.map f).getD j 0 = f (l.getD j 0)
  | [], j => by simp [hf]
  | a :: l, 0 => by simp
  | a :: l, j + 1 => by simpa using getD_map_of_map_zero hf l j

theorem getD_replicate_zero : ∀ (k j : ℕ), (List.replicate k (0 : ℝ)).getD j 0 = 0
  | 0, j => by simp
  | k + 1, 0 => by simp [List.replicate_succ]
  | k + 1, j + 1 => by simpa [List.replicate_succ] using getD_replicate_zero k j

/-- Appending zeros does not change the `getD`-entries (default `0`). -/
theorem getD_append_replicate_zero :
    ∀ (l : List ℝ) (k j : ℕ), (l ++ List.replicate k 0).getD j 0 = l.getD j 0
  | [], k, j => by simpa using getD_replicate_zero k j
  | a :: l, k, 0 => by simp
  | a :: l, k, j + 1 => by simpa using getD_append_replicate_zero l k j

/-- Entries of a reversed list (core lemmas `List.getD_eq_getElem?_getD`,
`List.getElem?_eq_getElem`, `List.getElem_reverse`). -/
theorem getD_reverse_of_lt (l : List ℝ) {j : ℕ} (hj : j < l.length) :
    l.reverse.getD j 0 = l.getD (l.length - 1 - j) 0 := by
  have h1 : j < l.reverse.length := by rw [List.length_reverse]; exact hj
  have h2 : l.length - 1 - j < l.length := by omega
  first
  | rw [List.getD_eq_getElem?_getD, List.getElem?_eq_getElem h1, Option.getD_some,
      List.getD_eq_getElem?_getD, List.getElem?_eq_getElem h2, Option.getD_some,
      List.getElem_reverse]
  | rw [List.getD_eq_getElem _ _ h1, List.getD_eq_getElem _ _ h2, List.getElem_reverse]

/-- `Σ_{j < length} f (l[j]) = Σ f` over the list. -/
theorem sum_range_getD_eq (f : ℝ → ℝ) :
    ∀ l : List ℝ, ∑ j ∈ Finset.range l.length, f (l.getD j 0) = (l.map f).sum
  | [] => by simp
  | a :: l => by
      rw [List.length_cons, Finset.sum_range_succ', List.map_cons, List.sum_cons,
        ← sum_range_getD_eq f l]
      first
      | (simp only [List.getD_cons_succ, List.getD_cons_zero]; ring)
      | (simp; ring)
      | simp [add_comm]

/-- Past the end, the sorted entries are `0`. -/
theorem sortedEntry_eq_zero_of_card_le {s : Multiset ℝ} {j : ℕ} (h : Multiset.card s ≤ j) :
    sortedEntry s j = 0 := by
  have h' : (sortDesc s).length ≤ j := by rw [length_sortDesc]; exact h
  unfold sortedEntry
  first
  | rw [List.getD_eq_getElem?_getD, List.getElem?_eq_none h', Option.getD_none]
  | simp [List.getElem?_eq_none h']

/-- The decreasing sort commutes with monotone maps. -/
theorem sortDesc_map_of_monotone {f : ℝ → ℝ} (hf : Monotone f) (m : Multiset ℝ) :
    sortDesc (m.map f) = (sortDesc m).map f := by
  have hperm : (sortDesc (m.map f)).Perm ((sortDesc m).map f) := by
    -- `Multiset.map f ↑l = ↑(l.map f)` holds by `rfl` (`Multiset.map_coe`)
    have e : (((sortDesc m).map f : List ℝ) : Multiset ℝ)
        = Multiset.map f ((sortDesc m : List ℝ) : Multiset ℝ) := rfl
    rw [← Multiset.coe_eq_coe, e, coe_sortDesc, coe_sortDesc]
  have hsorted : ((sortDesc m).map f).Pairwise (· ≥ ·) := by
    rw [List.pairwise_map]
    exact (pairwise_sortDesc m).imp fun h => hf h
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc _) hsorted

/-- The decreasing sort of an antitone image is the reversed image of the decreasing sort. -/
theorem sortDesc_map_of_antitone {g : ℝ → ℝ} (hg : Antitone g) (m : Multiset ℝ) :
    sortDesc (m.map g) = (sortDesc m).reverse.map g := by
  have hperm : (sortDesc (m.map g)).Perm ((sortDesc m).reverse.map g) := by
    have e : (((sortDesc m).reverse.map g : List ℝ) : Multiset ℝ)
        = Multiset.map g (((sortDesc m).reverse : List ℝ) : Multiset ℝ) := rfl
    rw [← Multiset.coe_eq_coe, e, Multiset.coe_reverse, coe_sortDesc, coe_sortDesc]
  have hsorted : ((sortDesc m).reverse.map g).Pairwise (· ≥ ·) := by
    rw [List.pairwise_map, List.pairwise_reverse]
    exact (pairwise_sortDesc m).imp fun h => hg h
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc _) hsorted

/-- Adding zeros to a multiset of nonnegative reals appends them to its decreasing sort. -/
theorem sortDesc_add_replicate_zero {s : Multiset ℝ} (hs : ∀ y ∈ s, 0 ≤ y) (k : ℕ) :
    sortDesc (s + Multiset.replicate k 0) = sortDesc s ++ List.replicate k 0 := by
  have hperm : (sortDesc (s + Multiset.replicate k 0)).Perm (sortDesc s ++ List.replicate k 0) := by
    rw [← Multiset.coe_eq_coe, Multiset.coe_add, coe_sortDesc, coe_sortDesc,
      Multiset.coe_replicate]
  have hsorted : (sortDesc s ++ List.replicate k 0).Pairwise (· ≥ ·) := by
    rw [List.pairwise_append]
    refine ⟨pairwise_sortDesc s, List.pairwise_replicate.2 (Or.inr le_rfl), ?_⟩
    intro a ha b hb
    rw [List.eq_of_mem_replicate hb]
    have ha' : a ∈ ((sortDesc s : List ℝ) : Multiset ℝ) := Multiset.mem_coe.2 ha
    rw [coe_sortDesc] at ha'
    exact hs a ha'
  exact eq_of_perm_of_pairwise_ge hperm (pairwise_sortDesc _) hsorted

theorem sortedEntry_add_replicate_zero {s : Multiset ℝ} (hs : ∀ y ∈ s, 0 ≤ y) (k j : ℕ) :
    sortedEntry (s + Multiset.replicate k 0) j = sortedEntry s j := by
  unfold sortedEntry
  rw [sortDesc_add_replicate_zero hs k, getD_append_replicate_zero]

/-- Sums over the zero-padded decreasing sort: `∑_{j<N} f (s_(j)) = ∑_{y ∈ s} f y` whenever
`f 0 = 0` and `card s ≤ N`. -/
theorem sum_fin_sortedEntry (f : ℝ → ℝ) (hf : f 0 = 0) (s : Multiset ℝ) {N : ℕ}
    (hN : Multiset.card s ≤ N) :
    ∑ j : Fin N, f (sortedEntry s j) = (s.map f).sum := by
  rw [Fin.sum_univ_eq_sum_range (fun j => f (sortedEntry s j)) N]
  obtain ⟨r, rfl⟩ := Nat.exists_eq_add_of_le hN
  rw [Finset.sum_range_add]
  have h0 : ∑ i ∈ Finset.range r, f (sortedEntry s (Multiset.card s + i)) = 0 := by
    apply Finset.sum_eq_zero
    intro i _
    rw [sortedEntry_eq_zero_of_card_le (s := s) (j := Multiset.card s + i) (by omega), hf]
  rw [h0, add_zero]
  have h1 := sum_range_getD_eq f (sortDesc s)
  rw [length_sortDesc] at h1
  have e : (((sortDesc s).map f : List ℝ) : Multiset ℝ)
      = Multiset.map f ((sortDesc s : List ℝ) : Multiset ℝ) := rfl
  unfold sortedEntry
  rw [h1, ← Multiset.sum_coe, e, coe_sortDesc]

/-- Two-multiset version: sums over zero-padded sorts do not depend on the padding, when
`g 0 0 = 0`. -/
theorem sum_fin_sortedEntry₂ (g : ℝ → ℝ → ℝ) (hg : g 0 0 = 0) {A B : Multiset ℝ} {n N : ℕ}
    (hA : Multiset.card A ≤ n) (hB : Multiset.card B ≤ n) (hN : n ≤ N) :
    ∑ j : Fin N, g (sortedEntry A j) (sortedEntry B j)
      = ∑ j : Fin n, g (sortedEntry A j) (sortedEntry B j) := by
  rw [Fin.sum_univ_eq_sum_range (fun j => g (sortedEntry A j) (sortedEntry B j)) N,
    Fin.sum_univ_eq_sum_range (fun j => g (sortedEntry A j) (sortedEntry B j)) n]
  obtain ⟨r, rfl⟩ := Nat.exists_eq_add_of_le hN
  rw [Finset.sum_range_add]
  have h0 : ∑ i ∈ Finset.range r, g (sortedEntry A (n + i)) (sortedEntry B (n + i)) = 0 := by
    apply Finset.sum_eq_zero
    intro i _
    rw [sortedEntry_eq_zero_of_card_le (s := A) (j := n + i) (by omega),
      sortedEntry_eq_zero_of_card_le (s := B) (j := n + i) (by omega), hg]
  rw [h0, add_zero]

end Sorting

open Sorting

theorem sampleLobe_nonneg {c : ℝ} {x : ℕ → ℝ} (hc : 0 < c) (hx : ∀ i, 0 < x i) (n : ℕ)
    (j : Fin n) : 0 ≤ sampleLobe c x n j := by
  -- the sorted entries are elements of the multiset, or `0` past the end
  have hmem : ∀ (l : List ℝ) (k : ℕ), (∀ y ∈ l, 0 ≤ y) → 0 ≤ l.getD k 0 := by
    intro l
    induction l with
    | nil => intro k _; simp
    | cons a l ih =>
      intro k hl
      cases k with
      | zero => simpa using hl a (List.mem_cons_self ..)
      | succ k =>
        simpa using ih k fun y hy => hl y (List.mem_cons_of_mem a hy)
  show 0 ≤ (sortDesc (scaledSample c x n)).getD (j : ℕ) 0
  apply hmem
  intro y hy
  have hy' : y ∈ ((sortDesc (scaledSample c x n) : List ℝ) : Multiset ℝ) := Multiset.mem_coe.2 hy
  rw [coe_sortDesc] at hy'
  exact (pos_of_mem_scaledSample hc hx hy').le

/-- Sorting does not change the sum of squares: `‖α_n‖² = ∑_{i<n} (c x_i)²`. -/
theorem sum_sq_sampleLobe (c : ℝ) (x : ℕ → ℝ) (n : ℕ) :
    ∑ j, sampleLobe c x n j ^ 2 = ∑ i ∈ Finset.range n, (c * x i) ^ 2 := by
  have h := sum_fin_sortedEntry (fun y => y ^ 2) (by norm_num) (scaledSample c x n)
    (N := n) (le_of_eq (card_scaledSample c x n))
  rw [sum_map_scaledSample] at h
  exact h


/-! ### Deterministic reduction of Lemma 6

With `Y_n = sampleLobe 1 x n`, `Y'_n = sampleLobe 1 x' n` (the sorted unscaled samples),
`‖β_n - ρ α_n‖ / ‖α_n‖ = (u/v) ‖Y'_n - Y_n‖ / ‖Y_n‖` and
`‖Y'_n - Y_n‖² = ‖Y'_n‖² + ‖Y_n‖² - 2 ⟨Y_n, Y'_n⟩`. Hence Lemma 6 holds along every sample
path on which the three averages `‖Y_n‖²/n = (1/n) ∑_{i<n} x_i²`, `‖Y'_n‖²/n` and
`⟨Y_n, Y'_n⟩/n` have the same positive limit (`tendsto_lobeMisfit_of_moments`). The first two
are strong-law averages; the almost-sure limit of the cross term (the comonotone coupling of
the paper's proof) is the part of Lemma 6 that is not formalized here. -/

/-- Sorting commutes with scaling by `c ≥ 0`: `sort(c x) = c · sort(x)`. -/
theorem sampleLobe_eq_mul {c : ℝ} (hc : 0 ≤ c) (x : ℕ → ℝ) (n : ℕ) (j : Fin n) :
    sampleLobe c x n j = c * sampleLobe 1 x n j := by
  have hs : scaledSample c x n = (scaledSample 1 x n).map (fun y => c * y) := by
    unfold scaledSample
    rw [Multiset.map_map]
    exact Multiset.map_congr rfl fun i _ => by
      show c * x i = c * (1 * x i)
      ring
  have hf : Monotone (fun y : ℝ => c * y) := fun a b h => mul_le_mul_of_nonneg_left h hc
  have hf0 : (fun y : ℝ => c * y) 0 = 0 := mul_zero c
  show (sortDesc (scaledSample c x n)).getD (j : ℕ) 0
    = c * (sortDesc (scaledSample 1 x n)).getD (j : ℕ) 0
  rw [hs, sortDesc_map_of_monotone hf, getD_map_of_map_zero (f := fun y : ℝ => c * y) hf0]

/-- The misfit of Lemma 6 through the unscaled sorted samples:
`‖β_n - (u/v) α_n‖ / ‖α_n‖ = (u/v) ‖Y'_n - Y_n‖ / ‖Y_n‖`. -/
theorem lobeMisfit_eq {u v : ℝ} (hu : 0 < u) (hv : 0 < v) (x x' : ℕ → ℝ) (n : ℕ) :
    lobeMisfit u v x x' n
      = u / v * (Vec.l2 (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)
        / Vec.l2 (fun j => sampleLobe 1 x n j)) := by
  have h1 : (fun j => sampleLobe u x' n j - u / v * sampleLobe v x n j)
      = fun j => u * (sampleLobe 1 x' n j - sampleLobe 1 x n j) := by
    funext j
    rw [sampleLobe_eq_mul hu.le x' n j, sampleLobe_eq_mul hv.le x n j, ← mul_assoc,
      div_mul_cancel₀ u hv.ne']
    ring
  have h2 : sampleLobe v x n = fun j => v * sampleLobe 1 x n j :=
    funext fun j => sampleLobe_eq_mul hv.le x n j
  show Vec.l2 (fun j => sampleLobe u x' n j - u / v * sampleLobe v x n j)
      / Vec.l2 (sampleLobe v x n) = _
  rw [h1, h2, Vec.l2_const_mul hu.le, Vec.l2_const_mul hv.le, mul_div_mul_comm]

/-- `‖Y' - Y‖² = ‖Y'‖² + ‖Y‖² - 2 ⟨Y, Y'⟩`. -/
theorem sum_sq_sub_eq {k : ℕ} (y y' : Fin k → ℝ) :
    ∑ j, (y' j - y j) ^ 2 = ∑ j, y' j ^ 2 + ∑ j, y j ^ 2 - 2 * ∑ j, y j * y' j := by
  rw [Finset.mul_sum, ← Finset.sum_add_distrib, ← Finset.sum_sub_distrib]
  exact Finset.sum_congr rfl fun j _ => by ring

/-- **Deterministic reduction of Lemma 6 of the paper, first form.** Let `u, v > 0`. If, along
a sample path `x, x'`, `(1/n) ∑_{i<n} x_i² → m > 0` and `‖Y'_n - Y_n‖² / n → 0` (sorted
unscaled samples), then `‖β_n - ρ α_n‖ / ‖α_n‖ → 0` (`ρ = u/v`). -/
theorem tendsto_lobeMisfit_of_tendsto_sq {u v : ℝ} (hu : 0 < u) (hv : 0 < v) {x x' : ℕ → ℝ}
    {m : ℝ} (hm : 0 < m)
    (hA : Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, x i ^ 2) / (n : ℝ)) atTop (𝓝 m))
    (hD : Tendsto
      (fun n : ℕ => (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ))
      atTop (𝓝 0)) :
    Tendsto (lobeMisfit u v x x') atTop (𝓝 0) := by
  have hsq : ∀ n : ℕ, ∑ j, sampleLobe 1 x n j ^ 2 = ∑ i ∈ Finset.range n, x i ^ 2 := by
    intro n
    rw [sum_sq_sampleLobe]
    exact Finset.sum_congr rfl fun i _ => by ring
  have hA' : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ)) atTop (𝓝 m) :=
    hA.congr fun n => by rw [hsq n]
  have hratio := hD.div hA' hm.ne'
  rw [zero_div] at hratio
  have hsqrt := hratio.sqrt
  rw [Real.sqrt_zero] at hsqrt
  have hmul := hsqrt.const_mul (u / v)
  rw [mul_zero] at hmul
  refine hmul.congr' ?_
  filter_upwards [eventually_ge_atTop 1] with n hn
  have hn0 : (n : ℝ) ≠ 0 := Nat.cast_ne_zero.2 (by omega)
  show u / v * Real.sqrt ((∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ)
      / ((∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ))) = lobeMisfit u v x x' n
  rw [div_div_div_cancel_right₀ hn0,
    Real.sqrt_div (Vec.sum_sq_nonneg (fun j => sampleLobe 1 x' n j - sampleLobe 1 x n j)),
    lobeMisfit_eq hu hv]
  all_goals rfl

/-- **Deterministic reduction of Lemma 6 of the paper, second form.** Let `u, v > 0`. If, along
a sample path `x, x'`, the averages `(1/n) ∑_{i<n} x_i²`, `(1/n) ∑_{i<n} x'_i²` and the sorted
cross term `⟨Y_n, Y'_n⟩ / n` all converge to the same `m > 0`, then
`‖β_n - ρ α_n‖ / ‖α_n‖ → 0` (`ρ = u/v`). -/
theorem tendsto_lobeMisfit_of_moments {u v : ℝ} (hu : 0 < u) (hv : 0 < v) {x x' : ℕ → ℝ}
    {m : ℝ} (hm : 0 < m)
    (hA : Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, x i ^ 2) / (n : ℝ)) atTop (𝓝 m))
    (hB : Tendsto (fun n : ℕ => (∑ i ∈ Finset.range n, x' i ^ 2) / (n : ℝ)) atTop (𝓝 m))
    (hC : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x n j * sampleLobe 1 x' n j) / (n : ℝ))
      atTop (𝓝 m)) :
    Tendsto (lobeMisfit u v x x') atTop (𝓝 0) := by
  have hsq : ∀ (y : ℕ → ℝ) (n : ℕ),
      ∑ j, sampleLobe 1 y n j ^ 2 = ∑ i ∈ Finset.range n, y i ^ 2 := by
    intro y n
    rw [sum_sq_sampleLobe]
    exact Finset.sum_congr rfl fun i _ => by ring
  have hA' : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ)) atTop (𝓝 m) :=
    hA.congr fun n => by rw [hsq x n]
  have hB' : Tendsto (fun n : ℕ => (∑ j, sampleLobe 1 x' n j ^ 2) / (n : ℝ)) atTop (𝓝 m) :=
    hB.congr fun n => by rw [hsq x' n]
  have hD : Tendsto
      (fun n : ℕ => (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ))
      atTop (𝓝 0) := by
    have h := (hB'.add hA').sub (hC.const_mul 2)
    rw [show m + m - 2 * m = 0 by ring] at h
    refine h.congr fun n => ?_
    show (∑ j, sampleLobe 1 x' n j ^ 2) / (n : ℝ) + (∑ j, sampleLobe 1 x n j ^ 2) / (n : ℝ)
        - 2 * ((∑ j, sampleLobe 1 x n j * sampleLobe 1 x' n j) / (n : ℝ))
      = (∑ j, (sampleLobe 1 x' n j - sampleLobe 1 x n j) ^ 2) / (n : ℝ)
    rw [sum_sq_sub_eq (sampleLobe 1 x n) (sampleLobe 1 x' n)]
    ring
  exact tendsto_lobeMisfit_of_tendsto_sq hu hv hm hA hD

end QKForms
